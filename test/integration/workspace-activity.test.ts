import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import type { ActivityRecord } from '../../lambda/workspace/model/activity.js';
import { legacyCall, modernCall } from '../helpers/local.js';
import { caller, createTestWorkspace, startWorkspaceServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// The activity record (issue: safe hands for assistants) against the embedded DynamoDB: every change
// leaves exactly one record with its before and after; activity_list reads them; change_undo puts a
// change back unless the target moved on since.

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startWorkspaceServer({ DOERS_ACTIVITY_DAYS: '30' });
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const text = toolText;
const owner = () => caller(server, ws.owner.token);
const admin = () => caller(server, ws.admin.token);
const member = () => caller(server, ws.member.token);

/** Every live record of a workspace, newest first (straight from the store, not through the tool). */
const records = async (workspaceId = ws.workspaceId): Promise<ActivityRecord[]> => {
  const all: ActivityRecord[] = [];
  let next: string | undefined;
  do {
    const page = await server.app.services.activity.list({ workspaceId, layout: 2 }, { includeTeam: true }, 100, new Date(), next);
    all.push(...page.records);
    next = page.next;
  } while (next);
  return all;
};

/** The records one action adds. */
const recordsOf = async (act: () => Promise<unknown>): Promise<ActivityRecord[]> => {
  const seen = new Set((await records()).map((r) => r.activityId));
  await act();
  return (await records()).filter((r) => !seen.has(r.activityId));
};

const newTask = async (title: string, extra: Record<string, unknown> = {}) =>
  (await member()('task_create', { title, ...extra })).structuredContent as { taskId: string; version: number; activityId: string };

describe('one activity record per change, with its before and after', () => {
  test('every writing tool writes exactly one record naming the actor, the client, the tool and the target', async () => {
    // Arrange: one of each change, as the roles allow.
    const t = await newTask('Recorded task');
    const p = (await admin()('project_create', { name: 'Recorded project' })).structuredContent;
    const steps: [string, () => Promise<unknown>, string, string][] = [
      ['task_update', () => member()('task_update', { taskId: t.taskId, version: 1, priority: 'P1' }), 'task', 'changed'],
      ['task_complete', () => member()('task_complete', { taskId: t.taskId }), 'task', 'completed'],
      ['task_reopen', () => member()('task_reopen', { taskId: t.taskId }), 'task', 'reopened'],
      ['comment_add', () => member()('comment_add', { taskId: t.taskId, body: 'A recorded comment' }), 'comment', 'created'],
      [
        'project_update',
        () => admin()('project_update', { projectId: p.projectId, version: 1, description: 'Described' }),
        'project',
        'changed',
      ],
      ['project_archive', () => admin()('project_archive', { projectId: p.projectId }), 'project', 'archived'],
      ['member_invite', () => admin()('member_invite', { email: 'recorded@example.test', name: 'Recorded Person' }), 'member', 'invited'],
    ];
    for (const [tool, act, kind, action] of steps) {
      // Act
      const added = await recordsOf(act);

      // Assert
      assert.equal(added.length, 1, `${tool}: ${added.length} records`);
      const r = added[0]!;
      assert.deepEqual([r.tool, r.kind, r.action, r.client], [tool, kind, action, 'doers-tests 1.0.0'], tool);
      assert.ok(r.actorId === ws.member.userId || r.actorId === ws.admin.userId, tool);
      assert.ok(r.changes.length >= 1, `${tool} names what changed`);
    }
  });

  test('a task change keeps each changed field before and after and the version it produced, not a copy of the whole task', async () => {
    // Arrange
    const t = await newTask('Send the quote', { dueDate: '2026-12-05', priority: 'P3' });

    // Act
    const out = (await member()('task_update', { taskId: t.taskId, version: 1, dueDate: '2026-12-08', priority: 'P1' })).structuredContent;
    const record = await server.app.services.activity.get(ws.workspaceId, out.activityId);

    // Assert
    assert.deepEqual(record?.changes, [
      { field: 'priority', before: 'P3', after: 'P1' },
      { field: 'dueDate', before: '2026-12-05', after: '2026-12-08' },
    ]);
    assert.equal(record?.version, 2);
    assert.equal(record?.targetLabel, 'Send the quote');
    assert.equal(record?.actorName, ws.member.name);
    // Undo puts the changed fields back on the task as it is: the record (and its two index
    // entries) carry no copy of the rest of it.
    assert.equal(record?.before, undefined);
    assert.equal(record?.after, undefined);
  });

  test('records expire after DOERS_ACTIVITY_DAYS through the table TTL, and a deleted task with them', async () => {
    // Arrange
    const t = await newTask('Expires with its record');

    // Act
    const deleted = (await member()('task_delete', { taskId: t.taskId })).structuredContent;
    const record = await server.app.services.activity.get(ws.workspaceId, deleted.activityId);
    const item = (await server.app.services.tasks.getAny(ws.workspaceId, t.taskId)) as unknown as Record<string, unknown>;

    // Assert
    assert.equal(record!.expiresAt, Math.floor(Date.parse(record!.at) / 1000) + 30 * 86_400);
    assert.ok(item.deletedAt, 'kept, marked deleted');
  });

  test("the client is the one the request names: _meta on any revision, else what the credential is called (the token's label)", async () => {
    // Arrange
    const t = await newTask('Client names');

    // Act
    const named = await legacyCall(
      server,
      'tools/call',
      {
        name: 'task_update',
        arguments: { taskId: t.taskId, version: 1, title: 'Named' },
        _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'Cursor', version: '2.1' } },
      },
      { token: ws.member.token },
    );
    const unnamed = await legacyCall(
      server,
      'tools/call',
      { name: 'task_update', arguments: { taskId: t.taskId, version: 2, title: 'Unnamed' } },
      { token: ws.member.token },
    );
    const [a, b] = await Promise.all(
      [named, unnamed].map((r) => server.app.services.activity.get(ws.workspaceId, r.json.result.structuredContent.activityId)),
    );

    // Assert
    assert.equal(a?.client, 'Cursor 2.1');
    // The fixtures' tokens are labelled "test": a handshake without clientInfo in _meta is named by it.
    assert.equal(b?.client, 'token test');
  });

  test('a change refused (a stale version) writes no record', async () => {
    const t = await newTask('Refused');
    const added = await recordsOf(() => member()('task_update', { taskId: t.taskId, version: 7, title: 'Never' }));
    assert.equal(added.length, 0);
  });
});

