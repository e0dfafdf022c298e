import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { legacyCall, modernCall } from '../helpers/local.js';
import {
  addToken,
  caller,
  createTestWorkspace,
  refusedForScope,
  startOwnWorkspacesServer,
  type TestWorkspace,
  toolText,
} from '../helpers/workspace-fixtures.js';

let server: LocalServer;
let ws: TestWorkspace;
let other: TestWorkspace;

before(async () => {
  server = await startOwnWorkspacesServer();
  [ws, other] = await Promise.all([createTestWorkspace(server), createTestWorkspace(server)]);
});
after(() => server.close());

const as = (token: string) => caller(server, token);
const text = toolText;

describe('task_create', () => {
  test('creates an open task at version 1 with a key, which its text names it by', async () => {
    const call = as(ws.member.token);

    const r = await call('task_create', {
      title: 'Write the report',
      priority: 'P2',
      dueDate: '2030-01-15',
      dueTime: '09:30',
      assignee: 'me',
      labels: ['Writing'],
    });

    assert.equal(r.isError, false);
    const t = r.structuredContent;
    assert.match(t.taskId, /^[0-9a-f-]{36}$/);
    assert.equal(t.version, 1);
    assert.equal(t.status, 'Todo');
    assert.equal(t.assigneeId, ws.member.userId);
    assert.equal(t.assigneeName, ws.member.name);
    assert.deepEqual(t.labels, ['writing']);
    assert.match(t.key, /^TEST-\d+$/);
    assert.equal((await as(ws.member.token)('task_get', { taskId: t.key })).structuredContent.createdBy, ws.member.userId);
    assert.ok(text(r).includes(`${t.key} Write the report`));
    assert.ok(!text(r).includes(t.taskId), 'never the id');
    assert.ok(!text(r).startsWith('{'), 'the text is not the JSON again');
  });

  test('defaults to priority P4, no due date and no assignee', async () => {
    const r = await as(ws.member.token)('task_create', { title: 'Plain' });

    assert.equal(r.structuredContent.priority, 'P4');
    assert.equal(r.structuredContent.dueDate, undefined);
    assert.equal(r.structuredContent.assigneeId, undefined);
  });

  test("is refused for a viewer: a viewer's token acts as a viewer's, without tasks:write, whatever it was made with", async () => {
    assert.equal(await refusedForScope(server, ws.viewer.token, 'task_create', { title: 'Not allowed' }), true);
  });

  test('needs the tasks:write scope: a read-only token gets 403 insufficient_scope', async () => {
    const readOnly = await addToken(server, ws.workspaceId, ws.owner.userId, ['tasks:read']);

    const res = await modernCall(server, 'tools/call', { name: 'task_create', arguments: { title: 'x' } }, { token: readOnly });

    assert.equal(res.status, 403);
    assert.match(res.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    assert.match(res.headers.get('www-authenticate') ?? '', /tasks:write/);
  });

  test('names the parameter at fault: missing title, unknown argument, dueTime without dueDate, bad date', async () => {
    const call = as(ws.member.token);

    const missing = await call('task_create', {});
    const unknown = await call('task_create', { title: 'x', colour: 'red' });
    const timeOnly = await call('task_create', { title: 'x', dueTime: '10:00' });
    const badDate = await call('task_create', { title: 'x', dueDate: '2030-02-31' });
    const badPriority = await call('task_create', { title: 'x', priority: 'P0' });

    for (const r of [missing, unknown, timeOnly, badDate, badPriority]) assert.equal(r.isError, true);
    assert.match(text(missing), /title/);
    assert.match(text(unknown), /colour/);
    assert.match(text(timeOnly), /dueTime/);
    assert.match(text(badDate), /dueDate/);
    assert.match(text(badPriority), /priority/);
  });

  test('invalid arguments are -32602 on 2025-06-18', async () => {
    const res = await legacyCall(
      server,
      'tools/call',
      { name: 'task_create', arguments: {} },
      { token: ws.member.token, version: '2025-06-18' },
    );

    assert.equal(res.json.error.code, -32602);
    assert.match(res.json.error.message, /title/);
  });

  test('refuses an assignee or project from another workspace, naming the parameter', async () => {
    const call = as(ws.member.token);
    const foreignProject = await as(other.admin.token)('project_create', { name: 'Theirs' });

    const assignee = await call('task_create', { title: 'x', assignee: other.member.userId });
    const project = await call('task_create', { title: 'x', projectId: foreignProject.structuredContent.projectId });

    assert.equal(assignee.isError, true);
    assert.match(text(assignee), /^assignee: /);
    assert.equal(project.isError, true);
    assert.match(text(project), /^projectId: /);
  });

  test('refuses a project that is archived', async () => {
    const p = await as(ws.admin.token)('project_create', { name: 'Old' });
    await as(ws.admin.token)('project_archive', { projectId: p.structuredContent.projectId });

    const r = await as(ws.member.token)('task_create', { title: 'x', projectId: p.structuredContent.projectId });

    assert.equal(r.isError, true);
    assert.match(text(r), /archived/);
  });
});

describe('task_get', () => {
  test('returns the whole task, notes included', async () => {
    const created = await as(ws.member.token)('task_create', { title: 'With notes', notes: 'Line one\nLine two' });

    const r = await as(ws.viewer.token)('task_get', { taskId: created.structuredContent.taskId });

    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.notes, 'Line one\nLine two');
    assert.match(text(r), /Notes:\nLine one/);
  });

  test('an unknown id is not found', async () => {
    const r = await as(ws.viewer.token)('task_get', { taskId: '00000000-0000-4000-8000-000000000000' });

    assert.equal(r.isError, true);
    assert.match(text(r), /not found/);
  });

  test("another workspace's task id is simply not found", async () => {
    const theirs = await as(other.member.token)('task_create', { title: 'Secret plan' });

    const r = await as(ws.owner.token)('task_get', { taskId: theirs.structuredContent.taskId });

    assert.equal(r.isError, true);
    assert.match(text(r), /not found/);
    assert.ok(!text(r).includes('Secret plan'));
  });
});

