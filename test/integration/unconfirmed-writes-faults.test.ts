import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { type DynamoProxy, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { modernCall } from '../helpers/local.js';
import { createTestWorkspace } from '../helpers/workspace-fixtures.js';

// A task writer's transaction whose outcome DynamoDB answers late, "in progress" or never: the
// proxy in front of the embedded DynamoDB commits a write and loses its answer, answers "in
// progress" to it and every replay, or drops every connection before the store. Each is written
// once, and the caller is told what happened, never a 500.

let server: LocalServer;
let proxy: DynamoProxy;
let close: () => Promise<void>;

before(async () => {
  ({ server, proxy, close } = await startProxiedServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' }, { demo: false }));
});
after(() => close());

describe('a transaction whose answer is lost or stays "in progress" is written once, never a 500', () => {
  test('its answer lost (the connection dropped after the commit): task_create answers the task, stored once', {
    timeout: 30_000,
  }, async () => {
    const own = await createTestWorkspace(server);
    proxy.failWritesFrom(1, 'lost');
    const res = await modernCall(
      server,
      'tools/call',
      { name: 'task_create', arguments: { title: 'Once, lost' } },
      { token: own.member.token },
    ).finally(() => proxy.clearFault());

    assert.equal(res.json.result?.isError, false, res.text);
    const found = await server.app.services.tasks.search({ workspaceId: own.workspaceId, layout: 2 }, { status: 'open' }, 10);
    assert.deepEqual(
      found.tasks.map((t) => t.title),
      ['Once, lost'],
    );
  });

  test('"in progress" past every replay: the claim the write carried says it landed, so task_create answers the task; the same call again replays it; stored once', {
    timeout: 60_000,
  }, async () => {
    // Arrange: the first write commits, and DynamoDB answers "in progress" to it and every replay of this call.
    const own = await createTestWorkspace(server);
    const args = { title: 'Once, in progress' };
    await modernCall(server, 'tools/call', { name: 'task_create', arguments: { title: 'Warm' } }, { token: own.member.token });
    proxy.failWritesFrom(1, 'in-progress', 10_000);

    // Act
    const first = await modernCall(server, 'tools/call', { name: 'task_create', arguments: args }, { token: own.member.token }).finally(
      () => proxy.clearFault(),
    );
    const again = await modernCall(server, 'tools/call', { name: 'task_create', arguments: args }, { token: own.member.token });

    // Assert
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.result.isError, false, first.text);
    const found = await server.app.services.tasks.search({ workspaceId: own.workspaceId, layout: 2 }, { status: 'open' }, 10);
    assert.equal(found.tasks.filter((t) => t.title === args.title).length, 1);
    assert.equal(found.tasks.find((t) => t.title === args.title)!.taskId, first.json.result.structuredContent.taskId);
    // Its answer could not be kept under the fault: the same call again says it is still being made, and writes nothing.
    assert.match(again.json.result.content[0].text, /^In progress: this same call/);
  });

  test('a write that never reached DynamoDB (every connection dropped): "not confirmed", safe to call again; the same call again writes it once', {
    timeout: 90_000,
  }, async () => {
    // Arrange: every write of the first call is cut off before it reaches the store.
    const own = await createTestWorkspace(server);
    const args = { title: 'Once, never reached' };
    await modernCall(server, 'tools/call', { name: 'task_create', arguments: { title: 'Warm' } }, { token: own.member.token });
    proxy.failWritesFrom(1, 'reset');

    // Act
    const first = await modernCall(server, 'tools/call', { name: 'task_create', arguments: args }, { token: own.member.token }).finally(
      () => proxy.clearFault(),
    );
    const again = await modernCall(server, 'tools/call', { name: 'task_create', arguments: args }, { token: own.member.token });

    // Assert
    assert.equal(first.json.result.isError, true, first.text);
    assert.match(
      first.json.result.content[0].text,
      /^Not confirmed: .* It would have created (TEST-\d+) 'Once, never reached'; task_get \1 shows whether it did\. Calling it again with the same arguments is safe: it is never written twice\.$/,
    );
    assert.equal(again.json.result.isError, false, again.text);
    const found = await server.app.services.tasks.search({ workspaceId: own.workspaceId, layout: 2 }, { status: 'open' }, 10);
    assert.deepEqual(
      found.tasks.filter((t) => t.title === args.title).map((t) => t.taskId),
      [again.json.result.structuredContent.taskId],
    );
  });
});
