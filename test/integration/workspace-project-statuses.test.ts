import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { LocalServer } from '../../lambda/local/server.js';
import { urlOf } from '../helpers/local.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// A project's own workflow statuses, through the tools as a client calls them: the set on
// project_create and project_update, tasks in it, renames that keep tasks, removals that say where
// their tasks go (asked through a form where the client can show one), moves between projects,
// undo, and every refusal of a bad set, each leaving the project as it was.

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const text = toolText;
const owner = () => caller(server, ws.owner.token);
const m = () => caller(server, ws.member.token);
type Out = { key: string; taskId: string; version: number; status: string; statusCategory: string; activityId?: string };
type ProjectOut = {
  projectId: string;
  version: number;
  statuses: { name: string; category: string }[];
  activityId?: string;
  moved?: string[];
};

const FLOW = [
  { name: 'Ready', category: 'unstarted' },
  { name: 'Doing', category: 'started' },
  { name: 'QA', category: 'started' },
  { name: 'Shipped', category: 'done' },
  { name: "Won't do", category: 'canceled' },
];

const project = async (name: string, statuses: unknown = FLOW): Promise<ProjectOut> => {
  const r = await owner()('project_create', { name, statuses });
  assert.equal(r.isError, false, text(r));
  return r.structuredContent as ProjectOut;
};
const readProject = async (projectId: string) =>
  (await owner()('project_get', { projectId })).structuredContent as {
    project: { version: number };
    statuses: { name: string; category: string }[];
    counts: { open: number; done: number };
  };
const create = async (title: string, extra: Record<string, unknown> = {}): Promise<Out> => {
  const r = await m()('task_create', { title, ...extra });
  assert.equal(r.isError, false, text(r));
  return r.structuredContent as Out;
};
const get = async (key: string) => (await m()('task_get', { taskId: key })).structuredContent as Out & Record<string, unknown>;
const setStatus = async (t: Out, status: string) => m()('task_update', { taskId: t.key, version: (await get(t.key)).version, status });
const keysOf = (r: { structuredContent?: unknown }) => ((r.structuredContent as { tasks: Out[] }).tasks ?? []).map((t) => t.key).sort();
const update = async (p: { projectId: string }, args: Record<string, unknown>) =>
  owner()('project_update', { projectId: p.projectId, version: (await readProject(p.projectId)).project.version, ...args });

