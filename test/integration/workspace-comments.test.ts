import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { callTool } from '../helpers/local.js';
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
let taskId: string;

before(async () => {
  server = await startOwnWorkspacesServer();
  [ws, other] = await Promise.all([createTestWorkspace(server), createTestWorkspace(server)]);
  taskId = (await callTool(server, 'task_create', { title: 'Discussed' }, ws.member.token)).structuredContent.taskId;
});
after(() => server.close());

const as = (token: string) => caller(server, token);
const text = toolText;

describe('comments', () => {
  test('comment_add adds comments that comments_list returns oldest first, with authors', async () => {
    const first = await as(ws.member.token)('comment_add', { taskId, body: 'First thought' });
    const second = await as(ws.admin.token)('comment_add', { taskId, body: 'Second thought' });

    const list = await as(ws.viewer.token)('comments_list', { taskId });

    assert.equal(first.isError, false);
    assert.equal(first.structuredContent.authorId, ws.member.userId);
    assert.deepEqual(
      list.structuredContent.comments.map((c: { body: string }) => c.body),
      ['First thought', 'Second thought'],
    );
    assert.equal(list.structuredContent.comments[1].authorName, ws.admin.name);
    assert.equal(list.structuredContent.returned, 2);
    assert.match(text(list), new RegExp(`- \\[${second.structuredContent.commentId}\\] ${ws.admin.name}, .*: Second thought`));
  });

  test('comments_list pages with a cursor bound to the task', async () => {
    const t = (await as(ws.member.token)('task_create', { title: 'Chatty' })).structuredContent.taskId;
    for (const n of [1, 2, 3, 4, 5]) await as(ws.member.token)('comment_add', { taskId: t, body: `c${n}` });

    const p1 = await as(ws.viewer.token)('comments_list', { taskId: t, limit: 2 });
    const p2 = await as(ws.viewer.token)('comments_list', { taskId: t, limit: 2, cursor: p1.structuredContent.nextCursor });
    const p3 = await as(ws.viewer.token)('comments_list', { taskId: t, limit: 2, cursor: p2.structuredContent.nextCursor });
    const elsewhere = await as(ws.viewer.token)('comments_list', { taskId, limit: 2, cursor: p1.structuredContent.nextCursor });

    const bodies = [p1, p2, p3].flatMap((p) => p.structuredContent.comments.map((c: { body: string }) => c.body));
    assert.deepEqual(bodies, ['c1', 'c2', 'c3', 'c4', 'c5']);
    assert.equal(p3.structuredContent.truncated, false);
    assert.match(text(elsewhere), /^cursor: /);
  });

  test("a viewer may not comment (their token acts as a viewer's: no tasks:write); an empty body names the parameter", async () => {
    const viewer = await refusedForScope(server, ws.viewer.token, 'comment_add', { taskId, body: 'hello' });
    const empty = await as(ws.member.token)('comment_add', { taskId, body: '  ' });

    assert.equal(viewer, true);
    assert.equal(empty.isError, true);
    assert.match(text(empty), /body/);
  });

  test("a member deletes their own comment but not an admin's; an admin deletes anyone's", async () => {
    const mine = (await as(ws.member.token)('comment_add', { taskId, body: 'mine' })).structuredContent.commentId;
    const admins = (await as(ws.admin.token)('comment_add', { taskId, body: 'admins' })).structuredContent.commentId;

    const own = await as(ws.member.token)('comment_delete', { taskId, commentId: mine });
    const notOwn = await as(ws.member.token)('comment_delete', { taskId, commentId: admins });
    const byOwner = await as(ws.owner.token)('comment_delete', { taskId, commentId: admins });
    const again = await as(ws.owner.token)('comment_delete', { taskId, commentId: admins });

    const { activityId: _id, key, ...rest } = own.structuredContent;
    assert.deepEqual(rest, { taskId, commentId: mine, deleted: true });
    assert.match(key, /^TEST-\d+$/);
    assert.match(text(own), new RegExp(`^Deleted comment \\[${mine}\\] of ${key}\\.`));
    assert.match(text(notOwn), /role too low/);
    assert.equal(byOwner.isError, false);
    assert.match(text(again), /not found/);
  });

  test("another workspace's task and comments are not found", async () => {
    const theirTask = (await as(other.member.token)('task_create', { title: 'theirs' })).structuredContent.taskId;
    const theirComment = (await as(other.member.token)('comment_add', { taskId: theirTask, body: 'private' })).structuredContent.commentId;

    const list = await as(ws.owner.token)('comments_list', { taskId: theirTask });
    const add = await as(ws.owner.token)('comment_add', { taskId: theirTask, body: 'intrusion' });
    const del = await as(ws.owner.token)('comment_delete', { taskId: theirTask, commentId: theirComment });

    for (const r of [list, add, del]) assert.match(text(r), /not found/);
    assert.equal((await server.app.services.comments.list(other.workspaceId, theirTask, 10)).comments.length, 1);
  });
});
