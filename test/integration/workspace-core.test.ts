import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { legacyCall, modernCall, urlOf } from '../helpers/local.js';
import {
  addToken,
  caller,
  createTestWorkspace,
  startWorkspaceServer,
  type TestWorkspace,
  toolText,
} from '../helpers/workspace-fixtures.js';

// The findings of a review of the workspace core tried as an attacker and a careless client would:
// each test is one of them, through the tools as a client calls them. Every one of these failed on
// the code before the task writer, typed refusals and credentials that follow the person.

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  // Every call checks its credential afresh: a revocation shows at the very next call.
  server = await startWorkspaceServer({ DOERS_AUTH_CACHE_SECONDS: '0' });
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const text = toolText;
const m = () => caller(server, ws.member.token);
const create = async (title: string, extra: Record<string, unknown> = {}, call = m()) =>
  (await call('task_create', { title, ...extra })).structuredContent as {
    key: string;
    taskId: string;
    version: number;
    activityId: string;
  };
const blockedByOf = async (key: string, call = m()) =>
  ((await call('task_get', { taskId: key })).structuredContent.blockedBy ?? []).map((b: { key: string }) => b.key).sort();

/** A 2026-07-28 client of the official SDK that can show forms, answering every question with `answer`. */
const asking = async (token: string, answer: { action: 'accept'; content: { confirm: boolean } } | { action: 'decline' }) => {
  const client = new Client(
    { name: 'doers-core', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  const asked: { message: string }[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params as { message: string });
    return answer;
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return { client, asked };
};

/** A token made the way the account page makes one: with its record, so change_undo can take it back. */
const tokenWithRecord = async (workspaceId: string, userId: string, scopes: string[]) => {
  const { activity, tokens } = writesOf(server.app.services);
  const { tokenRecord, doorSource } = await import('../../lambda/workspace/activity/records.js');
  const secret = generateTokenSecret();
  const at = new Date();
  const token = {
    tokenId: `tok_${Math.random().toString(16).slice(2, 18).padEnd(16, '0')}`,
    workspaceId,
    userId,
    scopes: scopes as never,
    label: 'laptop',
    createdAt: at.toISOString(),
  };
  const record = tokenRecord(
    server.app.services.activity,
    doorSource('account page', { userId, name: 'someone' }, 'create token', at),
    'created',
    token,
  );
  await tokens.register(secret, token, [activity.recordOp(record)]);
  return { secret, activityId: record.activityId };
};

describe("a token's scopes follow its owner's role, and undoing a token's creation needs the right to revoke it", () => {
  test("a demoted admin's team:admin token acts as a viewer's: no member tool is listed or callable", async () => {
    const own = await createTestWorkspace(server);
    await caller(server, own.owner.token)('member_role_set', { userId: own.admin.userId, role: 'viewer' });

    const listed = await modernCall(server, 'tools/list', {}, { token: own.admin.token });
    const invite = await modernCall(
      server,
      'tools/call',
      { name: 'member_invite', arguments: { email: 'x@example.test', name: 'X' } },
      { token: own.admin.token },
    );

    const names = listed.json.result.tools.map((t: { name: string }) => t.name);
    assert.ok(!names.includes('member_invite') && !names.includes('change_undo') && !names.includes('task_create'), names.join(' '));
    assert.equal(invite.status, 403);
  });

  test("an admin cannot revoke the owner's token by undoing its creation; the owner can", async () => {
    const own = await createTestWorkspace(server);
    const ownerToken = await tokenWithRecord(own.workspaceId, own.owner.userId, ['tasks:read']);

    const byAdmin = await caller(server, own.admin.token)('change_undo', { activityId: ownerToken.activityId });
    const stillWorks = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token: ownerToken.secret });
    const byOwner = await caller(server, own.owner.token)('change_undo', { activityId: ownerToken.activityId });
    const revoked = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token: ownerToken.secret });

    assert.equal(byAdmin.isError, true);
    assert.match(text(byAdmin), /role too low/);
    assert.equal(stillWorks.status, 200);
    assert.equal(byOwner.isError, false, text(byOwner));
    assert.equal(revoked.status, 401);
  });

  test("undoing another member's token creation needs a token with team:admin, as every member change does", async () => {
    // Arrange: the owner's token without team:admin, and one with it.
    const own = await createTestWorkspace(server);
    const memberToken = await tokenWithRecord(own.workspaceId, own.member.userId, ['tasks:read']);
    const narrow = await addToken(server, own.workspaceId, own.owner.userId, ['tasks:read', 'tasks:write', 'team:read']);

    // Act
    const withoutTeamAdmin = await caller(server, narrow)('change_undo', { activityId: memberToken.activityId });
    const stillWorks = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token: memberToken.secret });
    const withTeamAdmin = await caller(server, own.owner.token)('change_undo', { activityId: memberToken.activityId });
    const revoked = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token: memberToken.secret });

    // Assert
    assert.equal(withoutTeamAdmin.isError, true);
    assert.match(
      text(withoutTeamAdmin),
      /role too low: undoing .* \(another member's token\) with this token needs the role admin \(a token with team:admin\)/,
    );
    assert.equal(stillWorks.status, 200);
    assert.equal(withTeamAdmin.isError, false, text(withTeamAdmin));
    assert.equal(revoked.status, 401);
  });
});

