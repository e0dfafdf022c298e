import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { LocalServer } from '../../lambda/local/server.js';
import { startTestServer } from '../helpers/local.js';
import { approve } from '../helpers/oauth.js';

/**
 * The official conformance suite's authorization-server mode (`conformance authorization`) against
 * the built-in authorization server of the local server: its metadata document, and an authorization
 * code grant with PKCE and `resource`. The suite prints an authorization URL for a person to open and
 * waits on its own loopback callback; `approve` plays the person (development sign-in, consent), then
 * the browser's last redirect is delivered to the suite's callback. No baseline: every scenario passes.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODE_22 = `${ROOT}node_modules/node/bin/node`;
const CLI = `${ROOT}node_modules/@modelcontextprotocol/conformance/dist/index.js`;

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

let server: LocalServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

describe('official conformance suite, authorization-server mode', () => {
  for (const revision of ['2025-11-25', '2026-07-28']) {
    test(`${revision}: metadata endpoint and authorization code grant pass`, async () => {
      // Arrange: a client registered for the suite's callback, as the suite's instructions say.
      const port = await freePort();
      const registered = await fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'MCP conformance suite',
          redirect_uris: [`http://127.0.0.1:${port}/callback`],
          token_endpoint_auth_method: 'none',
        }),
      });
      const { client_id: clientId } = (await registered.json()) as { client_id: string };

      // Act
      const cli = spawn(
        NODE_22,
        [
          CLI,
          'authorization',
          '--url',
          server.url,
          '--client-id',
          clientId,
          '--resource',
          server.mcpUrl,
          '--port',
          String(port),
          '--spec-version',
          revision,
        ],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      let person: Promise<void> | undefined;
      cli.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const url = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/.exec(output)?.[1];
        if (url && !person && output.includes('Callback server started')) {
          // The suite waits five minutes for its callback: a failed approval ends it at once.
          person = approve(url)
            .then(async (back) => void (await fetch(back)))
            .catch((err: unknown) => {
              cli.kill();
              throw err;
            });
        }
      });
      cli.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exitCode = await new Promise<number | null>((resolve) => cli.on('exit', resolve));
      await person;

      // Assert
      assert.equal(exitCode, 0, output);
      assert.match(output, /authorization-server-metadata-endpoint: \d+ passed, 0 failed/);
      assert.match(output, /authorization-code-grant: 1 passed, 0 failed/);
      assert.match(output, /Total: \d+ passed, 0 failed/);
    });
  }
});
