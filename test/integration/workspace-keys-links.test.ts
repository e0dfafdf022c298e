import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { doorSource } from '../../lambda/workspace/activity/records.js';
import { migrateWorkspace } from '../../lambda/workspace/admin/migrate.js';
import { numberExistingTasks } from '../../lambda/workspace/admin/numbering.js';
import { OPERATOR } from '../../lambda/workspace/membership/rules.js';
import { setWorkspaceKey } from '../../lambda/workspace/membership/workspaces.js';
import { modernCall } from '../helpers/local.js';
import { caller, createTestWorkspace, startWorkspaceServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Short task keys (DEMO-42) and blocked-by links against the embedded DynamoDB.

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  // Each request reads the workspace afresh, so a changed key shows at once.
  server = await startWorkspaceServer({ DOERS_AUTH_CACHE_SECONDS: '0' });
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const text = toolText;
const m = () => caller(server, ws.member.token);
const create = async (title: string, extra: Record<string, unknown> = {}, call = m()) => {
  const r = await call('task_create', { title, ...extra });
  assert.equal(r.isError, false, text(r));
  return r.structuredContent as { taskId: string; key: string; version: number; blockedBy?: { key: string; open: boolean }[] };
};

describe('task keys', () => {
  test('every new task gets the next number of its workspace, shown as KEY-n', async () => {
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);

    const a = await create('First', {}, call);
    const b = await create('Second', {}, call);

    assert.equal(a.key, 'TEST-1');
    assert.equal(b.key, 'TEST-2');
  });

  test('50 concurrent creates never share a number, and the counter ends at 50', async () => {
    // Arrange
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);

    // Act
    const made = await Promise.all(Array.from({ length: 50 }, (_, i) => create(`Concurrent ${i}`, {}, call)));

    // Assert
    const numbers = made.map((t) => Number(t.key.split('-')[1])).sort((x, y) => x - y);
    assert.deepEqual(
      numbers,
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    assert.equal((await server.app.services.directory.getWorkspace(own.workspaceId))?.taskCounter, 50);
  });

  test('every spelling of a key, and the id, name the same task in every tool and the resource template', async () => {
    // Arrange
    const t = await create('Spelled many ways');
    const n = t.key.split('-')[1]!;

    // Act
    const spellings = [t.key, t.key.toLowerCase(), `#${n}`, n, t.taskId];
    const reads = await Promise.all(spellings.map((ref) => m()('task_get', { taskId: ref })));
    const commented = await m()('comment_add', { taskId: `#${n}`, body: 'by key' });
    const comments = await m()('comments_list', { taskId: t.key.toLowerCase() });
    const history = await m()('activity_list', { task: t.key });
    const resource = await modernCall(server, 'resources/read', { uri: `doers://tasks/${t.key}` }, { token: ws.member.token });

    // Assert
    for (const r of reads) assert.equal(r.structuredContent.taskId, t.taskId, text(r));
    assert.equal(commented.structuredContent.taskId, t.taskId);
    assert.equal(comments.structuredContent.returned, 1);
    assert.equal(history.structuredContent.returned, 2);
    assert.match(resource.json.result.contents[0].text, /^# Spelled many ways/);
  });

  test("another workspace's key, a number nobody has and a malformed key are clear refusals", async () => {
    const answers = await Promise.all([
      m()('task_get', { taskId: 'OTHER-1' }),
      m()('task_get', { taskId: 'TEST-99999' }),
      m()('task_get', { taskId: 'TEST-' }),
    ]);

    assert.match(text(answers[0]!), /taskId: OTHER-1 is not a key of this workspace; its tasks are TEST-<number>/);
    assert.match(text(answers[1]!), /taskId: no task is TEST-99999 in this workspace/);
    assert.match(text(answers[2]!), /taskId: no task is TEST- in this workspace \(not found\)/);
    assert.ok(answers.every((a) => a.isError));
  });

  test('a new workspace key names the tasks from then on, and the old spelling still works', async () => {
    // Arrange
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const t = await create('Renamed key', {}, call);

    // Act
    await setWorkspaceKey(server.app.services, doorSource('admin CLI', OPERATOR, 'workspace key', new Date()), own.workspaceId, 'ACME');
    const byOld = await call('task_get', { taskId: t.key });
    const byNew = await call('task_get', { taskId: 'ACME-1' });

    // Assert
    assert.equal(byOld.structuredContent.key, 'ACME-1');
    assert.equal(byNew.structuredContent.taskId, t.taskId);
    assert.match(text(byNew), /^ACME-1 Renamed key/);
  });

  test('the migration numbers tasks from before numbers, oldest first, once; until then they read by id', async () => {
    // Arrange: three tasks as an older release stored them (layout 1), without a number.
    const own = await createTestWorkspace(server, { layout: 1 });
    const call = caller(server, own.member.token);
    const db = createDocumentClient({ endpoint: server.dynamodbEndpoint });
    const ids: string[] = [];
    for (const [i, title] of ['Oldest', 'Middle', 'Newest'].entries()) {
      const taskId = `00000000-0000-4000-8000-00000000000${i}`;
      ids.push(taskId);
      const at = `2026-01-0${i + 1}T00:00:00.000Z`;
      await db.send(
        new PutCommand({
          TableName: server.app.config.tables.workspace,
          Item: {
            pk: `WS#${own.workspaceId}`,
            sk: `TASK#${taskId}`,
            gsi1pk: `WS#${own.workspaceId}#TASKS`,
            gsi1sk: `O#~#P4#${taskId}`,
            search: title.toLowerCase(),
            workspaceId: own.workspaceId,
            taskId,
            title,
            status: 'open',
            priority: 'P4',
            labels: [],
            createdBy: own.member.userId,
            createdAt: at,
            updatedAt: at,
            version: 1,
          },
        }),
      );
    }
    const before = await call('task_get', { taskId: ids[0] });

    // Act
    const first = await numberExistingTasks(db, server.app.config.tables.workspace, own.workspaceId, {}, () => undefined);
    const again = await numberExistingTasks(db, server.app.config.tables.workspace, own.workspaceId, {}, () => undefined);
    const keys = await Promise.all(ids.map(async (taskId) => (await call('task_get', { taskId })).structuredContent.key));
    await migrateWorkspace(db, server.app.config.tables.workspace, own.workspaceId, { drainMs: 0 });
    const next = await create('After the migration', {}, call);

    // Assert
    assert.equal(before.isError, false);
    assert.match(text(before), new RegExp(`^\\[${ids[0]}\\] Oldest`), 'named by id until it has a number');
    assert.deepEqual([first.numbered, again.numbered], [3, 0]);
    assert.deepEqual(keys, ['TEST-1', 'TEST-2', 'TEST-3']);
    assert.equal(next.key, 'TEST-4');
  });
});

describe('blocked-by links', () => {
  test('moving a link from one done task to another done task is a change, written and recorded', async () => {
    // Arrange: two finished tasks, and one that waits on the first
    const call = m();
    const first = await create('Order the parts');
    const second = await create('Order the spare parts');
    await call('task_complete', { taskId: first.key });
    await call('task_complete', { taskId: second.key });
    const waiting = await create('Assemble the rig', { blockedBy: [first.key] });

    // Act
    const moved = await call('task_update', { taskId: waiting.key, version: waiting.version, blockedBy: [second.key] });

    // Assert
    assert.match(text(moved), /^Updated: /);
    assert.deepEqual(
      moved.structuredContent.blockedBy.map((b: { key: string }) => b.key),
      [second.key],
    );
    assert.equal(moved.structuredContent.version, waiting.version + 1);
  });

  test('a task waiting on open ones says so, in its text, search and agenda; the filter finds it', async () => {
    // Arrange
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const blocker = await create('Get the quote signed', {}, call);
    const waiting = await create('Send the invoice', { blockedBy: [blocker.key], assignee: 'me', dueDate: '2020-01-01' }, call);

    // Act
    const got = await call('task_get', { taskId: waiting.key });
    const blocked = await call('tasks_search', { blocked: true });
    const free = await call('tasks_search', { blocked: false });
    const agenda = await call('agenda_get', {});

    // Assert
    assert.deepEqual(waiting.blockedBy, [{ key: blocker.key, taskId: blocker.taskId, open: true }]);
    assert.match(text(got), new RegExp(`Blocked by: ${blocker.key} \\(open\\)`));
    assert.deepEqual(
      blocked.structuredContent.tasks.map((t: { key: string }) => t.key),
      [waiting.key],
    );
    assert.deepEqual(
      free.structuredContent.tasks.map((t: { key: string }) => t.key),
      [blocker.key],
    );
    assert.match(text(agenda), new RegExp(`${waiting.key} Send the invoice .*blocked by ${blocker.key} \\(open\\)`));
  });

  test('completing a blocker lists the tasks it unblocked; reopening it blocks them again', async () => {
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const a = await create('Blocker A', {}, call);
    const b = await create('Blocker B', {}, call);
    const onlyA = await create('Waits on A', { blockedBy: [a.key] }, call);
    const both = await create('Waits on A and B', { blockedBy: [a.key, b.key] }, call);

    const done = await call('task_complete', { taskId: a.key });
    const afterDone = await Promise.all([onlyA, both].map((t) => call('task_get', { taskId: t.key })));
    await call('task_reopen', { taskId: a.key });
    const afterReopen = await call('task_get', { taskId: onlyA.key });

    assert.deepEqual(
      done.structuredContent.unblocked.map((t: { key: string }) => t.key),
      [onlyA.key],
    );
    assert.match(text(done), new RegExp(`Unblocked: ${onlyA.key} Waits on A`));
    assert.deepEqual(afterDone[0]!.structuredContent.blockedBy, [{ key: a.key, taskId: a.taskId, open: false }]);
    assert.deepEqual(
      afterDone[1]!.structuredContent.blockedBy.map((x: { open: boolean }) => x.open),
      [false, true],
    );
    assert.equal(afterReopen.structuredContent.blockedBy[0].open, true);
  });

  test('a self-link, a cycle, a task of another workspace and a missing one are refused, naming the tasks', async () => {
    // Arrange: C waits on B, B waits on A.
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const a = await create('A', {}, call);
    const b = await create('B', { blockedBy: [a.key] }, call);
    const c = await create('C', { blockedBy: [b.key] }, call);
    const foreign = await create('Foreign');

    // Act
    const self = await call('task_update', { taskId: a.key, version: 1, blockedBy: [a.key] });
    const cycle = await call('task_update', { taskId: a.key, version: 1, blockedBy: [c.key] });
    const other = await call('task_update', { taskId: a.key, version: 1, blockedBy: [foreign.taskId] });
    const missing = await call('task_create', { title: 'Dangling', blockedBy: ['TEST-999'] });

    // Assert
    assert.match(text(self), /blockedBy: a task cannot wait on itself \(TEST-1\)/);
    assert.match(text(cycle), /blockedBy: that would make a cycle \(TEST-1 → TEST-3 → TEST-2 → TEST-1\)/);
    assert.match(text(other), /blockedBy: no task .* in this workspace/);
    assert.match(text(missing), /blockedBy: no task is TEST-999/);
    assert.equal((await call('task_get', { taskId: a.key })).structuredContent.version, 1, 'nothing written');
  });

  test("deleting a blocker leaves the waiting task's link, shown as deleted and waiting on nothing; undoing the delete makes it wait again", async () => {
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const blocker = await create('Goes away', {}, call);
    const waiting = await create('Waited on it', { blockedBy: [blocker.key] }, call);

    const deleted = await call('task_delete', { taskId: blocker.key });
    const without = await call('task_get', { taskId: waiting.key });
    const blockedMeanwhile = await call('tasks_search', { blocked: true });
    await call('change_undo', { activityId: deleted.structuredContent.activityId });
    const restored = await call('task_get', { taskId: waiting.key });

    // The link is the waiting task's own: its version did not move, and it says what became of the blocker.
    assert.deepEqual(without.structuredContent.blockedBy, [{ key: blocker.key, taskId: blocker.taskId, open: false, deleted: true }]);
    assert.equal(without.structuredContent.version, waiting.version);
    assert.match(text(without), new RegExp(`Blocked by: ${blocker.key} \\(deleted\\)`));
    assert.equal(blockedMeanwhile.structuredContent.returned, 0);
    assert.deepEqual(restored.structuredContent.blockedBy, [{ key: blocker.key, taskId: blocker.taskId, open: true }]);
    assert.equal(restored.structuredContent.version, waiting.version);
  });

  test('changing the links drops the old blocker and records the new one; undo puts the old ones back', async () => {
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const first = await create('First blocker', {}, call);
    const second = await create('Second blocker', {}, call);
    const waiting = await create('Moves its wait', { blockedBy: [first.key] }, call);

    const moved = await call('task_update', { taskId: waiting.key, version: 1, blockedBy: [second.key] });
    const freed = await call('task_complete', { taskId: first.key });
    await call('change_undo', { activityId: moved.structuredContent.activityId });
    const back = await call('task_get', { taskId: waiting.key });

    assert.deepEqual(
      moved.structuredContent.blockedBy.map((b: { key: string }) => b.key),
      [second.key],
    );
    assert.equal(freed.structuredContent.unblocked, undefined, 'the first no longer blocked it');
    assert.deepEqual(back.structuredContent.blockedBy, [{ key: first.key, taskId: first.taskId, open: false }]);
  });

  test('two entries of one bulk call that would close a cycle between them: one is written, the other refused, no cycle', async () => {
    // Arrange
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const a = await create('Ring A', {}, call);
    const b = await create('Ring B', {}, call);

    // Act: each entry alone is acyclic against what is stored.
    const r = await call('tasks_update', {
      tasks: [
        { taskId: a.key, blockedBy: [b.key] },
        { taskId: b.key, blockedBy: [a.key] },
      ],
    });

    // Assert
    const statuses = r.structuredContent.items.map((i: { status: string }) => i.status);
    assert.deepEqual([...statuses].sort(), ['refused', 'updated'], JSON.stringify(r.structuredContent.items));
    const [readA, readB] = [await call('task_get', { taskId: a.key }), await call('task_get', { taskId: b.key })];
    const waits = [readA, readB].filter((t) => t.structuredContent.blockedBy?.length);
    assert.equal(waits.length, 1, 'exactly one of the two waits on the other');
  });

  test('no task ends up waited on by more than 60, even when several entries each saw room for one more', async () => {
    // Arrange: a blocker with 59 dependents.
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const blocker = await create('Popular', {}, call);
    const many = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ title: `${tag} ${i + 1}`, blockedBy: [blocker.key] }));
    await call('tasks_create', { tasks: many(50, 'Waits') });
    await call('tasks_create', { tasks: many(9, 'Waits too') });

    // Act: three more at once, each planned against the 59 it read.
    const r = await call('tasks_create', { tasks: many(3, 'One too many') });

    // Assert
    const items = r.structuredContent.items as { status: string; reason?: string }[];
    assert.deepEqual(
      items.map((i) => i.status),
      ['created', 'refused', 'refused'],
    );
    assert.match(items[1]!.reason!, /blockedBy: TEST-\d+ already blocks 60 tasks, the most one task can; this one was not linked to it\./);
    const stored = await server.app.services.tasks.get(own.workspaceId, blocker.taskId);
    assert.equal(stored?.blocks?.length, 60);
    const extra = await call('task_create', { title: 'And another', blockedBy: [blocker.key] });
    assert.match(text(extra), /already blocks 60 tasks, the most one task can/);
  });

  test('a change that would write more tasks than one transaction holds is refused up front, naming why', async () => {
    // Arrange: T waits on 20 tasks and is waited on by 60.
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const blockers = (await call('tasks_create', { tasks: Array.from({ length: 40 }, (_, i) => ({ title: `Blocker ${i + 1}` })) }))
      .structuredContent.items as { key: string }[];
    const t = await create('Hub', { blockedBy: blockers.slice(0, 20).map((b) => b.key) }, call);
    await call('tasks_create', { tasks: Array.from({ length: 50 }, (_, i) => ({ title: `Dependent ${i + 1}`, blockedBy: [t.key] })) });
    await call('tasks_create', { tasks: Array.from({ length: 10 }, (_, i) => ({ title: `Dependent ${i + 51}`, blockedBy: [t.key] })) });

    // Act: done, and 20 other blockers: 1 + 20 + 20 + 60 tasks and the record.
    const r = await call('tasks_update', { tasks: [{ taskId: t.key, status: 'done', blockedBy: blockers.slice(20).map((b) => b.key) }] });

    // Assert
    const [item] = r.structuredContent.items as { status: string; reason: string }[];
    assert.equal(item!.status, 'refused');
    assert.match(item!.reason, /more than one all-or-nothing write holds; change the links and the status in two calls/);
    assert.equal((await call('task_get', { taskId: t.key })).structuredContent.version, 1, 'nothing written');
  });
});
