import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { addDays, dateInZone } from '../../lambda/workspace/model/time.js';
import {
  addMember,
  caller,
  createTestWorkspace,
  startOwnWorkspacesServer,
  type TestWorkspace,
  toolText,
} from '../helpers/workspace-fixtures.js';

/**
 * The query language of tasks_search (docs/workspace.md, "Queries"): each field as a person types
 * it, the same tasks as the structured filters for the same meaning, and refusals that name the
 * position, the part and a way to write it.
 */

let server: LocalServer;
let ws: TestWorkspace;
let today: string;
const ids: Record<string, string> = {};
const keys: Record<string, string> = {};

const as = (token: string) => caller(server, token);
const titles = (r: { structuredContent?: any }) => (r.structuredContent.tasks as { title: string }[]).map((t) => t.title).sort();
const refusal = (r: object) => (r as { _meta?: Record<string, any> })._meta?.['sh.doers/refusal'];

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
  today = dateInZone(new Date(), 'UTC');
  const admin = as(ws.admin.token);
  const project = (await admin('project_create', { name: 'Website relaunch' })).structuredContent.projectId;
  ids.project = project;
  const make = async (key: string, args: Record<string, unknown>) => {
    const r = (await admin('task_create', args)).structuredContent;
    ids[key] = r.taskId;
    keys[key] = r.key;
  };
  await make('overdue', {
    title: 'Invoice Acme',
    dueDate: addDays(today, -2),
    priority: 'P3',
    assignee: ws.member.userId,
    projectId: project,
    labels: ['legal'],
  });
  await make('today', { title: 'Call the printer', dueDate: today, priority: 'P1', assignee: 'me' });
  await make('later', { title: 'Plan the launch party', dueDate: addDays(today, 5), priority: 'P2', projectId: project, labels: ['fun'] });
  await make('undated', { title: 'Read about pricing', priority: 'P4', repeat: 'every monday', dueDate: addDays(today, 30) });
  await make('done', { title: 'Book the venue', dueDate: addDays(today, -1), projectId: project, assignee: ws.member.userId });
  await make('sub', { title: 'Draft the press kit', parent: ids.later, priority: 'P2', assignee: ws.member.userId });
  await make('review', { title: 'Review the contract', priority: 'P1', projectId: project, status: 'In review', blockedBy: [ids.today] });
  await admin('task_complete', { taskId: ids.done });
  await admin('attachment_add', { taskId: ids.later, name: 'plan.txt', content: Buffer.from('plan').toString('base64') });
});
after(() => server.close());