describe('undoing a delete applies every rule of links', () => {
  test('three plain calls cannot close a cycle: a link to a task waiting on a deleted one is refused', async () => {
    // Arrange: X waits on B, D waits on X.
    const b = await create('B');
    const x = await create('X', { blockedBy: [b.key] });
    const d = await create('D', { blockedBy: [x.key] });

    // Act: delete X, make B wait on D, undo the delete.
    const deleted = await m()('task_delete', { taskId: x.key });
    const link = await m()('task_update', { taskId: b.key, version: b.version, blockedBy: [d.key] });
    const undo = await m()('change_undo', { activityId: deleted.structuredContent.activityId });

    // Assert: the link was refused naming the chain, and no task waits on itself through others.
    assert.equal(link.isError, true);
    assert.match(text(link), new RegExp(`cycle \\(${b.key} → ${d.key} → ${x.key} \\(deleted\\) → ${b.key}\\)`));
    assert.equal(undo.isError, false, text(undo));
    assert.deepEqual(await blockedByOf(b.key), []);
    assert.deepEqual(await blockedByOf(x.key), [b.key]);
  });

  test('a task never waits on more than 20: a link to a deleted task keeps its place, and its undo adds none', async () => {
    const blockers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(`Blocker ${i}`)));
    const extra = await create('The 21st');
    const waiting = await create('Waits on twenty', { blockedBy: blockers.map((t) => t.key) });

    // While the first blocker is deleted, the waiting task still holds its twenty: a 21st needs one of them gone.
    const deleted = await m()('task_delete', { taskId: blockers[0]!.key });
    const current = (await m()('task_get', { taskId: waiting.key })).structuredContent;
    const swapped = await m()('task_update', {
      taskId: waiting.key,
      version: current.version,
      blockedBy: [...blockers.slice(1).map((t) => t.key), extra.key],
    });
    await m()('change_undo', { activityId: deleted.structuredContent.activityId });

    assert.equal(swapped.isError, false, text(swapped));
    const links = await blockedByOf(waiting.key);
    assert.equal(links.length, 20);
    assert.ok(!links.includes(blockers[0]!.key), 'the link it dropped did not come back');
  });

  test('a link the waiting task dropped while its blocker was deleted does not come back with the undo', async () => {
    const x = await create('Deleted blocker');
    const y = await create('Kept blocker');
    const d = await create('Waits on both', { blockedBy: [x.key, y.key] });

    const deleted = await m()('task_delete', { taskId: x.key });
    const now = (await m()('task_get', { taskId: d.key })).structuredContent;
    await m()('task_update', { taskId: d.key, version: now.version, blockedBy: [y.key] });
    await m()('change_undo', { activityId: deleted.structuredContent.activityId });

    assert.deepEqual(await blockedByOf(d.key), [y.key]);
  });

  test('undoing a completion after someone linked a task to it reopens it and blocks that task again', async () => {
    const x = await create('Done, then undone');
    const done = await m()('task_complete', { taskId: x.key });
    const d = await create('Linked after', { blockedBy: [x.key] });

    const undo = await m()('change_undo', { activityId: done.structuredContent.activityId });
    const blocked = (await m()('task_get', { taskId: d.key })).structuredContent.blockedBy;

    assert.equal(undo.isError, false, text(undo));
    assert.deepEqual(blocked, [{ key: x.key, taskId: x.taskId, open: true }]);
  });
});

