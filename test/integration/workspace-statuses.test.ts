import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { type CapacityProxy, startCapacityProxy } from '../helpers/capacity-proxy.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Workflow statuses against the embedded DynamoDB (behind a proxy that reports each request's
// consumed capacity): the default set, the words open and done, what each category means for the
// agenda, search and what waits, the activity record and its undo, refusals, and what a status
// change costs.

let dynamo: Awaited<ReturnType<typeof startEmbeddedDynamo>>;
let units: CapacityProxy;
let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  dynamo = await startEmbeddedDynamo(':memory:');
  units = await startCapacityProxy(dynamo.endpoint);
  server = await startOwnWorkspacesServer({ DOERS_DYNAMODB_ENDPOINT: units.endpoint });
  ws = await createTestWorkspace(server);
});
after(async () => {
  await server?.close();
  await units?.stop();
  await dynamo?.close();
});

const text = toolText;
const m = () => caller(server, ws.member.token);
type Out = { key: string; taskId: string; version: number; status: string; statusCategory: string; activityId?: string };
const create = async (title: string, extra: Record<string, unknown> = {}): Promise<Out> => {
  const r = await m()('task_create', { title, ...extra });
  assert.equal(r.isError, false, text(r));
  return r.structuredContent as Out;
};
const get = async (key: string) => (await m()('task_get', { taskId: key })).structuredContent as Out & Record<string, unknown>;
const setStatus = async (t: Out, status: string) => {
  const now = await get(t.key);
  return m()('task_update', { taskId: t.key, version: now.version, status });
};
const keysOf = (r: { structuredContent?: unknown }) => ((r.structuredContent as { tasks: Out[] }).tasks ?? []).map((t) => t.key);

describe('the default statuses', () => {
  test('a new task is in Todo; a status moves it through the set by name, category or word', async () => {
    // Arrange
    const t = await create('Draft the launch post');
    assert.deepEqual([t.status, t.statusCategory], ['Todo', 'unstarted']);

    // Act and Assert: a name (any case and spacing), a category (its first status), the old words.
    for (const [given, name, category] of [
      ['in-progress', 'In progress', 'started'],
      ['In Review', 'In review', 'started'],
      ['backlog', 'Backlog', 'backlog'],
      ['started', 'In progress', 'started'],
      ['done', 'Done', 'done'],
      ['open', 'Todo', 'unstarted'],
      ['Canceled', 'Canceled', 'canceled'],
    ] as const) {
      const r = await setStatus(t, given);
      assert.equal(r.isError, false, `${given}: ${text(r)}`);
      const out = r.structuredContent as Out;
      assert.deepEqual([out.status, out.statusCategory], [name, category], given);
    }
  });

  test('task_create and both bulk tools take a status; a line shows an open status other than Todo', async () => {
    const made = await m()('tasks_create', { tasks: [{ title: 'Groom the backlog', status: 'Backlog' }, { title: 'Ship it' }] });
    assert.equal(made.isError, false, text(made));
    const [backlog, plain] = (made.structuredContent as { items: { key: string }[] }).items.map((i) => i.key) as [string, string];

    const moved = await m()('tasks_update', { tasks: [{ taskId: plain, status: 'In review' }] });

    assert.equal(moved.isError, false, text(moved));
    assert.equal((await get(backlog)).status, 'Backlog');
    assert.equal((await get(plain)).status, 'In review');
    const found = await m()('tasks_search', { text: 'ship' });
    assert.match(text(found), /Ship it · P4, In review, no due date/);
  });

  test('a status that is not one is refused naming the argument and what is accepted, and nothing is written', async () => {
    const t = await create('Stays in Todo');

    const r = await setStatus(t, 'Blocked');

    assert.equal(r.isError, true);
    assert.match(text(r), /status: 'Blocked' is no status here; one of Backlog, Todo, In progress, In review, Done, Canceled/);
    const now = await get(t.key);
    assert.deepEqual([now.status, now.version], ['Todo', t.version]);
    const bulk = await m()('tasks_create', { tasks: [{ title: 'Odd', status: 'Waiting' }] });
    assert.match(text(bulk), /item 1 .*status: 'Waiting' is no status here/);
  });
});