describe('tasks_search query: terms as people type them', () => {
  const cases: [string, (k: typeof ids) => string[]][] = [
    ['assignee:me', () => ['Call the printer']],
    ['no:assignee', () => ['Plan the launch party', 'Read about pricing', 'Review the contract']],
    ['project:"Website relaunch"', () => ['Invoice Acme', 'Plan the launch party', 'Review the contract']],
    ['status:"In review"', () => ['Review the contract']],
    ['status:started', () => ['Review the contract']],
    ['is:done', () => ['Book the venue']],
    ['is:overdue', () => ['Invoice Acme']],
    ['is:blocked', () => ['Review the contract']],
    ['is:recurring', () => ['Read about pricing']],
    ['is:subtask', () => ['Draft the press kit']],
    ['label:legal', () => ['Invoice Acme']],
    ['p1', () => ['Call the printer', 'Review the contract']],
    ['priority<=2 -is:subtask', () => ['Call the printer', 'Plan the launch party', 'Review the contract']],
    ['due:today', () => ['Call the printer']],
    ['due<today', () => ['Invoice Acme']],
    ['due>=today', () => ['Call the printer', 'Plan the launch party', 'Read about pricing']],
    ['due:none', () => ['Draft the press kit', 'Review the contract']],
    [
      'created>-7d is:open',
      () => [
        'Call the printer',
        'Draft the press kit',
        'Invoice Acme',
        'Plan the launch party',
        'Read about pricing',
        'Review the contract',
      ],
    ],
    ['completed:today', () => ['Book the venue']],
    ['has:files', () => ['Plan the launch party']],
    ['pricing', () => ['Read about pricing']],
    ['(due:today OR is:overdue) -p1', () => ['Invoice Acme']],
    ['assignee:member -status:done', () => ['Draft the press kit', 'Invoice Acme']],
    ['assignee:member is:open OR is:done', () => ['Book the venue', 'Draft the press kit', 'Invoice Acme']],
  ];
  for (const [query, expected] of cases) {
    test(`'${query}' finds what it says`, async () => {
      const r = await as(ws.admin.token)('tasks_search', { query });

      assert.equal(r.isError, false, toolText(r));
      assert.deepEqual(titles(r), [...expected(ids)].sort());
    });
  }

  test('parent: and key: name tasks by key', async () => {
    const search = as(ws.viewer.token);

    assert.deepEqual(titles(await search('tasks_search', { query: `parent:${keys.later}` })), ['Draft the press kit']);
    assert.deepEqual(titles(await search('tasks_search', { query: `key:${keys.overdue}` })), ['Invoice Acme']);
  });

  test('sort:priority and sort:updated-desc order the matches', async () => {
    const search = as(ws.viewer.token);

    const byPriority = (await search('tasks_search', { query: 'is:open -is:subtask sort:priority' })).structuredContent.tasks;
    assert.deepEqual(
      byPriority.map((t: { priority: string }) => t.priority),
      ['P1', 'P1', 'P2', 'P3', 'P4'],
    );
    const updated = (await search('tasks_search', { query: 'sort:updated-desc' })).structuredContent.tasks.map(
      (t: { title: string }) => t.title,
    );
    assert.equal(updated.length, 6);
  });

  test('a query finds the same tasks as the structured filters of the same meaning', async () => {
    const search = as(ws.viewer.token);
    const pairs: [string, Record<string, unknown>][] = [
      ['assignee:me', { assignee: 'me' }],
      ['no:assignee', { assignee: 'none' }],
      [`project:"Website relaunch"`, { project: ids.project }],
      ['status:started', { status: 'started' }],
      ['is:overdue', { overdue: true }],
      ['is:blocked', { blocked: true }],
      ['label:legal', { label: 'legal' }],
      ['p2', { priority: 'P2' }],
      ['due<=today', { dueBefore: today }],
      ['pricing', { text: 'pricing' }],
    ];
    for (const [query, filters] of pairs) {
      assert.deepEqual(titles(await search('tasks_search', { query })), titles(await search('tasks_search', filters)), query);
    }
  });

  test('fields keeps each task to what was asked, and the text one line per task', async () => {
    const r = await as(ws.viewer.token)('tasks_search', { query: 'is:open', fields: ['dueDate'] });

    assert.equal(r.isError, false, toolText(r));
    for (const t of r.structuredContent.tasks)
      assert.deepEqual(Object.keys(t).sort(), ['dueDate', 'key', 'taskId', 'title'].filter((k) => k in t).sort());
    assert.ok(r.structuredContent.tasks.every((t: object) => !('labels' in t) && !('version' in t)));
    assert.equal(
      toolText(r)
        .split('\n')
        .filter((l) => l.startsWith('- ')).length,
      r.structuredContent.returned,
    );
  });
});

describe('tasks_search query: refusals name the part and how to write it', () => {
  const refusals: [string, RegExp, string?][] = [
    ['asignee:me', /at character 1, 'asignee:me': 'asignee' is no field; the fields are assignee, no, project/],
    ['project:"Website relaunch', /at character 9, .*opens a quote that is never closed/],
    ['(due:today OR is:overdue p1', /at character 1, .*opens a parenthesis that is never closed/],
    ['is:open due<frday', /at character 9, 'due<frday': 'frday' is not a date this server reads/],
    ['sort:colour', /'sort:colour' sorts by one of due, priority, created, updated, completed, title, key/],
    ['is:later', /'is:later' is one of open, done, canceled, blocked, overdue, recurring, subtask; write it like is:overdue/],
    ['assignee:nobody', /'assignee:nobody': no member 'nobody' here/],
    ['project:Nowhere', /no project 'Nowhere' here; the projects are Website relaunch/],
    ['status:Someday', /'status:Someday': 'Someday' is no status here/],
    ['priority>p5', /priority is 1 \(most urgent\) to 4/],
    ['a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21', /more than 20 terms/, 'limit'],
    ['label>x', /label takes ':' only/],
  ];
  for (const [query, words, reason] of refusals) {
    test(`'${query}' is refused`, async () => {
      const r = await as(ws.viewer.token)('tasks_search', { query });

      assert.equal(r.isError, true);
      assert.match(toolText(r), /^query: /);
      assert.match(toolText(r), words);
      assert.equal(refusal(r).reason, reason ?? 'invalid-argument');
      assert.equal(refusal(r).data.param, 'query');
      assert.equal(typeof refusal(r).data.at, 'number');
    });
  }

  test('a query with structured filters is refused naming them', async () => {
    const r = await as(ws.viewer.token)('tasks_search', { query: 'is:open', assignee: 'me' });

    assert.equal(r.isError, true);
    assert.match(toolText(r), /^query: .*leave out assignee/);
  });
});

