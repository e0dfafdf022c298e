import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { type DynamoProxy, type ProxyMode, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { modernCall } from '../helpers/local.js';
import { addToken, caller, createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// A change and its activity record are one write: a fault injected at that write (throttling and
// 500s past the SDK's retries, a dropped connection, a lost race) leaves both or neither, for every
// writing tool. What is compared is the workspace's whole partition and its tokens, record items
// apart, before and after the call. Each tool gets a server, a proxy and a store of its own, so the
// tools run side by side: most of each one's time is the SDK's backoff and the writer's replay
// window under a fault, waiting rather than working.

const FAULTS: Exclude<ProxyMode, 'pass'>[] = ['throttle', 'internal', 'reset', 'conditional'];
/** Tools faulted at once (each waits out retries, so more than the cores). */
const TOOLS_AT_ONCE = 8;

/** One tool's own server behind its own fault-injecting proxy, and a workspace on it. */
interface Rig {
  readonly server: LocalServer;
  readonly proxy: DynamoProxy;
  readonly ws: TestWorkspace;
  close(): Promise<void>;
}

const startRig = async (): Promise<Rig> => {
  const { server, proxy, close } = await startProxiedServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' });
  const ws = await createTestWorkspace(server);
  for (const m of [ws.owner, ws.admin, ws.member]) await caller(server, m.token)('me_get', {});
  return { server, proxy, ws, close };
};

/** The workspace as stored: its items (the owners lock apart: it is taken and let go around writes) and records. */
const snapshot = async ({ server, ws }: Rig): Promise<{ state: string; records: number }> => {
  const db = createDocumentClient({ endpoint: server.dynamodbEndpoint });
  const items: Record<string, unknown>[] = [];
  // Every partition of the workspace: its own, its tasks', its lists' entries and counts, its records'.
  for await (const page of paginateScan(
    { client: db },
    {
      TableName: server.app.config.tables.workspace,
      FilterExpression: 'pk = :pk OR begins_with(pk, :sub)',
      ExpressionAttributeValues: { ':pk': `WS#${ws.workspaceId}`, ':sub': `WS#${ws.workspaceId}#` },
    },
  ))
    items.push(...(page.Items ?? []));
  const tokens = await server.app.services.tokens.list(ws.workspaceId);
  const records = items.filter((i) => String(i.sk).startsWith('ACT#'));
  const state = items
    .filter((i) => !String(i.sk).startsWith('ACT#') && i.sk !== 'OWNERS_LOCK')
    .map((i) => JSON.stringify(i, Object.keys(i).sort()))
    .sort()
    .concat(tokens.map((t) => JSON.stringify(t, Object.keys(t).sort())).sort())
    .join('\n');
  return { state, records: records.length };
};

type Scenario = () => Promise<{ token: string; tool: string; args: Record<string, unknown> }>;

/** Each writing tool's call, with what it needs made first (without faults). */
const scenariosOn = ({ server, ws }: Rig): Record<string, Scenario> => {
  const m = () => caller(server, ws.member.token);
  const a = () => caller(server, ws.admin.token);
  const task = async () => (await m()('task_create', { title: `Faulted ${randomUUID().slice(0, 6)}` })).structuredContent;

  return {
    task_create: async () => ({ token: ws.member.token, tool: 'task_create', args: { title: 'Created under faults' } }),
    task_update: async () => ({
      token: ws.member.token,
      tool: 'task_update',
      args: { taskId: (await task()).taskId, version: 1, title: 'After' },
    }),
    task_complete: async () => ({ token: ws.member.token, tool: 'task_complete', args: { taskId: (await task()).taskId } }),
    task_reopen: async () => {
      const t = await task();
      await m()('task_complete', { taskId: t.taskId });
      return { token: ws.member.token, tool: 'task_reopen', args: { taskId: t.taskId } };
    },
    task_delete: async () => {
      const t = await task();
      await m()('comment_add', { taskId: t.taskId, body: 'goes with it' });
      return { token: ws.member.token, tool: 'task_delete', args: { taskId: t.taskId } };
    },
    comment_add: async () => ({ token: ws.member.token, tool: 'comment_add', args: { taskId: (await task()).taskId, body: 'Hello' } }),
    comment_delete: async () => {
      const t = await task();
      const c = (await m()('comment_add', { taskId: t.taskId, body: 'Bye' })).structuredContent;
      return { token: ws.member.token, tool: 'comment_delete', args: { taskId: t.taskId, commentId: c.commentId } };
    },
    project_create: async () => ({ token: ws.admin.token, tool: 'project_create', args: { name: 'Faulted project' } }),
    project_update: async () => {
      const p = (await a()('project_create', { name: 'To rename' })).structuredContent;
      return { token: ws.admin.token, tool: 'project_update', args: { projectId: p.projectId, version: 1, name: 'Renamed' } };
    },
    project_archive: async () => {
      const p = (await a()('project_create', { name: 'To archive' })).structuredContent;
      return { token: ws.admin.token, tool: 'project_archive', args: { projectId: p.projectId } };
    },
    project_delete: async () => {
      const p = (await a()('project_create', { name: 'To delete' })).structuredContent;
      return { token: ws.admin.token, tool: 'project_delete', args: { projectId: p.projectId } };
    },
    member_invite: async () => ({
      token: ws.admin.token,
      tool: 'member_invite',
      args: { email: `invited-${randomUUID().slice(0, 6)}@example.test`, name: 'Invited' },
    }),
    member_role_set: async () => {
      const x = (await a()('member_invite', { email: `role-${randomUUID().slice(0, 6)}@example.test`, name: 'Role' })).structuredContent;
      return { token: ws.admin.token, tool: 'member_role_set', args: { userId: x.userId, role: 'viewer' } };
    },
    member_remove: async () => {
      const x = (await a()('member_invite', { email: `gone-${randomUUID().slice(0, 6)}@example.test`, name: 'Gone' })).structuredContent;
      await addToken(server, ws.workspaceId, x.userId, ['tasks:read']);
      return { token: ws.admin.token, tool: 'member_remove', args: { userId: x.userId } };
    },
    change_undo: async () => {
      const t = await task();
      const changed = (await m()('task_update', { taskId: t.taskId, version: 1, title: 'To undo' })).structuredContent;
      return { token: ws.member.token, tool: 'change_undo', args: { activityId: changed.activityId } };
    },
  };
};
const TOOLS = Object.keys(scenariosOn({} as Rig));

const call = (r: Rig, token: string, tool: string, args: Record<string, unknown>) =>
  modernCall(r.server, 'tools/call', { name: tool, arguments: args }, { token });

/** Which of a clean call's requests are its transactions (1-based among its writes, as the proxy counts). */
const transactionsOf = async (r: Rig, scenario: Scenario): Promise<number[]> => {
  const s = await scenario();
  const from = r.proxy.operations.length;
  const res = await call(r, s.token, s.tool, s.args);
  assert.equal(res.json.result?.isError, false, res.text);
  const writes = r.proxy.operations.slice(from).filter((op) => /^(Put|Update|Delete)Item$|Write/.test(op));
  return writes.flatMap((op, i) => (op === 'TransactWriteItems' ? [i + 1] : []));
};

describe('the change and its record are written together or not at all', { concurrency: TOOLS_AT_ONCE }, () => {
  for (const tool of TOOLS) {
    test(`${tool}: under every fault at each of its transactions, both or neither`, { timeout: 120_000 }, async (t) => {
      const r = await startRig();
      t.after(() => r.close());
      const scenario = scenariosOn(r)[tool]!;
      const transactions = await transactionsOf(r, scenario);
      assert.ok(transactions.length >= 1, `${tool} writes its change in a transaction`);
      for (const nth of transactions) {
        for (const fault of FAULTS) {
          // Arrange
          const s = await scenario();
          const before = await snapshot(r);

          // Act
          r.proxy.failWritesFrom(nth, fault);
          const res = await call(r, s.token, s.tool, s.args).finally(() => r.proxy.clearFault());
          const after = await snapshot(r);

          // Assert
          const where = `${tool}, transaction at write ${nth}, ${fault}: ${res.status} ${res.text.slice(0, 200)}`;
          assert.ok(res.status === 503 || (res.status === 200 && res.json.result), where);
          const added = after.records - before.records;
          // The first transaction is the change itself; a later one (a removed member's token) is a change of its own.
          if (nth === transactions[0]) {
            assert.ok(added === 0 || added === 1, `${where}: ${added} records`);
            assert.equal(after.state !== before.state, added === 1, `${where}: changed ${after.state !== before.state}, records +${added}`);
          } else {
            assert.equal(after.records - before.records >= 1, after.state !== before.state, where);
          }
        }
      }
    });
  }
});
