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

const children: ChildProcess[] = [];
const dataDirs: string[] = [];

after(async () => {
  for (const child of children) child.kill('SIGTERM');
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
});

/** `npm start` in a fresh data dir; its stdout (calls) and stderr (the banner) collected. */
const start = async (env: Record<string, string> = {}) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'doers-startup-'));
  dataDirs.push(dataDir);
  const port = await freePort();
  const token = generateTokenSecret();
  const child = spawn(TSX, ['lambda/local/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), DOERS_DATA_DIR: dataDir, DOERS_DEV_TOKEN: token, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => {
    stdout += String(chunk);
  });
  child.stderr!.on('data', (chunk) => {
    stderr += String(chunk);
  });
  return { port, token, stdout: () => stdout, stderr: () => stderr };
};

const meGet = (port: number, token: string) =>
  fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': 'me_get',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'me_get', arguments: {}, _meta: modernMeta() } }),
  });

/** Polls every 20 ms until the first 200; what it saw before, in order. */
const untilAnswered = async (port: number, token: string): Promise<string[]> => {
  const seen: string[] = [];
  const deadline = Date.now() + 50_000;
  while (Date.now() < deadline) {
    try {
      const res = await meGet(port, token);
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
  return seen;
};

/** Waits until the output holds a line matching `pattern`, or 5 s. */
const lineOf = async (stdout: () => string, pattern: RegExp): Promise<string | undefined> => {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const line = stdout()
      .split('\n')
      .find((l) => pattern.test(l));
    if (line || Date.now() > deadline) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
};

test('npm start refuses connections until ready, then answers the printed token from its first request', { timeout: 60_000 }, async () => {
  // Arrange
  const server = await start();

  // Act: poll until the first 200
  const seen = await untilAnswered(server.port, server.token);

  // Assert: only refused connections (or a 503 asking to retry in a second) before the first 200
  assert.equal(seen.at(-1), '200', `never answered: ${seen.join(', ')}`);
  const before = seen.slice(0, -1).filter((s) => s !== 'refused' && s !== '503 retry-after=1');
  assert.deepEqual(before, [], `answers before ready: ${seen.join(', ')}`);
  // One short line per call, no JSON records, so the banner stays readable.
  assert.match((await lineOf(server.stdout, /me_get/)) ?? '', /^\d\d:\d\d:\d\d {2}me_get {2}ok {2}\d+ ms$/);
  assert.doesNotMatch(server.stdout(), /"audit"|"_aws"/);
  // The banner names the local SES (lambda/local/embedded-ses.ts): its page shows the mail sent, its store lists it.
  const sesUrl = (await lineOf(server.stderr, /^ {2}e-mail: http:\/\/127\.0\.0\.1:\d+ /))?.match(/http:\/\/127\.0\.0\.1:\d+/)?.[0];
  assert.ok(sesUrl, `no local SES in the banner: ${server.stderr()}`);
  const page = await fetch(sesUrl);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  const store = await fetch(`${sesUrl}/store`);
  assert.ok(Array.isArray(((await store.json()) as { emails: unknown }).emails));
});

test('with DOERS_LOCAL_LOG=json npm start prints the audit line and metric records Lambda writes', { timeout: 60_000 }, async () => {
  const server = await start({ DOERS_LOCAL_LOG: 'json' });

  const seen = await untilAnswered(server.port, server.token);

  assert.equal(seen.at(-1), '200', seen.join(', '));
  const audit = await lineOf(server.stdout, /"audit":"tool_call"/);
  assert.equal(JSON.parse(audit ?? '{}').tool, 'me_get');
  assert.match(server.stdout(), /"_aws"/);
});