describe('saved views', () => {
  test('a shared view saved by one member runs for another, and views_list lists it', async () => {
    const saved = await as(ws.member.token)('view_save', {
      name: 'Team overdue',
      query: 'is:overdue',
      sort: 'priority',
      shared: true,
      group: 'assignee',
    });
    assert.equal(saved.isError, false, toolText(saved));

    const run = await as(ws.viewer.token)('tasks_search', { view: 'team OVERDUE' });
    const listed = await as(ws.admin.token)('views_list');

    assert.equal(run.isError, false, toolText(run));
    assert.deepEqual(titles(run), ['Invoice Acme']);
    assert.equal(run.structuredContent.view.name, 'Team overdue');
    assert.equal(run.structuredContent.view.group, 'assignee');
    assert.match(toolText(run), /^View 'Team overdue' \(is:overdue sort:priority\)/);
    assert.ok(listed.structuredContent.views.some((v: { name: string; shared: boolean }) => v.name === 'Team overdue' && v.shared));
  });

  test('a private view is its owner own: another member neither sees nor runs it', async () => {
    await as(ws.admin.token)('view_save', { name: 'Mine only', query: 'assignee:me' });

    const other = await as(ws.member.token)('tasks_search', { view: 'Mine only' });
    const listed = await as(ws.member.token)('views_list');

    assert.equal(other.isError, true);
    assert.equal(refusal(other).reason, 'not-found');
    assert.match(toolText(other), /^view: no view 'Mine only' here/);
    assert.ok(!listed.structuredContent.views.some((v: { name: string }) => v.name === 'Mine only'));
  });

  test('a name used twice is refused, and nothing is written', async () => {
    const r = await as(ws.member.token)('view_save', { name: 'team overdue', query: 'is:open' });
    const listed = await as(ws.member.token)('views_list');

    assert.equal(r.isError, true);
    assert.equal(refusal(r).reason, 'taken');
    assert.match(toolText(r), /^name: a view named 'team overdue' exists already/);
    assert.equal(listed.structuredContent.views.filter((v: { name: string }) => v.name.toLowerCase() === 'team overdue').length, 1);
  });

  test('a view whose query cannot be read is refused before it is saved', async () => {
    const r = await as(ws.member.token)('view_save', { name: 'Broken', query: 'due<frday' });
    const listed = await as(ws.member.token)('views_list');

    assert.equal(r.isError, true);
    assert.match(toolText(r), /^query: at character 1, 'due<frday'/);
    assert.ok(!listed.structuredContent.views.some((v: { name: string }) => v.name === 'Broken'));
  });

  test('a view of another workspace is not found', async () => {
    const other = await createTestWorkspace(server);
    await as(other.member.token)('view_save', { name: 'Elsewhere', query: 'is:open', shared: true });

    const r = await as(ws.member.token)('tasks_search', { view: 'Elsewhere' });

    assert.equal(r.isError, true);
    assert.equal(refusal(r).reason, 'not-found');
  });

  test('view_delete takes it away and change_undo puts it back', async () => {
    await as(ws.member.token)('view_save', { name: 'Short lived', query: 'p1' });

    const deleted = await as(ws.member.token)('view_delete', { view: 'Short lived' });
    const gone = await as(ws.member.token)('tasks_search', { view: 'Short lived' });
    const undone = await as(ws.member.token)('change_undo', { activityId: deleted.structuredContent.activityId });
    const back = await as(ws.member.token)('tasks_search', { view: 'Short lived' });

    assert.equal(deleted.isError, false, toolText(deleted));
    assert.equal(gone.isError, true);
    assert.equal(undone.isError, false, toolText(undone));
    assert.equal(back.isError, false, toolText(back));
    assert.deepEqual(titles(back), ['Call the printer', 'Review the contract']);
  });

  test('a shared view is changed by its owner or an admin, not by another member', async () => {
    const saved = await as(ws.member.token)('view_save', { name: 'Fun things', query: 'label:fun', shared: true });
    const second = await addMember(server, ws.workspaceId, 'member', 'UTC');
    const viewId = saved.structuredContent.viewId;

    const byOther = await as(second.token)('view_save', { viewId, name: 'Fun things', query: 'p1', shared: true });
    const byAdmin = await as(ws.admin.token)('view_save', { viewId, name: 'Fun stuff', query: 'label:fun p2', shared: true });
    const run = await as(second.token)('tasks_search', { view: 'Fun stuff' });

    assert.equal(byOther.isError, true);
    assert.equal(refusal(byOther).reason, 'role');
    assert.equal(byAdmin.isError, false, toolText(byAdmin));
    assert.deepEqual(titles(run), ['Plan the launch party']);
  });

  test('only its owner makes a shared view private again: an admin is refused and it stays shared', async () => {
    // Arrange
    const saved = await as(ws.member.token)('view_save', { name: 'Everyone sees', query: 'p1', shared: true });
    const viewId = saved.structuredContent.viewId;

    // Act
    const byAdmin = await as(ws.admin.token)('view_save', { viewId, name: 'Everyone sees', query: 'p1', shared: false });
    const seenByViewer = await as(ws.viewer.token)('tasks_search', { view: 'Everyone sees' });

    // Assert
    assert.equal(byAdmin.isError, true);
    assert.equal(refusal(byAdmin).reason, 'role');
    assert.match(toolText(byAdmin), /only the owner of the view 'Everyone sees' can make it private/);
    assert.equal(seenByViewer.isError, false, toolText(seenByViewer));
  });

  test("another member may share a name someone keeps privately: each sees both, and the name opens one's own", async () => {
    // Arrange
    const keeper = await addMember(server, ws.workspaceId, 'member', 'UTC');
    await as(keeper.token)('view_save', { name: 'Launch', query: 'p4' });

    // Act
    const shared = await as(ws.member.token)('view_save', { name: 'launch', query: 'label:fun', shared: true });
    const own = await as(keeper.token)('tasks_search', { view: 'Launch' });
    const byId = await as(keeper.token)('tasks_search', { view: shared.structuredContent.viewId });
    const listed = await as(keeper.token)('views_list');

    // Assert
    assert.equal(shared.isError, false, toolText(shared));
    assert.deepEqual(titles(own), ['Read about pricing']);
    assert.deepEqual(titles(byId), ['Plan the launch party']);
    assert.equal(listed.structuredContent.views.filter((v: { name: string }) => v.name.toLowerCase() === 'launch').length, 2);
  });

  test('a member keeps at most 50 views of their own: the 51st, saved or unshared, is refused as a limit naming its argument, and nothing is written', async () => {
    // Arrange
    const collector = await addMember(server, ws.workspaceId, 'member', 'UTC');
    for (let i = 1; i <= 50; i++) {
      const r = await as(collector.token)('view_save', { name: `Mine ${i}`, query: 'p1' });
      assert.equal(r.isError, false, toolText(r));
    }

    const shared = await as(collector.token)('view_save', { name: 'Ours', query: 'p2', shared: true });

    // Act: a 51st of their own, saved or made by taking a shared one back
    const over = await as(collector.token)('view_save', { name: 'Mine 51', query: 'p1' });
    const unshared = await as(collector.token)('view_save', {
      viewId: shared.structuredContent.viewId,
      name: 'Ours',
      query: 'p2',
      shared: false,
    });
    const listed = await as(collector.token)('views_list');

    // Assert
    assert.equal(over.isError, true);
    assert.equal(refusal(over).reason, 'limit');
    assert.equal(refusal(over).data.param, 'name');
    assert.match(toolText(over), /you have 50 views of your own/);
    assert.equal(unshared.isError, true);
    assert.equal(refusal(unshared).reason, 'limit');
    assert.equal(refusal(unshared).data.param, 'shared');
    assert.equal(listed.structuredContent.views.filter((v: { shared: boolean }) => !v.shared).length, 50);
    assert.ok(listed.structuredContent.views.some((v: { name: string; shared: boolean }) => v.name === 'Ours' && v.shared));
  });

  test("a private view's changes are in its owner's history only; a shared one's in everyone's", async () => {
    await as(ws.member.token)('view_save', { name: 'Secret plans', query: 'label:legal' });
    await as(ws.member.token)('view_save', { name: 'Open plans', query: 'label:fun', shared: true });

    const mine = await as(ws.member.token)('activity_list', { kind: 'view', limit: 100 });
    const theirs = await as(ws.admin.token)('activity_list', { kind: 'view', limit: 100 });

    const labels = (r: { structuredContent?: any }) => r.structuredContent.entries.map((e: { summary: string }) => e.summary).join('\n');
    assert.match(labels(mine), /saved the view 'Secret plans': 'label:legal'/);
    assert.match(labels(theirs), /saved the view 'Open plans'/);
    assert.doesNotMatch(labels(theirs), /Secret plans/);
  });
});
