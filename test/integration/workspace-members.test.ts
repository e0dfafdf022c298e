import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { modernCall } from '../helpers/local.js';
import {
  addMember,
  addToken,
  caller,
  createTestWorkspace,
  refusedForScope,
  startWorkspaceServer,
  type TestWorkspace,
  toolText,
} from '../helpers/workspace-fixtures.js';

let server: LocalServer;
let other: TestWorkspace;

before(async () => {
  server = await startWorkspaceServer();
  other = await createTestWorkspace(server);
});
after(() => server.close());

const as = (token: string) => caller(server, token);
const text = toolText;

describe('members_list', () => {
  test('lists every member by name with id, e-mail and role, and pages', async () => {
    const ws = await createTestWorkspace(server);

    const all = await as(ws.viewer.token)('members_list');
    const p1 = await as(ws.viewer.token)('members_list', { limit: 3 });
    const p2 = await as(ws.viewer.token)('members_list', { limit: 3, cursor: p1.structuredContent.nextCursor });

    const names = all.structuredContent.members.map((m: { name: string }) => m.name);
    assert.deepEqual(
      names,
      [...names].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())),
    );
    assert.equal(all.structuredContent.returned, 4);
    assert.match(text(all), new RegExp(`- \\[${ws.admin.userId}\\] ${ws.admin.name} <${ws.admin.email}> · admin`));
    assert.equal(p1.structuredContent.truncated, true);
    assert.deepEqual(
      [...p1.structuredContent.members, ...p2.structuredContent.members].map((m: { userId: string }) => m.userId),
      all.structuredContent.members.map((m: { userId: string }) => m.userId),
    );
  });

  test('needs team:read: a tasks-only token gets 403 insufficient_scope', async () => {
    const ws = await createTestWorkspace(server);
    const tasksOnly = await addToken(server, ws.workspaceId, ws.owner.userId, ['tasks:read', 'tasks:write']);

    const res = await modernCall(server, 'tools/call', { name: 'members_list', arguments: {} }, { token: tasksOnly });

    assert.equal(res.status, 403);
    assert.match(res.headers.get('www-authenticate') ?? '', /scope="[^"]*\bteam:read\b/);
  });
});

describe('member_invite', () => {
  test('an admin adds a member who can then work with a token of their own', async () => {
    const ws = await createTestWorkspace(server);

    const r = await as(ws.admin.token)('member_invite', {
      email: 'New.Person@Example.test',
      name: 'New Person',
      timeZone: 'Europe/Berlin',
    });
    const token = await addToken(server, ws.workspaceId, r.structuredContent.userId, ['tasks:read', 'tasks:write']);
    const created = await as(token)('task_create', { title: 'My first task' });

    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.role, 'member');
    assert.equal(r.structuredContent.email, 'new.person@example.test');
    assert.equal(r.structuredContent.timeZone, 'Europe/Berlin');
    assert.equal(created.isError, false);
  });

  test('refuses an e-mail that is taken (here or in another workspace) as a conflict', async () => {
    const ws = await createTestWorkspace(server);

    const here = await as(ws.admin.token)('member_invite', { email: ws.member.email, name: 'Dup' });
    const there = await as(ws.admin.token)('member_invite', { email: other.member.email, name: 'Dup' });

    assert.match(text(here), /Conflict: .* cannot be invited; the address is already in use/);
    assert.match(text(there), /Conflict: .* cannot be invited; the address is already in use/);
  });

  test("members may not invite (a member's token has no team:admin), admins may not add owners (role too low); bad e-mail and time zone are named", async () => {
    const ws = await createTestWorkspace(server);

    const byMember = await refusedForScope(server, ws.member.token, 'member_invite', { email: 'a@example.test', name: 'A' });
    const ownerByAdmin = await as(ws.admin.token)('member_invite', { email: 'b@example.test', name: 'B', role: 'owner' });
    const badEmail = await as(ws.admin.token)('member_invite', { email: 'not-an-email', name: 'C' });
    const badZone = await as(ws.admin.token)('member_invite', { email: 'd@example.test', name: 'D', timeZone: 'Mars/Olympus' });

    assert.equal(byMember, true);
    assert.match(text(ownerByAdmin), /role too low/);
    assert.match(text(badEmail), /email/);
    assert.match(text(badZone), /^timeZone: /);
  });
});

