import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import {
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

describe('projects', () => {
  test('an admin creates a project; projects_list shows it with its id', async () => {
    const created = await as(ws.admin.token)('project_create', { name: 'Roadmap', description: 'Q3 plans' });

    const list = await as(ws.viewer.token)('projects_list');

    assert.equal(created.isError, false);
    assert.equal(created.structuredContent.version, 1);
    assert.equal(created.structuredContent.status, 'active');
    assert.ok(list.structuredContent.projects.some((p: { projectId: string }) => p.projectId === created.structuredContent.projectId));
    assert.match(text(list), new RegExp(`- \\[${created.structuredContent.projectId}\\] Roadmap · v1`));
  });

  test("members may not create, change, archive or delete projects (role too low); a viewer's token acts as a viewer's", async () => {
    const p = (await as(ws.admin.token)('project_create', { name: 'Guarded' })).structuredContent;

    const results = await Promise.all([
      as(ws.member.token)('project_create', { name: 'Mine' }),
      as(ws.member.token)('project_update', { projectId: p.projectId, version: 1, name: 'x' }),
      as(ws.member.token)('project_archive', { projectId: p.projectId }),
      as(ws.member.token)('project_delete', { projectId: p.projectId }),
    ]);
    const byViewer = await refusedForScope(server, ws.viewer.token, 'project_delete', { projectId: p.projectId });

    for (const r of results) {
      assert.equal(r.isError, true);
      assert.match(text(r), /role too low/);
    }
    assert.equal(byViewer, true);
  });

  test("project_get counts its tasks in the user's day", async () => {
    const p = (await as(ws.admin.token)('project_create', { name: 'Counted' })).structuredContent;
    const t1 = await as(ws.member.token)('task_create', { title: 'a', projectId: p.projectId, dueDate: '2000-01-01' });
    await as(ws.member.token)('task_create', { title: 'b', projectId: p.projectId });
    await as(ws.member.token)('task_create', { title: 'c', projectId: p.projectId });
    await as(ws.member.token)('task_complete', { taskId: t1.structuredContent.taskId });
    await as(ws.member.token)('task_create', { title: 'd', projectId: p.projectId, dueDate: '2000-01-02' });

    const r = await as(ws.viewer.token)('project_get', { projectId: p.projectId });

    assert.deepEqual(r.structuredContent.counts, { open: 3, overdue: 1, dueToday: 0, done: 1 });
    assert.match(text(r), /3 open task\(s\), 1 overdue, 0 due today, 1 done\./);
  });

  test('project_update renames with the current version and refuses a stale one naming the current version', async () => {
    const p = (await as(ws.admin.token)('project_create', { name: 'Before', description: 'd' })).structuredContent;

    const renamed = await as(ws.admin.token)('project_update', { projectId: p.projectId, version: 1, name: 'After', description: null });
    const stale = await as(ws.admin.token)('project_update', { projectId: p.projectId, version: 1, name: 'Lost' });

    assert.equal(renamed.structuredContent.name, 'After');
    assert.equal(renamed.structuredContent.description, undefined);
    assert.equal(renamed.structuredContent.version, 2);
    assert.equal(stale.isError, true);
    assert.match(text(stale), /Conflict.*version 2/);
  });

  test('archive hides it from projects_list; project_update with archived: false restores it', async () => {
    const p = (await as(ws.admin.token)('project_create', { name: 'Seasonal' })).structuredContent;

    const archived = await as(ws.admin.token)('project_archive', { projectId: p.projectId, version: 1 });
    const activeList = await as(ws.viewer.token)('projects_list', { limit: 100 });
    const fullList = await as(ws.viewer.token)('projects_list', { includeArchived: true, limit: 100 });
    const restored = await as(ws.admin.token)('project_update', { projectId: p.projectId, version: 2, archived: false });

    assert.equal(archived.structuredContent.status, 'archived');
    assert.ok(archived.structuredContent.archivedAt);
    assert.ok(!activeList.structuredContent.projects.some((x: { projectId: string }) => x.projectId === p.projectId));
    assert.ok(fullList.structuredContent.projects.some((x: { projectId: string }) => x.projectId === p.projectId));
    assert.match(text(fullList), /Seasonal \(archived\)/);
    assert.equal(restored.structuredContent.status, 'active');
    assert.equal(restored.structuredContent.archivedAt, undefined);
  });

  test('project_delete refuses a project that holds tasks and deletes an empty one', async () => {
    const p = (await as(ws.admin.token)('project_create', { name: 'Busy' })).structuredContent;
    const t = await as(ws.member.token)('task_create', { title: 'in it', projectId: p.projectId });

    const refused = await as(ws.admin.token)('project_delete', { projectId: p.projectId });
    await as(ws.member.token)('task_update', { taskId: t.structuredContent.taskId, version: 1, projectId: null });
    const deleted = await as(ws.admin.token)('project_delete', { projectId: p.projectId });
    const gone = await as(ws.viewer.token)('project_get', { projectId: p.projectId });

    assert.equal(refused.isError, true);
    assert.match(text(refused), /still holds tasks/);
    assert.deepEqual(
      { ...deleted.structuredContent, activityId: undefined },
      { projectId: p.projectId, name: 'Busy', deleted: true, activityId: undefined },
    );
    assert.match(text(gone), /was deleted/);
  });

  test("another workspace's project is not found by any project tool", async () => {
    const theirs = (await as(other.admin.token)('project_create', { name: 'Theirs' })).structuredContent;

    const results = await Promise.all([
      as(ws.owner.token)('project_get', { projectId: theirs.projectId }),
      as(ws.owner.token)('project_update', { projectId: theirs.projectId, version: 1, name: 'Mine now' }),
      as(ws.owner.token)('project_archive', { projectId: theirs.projectId }),
      as(ws.owner.token)('project_delete', { projectId: theirs.projectId }),
    ]);

    for (const r of results) assert.match(text(r), /not found/);
    assert.equal((await server.app.services.projects.get(other.workspaceId, theirs.projectId))?.name, 'Theirs');
  });

  test('invalid arguments name the parameter; a list cursor of another call is refused', async () => {
    const noName = await as(ws.admin.token)('project_create', { name: '' });
    const extra = await as(ws.admin.token)('project_create', { name: 'x', owner: 'me' });
    const page = await as(ws.viewer.token)('projects_list', { limit: 1 });
    const replayed = await as(ws.viewer.token)('projects_list', {
      limit: 1,
      includeArchived: true,
      cursor: page.structuredContent.nextCursor,
    });

    assert.match(text(noName), /name/);
    assert.match(text(extra), /owner/);
    assert.equal(page.structuredContent.truncated, true);
    assert.match(text(replayed), /^cursor: /);
  });
});