describe('what each category means', () => {
  test('started and backlog tasks are open: on the agenda and in the default search; canceled ones leave both', async () => {
    const today = (await m()('me_get')).structuredContent as { today: string };
    const going = await create('Under way today', { dueDate: today.today, assignee: 'me', status: 'In progress' });
    const dropped = await create('Dropped today', { dueDate: today.today, assignee: 'me' });
    await setStatus(dropped, 'canceled');

    const agenda = await m()('agenda_get', { limit: 100 });
    const open = await m()('tasks_search', { limit: 100 });

    assert.ok(keysOf(agenda).includes(going.key));
    assert.ok(!keysOf(agenda).includes(dropped.key));
    assert.ok(keysOf(open).includes(going.key) && !keysOf(open).includes(dropped.key));
  });

  test('tasks_search filters by status names and categories; done is the done category, canceled apart', async () => {
    const a = await create('Filter: in progress', { status: 'In progress' });
    const b = await create('Filter: in review', { status: 'In review' });
    const c = await create('Filter: todo');
    const d = await create('Filter: done', { status: 'Done' });
    const e = await create('Filter: canceled', { status: 'Canceled' });
    const mine = (r: { structuredContent?: unknown }) => keysOf(r).filter((k) => [a, b, c, d, e].some((t) => t.key === k));

    assert.deepEqual(new Set(mine(await m()('tasks_search', { text: 'filter', status: 'started' }))), new Set([a.key, b.key]));
    assert.deepEqual(mine(await m()('tasks_search', { text: 'filter', status: 'In review, Todo' })).sort(), [b.key, c.key].sort());
    assert.deepEqual(mine(await m()('tasks_search', { text: 'filter', status: 'done' })), [d.key]);
    assert.deepEqual(mine(await m()('tasks_search', { text: 'filter', status: 'canceled' })), [e.key]);
    assert.equal(mine(await m()('tasks_search', { text: 'filter', status: 'any' })).length, 5);
    assert.deepEqual(new Set(mine(await m()('tasks_search', { text: 'filter' }))), new Set([a.key, b.key, c.key]));
    // The list reads (no text) go by the same filter.
    assert.ok(keysOf(await m()('tasks_search', { status: 'In progress', limit: 100 })).includes(a.key));
    assert.ok(!keysOf(await m()('tasks_search', { status: 'done', limit: 100 })).includes(e.key));
    const refused = await m()('tasks_search', { status: 'Someday' });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /status: 'Someday' is no status here/);
  });

  test('canceling a blocker frees what waits on it, and the link still says it is closed', async () => {
    const blocker = await create('Vendor call');
    const waiting = await create('Sign the contract', { blockedBy: [blocker.key] });
    assert.equal(
      (await m()('tasks_search', { blocked: true, limit: 100 })).structuredContent.tasks.some((t: Out) => t.key === waiting.key),
      true,
    );

    await setStatus(blocker, 'canceled');

    const now = (await get(waiting.key)) as Out & { blockedBy: { key: string; open: boolean }[] };
    assert.deepEqual(
      now.blockedBy.map((b) => [b.key, b.open]),
      [[blocker.key, false]],
    );
    const blocked = await m()('tasks_search', { blocked: true, limit: 100 });
    assert.equal(keysOf(blocked).includes(waiting.key), false);
  });

  test('a canceled task counts as neither open nor done in its project, and task_complete makes it Done', async () => {
    const project = (await caller(server, ws.admin.token)('project_create', { name: 'Statuses counted' })).structuredContent as {
      projectId: string;
    };
    const t = await create('Counted', { projectId: project.projectId });
    await setStatus(t, 'canceled');
    const counts = async () =>
      ((await m()('project_get', { projectId: project.projectId })).structuredContent as { counts: Record<string, number> }).counts;
    assert.deepEqual([(await counts()).open, (await counts()).done], [0, 0]);

    const done = await m()('task_complete', { taskId: t.key });

    assert.equal((done.structuredContent as Out).status, 'Done');
    assert.deepEqual([(await counts()).open, (await counts()).done], [0, 1]);
  });

  test('canceling a recurring task closes it (no next occurrence); completing one moves it on, back in Todo', async () => {
    const t = await create('Weekly sync notes', { repeat: 'every monday', status: 'In progress' });
    const due = (await get(t.key)).dueDate;

    const completed = await m()('task_complete', { taskId: t.key });
    const next = completed.structuredContent as Out & { dueDate: string };
    assert.deepEqual([next.status, next.dueDate > String(due)], ['Todo', true]);

    const canceled = await setStatus(t, 'canceled');
    const out = canceled.structuredContent as Out & { dueDate: string };
    assert.deepEqual([out.statusCategory, out.dueDate], ['canceled', next.dueDate]);
  });
});

describe('records and undo', () => {
  test('a status change is recorded in words and its undo puts the status back', async () => {
    const t = await create('Record me');
    const r = await setStatus(t, 'In review');
    const { activityId } = r.structuredContent as { activityId: string };

    const list = await m()('activity_list', { task: t.key });
    assert.match(text(list), /status Todo → In review/);
    const undo = await m()('change_undo', { activityId });

    assert.equal(undo.isError, false, text(undo));
    assert.equal((await get(t.key)).status, 'Todo');
    const canceled = await setStatus(t, 'canceled');
    assert.match(text(await m()('activity_list', { task: t.key, limit: 1 })), /canceled .*Record me/);
    await m()('change_undo', { activityId: (canceled.structuredContent as { activityId: string }).activityId });
    assert.deepEqual([(await get(t.key)).status, (await get(t.key)).completedAt], ['Todo', undefined]);
  });
});

describe('what it costs', () => {
  test('a status change writes no more units than a due-date change of the same task', async (t) => {
    // Arrange: two tasks alike.
    const a = await create('Cost of a status', { dueDate: '2031-01-10' });
    const b = await create('Cost of a date', { dueDate: '2031-01-10' });
    const writeUnits = async (fn: () => Promise<unknown>) => {
      const from = units.consumed.length;
      await fn();
      return units.consumed.slice(from).reduce((sum, c) => sum + c.write, 0);
    };

    // Act
    const status = await writeUnits(() => m()('task_update', { taskId: a.key, version: a.version, status: 'In progress' }));
    const date = await writeUnits(() => m()('task_update', { taskId: b.key, version: b.version, dueDate: '2031-01-11' }));

    // Assert
    t.diagnostic(`write units: status change ${status}, due-date change ${date}`);
    assert.ok(status > 0 && date > 0);
    assert.ok(status <= date, `status change ${status} write units, due-date change ${date}`);
  });
});
