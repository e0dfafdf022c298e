import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Webhook as Verifier } from 'standardwebhooks';
import type { LocalServer } from '../../lambda/local/server.js';
import { admin } from '../helpers/admin-cli.js';
import { startTestServer } from '../helpers/local.js';

// `npm run admin -- webhook …` against a running local server's data (in this process, as
// test/e2e/admin-cli.test.ts runs the CLI): add prints the secret once, list masks it, test sends a
// signed delivery the receiver verifies with the standardwebhooks package, remove takes it away, and
// the URL rules and the limit are the writer's own.

let dataDir: string;
let server: LocalServer;
let receiver: Server;
let origin: string;
const got: { body: string; headers: Record<string, string> }[] = [];
const cli = (...args: string[]) => admin(dataDir, ...args);

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'doers-webhooks-'));
  server = await startTestServer({ DOERS_DATA_DIR: dataDir });
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers as Record<string, string> });
      res.writeHead(req.url === '/broken' ? 500 : 204);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
after(async () => {
  await server.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await rm(dataDir, { recursive: true, force: true });
});

describe('admin CLI: webhooks', { timeout: 120_000 }, () => {
  test('add prints the secret once, list masks it, test sends a signed delivery, remove takes it away', async () => {
    const added = await cli('webhook', 'add', '--url', `${origin}/in`, '--events', 'assigned,completed');
    assert.equal(added.code, 0, added.stderr);
    const secret = added.stdout.trim();
    assert.match(secret, /^whsec_/);
    const id = /Webhook (hook_[0-9a-f]+)/.exec(added.stderr)?.[1];
    assert.ok(id, added.stderr);

    const listed = await cli('webhook', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(!listed.stdout.includes(secret), 'list shows no secret');
    assert.match(
      listed.stdout,
      new RegExp(`^${id}\t${origin}/in\tassigned,completed\tstandard\twhsec_…${secret.slice(-4)}\t.*failed deliveries 0\tno failure$`, 'm'),
    );

    const tested = await cli('webhook', 'test', '--id', id);
    assert.equal(tested.code, 0, tested.stderr);
    assert.match(tested.stdout, /answered HTTP 204/);
    // The local server's own notifier may deliver the demo's changes there too: the test delivery is the one of its type.
    const delivery = got.find((d) => JSON.parse(d.body).type === 'webhook.test');
    assert.ok(delivery, 'the test delivery arrived');
    new Verifier(secret).verify(delivery!.body, delivery!.headers); // throws on a bad signature

    const removed = await cli('webhook', 'remove', '--id', id);
    assert.equal(removed.code, 0, removed.stderr);
    const afterRemoval = await cli('webhook', 'list');
    assert.equal(afterRemoval.stdout, '', afterRemoval.stderr);
    assert.match(afterRemoval.stderr, /No webhooks/);
    assert.match((await cli('webhook', 'remove', '--id', id)).stderr, /no webhook/);
  });

  test('a failing receiver makes test exit 1 naming the cause; refused URLs and events are named by their option', async () => {
    const broken = await cli('webhook', 'add', '--url', `${origin}/broken`, '--format', 'slack');
    assert.equal(broken.code, 0, broken.stderr);
    const id = /Webhook (hook_[0-9a-f]+)/.exec(broken.stderr)![1]!;
    const tested = await cli('webhook', 'test', '--id', id);
    assert.equal(tested.code, 1);
    assert.match(tested.stderr, /status \(HTTP 500\)/);

    const privateUrl = await cli('webhook', 'add', '--url', 'https://10.1.2.3/hook');
    assert.equal(privateUrl.code, 1);
    assert.match(privateUrl.stderr, /^error: --url: .*a private address/);
    const events = await cli('webhook', 'add', '--url', `${origin}/x`, '--events', 'assigned,nope');
    assert.match(events.stderr, /^error: --events: nope is no event/);
    assert.equal((await cli('webhook', 'add')).code, 2, '--url is required');
    await cli('webhook', 'remove', '--id', id);
  });
});
