import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lambda/platform/config.js';
import { startLocalServer, type LocalServer } from '../../lambda/local/server.js';
import { modernCall } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';

// `npm run admin`, end to end: the CLI as a separate process against a running local server's data,
// and the server refusing or admitting what the CLI minted, revoked, disabled and enabled.
const ROOT = new URL('../../', import.meta.url).pathname;
const TSX = join(ROOT, 'node_modules/.bin/tsx');

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const admin = (dataDir: string, ...args: string[]): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      TSX,
      ['lambda/local/admin-cli.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, DOERS_DATA_DIR: dataDir }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

let dataDir: string;
let server: LocalServer;
const cli = (...args: string[]) => admin(dataDir, ...args);
const meGet = (token: string) => modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'doers-admin-'));
  // No principal cache, so a revocation shows on the very next request (the bound has its own test).
  server = await startLocalServer(loadConfig({ PORT: '0', DOERS_DATA_DIR: dataDir, DOERS_AUTH_CACHE_SECONDS: '0' }), { timeZone: 'UTC', observer: new RecordingObserver() });
});
after(async () => {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('admin CLI against a running local server', { timeout: 300_000 }, () => {
  test('mint, use, list, revoke: the revoked token is refused', async () => {
    const added = await cli('user', 'add', '--email', 'Bob@Example.com', '--name', 'Bob Builder', '--role', 'admin', '--time-zone', 'Europe/Berlin');
    assert.equal(added.code, 0, added.stderr);

    const minted = await cli('token', 'create', '--email', 'bob@example.com', '--scopes', 'tasks:read team:read', '--expires-in', '30d', '--label', 'laptop');
    assert.equal(minted.code, 0, minted.stderr);
    const lines = minted.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, 'nothing on stdout but the secret');
    const secret = lines[0]!;
    assert.match(secret, /^doers_pat_[A-Za-z0-9_-]{43}$/);
    const tokenId = /tok_[A-Za-z0-9]+/.exec(minted.stderr)?.[0];
    assert.ok(tokenId, minted.stderr);

    const used = await meGet(secret);
    assert.equal(used.status, 200, used.text);
    assert.equal(used.json.result.structuredContent.email, 'bob@example.com');
    assert.equal(used.json.result.structuredContent.role, 'admin');
    assert.equal(used.json.result.structuredContent.timeZone, 'Europe/Berlin');
    assert.deepEqual(used.json.result.structuredContent.scopes, ['tasks:read', 'team:read']);

    const listed = await cli('token', 'list', '--email', 'bob@example.com');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${tokenId}\\tbob@example.com\\ttasks:read team:read\\texpires \\S+\\tactive\\t"laptop"$`, 'm'));
    assert.doesNotMatch(listed.stdout, /doers_pat_/, 'a listing never shows a secret');
    assert.doesNotMatch(listed.stdout, /ada@example.com/, 'only the named user');

    const revoked = await cli('token', 'revoke', '--id', tokenId);
    assert.equal(revoked.code, 0, revoked.stderr);
    const refused = await meGet(secret);

    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="The access token was revoked"/);
  });

  test('a disabled user and a disabled workspace are refused with 403, enabled ones admitted again', async () => {
    await cli('user', 'add', '--email', 'carol@example.com', '--name', 'Carol');
    const minted = await cli('token', 'create', '--email', 'carol@example.com', '--scopes', 'tasks:read');
    const secret = minted.stdout.trim();

    const disabled = await cli('user', 'disable', '--email', 'carol@example.com');
    const whileDisabled = await meGet(secret);
    const enabled = await cli('user', 'enable', '--email', 'carol@example.com');
    const afterEnable = await meGet(secret);
    const wsDisabled = await cli('workspace', 'disable');
    const whileWsDisabled = await meGet(server.token);
    const wsEnabled = await cli('workspace', 'enable');
    const afterWsEnable = await meGet(server.token);

    for (const r of [disabled, enabled, wsDisabled, wsEnabled]) assert.equal(r.code, 0, r.stderr);
    for (const r of [whileDisabled, whileWsDisabled]) {
      assert.equal(r.status, 403);
      assert.equal(r.headers.get('www-authenticate'), null);
      assert.deepEqual(r.json.error, { code: -32600, message: 'The user may not use the MCP endpoint.' });
    }
    assert.equal(afterEnable.status, 200);
    assert.equal(afterWsEnable.status, 200);
  });

  test('bad input exits non-zero with an error naming the argument', async () => {
    const emptyDir = await mkdtemp(join(tmpdir(), 'doers-admin-empty-'));
    try {
      const [badScope, unknownCommand, unknownOption, badExpiry, duplicate, noServer] = await Promise.all([
        cli('token', 'create', '--email', 'ada@example.com', '--scopes', 'tasks:read tasks:delete'),
        cli('token', 'frobnicate'),
        cli('user', 'add', '--email', 'x@example.com', '--name', 'X', '--colour', 'red'),
        cli('token', 'create', '--email', 'ada@example.com', '--scopes', 'tasks:read', '--expires-in', 'soon'),
        cli('user', 'add', '--email', 'ada@example.com', '--name', 'Ada again'),
        admin(emptyDir, 'token', 'list'),
      ]);

      const expectations: [CliResult, number, RegExp][] = [
        [badScope, 2, /--scopes: unknown scope "tasks:delete"/],
        [unknownCommand, 2, /unknown command "token frobnicate"/],
        [unknownOption, 2, /Unknown option '--colour'/],
        [badExpiry, 2, /--expires-in: "soon" is not a duration/],
        [duplicate, 1, /--email: a user with the e-mail ada@example.com already exists/],
        [noServer, 1, /No local server data at .*local-server\.json/],
      ];
      for (const [result, code, message] of expectations) {
        assert.equal(result.code, code, `${message}: ${result.stderr}`);
        assert.match(result.stderr, message);
        assert.equal(result.stdout, '', 'nothing on stdout when refused');
      }
    } finally {
      await rm(emptyDir, { recursive: true, force: true });
    }
  });
});