describe('task_update', () => {
  test('changes the given fields, keeps the rest and bumps the version', async () => {
    const call = as(ws.member.token);
    const c = await call('task_create', { title: 'Draft', priority: 'P3', dueDate: '2030-03-01', dueTime: '08:00', labels: ['a'] });

    const r = await call('task_update', {
      taskId: c.structuredContent.taskId,
      version: 1,
      title: 'Final',
      dueDate: null,
      assignee: ws.admin.userId,
    });

    assert.equal(r.isError, false);
    const t = r.structuredContent;
    assert.equal(t.version, 2);
    assert.equal(t.title, 'Final');
    assert.equal(t.priority, 'P3');
    assert.equal(t.dueDate, undefined);
    assert.equal(t.dueTime, undefined, 'removing the date removes its time');
    assert.equal(t.assigneeId, ws.admin.userId);
    assert.deepEqual(t.labels, ['a']);
    const stored = await server.app.services.tasks.get(ws.workspaceId, t.taskId);
    assert.equal(stored?.version, 2);
    assert.equal(stored?.title, 'Final');
  });

  test('a stale version is refused as a conflict naming the current version, and nothing is written', async () => {
    const call = as(ws.member.token);
    const c = await call('task_create', { title: 'Contested' });
    await call('task_update', { taskId: c.structuredContent.taskId, version: 1, priority: 'P1' });

    const r = await call('task_update', { taskId: c.structuredContent.taskId, version: 1, title: 'Lost update' });

    assert.equal(r.isError, true);
    assert.match(text(r), /Conflict/);
    assert.match(text(r), /version 2/);
    const stored = await server.app.services.tasks.get(ws.workspaceId, c.structuredContent.taskId);
    assert.equal(stored?.title, 'Contested');
  });

  test('of two concurrent updates from the same version exactly one wins; the other is a conflict', async () => {
    const call = as(ws.member.token);
    const c = await call('task_create', { title: 'Race' });
    const id = c.structuredContent.taskId;

    const results = await Promise.all([
      call('task_update', { taskId: id, version: 1, title: 'Race A' }),
      call('task_update', { taskId: id, version: 1, title: 'Race B' }),
      call('task_update', { taskId: id, version: 1, title: 'Race C' }),
    ]);

    const won = results.filter((r) => !r.isError);
    assert.equal(won.length, 1);
    for (const r of results.filter((r) => r.isError)) assert.match(text(r), /Conflict.*version 2/);
    const stored = await server.app.services.tasks.get(ws.workspaceId, id);
    assert.equal(stored?.version, 2);
    assert.equal(stored?.title, won[0]!.structuredContent.title);
  });

  test('needs the version and at least one change', async () => {
    const call = as(ws.member.token);
    const c = await call('task_create', { title: 'x at line 222' });

    const noVersion = await call('task_update', { taskId: c.structuredContent.taskId, title: 'y' });
    const noChange = await call('task_update', { taskId: c.structuredContent.taskId, version: 1 });

    assert.equal(noVersion.isError, true);
    assert.match(text(noVersion), /version/);
    assert.equal(noChange.isError, true);
    assert.match(text(noChange), /change/);
  });

  test('a viewer is refused (role too low); a foreign task is not found', async () => {
    const c = await as(ws.member.token)('task_create', { title: 'x at line 234' });
    const theirs = await as(other.member.token)('task_create', { title: 'theirs' });

    const viewer = await refusedForScope(server, ws.viewer.token, 'task_update', {
      taskId: c.structuredContent.taskId,
      version: 1,
      title: 'y',
    });
    const foreign = await as(ws.owner.token)('task_update', { taskId: theirs.structuredContent.taskId, version: 1, title: 'hijacked' });

    assert.equal(viewer, true);
    assert.equal(foreign.isError, true);
    assert.match(text(foreign), /not found/);
    assert.equal((await server.app.services.tasks.get(other.workspaceId, theirs.structuredContent.taskId))?.title, 'theirs');
  });
});