describe('a deleted task is gone from every read, kept for undo', () => {
  test('search, agenda, task_get, comments_list, project counts and the task resource no longer show it', async () => {
    // Arrange
    const p = (await admin()('project_create', { name: 'Counts' })).structuredContent;
    const t = await newTask('Invisible after delete', { projectId: p.projectId, assignee: 'me', dueDate: '2020-01-01' });
    await member()('comment_add', { taskId: t.taskId, body: 'hidden too' });

    // Act
    await member()('task_delete', { taskId: t.taskId });

    // Assert
    const search = await member()('tasks_search', { text: 'invisible', status: 'any' });
    assert.equal(search.structuredContent.returned, 0);
    assert.doesNotMatch(JSON.stringify((await member()('agenda_get', {})).structuredContent), /Invisible after delete/);
    assert.match(text(await member()('task_get', { taskId: t.taskId })), /was deleted/);
    assert.match(text(await member()('comments_list', { taskId: t.taskId })), /was deleted/);
    assert.equal((await member()('project_get', { projectId: p.projectId })).structuredContent.counts.open, 0);
    const read = await modernCall(server, 'resources/read', { uri: `doers://tasks/${t.taskId}` }, { token: ws.member.token });
    assert.equal(read.json.error?.code, -32602, read.text);
  });
});

