import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import {
  addMember,
  caller,
  createTestWorkspace,
  startWorkspaceServer,
  type TestWorkspace,
  toolText,
} from '../helpers/workspace-fixtures.js';

// Many clients acting on the same things at once, through the endpoint, against the embedded
// DynamoDB: optimistic versions, appends and the last-owner rule hold under real concurrency.
let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startWorkspaceServer();
  ws = await createTestWorkspace(server);
});
after(() => server.close());

describe('concurrency integrity', () => {
  test('50 concurrent task_update from one version: exactly one wins, 49 conflict, the task holds the winner', async () => {
    // Arrange
    const call = caller(server, ws.member.token);
    const created = await call('task_create', { title: 'Contested' });
    const taskId = created.structuredContent.taskId as string;

    // Act
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call('task_update', { taskId, version: 1, title: `Writer ${i}`, priority: 'P1' })),
    );

    // Assert
    const won = results.filter((r) => !r.isError);
    assert.equal(won.length, 1);
    const lost = results.filter((r) => r.isError);
    assert.equal(lost.length, 49);
    for (const r of lost) assert.match(toolText(r), /Conflict.*version 2/);
    const stored = await server.app.services.tasks.get(ws.workspaceId, taskId);
    assert.equal(stored?.version, 2);
    assert.equal(stored?.title, won[0]!.structuredContent.title);
    assert.equal(stored?.priority, 'P1');
  });

  test('100 parallel comment_add on one task lose none', async () => {
    // Arrange
    const call = caller(server, ws.member.token);
    const taskId = (await call('task_create', { title: 'Busy discussion' })).structuredContent.taskId as string;

    // Act
    const added = await Promise.all(Array.from({ length: 100 }, (_, i) => call('comment_add', { taskId, body: `Comment ${i}` })));

    // Assert
    assert.ok(added.every((r) => !r.isError));
    const listed = await call('comments_list', { taskId, limit: 100 });
    assert.equal(listed.structuredContent.returned, 100);
    assert.equal(listed.structuredContent.truncated, false);
    const bodies = new Set((listed.structuredContent.comments as { body: string }[]).map((c) => c.body));
    assert.equal(bodies.size, 100);
    assert.deepEqual(new Set(added.map((r) => r.structuredContent.commentId)).size, 100);
  });

  test('owners demoting and removing each other at once never leave the workspace without an active owner', async () => {
    for (let round = 0; round < 5; round++) {
      // Arrange: a workspace with three owners
      const team = await createTestWorkspace(server);
      const [b, c] = await Promise.all([
        addMember(server, team.workspaceId, 'owner', 'UTC'),
        addMember(server, team.workspaceId, 'owner', 'UTC'),
      ]);
      const owners = [team.owner, b, c];

      // Act: each owner demotes the next, removes the one after, and demotes themselves, all at once
      await Promise.all(
        owners.flatMap((self, i) => {
          const next = owners[(i + 1) % 3]!;
          const afterNext = owners[(i + 2) % 3]!;
          const call = caller(server, self.token);
          return [
            call('member_role_set', { userId: next.userId, role: 'admin' }),
            call('member_remove', { userId: afterNext.userId }),
            call('member_role_set', { userId: self.userId, role: 'member' }),
          ];
        }),
      );

      // Assert
      const members = await server.app.services.directory.listMembers(team.workspaceId);
      const activeOwners = members.filter((m) => m.role === 'owner' && m.status === 'active');
      assert.ok(
        activeOwners.length >= 1,
        `round ${round}: no active owner left (${members.map((m) => `${m.userId}:${m.role}`).join(', ')})`,
      );
    }
  });
});