describe('task_complete and task_reopen', () => {
  test('complete records who and when; completing again changes nothing; reopen clears it', async () => {
    const call = as(ws.member.token);
    const c = await call('task_create', { title: 'Finish me' });
    const id = c.structuredContent.taskId;

    const done = await call('task_complete', { taskId: id });
    const record = await call('task_get', { taskId: id });
    const again = await call('task_complete', { taskId: id });
    const reopened = await call('task_reopen', { taskId: id, version: 2 });

    assert.equal(done.structuredContent.status, 'Done');
    assert.ok(done.structuredContent.completedAt);
    assert.equal(record.structuredContent.completedBy, ws.member.userId, 'the task records who');
    assert.equal(done.structuredContent.version, 2);
    assert.equal(again.structuredContent.version, 2);
    assert.equal(reopened.structuredContent.status, 'Todo');
    assert.equal(reopened.structuredContent.completedAt, undefined);
    assert.equal(reopened.structuredContent.version, 3);
  });

  test('with a stale version it is a conflict; a viewer is refused; an unknown id is not found', async () => {
    const c = await as(ws.member.token)('task_create', { title: 'x at line 273' });
    await as(ws.member.token)('task_update', { taskId: c.structuredContent.taskId, version: 1, title: 'y' });

    const stale = await as(ws.member.token)('task_complete', { taskId: c.structuredContent.taskId, version: 1 });
    const viewer = await refusedForScope(server, ws.viewer.token, 'task_complete', { taskId: c.structuredContent.taskId });
    const missing = await as(ws.member.token)('task_reopen', { taskId: 'nope' });

    assert.match(text(stale), /Conflict.*version 2/);
    assert.equal(viewer, true);
    assert.match(text(missing), /not found/);
  });
});

describe('task_delete', () => {
  test('a member deletes a task they created, and its comments go with it (kept, invisible, until the record expires)', async () => {
    const call = as(ws.member.token);
    const c = await call('task_create', { title: 'Temporary' });
    const id = c.structuredContent.taskId;
    await call('comment_add', { taskId: id, body: 'one' });
    await call('comment_add', { taskId: id, body: 'two' });

    const r = await call('task_delete', { taskId: id });

    assert.equal(r.isError, false);
    const { activityId, ...rest } = r.structuredContent;
    assert.deepEqual(rest, { key: c.structuredContent.key, taskId: id, title: 'Temporary', deleted: true, comments: 2 });
    assert.match(text(r), new RegExp(`^Deleted task ${c.structuredContent.key} Temporary and its 2 comment\\(s\\)`));
    assert.equal(await server.app.services.tasks.get(ws.workspaceId, id), undefined);
    assert.match(text(await call('comments_list', { taskId: id })), /was deleted/);
    assert.match(text(await call('task_get', { taskId: id })), /was deleted/);
    // What undo needs is kept until the record expires, then the table's TTL removes it.
    const record = await server.app.services.activity.get(ws.workspaceId, activityId);
    const stored = await server.app.services.tasks.getAny(ws.workspaceId, id);
    assert.equal(stored?.deletedAt !== undefined, true);
    assert.equal(record?.expiresAt, Math.floor(Date.parse(record!.at) / 1000) + 90 * 86_400);
  });

  test("a member may not delete someone else's task (role too low); an admin may", async () => {
    const c = await as(ws.owner.token)('task_create', { title: "Owner's" });

    const byMember = await as(ws.member.token)('task_delete', { taskId: c.structuredContent.taskId });
    const byAdmin = await as(ws.admin.token)('task_delete', { taskId: c.structuredContent.taskId });

    assert.equal(byMember.isError, true);
    assert.match(text(byMember), /role too low/);
    assert.equal(byAdmin.isError, false);
  });

  test('a stale version is a conflict, a foreign id not found, and a viewer is refused', async () => {
    const c = await as(ws.member.token)('task_create', { title: 'x at line 322' });
    await as(ws.member.token)('task_complete', { taskId: c.structuredContent.taskId });
    const theirs = await as(other.member.token)('task_create', { title: 'theirs' });

    const stale = await as(ws.member.token)('task_delete', { taskId: c.structuredContent.taskId, version: 1 });
    const foreign = await as(ws.owner.token)('task_delete', { taskId: theirs.structuredContent.taskId });
    const viewer = await refusedForScope(server, ws.viewer.token, 'task_delete', { taskId: c.structuredContent.taskId });

    assert.match(text(stale), /Conflict.*version 2/);
    assert.match(text(foreign), /not found/);
    assert.equal(viewer, true);
    assert.ok(await server.app.services.tasks.get(other.workspaceId, theirs.structuredContent.taskId));
  });
});
