import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { ToolRefusal } from '../../lambda/errors.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { TASK_ITEM_SK, taskPk, taskSk } from '../../lambda/platform/item-keys.js';
import type { Principal } from '../../lambda/vocabulary.js';
import type { Caller } from '../../lambda/workspace/model/caller.js';
import type { Task } from '../../lambda/workspace/model/types.js';
import type { WriteContext } from '../../lambda/workspace/store/stores.js';
import { changeTask, changeTasks, createTasks } from '../../lambda/workspace/tasks/task-writer.js';
import { type DynamoProxy, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// The task writer driven directly, as every door drives it: typed refusals, the rules, how writes
// are packed (one action per item and blocker, actions and bytes per transaction), and healing a link
// to a task gone for good. Transactions whose outcome DynamoDB answers late or "in progress" are in
// test/integration/unconfirmed-writes-faults.test.ts.
// The stores are the deployed function's own, over the embedded DynamoDB behind a counting proxy.

let server: LocalServer;
let proxy: DynamoProxy;
let close: () => Promise<void>;
let ws: TestWorkspace;

before(async () => {
  ({ server, proxy, close } = await startProxiedServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' }));
  ws = await createTestWorkspace(server);
});
after(() => close());

const callerOf = (userId: string, role: Principal['role']): Caller => ({
  workspaceId: ws.workspaceId,
  workspaceKey: 'TEST',
  pastKeys: [],
  taskCounter: 0,
  directoryVersion: 0,
  layout: 2,
  userId,
  name: userId,
  role,
  timeZone: 'UTC',
});

const ctxOf = (caller: Caller): WriteContext => ({
  stores: server.app.services,
  caller,
  source: { actorId: caller.userId, actorName: caller.name, client: 'domain test', tool: 'test', now: new Date() },
});

const member = () => ctxOf(callerOf(ws.member.userId, 'member'));

const made = async (titles: readonly string[], ctx = member()): Promise<Task[]> => {
  const outcomes = await createTasks(
    ctx,
    titles.map((title) => ({ fields: { title, priority: 'P4' as const } })),
  );
  return outcomes.map((o) => {
    assert.ok(o.ok && 'written' in o, JSON.stringify(o));
    return o.written.task;
  });
};

const transactionsDuring = async (run: () => Promise<unknown>): Promise<number> => {
  const from = proxy.operations.length;
  await run();
  return proxy.operations.slice(from).filter((op) => op === 'TransactWriteItems').length;
};

const reasonOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ToolRefusal, String(err));
    return err.reason;
  }
  assert.fail('expected a refusal');
};

describe('refusals carry a typed reason and its data', () => {
  test('a stale version: version-conflict, with the current version', async () => {
    const [t] = await made(['Versioned']);
    await changeTask(member(), t!, { title: 'Moved on' });

    const err = await changeTask(member(), t!, { title: 'Stale' }, { expectVersion: 1 }).catch((e: ToolRefusal) => e);

    assert.ok(err instanceof ToolRefusal);
    assert.equal(err.reason, 'version-conflict');
    assert.deepEqual(err.data, { current: 2, expected: 1 });
  });

  test('a viewer changing a task: role, whatever door it came through', async () => {
    const [t] = await made(['Guarded']);

    assert.equal(await reasonOf(changeTask(ctxOf(callerOf(ws.viewer.userId, 'viewer')), t!, { title: 'Nope' })), 'role');
  });

  test("a member deleting someone else's task: role; restoring it (the delete's undo) needs the same", async () => {
    const [t] = await made(['Theirs'], ctxOf(callerOf(ws.admin.userId, 'admin')));
    const deleted = await changeTask(ctxOf(callerOf(ws.admin.userId, 'admin')), t!, { deleted: true });

    assert.equal(await reasonOf(changeTask(member(), t!, { deleted: true })), 'role');
    assert.equal(await reasonOf(changeTask(member(), deleted!.task, { deleted: false }, { fromRecord: true })), 'role');
  });

  test('a change of a deleted task: deleted', async () => {
    const [t] = await made(['Gone']);
    const deleted = await changeTask(member(), t!, { deleted: true });

    assert.equal(await reasonOf(changeTask(member(), deleted!.task, { title: 'After' })), 'deleted');
  });
});