describe('links hold within one call and through long chains', () => {
  test('two entries of one tasks_update that each look acyclic alone cannot close a cycle together', async () => {
    // Arrange: C waits on A.
    const a = await create('Entry A');
    const b = await create('Entry B');
    const c = await create('Entry C', { blockedBy: [a.key] });

    // Act: B waits on C, and A waits on B, in one call.
    const r = await m()('tasks_update', {
      tasks: [
        { taskId: b.key, blockedBy: [c.key] },
        { taskId: a.key, blockedBy: [b.key] },
      ],
    });

    // Assert: the first is made, the second refused naming the cycle it would close.
    const items = r.structuredContent.items as { status: string; reason?: string }[];
    assert.deepEqual(
      items.map((i) => i.status),
      ['updated', 'refused'],
      text(r),
    );
    assert.match(items[1]!.reason!, new RegExp(`cycle \\(${a.key} → ${b.key} → ${c.key} → ${a.key}\\)`));
    assert.deepEqual(await blockedByOf(a.key), []);
  });

  test('a chain of blockers too long to check is refused, never let through unchecked', { timeout: 120_000 }, async () => {
    // Arrange: 205 tasks, each waiting on the one before it.
    const first = await create('Chain 1');
    let prev = first;
    for (let i = 2; i <= 205; i += 50) {
      const batch = await m()('tasks_create', {
        tasks: Array.from({ length: Math.min(50, 206 - i) }, (_, j) => ({
          title: `Chain ${i + j}`,
          blockedBy: [j === 0 ? prev.key : `@${j}`],
        })),
      });
      const made = batch.structuredContent.items as { key: string }[];
      prev = made.at(-1) as typeof prev;
    }

    // Act: the first waits on the last.
    const r = await m()('task_update', { taskId: first.key, version: first.version, blockedBy: [prev.key] });

    // Assert
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /^blockedBy: the tasks it would wait on lead on through more than 200 others/);
    assert.deepEqual(await blockedByOf(first.key), []);
  });

  test('a deleted task is restored after a task that waited on it dropped the link', async () => {
    const x = await create('Deleted, then dropped');
    const d = await create('Drops it', { blockedBy: [x.key] });
    const deleted = await m()('task_delete', { taskId: x.key });
    const now = (await m()('task_get', { taskId: d.key })).structuredContent;
    await m()('task_update', { taskId: d.key, version: now.version, blockedBy: [] });

    const undo = await m()('change_undo', { activityId: deleted.structuredContent.activityId });

    assert.equal(undo.isError, false, text(undo));
    assert.equal((await m()('task_get', { taskId: x.key })).isError, false);
    assert.deepEqual(await blockedByOf(d.key), []);
  });
});

describe("undoing an invite ends the person's access for good", () => {
  test('their token stops at the undo and stays stopped when the undo is undone', async () => {
    const own = await createTestWorkspace(server);
    const invited = (await caller(server, own.admin.token)('member_invite', { email: 'brief@example.test', name: 'Brief' }))
      .structuredContent;
    const token = await addToken(server, own.workspaceId, invited.userId, ['tasks:read']);

    const undo = await caller(server, own.admin.token)('change_undo', { activityId: invited.activityId });
    const during = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });
    const redoAt = new Date().toISOString();
    const redo = await caller(server, own.admin.token)('change_undo', { activityId: undo.structuredContent.activityId });
    const afterRedo = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });

    assert.equal(undo.isError, false, text(undo));
    assert.notEqual(during.status, 200);
    assert.equal(redo.isError, false, text(redo));
    assert.equal(afterRedo.status, 401, afterRedo.text);
    assert.equal(
      (await server.app.services.tokens.list(own.workspaceId)).find((t) => t.userId === invited.userId)?.revokedAt !== undefined,
      true,
    );
    // Brought back under their old id, their credentials start at the redo.
    const back = await server.app.services.directory.getMember(own.workspaceId, invited.userId);
    assert.ok(back?.credentialsFrom && back.credentialsFrom >= redoAt, JSON.stringify(back));
  });

  test('a new member has no mark to be older than: an app they connect within the second of their invitation works', async () => {
    const own = await createTestWorkspace(server);

    const invited = (await caller(server, own.admin.token)('member_invite', { email: 'quick@example.test', name: 'Quick' }))
      .structuredContent;

    // A new id that no credential names: a grant's whole-second time in the invitation's own second
    // would otherwise count as from before it.
    assert.equal((await server.app.services.directory.getMember(own.workspaceId, invited.userId))?.credentialsFrom, undefined);
  });
});

