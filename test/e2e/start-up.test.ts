import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import { MODERN, modernMeta } from '../helpers/local.js';

// `npm start` as a user runs it: a client that connects the moment the port opens (here: every
// 20 ms from spawn) must get a correct answer from its first byte, never a refusal of its token.
const ROOT = new URL('../../', import.meta.url).pathname;
const TSX = join(ROOT, 'node_modules/.bin/tsx');

const freePort = (): Promise<number> =>
  new Promise((ok) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => ok(port));
    });
  });

let child: ChildProcess | undefined;
let dataDir: string | undefined;

after(async () => {
  child?.kill('SIGTERM');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test('npm start refuses connections until ready, then answers the printed token from its first request', { timeout: 60_000 }, async () => {
  // Arrange
  dataDir = await mkdtemp(join(tmpdir(), 'doers-startup-'));
  const port = await freePort();
  const token = generateTokenSecret();
  child = spawn(TSX, ['lambda/local/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), DOERS_DATA_DIR: dataDir, DOERS_DEV_TOKEN: token },
    stdio: 'ignore',
  });
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'me_get', arguments: {}, _meta: modernMeta() },
  });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': MODERN,
    'mcp-method': 'tools/call',
    'mcp-name': 'me_get',
  };

  // Act: poll until the first 200
  const seen: string[] = [];
  const deadline = Date.now() + 50_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers, body });
      const text = await res.text();
      seen.push(res.status === 503 ? `503 retry-after=${res.headers.get('retry-after')}` : `${res.status}`);
      if (res.status === 200) {
        assert.match(text, /"isError":false/);
        break;
      }
    } catch {
      if (seen.at(-1) !== 'refused') seen.push('refused');
    }
    await new Promise((r) => setTimeout(r, 20));
  }

  // Assert: only refused connections (or a 503 asking to retry in a second) before the first 200
  assert.equal(seen.at(-1), '200', `never answered: ${seen.join(', ')}`);
  const before = seen.slice(0, -1).filter((s) => s !== 'refused' && s !== '503 retry-after=1');
  assert.deepEqual(before, [], `answers before ready: ${seen.join(', ')}`);
});