describe('packing: one action per item, as few transactions as fit', () => {
  test('fifty changes that all keep one shared blocker are two transactions at most, not one each', async () => {
    const [blocker] = await made(['Shared blocker']);
    const tasks = await made(Array.from({ length: 50 }, (_, i) => `Waits ${i}`));
    const linked = await changeTasks(
      member(),
      tasks.map((t) => ({ before: t, patch: { blockedBy: [blocker!.taskId] } })),
    );
    assert.ok(
      linked.every((o) => o.ok),
      JSON.stringify(linked.find((o) => !o.ok)),
    );

    const fresh = await server.app.services.tasks.getMany(
      ws.workspaceId,
      tasks.map((t) => t.taskId),
    );
    const n = await transactionsDuring(() =>
      changeTasks(
        member(),
        tasks.map((t) => ({ before: fresh.get(t.taskId)!, patch: { priority: 'P2', blockedBy: [blocker!.taskId] } })),
      ),
    );

    assert.ok(n <= 2, `${n} transactions`);
    assert.equal((await server.app.services.tasks.get(ws.workspaceId, blocker!.taskId))!.blocks!.length, 50);
  });
});

describe('a link to a task gone for good is dropped by the next write that meets it', () => {
  test('completing a blocker whose waiting task expired (TTL) completes it, and forgets the expired one', async () => {
    const [blocker] = await made(['Outlives its dependent']);
    const [dependent] = await made(['Expires']);
    await changeTask(member(), dependent!, { blockedBy: [blocker!.taskId] });
    const db = createDocumentClient({ endpoint: server.dynamodbEndpoint });
    // As TTL removes a deleted task once its undo window ends.
    await db.send(
      new DeleteCommand({
        TableName: server.app.config.tables.workspace,
        Key: { pk: taskPk(ws.workspaceId, dependent!.taskId), sk: TASK_ITEM_SK },
      }),
    );
    db.destroy();
    const current = (await server.app.services.tasks.get(ws.workspaceId, blocker!.taskId))!;

    const done = await changeTask(member(), current, { status: 'done' });

    assert.equal(done?.task.status, 'done');
    assert.equal((await server.app.services.tasks.get(ws.workspaceId, blocker!.taskId))!.blocks, undefined);
  });
});

describe('links made at the same moment by two calls', () => {
  test('two calls that each look acyclic alone cannot close a three-task cycle, whichever lands first', async () => {
    // Arrange: Z waits on X. One call makes Y wait on Z, the other X wait on Y: each alone is fine.
    const [x, y, z] = await made(['Cycle X', 'Cycle Y', 'Cycle Z']);
    const zNow = (await changeTask(member(), z!, { blockedBy: [x!.taskId] }))!.task;
    const xNow = (await server.app.services.tasks.getAny(ws.workspaceId, x!.taskId))!;
    // Both read before either writes; the one writing Y's own links lands first (the order that let
    // a cycle through when only the tasks' own links were held).
    proxy.holdTransactions(2, (bodies) => {
      const first = bodies.findIndex(
        (b) => b.includes(`"${taskSk(y!.taskId)}"`) && b.includes('"blockedBy"') && !b.includes(`"${taskSk(x!.taskId)}"`),
      );
      return first === 1 ? [1, 0] : [0, 1];
    });

    // Act
    const [yz, xy] = await Promise.allSettled([
      changeTask(member(), y!, { blockedBy: [zNow.taskId] }),
      changeTask(member(), xNow, { blockedBy: [y!.taskId] }),
    ]);

    // Assert: one of them is refused as a cycle, and no task waits on itself through the others.
    const refused = [yz, xy].filter((r) => r.status === 'rejected');
    assert.equal(refused.length, 1, JSON.stringify([yz, xy].map((r) => r.status)));
    assert.match(String((refused[0] as PromiseRejectedResult).reason.message), /that would make a cycle/);
    const now = await server.app.services.tasks.getMany(ws.workspaceId, [x!.taskId, y!.taskId, z!.taskId]);
    const waitsOn = (id: string) => Object.keys(now.get(id)!.blockedBy ?? {});
    const reach = (from: string, seen = new Set<string>()): Set<string> => {
      for (const b of waitsOn(from)) if (!seen.has(b)) reach(b, seen.add(b));
      return seen;
    };
    for (const id of [x!.taskId, y!.taskId, z!.taskId]) assert.ok(!reach(id).has(id), `${id} waits on itself`);
  });
});