describe('activity_list', () => {
  test('newest first, one line a change with when, who, through what, what and the id', async () => {
    // Arrange
    const t = await newTask('Listed task', { dueDate: '2026-12-05' });
    const changed = (await member()('task_update', { taskId: t.taskId, version: 1, dueDate: '2026-12-08' })).structuredContent;

    // Act
    const r = await member()('activity_list', { task: t.taskId });

    // Assert
    assert.equal(r.structuredContent.entries[0].activityId, changed.activityId);
    assert.equal(r.structuredContent.entries[1].activityId, t.activityId);
    assert.match(
      text(r),
      new RegExp(
        `^- \\w{3} \\d\\d:\\d\\d · ${ws.member.name} via doers-tests 1\\.0\\.0 · moved due of TEST-\\d+ 'Listed task' from Sat 5 Dec to Tue 8 Dec · ${changed.activityId}$`,
        'm',
      ),
    );
    assert.deepEqual(r.structuredContent.entries[0].changes, [{ field: 'dueDate', before: '2026-12-05', after: '2026-12-08' }]);
  });

  test('filters by project, actor, client, kind and time window', async () => {
    // Arrange: a workspace of its own, so every count is exact.
    const own = await createTestWorkspace(server);
    const a = caller(server, own.admin.token);
    const m = caller(server, own.member.token);
    const p = (await a('project_create', { name: 'Filtered' })).structuredContent;
    const inProject = (await m('task_create', { title: 'In project', projectId: p.projectId })).structuredContent;
    await m('task_create', { title: 'Elsewhere' });
    await legacyCall(
      server,
      'tools/call',
      {
        name: 'comment_add',
        arguments: { taskId: inProject.taskId, body: 'via another client' },
        _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'Claude', version: '1.2' } },
      },
      { token: own.member.token },
    );
    const ids = (r: Awaited<ReturnType<typeof m>>) => r.structuredContent.entries.map((e: { summary: string }) => e.summary);

    // Act
    const byProject = await m('activity_list', { project: p.projectId });
    const byMe = await a('activity_list', { actor: 'me' });
    const byClient = await m('activity_list', { client: 'claude' });
    const comments = await m('activity_list', { kind: 'comment' });
    const future = await m('activity_list', { since: '2099-01-01' });
    const today = await m('activity_list', { until: new Date().toISOString().slice(0, 10), since: '2020-01-01' });

    // Assert
    assert.deepEqual(ids(byProject), [
      'commented on TEST-1 \'In project\': "via another client"',
      "created task TEST-1 'In project'",
      "created project 'Filtered'",
    ]);
    assert.deepEqual(ids(byMe), ["created project 'Filtered'"]);
    assert.deepEqual(ids(byClient), ['commented on TEST-1 \'In project\': "via another client"']);
    assert.equal(comments.structuredContent.returned, 1);
    assert.equal(future.structuredContent.returned, 0);
    assert.equal(today.structuredContent.returned, 4);
  });

  test('member and token changes need team:read; every member sees task, project and comment changes', async () => {
    // Arrange
    const own = await createTestWorkspace(server);
    await caller(server, own.admin.token)('member_invite', { email: 'seen-by-team@example.test', name: 'Team Only' });
    await caller(server, own.member.token)('task_create', { title: 'Seen by all' });
    const { addToken } = await import('../helpers/workspace-fixtures.js');
    const tasksOnly = await addToken(server, own.workspaceId, own.member.userId, ['tasks:read']);

    // Act
    const narrow = await caller(server, tasksOnly)('activity_list', {});
    const wide = await caller(server, own.member.token)('activity_list', {});
    const asked = await caller(server, tasksOnly)('activity_list', { kind: 'member' });

    // Assert
    assert.deepEqual(
      narrow.structuredContent.entries.map((e: { kind: string }) => e.kind),
      ['task'],
    );
    assert.deepEqual(
      wide.structuredContent.entries.map((e: { kind: string }) => e.kind),
      ['task', 'member'],
    );
    assert.equal(asked.isError, true);
    assert.match(text(asked), /team:read/);
  });

  test('pages with a cursor bound to the filters, and a bad date names the parameter', async () => {
    // Arrange
    const t = await newTask('Paged');
    for (let v = 1; v <= 4; v++) await member()('task_update', { taskId: t.taskId, version: v, title: `Paged ${v}` });

    // Act
    const first = await member()('activity_list', { task: t.taskId, limit: 2 });
    const second = await member()('activity_list', { task: t.taskId, limit: 2, cursor: first.structuredContent.nextCursor });
    const third = await member()('activity_list', { task: t.taskId, limit: 2, cursor: second.structuredContent.nextCursor });
    const rebound = await member()('activity_list', { limit: 2, cursor: first.structuredContent.nextCursor });
    const badDate = await member()('activity_list', { since: '2026-02-30' });
    // Found by the fuzzer: a time of day that does not exist was a 500.
    const badTime = await member()('activity_list', { until: '2026-03-09T00:90' });

    // Assert
    const seen = [first, second, third].flatMap((r) => r.structuredContent.entries.map((e: { activityId: string }) => e.activityId));
    assert.equal(new Set(seen).size, 5);
    assert.equal(third.structuredContent.truncated, false);
    assert.match(text(rebound), /cursor: not valid for this call/);
    assert.equal(badDate.isError, true);
    assert.match(text(badDate), /since/);
    assert.equal(badTime.isError, true);
    assert.match(text(badTime), /until: expected YYYY-MM-DD or YYYY-MM-DDTHH:MM/);
  });
});