describe('answers true to their data', () => {
  test('a bulk undo that undid nothing does not say someone declined; nobody was asked', async () => {
    const t = await create('Moves on');
    const changed = (await m()('tasks_update', { tasks: [{ taskId: t.key, priority: 'P1' }] })).structuredContent;
    await m()('task_update', { taskId: t.key, version: 2, title: 'Moved on' });

    const undo = await m()('change_undo', { activityId: changed.activityId });

    assert.equal(undo.structuredContent.undid, false);
    assert.doesNotMatch(text(undo), /declined|cancelled/);
    assert.match(text(undo), /^Undid 0 of 1 /);
  });

  test('accepting without ticking the box is said so, and changes nothing', async () => {
    const t = await create('Ask me');
    const { client } = await asking(ws.member.token, { action: 'accept', content: { confirm: false } });

    const r = await client.callTool({ name: 'task_delete', arguments: { taskId: t.key } });
    await client.close();

    assert.match((r.content as { text: string }[])[0]!.text, /accepted .* without ticking its box/);
    assert.equal((r.structuredContent as { declined: string }).declined, 'unticked');
    assert.ok(await server.app.services.tasks.get(ws.workspaceId, t.taskId));
  });

  test('a truncated list prints the cursor its text tells the model to pass', async () => {
    await create('One of many');
    await create('Another of many');

    const page = await m()('tasks_search', { limit: 1 });

    assert.ok(page.structuredContent.nextCursor);
    assert.ok(text(page).includes(page.structuredContent.nextCursor));
  });

  test('in tasks_create, @1 names the task item 1 creates, and every created line shows the links it set', async () => {
    const r = await m()('tasks_create', { tasks: [{ title: 'Parent work' }, { title: 'Waits on it', blockedBy: ['@1'] }] });

    const [first, second] = r.structuredContent.items;
    assert.equal(second.status, 'created', text(r));
    assert.deepEqual(second.blockedBy, [first.key]);
    assert.deepEqual(await blockedByOf(second.key), [first.key]);
    assert.match(text(r), new RegExp(`- 2: created ${second.key} Waits on it · waits on ${first.key}`));
  });

  test('me_get gives the key tasks are named by', async () => {
    const me = await m()('me_get');

    assert.equal(me.structuredContent.workspace.key, 'TEST');
    assert.match(text(me), /task keys TEST-<number>/);
  });

  test("an undo's answer names the change once, and its record's line shows links before and after", async () => {
    const a1 = await create('First blocker');
    const a2 = await create('Second blocker');
    const t = await create('Relinked', { blockedBy: [a1.key] });
    const changed = (await m()('task_update', { taskId: t.key, version: 1, blockedBy: [a2.key] })).structuredContent;

    const undo = await m()('change_undo', { activityId: changed.activityId });
    const history = await m()('activity_list', { task: t.key, limit: 5 });

    assert.equal(text(undo).split(changed.activityId).length - 1, 1, text(undo));
    assert.match(text(history), new RegExp(`waits on ${a1.key} → ${a2.key}`));
  });

  test('a destructive tool says truthfully when the server asks, and tells the model to ask otherwise', async () => {
    const listed = await legacyCall(server, 'tools/list', {}, { token: ws.owner.token });
    const del = listed.json.result.tools.find((t: { name: string }) => t.name === 'task_delete');

    assert.match(del.description, /Asks first \(elicitation\)/);
    assert.match(del.description, /else confirm with the person\./);
  });

  test('undoing a promotion, which lowers an admin back, is asked first where the client can ask', async () => {
    const own = await createTestWorkspace(server);
    const promoted = (await caller(server, own.owner.token)('member_role_set', { userId: own.member.userId, role: 'admin' }))
      .structuredContent;
    const { client, asked } = await asking(own.owner.token, { action: 'decline' });

    const r = await client.callTool({ name: 'change_undo', arguments: { activityId: promoted.activityId } });
    await client.close();

    assert.equal(asked.length, 1);
    assert.match(asked[0]!.message, /back to member/);
    assert.equal((r.structuredContent as { undid: boolean }).undid, false);
    assert.equal((await server.app.services.directory.getMember(own.workspaceId, own.member.userId))?.role, 'admin');
  });
});