/** A 2026-07-28 client of the official SDK that can show forms, answering each question with `answer(schema)`. */
const asking = async (
  answer: (params: { message: string; requestedSchema: { properties: Record<string, { enum?: string[] }> } }) => unknown,
) => {
  const client = new Client(
    { name: 'doers-statuses', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  const asked: { message: string; requestedSchema: { properties: Record<string, { enum?: string[]; default?: string }> } }[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as (typeof asked)[number];
    asked.push(params);
    return answer(params) as never;
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${ws.owner.token}` } } }),
  );
  return { client, asked };
};

describe("a project's own statuses", () => {
  test('a project made with its statuses puts its tasks in them, in its order, by name or category', async () => {
    // Arrange
    const p = await project('Launch');

    // Act
    const t = await create('Write the release notes', { projectId: p.projectId });
    const moved = await setStatus(t, 'qa');
    const done = await m()('task_complete', { taskId: t.key });

    // Assert
    assert.deepEqual(p.statuses, FLOW);
    assert.deepEqual([t.status, t.statusCategory], ['Ready', 'unstarted']);
    assert.equal(moved.isError, false, text(moved));
    assert.deepEqual([(moved.structuredContent as Out).status, (moved.structuredContent as Out).statusCategory], ['QA', 'started']);
    assert.equal((done.structuredContent as Out).status, 'Shipped', 'completing sets the first done status');
    const read = await readProject(p.projectId);
    assert.deepEqual(read.statuses, FLOW);
    assert.equal(read.counts.done, 1);
  });

  test("a status of another project, or of the workspace's set, is refused naming the project's statuses; nothing is written", async () => {
    // Arrange
    const p = await project('Support');
    const inside = await create('Answer the ticket', { projectId: p.projectId });
    const outside = await create('Water the plants');

    // Act
    const workspaceName = await setStatus(inside, 'In review');
    const otherProjects = await setStatus(outside, 'Doing');
    const atCreation = await m()('task_create', { title: 'x', projectId: p.projectId, status: 'Backlog' });

    // Assert
    assert.equal(workspaceName.isError, true);
    assert.match(text(workspaceName), /status: 'In review' is no status here; one of Ready, Doing, QA, Shipped, Won't do/);
    assert.equal(otherProjects.isError, true);
    assert.match(text(otherProjects), /status: 'Doing' is no status here; one of Backlog, Todo, In progress, In review, Done, Canceled/);
    assert.equal(atCreation.isError, true);
    assert.equal((await get(inside.key)).status, 'Ready');
    assert.equal((await get(inside.key)).version, inside.version);
    assert.equal((await get(outside.key)).status, 'Todo');
  });

  test('a bad set is refused naming the argument and what it would take, leaving the project as it was', async () => {
    // Arrange
    const p = await project('Refusals');
    const version = (await readProject(p.projectId)).project.version;

    // Act and Assert
    for (const [statuses, said] of [
      [[], /statuses: is empty; a project needs at least one open and one done status/],
      [[{ name: 'Ready', category: 'unstarted' }], /statuses: has no status in the done category/],
      [[{ name: 'Shipped', category: 'done' }], /statuses: has no open status \(backlog, unstarted or started\)/],
      [
        [
          { name: 'Ready', category: 'unstarted' },
          { name: 'ready ', category: 'started' },
          { name: 'Shipped', category: 'done' },
        ],
        /statuses: 'ready ' is named twice/,
      ],
      [
        [
          { name: 'Open', category: 'unstarted' },
          { name: 'Shipped', category: 'done' },
        ],
        /statuses\[0\]\.name: 'Open' is a word searches reserve/,
      ],
      [
        [
          { name: 'Ready', category: 'started' },
          { name: 'Shipped', category: 'done' },
        ],
        /statuses\[0\]\.category: 'Ready' is unstarted, and a status keeps its category/,
      ],
      [
        [
          { name: 'Later', category: 'unstarted', was: 'Someday' },
          { name: 'Shipped', category: 'done' },
        ],
        /statuses\[0\]\.was: 'Someday' is no status of this project; its statuses are Ready, Doing, QA, Shipped, Won't do/,
      ],
      [
        [
          { name: 'x'.repeat(41), category: 'unstarted' },
          { name: 'Shipped', category: 'done' },
        ],
        /statuses\[0\]\.name: .* 1 to 40 characters/,
      ],
    ] as const) {
      const r = await owner()('project_update', { projectId: p.projectId, version, statuses });
      assert.equal(r.isError, true, JSON.stringify(statuses));
      assert.match(text(r), said);
    }
    const after = await readProject(p.projectId);
    assert.equal(after.project.version, version);
    assert.deepEqual(after.statuses, FLOW);
  });

  test('a rename keeps its tasks in it, and a search by the new name finds them', async () => {
    // Arrange
    const p = await project('Rename');
    const t = await create('Test the upgrade', { projectId: p.projectId });
    await setStatus(t, 'QA');

    // Act
    const r = await update(p, {
      statuses: [...FLOW.slice(0, 2), { name: 'Testing', category: 'started', was: 'QA' }, ...FLOW.slice(3)],
    });

    // Assert
    assert.equal(r.isError, false, text(r));
    assert.equal((await get(t.key)).status, 'Testing');
    assert.deepEqual(keysOf(await m()('tasks_search', { project: p.projectId, status: 'Testing' })), [t.key]);
    assert.match(
      text(await owner()('activity_list', { project: p.projectId, limit: 1 })),
      /statuses Ready, Doing, QA, Shipped, Won't do → Ready, Doing, Testing, Shipped, Won't do/,
    );
  });

  test('reordering moves no task, even the ones in the first status', async () => {
    // Arrange
    const p = await project('Reorder', [
      { name: 'Ready', category: 'unstarted' },
      { name: 'Queued', category: 'unstarted' },
      { name: 'Shipped', category: 'done' },
    ]);
    const t = await create('Stay where you are', { projectId: p.projectId });

    // Act
    const r = await update(p, {
      statuses: [
        { name: 'Queued', category: 'unstarted' },
        { name: 'Ready', category: 'unstarted' },
        { name: 'Shipped', category: 'done' },
      ],
    });

    // Assert
    assert.equal(r.isError, false, text(r));
    assert.equal((await get(t.key)).status, 'Ready');
    assert.equal((await create('New one', { projectId: p.projectId })).status, 'Queued', 'a new task starts in the first unstarted');
  });

  test('removing a status in use: its tasks read as where moveTo says, the search follows them, and undo brings it back', async () => {
    // Arrange
    const p = await project('Remove');
    const a = await create('In QA one', { projectId: p.projectId });
    const b = await create('In QA two', { projectId: p.projectId });
    await setStatus(a, 'QA');
    await setStatus(b, 'QA');
    const before = await readProject(p.projectId);

    // Act: a client that cannot show a form says where they go itself.
    const without = FLOW.filter((s) => s.name !== 'QA');
    const wrong = await update(p, { statuses: without, moveTo: { QA: 'Shipped' } });
    const r = await update(p, { statuses: without, moveTo: { qa: 'Ready' } });

    // Assert
    assert.equal(wrong.isError, true);
    assert.match(text(wrong), /moveTo: 'QA' → 'Shipped': the tasks of a open status go to an open one; here one of Ready, Doing/);
    assert.equal(r.isError, false, text(r));
    const out = r.structuredContent as ProjectOut;
    assert.deepEqual(out.moved, ['QA → Ready']);
    assert.match(text(r), /Removed \(its tasks now read as the other\): QA → Ready/);
    assert.equal((await get(a.key)).status, 'Ready');
    assert.deepEqual(keysOf(await m()('tasks_search', { project: p.projectId, status: 'Ready' })), [a.key, b.key].sort());
    assert.deepEqual((await readProject(p.projectId)).counts, before.counts, 'counts stay: no task was rewritten');

    // Act: undo the change of the set.
    const undo = await owner()('change_undo', { activityId: out.activityId });

    // Assert
    assert.equal(undo.isError, false, text(undo));
    assert.equal((await get(a.key)).status, 'QA');
    assert.deepEqual((await readProject(p.projectId)).statuses, FLOW);
  });

  test('where the client can show a form, removing a status asks where its tasks go, offering the statuses they can go to', async () => {
    // Arrange
    const p = await project('Asked');
    const t = await create('Under way', { projectId: p.projectId });
    await setStatus(t, 'Doing');
    const { client, asked } = await asking((params) => {
      const field = Object.keys(params.requestedSchema.properties).find((k) => k !== 'confirm')!;
      return { action: 'accept', content: { [field]: 'Ready', confirm: true } };
    });

    // Act
    const r = await client.callTool({
      name: 'project_update',
      arguments: { projectId: p.projectId, version: p.version, statuses: FLOW.filter((s) => s.name !== 'Doing') },
    });
    await client.close();

    // Assert
    assert.equal(r.isError, false, JSON.stringify(r.content));
    assert.equal(asked.length, 1);
    assert.match(asked[0]!.message, /removing Doing \(its tasks go to QA\)/, 'proposed: the first of its category');
    const choice = Object.entries(asked[0]!.requestedSchema.properties).find(([k]) => k !== 'confirm')![1];
    assert.deepEqual(choice.enum, ['Ready', 'QA'], 'open statuses only');
    assert.equal(choice.default, 'QA');
    assert.equal((await get(t.key)).status, 'Ready', 'the answer chose where they went');
  });

  test('a project that stops offering canceled keeps its canceled tasks canceled; one made without it has no canceled', async () => {
    // Arrange
    const p = await project('No cancel');
    const t = await create('Dropped', { projectId: p.projectId });
    await setStatus(t, "won't do");

    // Act
    const r = await update(p, { statuses: FLOW.filter((s) => s.category !== 'canceled') });
    const later = await create('Later', { projectId: p.projectId });
    const cancel = await setStatus(later, 'canceled');

    // Assert
    assert.equal(r.isError, false, text(r));
    assert.deepEqual([(await get(t.key)).status, (await get(t.key)).statusCategory], ["Won't do", 'canceled']);
    assert.equal(cancel.isError, true);
    assert.match(text(cancel), /'canceled' is no status here; one of Ready, Doing, QA, Shipped/);
    assert.deepEqual(keysOf(await m()('tasks_search', { project: p.projectId, status: 'canceled' })), [t.key]);
  });

  test('a task moving to another project takes the status of its name there, else of its category; canceled only where there is one', async () => {
    // Arrange
    const p = await project('Target', [
      { name: 'Ready', category: 'unstarted' },
      { name: 'In progress', category: 'started' },
      { name: 'Shipped', category: 'done' },
    ]);
    const working = await create('Working on it');
    await setStatus(working, 'In progress');
    const reviewing = await create('In review now');
    await setStatus(reviewing, 'In review');
    const dropped = await create('Dropped');
    await setStatus(dropped, 'Canceled');

    // Act
    const w = await m()('task_update', { taskId: working.key, version: (await get(working.key)).version, projectId: p.projectId });
    const v = await m()('task_update', { taskId: reviewing.key, version: (await get(reviewing.key)).version, projectId: p.projectId });
    const d = await m()('task_update', { taskId: dropped.key, version: (await get(dropped.key)).version, projectId: p.projectId });
    const back = await m()('task_update', { taskId: working.key, version: (await get(working.key)).version, projectId: null });

    // Assert
    assert.equal((w.structuredContent as Out).status, 'In progress', 'by name');
    assert.equal((v.structuredContent as Out).status, 'In progress', 'by category: the first started');
    assert.equal(d.isError, true);
    assert.match(text(d), /projectId: the task is Canceled and that project has no canceled status; reopen or complete it first/);
    assert.equal((await get(dropped.key)).status, 'Canceled');
    assert.equal((back.structuredContent as Out).status, 'In progress');
  });

  test("a task record names the project's statuses, and its undo puts the status back", async () => {
    // Arrange
    const p = await project('Records');
    const t = await create('Record me', { projectId: p.projectId });

    // Act
    const moved = (await setStatus(t, 'Doing')).structuredContent as Out;
    const history = await m()('activity_list', { task: t.key, limit: 1 });
    const undo = await m()('change_undo', { activityId: moved.activityId });

    // Assert
    assert.match(text(history), /status Ready → Doing/);
    assert.equal(undo.isError, false, text(undo));
    assert.equal((await get(t.key)).status, 'Ready');
  });

  test('across projects a search by a status name finds it in every set that has it', async () => {
    // Arrange
    const p = await project('Across');
    const mine = await create('Doing in a project', { projectId: p.projectId });
    await setStatus(mine, 'Doing');
    const plain = await create('In progress, no project');
    await setStatus(plain, 'In progress');

    // Act
    const doing = await m()('tasks_search', { status: 'Doing' });
    const started = await m()('tasks_search', { status: 'started' });

    // Assert
    assert.deepEqual(keysOf(doing), [mine.key]);
    assert.ok(keysOf(started).includes(mine.key) && keysOf(started).includes(plain.key), text(started));
  });
});

describe('review findings on the default statuses', () => {
  test('done after canceled is completed now: done today counts it, its record says completed, undo gives the cancel time back', async () => {
    // Arrange
    const t = await create('Canceled, then done after all', { assignee: 'me' });
    const canceled = (await setStatus(t, 'Canceled')).structuredContent as Out & { completedAt: string };
    const base = (await m()('agenda_get', {})).structuredContent as { counts: { doneToday: number } };
    await new Promise((r) => setTimeout(r, 5));

    // Act
    const done = (await m()('task_complete', { taskId: t.key })).structuredContent as Out & { completedAt: string };
    const history = await m()('activity_list', { task: t.key, limit: 1 });
    const agenda = (await m()('agenda_get', {})).structuredContent as { counts: { doneToday: number } };
    const undo = await m()('change_undo', { activityId: done.activityId });

    // Assert
    assert.ok(done.completedAt > canceled.completedAt, `${done.completedAt} after ${canceled.completedAt}`);
    assert.equal(agenda.counts.doneToday, base.counts.doneToday + 1);
    assert.match(text(history), /completed .*Canceled, then done after all/);
    assert.equal(undo.isError, false, text(undo));
    const back = (await get(t.key)) as Out & { completedAt: string };
    assert.deepEqual([back.status, back.completedAt], ['Canceled', canceled.completedAt]);
  });

  test("a parent's rollup counts done subtasks, not canceled ones", async () => {
    // Arrange
    const parent = await create('Parent with a canceled child');
    const child = await create('Child', { parent: parent.key });
    await setStatus(child, 'Canceled');

    // Act
    const r = await m()('task_get', { taskId: parent.key });

    // Assert
    assert.match(text(r), /Subtasks \(0 of 1 done\)/);
  });
});

describe('red-team findings on project statuses (each failed before its fix)', () => {
  test('a renamed status no longer answers to its old name, in writes or searches, here or across projects', async () => {
    // Arrange: the workspace's statuses, In progress renamed Doing
    const p = await project('Renamed default', [
      { name: 'Todo', category: 'unstarted' },
      { name: 'In progress', category: 'started' },
      { name: 'Done', category: 'done' },
    ]);
    const t = await create('Under way', { projectId: p.projectId });
    await setStatus(t, 'In progress');
    await update(p, {
      statuses: [
        { name: 'Todo', category: 'unstarted' },
        { name: 'Doing', category: 'started', was: 'In progress' },
        { name: 'Done', category: 'done' },
      ],
    });

    // Act
    const made = await m()('task_create', { title: 'Old name', projectId: p.projectId, status: 'in progress' });
    const here = await m()('tasks_search', { project: p.projectId, status: 'In progress' });
    const across = await m()('tasks_search', { status: 'In progress', limit: 100 });

    // Assert
    assert.equal(made.isError, true);
    assert.match(text(made), /'in progress' is no status here; one of Todo, Doing, Done/);
    assert.equal(here.isError, true);
    assert.ok(!keysOf(across).includes(t.key), 'a task in Doing is not found as In progress');
    assert.equal((await get(t.key)).status, 'Doing');
  });

  test('undo puts back the status a record kept by its key, not by a name another status took since', async () => {
    // Arrange: In review renamed Reviewing, then a done status named In review put before it
    const p = await project('Shadowed', [
      { name: 'Todo', category: 'unstarted' },
      { name: 'In review', category: 'started' },
      { name: 'Done', category: 'done' },
    ]);
    const t = await create('Reviewed', { projectId: p.projectId });
    await setStatus(t, 'In review');
    const renamed = await update(p, {
      statuses: [
        { name: 'Todo', category: 'unstarted' },
        { name: 'Reviewing', category: 'started', was: 'In review' },
        { name: 'Done', category: 'done' },
      ],
    });
    const shadow = await update(p, {
      statuses: [
        { name: 'Todo', category: 'unstarted' },
        { name: 'In review', category: 'done' },
        { name: 'Reviewing', category: 'started' },
        { name: 'Done', category: 'done' },
      ],
    });
    assert.equal(renamed.isError, false, text(renamed));
    assert.equal(shadow.isError, false, text(shadow));
    const moved = (await setStatus(t, 'Todo')).structuredContent as Out;

    // Act
    const undo = await m()('change_undo', { activityId: moved.activityId });

    // Assert
    assert.equal(undo.isError, false, text(undo));
    const back = await get(t.key);
    assert.deepEqual([back.status, back.statusCategory], ['Reviewing', 'started']);
  });

  test('undoing a change of the set leaves no task in a status nobody reads: each reads, counts and is found as one of the set put back', async () => {
    // Arrange
    const p = await project('Undo set', [
      { name: 'Todo', category: 'unstarted' },
      { name: 'Done', category: 'done' },
      { name: 'Canceled', category: 'canceled' },
    ]);
    const changed = (
      await update(p, {
        statuses: [
          { name: 'Todo', category: 'unstarted' },
          { name: 'Doing', category: 'started' },
          { name: 'Shipped', category: 'done' },
          { name: 'Dropped', category: 'canceled' },
        ],
      })
    ).structuredContent as ProjectOut;
    const doing = await create('Doing it', { projectId: p.projectId });
    await setStatus(doing, 'Doing');
    const dropped = await create('Dropping it', { projectId: p.projectId });
    await setStatus(dropped, 'Dropped');
    const shipped = await create('Shipping it', { projectId: p.projectId });
    await m()('task_complete', { taskId: shipped.key });
    const counts = (await readProject(p.projectId)).counts;

    // Act
    const undo = await owner()('change_undo', { activityId: changed.activityId });

    // Assert
    assert.equal(undo.isError, false, text(undo));
    assert.deepEqual(
      (await readProject(p.projectId)).statuses.map((s) => s.name),
      ['Todo', 'Done', 'Canceled'],
    );
    assert.deepEqual(
      [(await get(doing.key)).status, (await get(dropped.key)).status, (await get(shipped.key)).status],
      ['Todo', 'Canceled', 'Done'],
    );
    assert.deepEqual((await readProject(p.projectId)).counts, counts, 'counts as they were');
    assert.deepEqual(keysOf(await m()('tasks_search', { project: p.projectId, status: 'Canceled' })), [dropped.key]);
    assert.deepEqual(keysOf(await m()('tasks_search', { project: p.projectId, status: 'Done' })), [shipped.key]);
    assert.deepEqual(keysOf(await m()('tasks_search', { project: p.projectId, status: 'Todo' })), [doing.key]);
  });

  test('a closed task moving between projects keeps its category: a done one is never canceled by a name, nor the other way round', async () => {
    // Arrange: Shipped is done in one project and canceled in the other
    const a = await project('Ships', [
      { name: 'Todo', category: 'unstarted' },
      { name: 'Shipped', category: 'done' },
    ]);
    const b = await project('Drops', [
      { name: 'Todo', category: 'unstarted' },
      { name: 'Done', category: 'done' },
      { name: 'Shipped', category: 'canceled' },
    ]);
    const t = await create('Ship it', { projectId: a.projectId });
    await m()('task_complete', { taskId: t.key });

    // Act
    const moved = await m()('task_update', { taskId: t.key, version: (await get(t.key)).version, projectId: b.projectId });

    // Assert
    assert.equal(moved.isError, false, text(moved));
    assert.deepEqual([(moved.structuredContent as Out).status, (moved.structuredContent as Out).statusCategory], ['Done', 'done']);
    assert.equal((await readProject(b.projectId)).counts.done, 1);
  });

  test('undoing a change into a status removed since puts the task where that status went', async () => {
    // Arrange
    const p = await project('Undo into removed');
    const t = await create('Moves on', { projectId: p.projectId });
    await setStatus(t, 'Doing');
    const moved = (await setStatus(t, 'QA')).structuredContent as Out;
    await update(p, { statuses: FLOW.filter((s) => s.name !== 'Doing'), moveTo: { Doing: 'Ready' } });

    // Act
    const undo = await m()('change_undo', { activityId: moved.activityId });

    // Assert
    assert.equal(undo.isError, false, text(undo));
    assert.equal((await get(t.key)).status, 'Ready');
  });

  test("a move to another project is told with each side's statuses", async () => {
    // Arrange
    const p = await project('Told apart');
    const t = await create('Leaves the project', { projectId: p.projectId });
    await setStatus(t, 'Doing');

    // Act
    await m()('task_update', { taskId: t.key, version: (await get(t.key)).version, projectId: null });
    const history = await m()('activity_list', { task: t.key, limit: 1 });

    // Assert
    assert.match(text(history), /status Doing → In progress/);
  });

  test('invisible formatting characters and look-alikes of reserved words are refused as names', async () => {
    const p = await project('Look-alikes');
    for (const [name, said] of [
      ['Done\u200b', /no control or invisible formatting characters/],
      ['Todo\u202e', /no control or invisible formatting characters/],
      ['Ｏｐｅｎ', /is a word searches reserve/],
    ] as const) {
      const r = await update(p, { statuses: [{ name, category: 'started' }, ...FLOW] });
      assert.equal(r.isError, true, name);
      assert.match(text(r), said);
    }
  });

  test('a project keeps at most 60 removed statuses, and says so rather than growing without end', async () => {
    // Arrange
    const p = await project('Churn');
    const fresh = (round: number) => [
      ...Array.from({ length: 18 }, (_, i) => ({ name: `Round ${round} step ${i}`, category: 'started' })),
      { name: 'Ready', category: 'unstarted' },
      { name: 'Shipped', category: 'done' },
    ];

    // Act
    const results = [];
    for (let round = 0; round < 5; round++) results.push(await update(p, { statuses: fresh(round) }));

    // Assert
    assert.deepEqual(
      results.map((r) => r.isError),
      [false, false, false, false, true],
    );
    assert.match(text(results[4]!), /at most 60 are kept; rename a status \(was\) instead of replacing it/);
  });
});