describe('change_undo', () => {
  test('undoes a change, which is itself recorded, and undoing the undo puts the change back; versions continue', async () => {
    // Arrange
    const t = await newTask('Undo me', { priority: 'P4' });
    const changed = (await member()('task_update', { taskId: t.taskId, version: 1, title: 'Changed', priority: 'P1' })).structuredContent;

    // Act
    const undone = await member()('change_undo', { activityId: changed.activityId });
    const afterUndo = (await member()('task_get', { taskId: t.taskId })).structuredContent;
    const redone = await member()('change_undo', { activityId: undone.structuredContent.activityId });
    const afterRedo = (await member()('task_get', { taskId: t.taskId })).structuredContent;
    const original = await server.app.services.activity.get(ws.workspaceId, changed.activityId);

    // Assert
    assert.equal(undone.isError, false, text(undone));
    assert.deepEqual([afterUndo.title, afterUndo.priority, afterUndo.version], ['Undo me', 'P4', 3]);
    assert.equal(redone.isError, false, text(redone));
    assert.deepEqual([afterRedo.title, afterRedo.priority, afterRedo.version], ['Changed', 'P1', 4]);
    assert.equal(original?.undoneBy, undone.structuredContent.activityId);
    const undoRecord = await server.app.services.activity.get(ws.workspaceId, undone.structuredContent.activityId);
    assert.equal(undoRecord?.undoOf, changed.activityId);
    assert.equal(undoRecord?.tool, 'change_undo');
  });

  test('undoing a completion reopens the task; undoing a creation deletes it, and undoing that restores it', async () => {
    const t = await newTask('Lifecycle');
    const done = (await member()('task_complete', { taskId: t.taskId })).structuredContent;

    await member()('change_undo', { activityId: done.activityId });
    const reopened = (await member()('task_get', { taskId: t.taskId })).structuredContent;
    const moved = await member()('change_undo', { activityId: t.activityId });
    const fresh = await newTask('Made by mistake');
    const unmade = await member()('change_undo', { activityId: fresh.activityId });
    const gone = await member()('task_get', { taskId: fresh.taskId });
    const back = await member()('change_undo', { activityId: unmade.structuredContent.activityId });
    const restored = (await member()('task_get', { taskId: fresh.taskId })).structuredContent;

    assert.equal(reopened.status, 'Todo');
    assert.equal(reopened.completedAt, undefined);
    assert.match(text(moved), /has changed since/, 'the creation of a task changed since is not undone');
    assert.match(text(gone), /was deleted/);
    assert.equal(back.isError, false, text(back));
    assert.deepEqual([restored.taskId, restored.title, restored.version], [fresh.taskId, 'Made by mistake', 3]);
  });

  test('undoing a delete brings the task back with its comments, ids and history', async () => {
    // Arrange
    const t = await newTask('Deleted with comments');
    const c1 = (await member()('comment_add', { taskId: t.taskId, body: 'first' })).structuredContent;
    await member()('comment_add', { taskId: t.taskId, body: 'second' });
    const deleted = (await member()('task_delete', { taskId: t.taskId })).structuredContent;

    // Act
    const undone = await member()('change_undo', { activityId: deleted.activityId });
    const task = (await member()('task_get', { taskId: t.taskId })).structuredContent;
    const comments = (await member()('comments_list', { taskId: t.taskId })).structuredContent;
    const history = (await member()('activity_list', { task: t.taskId })).structuredContent;

    // Assert
    assert.equal(undone.isError, false, text(undone));
    assert.deepEqual([task.title, task.version], ['Deleted with comments', 3]);
    assert.deepEqual(
      comments.comments.map((c: { body: string }) => c.body),
      ['first', 'second'],
    );
    assert.equal(comments.comments[0].commentId, c1.commentId);
    assert.equal(history.returned, 5, 'created, two comments, deleted, restored');
    const stored = (await server.app.services.comments.keysOfTask(ws.workspaceId, t.taskId)).length;
    assert.equal(stored, 2);
  });

  test('a target that moved on is a conflict naming the later change, who made it and when; nothing changes', async () => {
    // Arrange
    const t = await newTask('Contested');
    const mine = (await member()('task_update', { taskId: t.taskId, version: 1, title: 'Mine' })).structuredContent;
    const theirs = (await admin()('task_update', { taskId: t.taskId, version: 2, priority: 'P2' })).structuredContent;

    // Act
    const r = await member()('change_undo', { activityId: mine.activityId });
    const now = (await member()('task_get', { taskId: t.taskId })).structuredContent;
    const record = await server.app.services.activity.get(ws.workspaceId, mine.activityId);

    // Assert
    assert.equal(r.isError, true);
    assert.match(
      text(r),
      new RegExp(
        `Conflict: 'Mine' has changed since ${mine.activityId} \\(${theirs.activityId} by ${ws.admin.name} via doers-tests 1\\.0\\.0, `,
      ),
    );
    assert.match(text(r), /nothing was changed/);
    assert.deepEqual([now.title, now.priority, now.version], ['Mine', 'P2', 3]);
    assert.equal(record?.undoneBy, undefined);
  });

  test('comments, projects and roles undo too', async () => {
    // Arrange
    const t = await newTask('Comment host');
    const c = (await member()('comment_add', { taskId: t.taskId, body: 'to be undone' })).structuredContent;
    const p = (await admin()('project_create', { name: 'Undo project' })).structuredContent;
    const renamed = (await admin()('project_update', { projectId: p.projectId, version: 1, name: 'Renamed' })).structuredContent;
    const promoted = (await owner()('member_role_set', { userId: ws.viewer.userId, role: 'member' })).structuredContent;

    // Act
    const c1 = await member()('change_undo', { activityId: c.activityId });
    const p1 = await admin()('change_undo', { activityId: renamed.activityId });
    const r1 = await owner()('change_undo', { activityId: promoted.activityId });

    // Assert
    assert.equal(c1.isError, false, text(c1));
    assert.equal((await member()('comments_list', { taskId: t.taskId })).structuredContent.returned, 0);
    assert.equal(p1.isError, false, text(p1));
    assert.equal((await admin()('project_get', { projectId: p.projectId })).structuredContent.project.name, 'Undo project');
    assert.equal(r1.isError, false, text(r1));
    assert.equal((await server.app.services.directory.getMember(ws.workspaceId, ws.viewer.userId))?.role, 'viewer');
  });

  test('the roles still rule: a viewer cannot undo, a member cannot undo a role change, and no undo leaves no active owner', async () => {
    // Arrange
    const own = await createTestWorkspace(server);
    const t = (await caller(server, own.member.token)('task_create', { title: 'Viewer cannot' })).structuredContent;
    const role = (await caller(server, own.owner.token)('member_role_set', { userId: own.admin.userId, role: 'owner' })).structuredContent;
    // The promoted admin demotes the first owner: undoing the promotion would leave no owner.
    await caller(server, own.admin.token)('member_role_set', { userId: own.owner.userId, role: 'admin' });

    // Act
    // A viewer's token, whatever scopes it was made with, acts as a viewer's: no tasks:write.
    const byViewer = await modernCall(
      server,
      'tools/call',
      { name: 'change_undo', arguments: { activityId: t.activityId } },
      { token: own.viewer.token },
    );
    const byMember = await caller(server, own.member.token)('change_undo', { activityId: role.activityId });
    const lastOwner = await caller(server, own.admin.token)('change_undo', { activityId: role.activityId });

    // Assert
    assert.equal(byViewer.status, 403);
    assert.match(byViewer.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    assert.match(text(byMember), /role too low/);
    assert.match(text(lastOwner), /last owner of this workspace who is active/);
    assert.equal((await server.app.services.directory.getMember(own.workspaceId, own.admin.userId))?.role, 'owner');
  });

  test('unknown, malformed, foreign and already undone ids are refused with the reason, and nothing is written', async () => {
    // Arrange
    const other = await createTestWorkspace(server);
    const foreign = (await caller(server, other.member.token)('task_create', { title: 'Elsewhere' })).structuredContent;
    const t = await newTask('Once');
    const change = (await member()('task_update', { taskId: t.taskId, version: 1, title: 'Twice' })).structuredContent;
    const undo = (await member()('change_undo', { activityId: change.activityId })).structuredContent;
    const before = (await records()).length;

    // Act
    const answers = await Promise.all([
      member()('change_undo', { activityId: 'act_0000000000000000' }),
      member()('change_undo', { activityId: 'nonsense' }),
      member()('change_undo', { activityId: foreign.activityId }),
      member()('change_undo', { activityId: change.activityId }),
    ]);

    // Assert
    assert.match(text(answers[0]!), /act_0000000000000000 was not found in this workspace/);
    assert.match(text(answers[1]!), /^activityId: nonsense is not an activity id/);
    assert.match(text(answers[2]!), new RegExp(`${foreign.activityId} was not found in this workspace`));
    assert.match(text(answers[3]!), new RegExp(`was undone already by ${undo.activityId}`));
    assert.ok(answers.every((a) => a.isError));
    assert.equal((await records()).length, before);
  });
});