describe('member_role_set', () => {
  test("an admin demotes a member to viewer, whose token then acts as a viewer's: its writes are refused for their scope", async () => {
    const ws = await createTestWorkspace(server);

    const r = await as(ws.admin.token)('member_role_set', { userId: ws.member.userId, role: 'viewer' });
    const write = await refusedForScope(server, ws.member.token, 'task_create', { title: 'x' });
    const me = await as(ws.member.token)('me_get');

    assert.equal(r.structuredContent.role, 'viewer');
    assert.equal(write, true);
    assert.deepEqual(me.structuredContent.scopes, ['tasks:read', 'team:read']);
  });

  test('only an owner makes or unmakes owners', async () => {
    const ws = await createTestWorkspace(server);

    const adminPromotes = await as(ws.admin.token)('member_role_set', { userId: ws.member.userId, role: 'owner' });
    const adminDemotesOwner = await as(ws.admin.token)('member_role_set', { userId: ws.owner.userId, role: 'member' });
    const ownerPromotes = await as(ws.owner.token)('member_role_set', { userId: ws.admin.userId, role: 'owner' });

    assert.match(text(adminPromotes), /role too low/);
    assert.match(text(adminDemotesOwner), /role too low/);
    assert.equal(ownerPromotes.structuredContent.role, 'owner');
  });

  test('the last owner cannot be demoted; with a second owner it can', async () => {
    const ws = await createTestWorkspace(server);

    const last = await as(ws.owner.token)('member_role_set', { userId: ws.owner.userId, role: 'admin' });
    await as(ws.owner.token)('member_role_set', { userId: ws.admin.userId, role: 'owner' });
    const notLast = await as(ws.owner.token)('member_role_set', { userId: ws.owner.userId, role: 'admin' });

    assert.equal(last.isError, true);
    assert.match(text(last), /last owner/);
    assert.equal(notLast.structuredContent.role, 'admin');
  });

  test('two owners demoting each other at once never leave the workspace without an owner', async () => {
    for (let round = 0; round < 5; round++) {
      // Arrange: two owners, each with a token
      const ws = await createTestWorkspace(server);
      await as(ws.owner.token)('member_role_set', { userId: ws.admin.userId, role: 'owner' });

      // Act: each demotes the other at the same moment
      const [a, b] = await Promise.all([
        as(ws.owner.token)('member_role_set', { userId: ws.admin.userId, role: 'admin' }),
        as(ws.admin.token)('member_role_set', { userId: ws.owner.userId, role: 'admin' }),
      ]);

      // Assert: at least one owner is left, and a refused demotion says why
      const owners = (await server.app.services.directory.listMembers(ws.workspaceId)).filter((m) => m.role === 'owner');
      assert.ok(owners.length >= 1, `round ${round}: no owner left`);
      assert.ok(!a.isError || /last owner|Conflict/.test(text(a)), text(a));
      assert.ok(!b.isError || /last owner|Conflict|role too low/.test(text(b)), text(b));
    }
  });

  test('an unknown or foreign user id is not found; a viewer is refused; a bad role is named', async () => {
    const ws = await createTestWorkspace(server);

    const unknown = await as(ws.owner.token)('member_role_set', { userId: 'usr_nobody', role: 'member' });
    const foreign = await as(ws.owner.token)('member_role_set', { userId: other.member.userId, role: 'viewer' });
    const viewer = await refusedForScope(server, ws.viewer.token, 'member_role_set', { userId: ws.member.userId, role: 'viewer' });
    const badRole = await as(ws.owner.token)('member_role_set', { userId: ws.member.userId, role: 'boss' });

    assert.match(text(unknown), /not found/);
    assert.match(text(foreign), /not found/);
    assert.equal((await server.app.services.directory.getMember(other.workspaceId, other.member.userId))?.role, 'member');
    assert.equal(viewer, true);
    assert.match(text(badRole), /role/);
  });
});

describe('member_remove', () => {
  test('removes the member and revokes their tokens: their next request is 401', async () => {
    const ws = await createTestWorkspace(server);

    const r = await as(ws.admin.token)('member_remove', { userId: ws.member.userId });
    const after = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token: ws.member.token });

    assert.deepEqual(
      { ...r.structuredContent, activityId: undefined },
      {
        userId: ws.member.userId,
        name: ws.member.name,
        email: ws.member.email,
        removed: true,
        tokensRevoked: 1,
        appsDisconnected: 0,
        activityId: undefined,
      },
    );
    assert.equal(after.status, 401);
    assert.equal(await server.app.services.directory.getMember(ws.workspaceId, ws.member.userId), undefined);
  });

  test('a removed person can be invited again under a new user id', async () => {
    const ws = await createTestWorkspace(server);
    await as(ws.admin.token)('member_remove', { userId: ws.member.userId });

    const again = await as(ws.admin.token)('member_invite', { email: ws.member.email, name: 'Back again' });

    assert.equal(again.isError, false);
    assert.notEqual(again.structuredContent.userId, ws.member.userId);
  });

  test('the last owner cannot be removed; admins cannot remove owners; members cannot remove anyone', async () => {
    const ws = await createTestWorkspace(server);
    const secondAdmin = await addMember(server, ws.workspaceId, 'admin', 'UTC');

    const last = await as(ws.owner.token)('member_remove', { userId: ws.owner.userId });
    const byAdmin = await as(ws.admin.token)('member_remove', { userId: ws.owner.userId });
    const byMember = await refusedForScope(server, ws.member.token, 'member_remove', { userId: secondAdmin.userId });
    const foreign = await as(ws.owner.token)('member_remove', { userId: other.viewer.userId });

    assert.match(text(last), /last owner/);
    assert.match(text(byAdmin), /role too low/);
    assert.equal(byMember, true);
    assert.match(text(foreign), /not found/);
  });
});
