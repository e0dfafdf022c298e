import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { type DynamoProxy, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { modernCall, type RawResponse } from '../helpers/local.js';
import { createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// DOERS_AUTH_CACHE_SECONDS: an instance reuses a verified principal for at most that long, so a
// revocation, a disable or a role change reaches every instance within the bound, and a request
// answered from the cache costs no DynamoDB request for its credential.

const CACHE_SECONDS = 1;
let proxied: Awaited<ReturnType<typeof startProxiedServer>>;
let proxy: DynamoProxy;
let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  proxied = await startProxiedServer({
    DOERS_AUTH_CACHE_SECONDS: String(CACHE_SECONDS),
    DOERS_RATE_LIMIT_CALLS: '0',
    DOERS_MAX_CONCURRENT_CALLS: '0',
  });
  ({ server, proxy } = proxied);
  ws = await createTestWorkspace(server);
});
after(() => proxied.close());

const meGet = (token: string): Promise<RawResponse> => modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });
const pastTheBound = () => new Promise((r) => setTimeout(r, CACHE_SECONDS * 1000 + 150));

describe('the principal cache', () => {
  test('a listing answered from the cache sends no DynamoDB request', async () => {
    await modernCall(server, 'tools/list', {}, { token: ws.viewer.token });
    proxy.operations.length = 0;

    const res = await modernCall(server, 'tools/list', {}, { token: ws.viewer.token });

    assert.equal(res.status, 200, res.text);
    assert.deepEqual(proxy.operations, []);
  });

  test(`a revoked token keeps working for at most ${CACHE_SECONDS} s, then is refused`, async () => {
    const [record] = (await server.app.services.tokens.list(ws.workspaceId)).filter((t) => t.userId === ws.member.userId);
    assert.equal((await meGet(ws.member.token)).status, 200);

    await writesOf(server.app.services).tokens.revoke(ws.workspaceId, record!.tokenId, new Date().toISOString());
    const withinBound = await meGet(ws.member.token);
    await pastTheBound();
    const afterBound = await meGet(ws.member.token);

    assert.equal(withinBound.status, 200, 'answered from the cache');
    assert.equal(afterBound.status, 401, afterBound.text);
    assert.match(afterBound.headers.get('www-authenticate') ?? '', /invalid_token/);
  });

  test(`a disabled user is refused within ${CACHE_SECONDS} s`, async () => {
    assert.equal((await meGet(ws.admin.token)).status, 200);

    await writesOf(server.app.services).directory.setMemberStatus(ws.workspaceId, ws.admin.userId, 'disabled');
    await pastTheBound();
    const res = await meGet(ws.admin.token);

    assert.equal(res.status, 403, res.text);
  });

  test(`a role change shows within ${CACHE_SECONDS} s`, async () => {
    const before = await meGet(ws.viewer.token);
    assert.equal(before.json.result.structuredContent.role, 'viewer');

    await writesOf(server.app.services).directory.setMemberRole(ws.workspaceId, ws.viewer.userId, 'viewer', 'member');
    await pastTheBound();
    const after = await meGet(ws.viewer.token);

    assert.equal(after.json.result.structuredContent.role, 'member');
  });
});
