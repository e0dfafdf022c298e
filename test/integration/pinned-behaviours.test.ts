import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { addDays } from '../../lambda/workspace/model/time.js';
import { modernCall, post, urlOf } from '../helpers/local.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Behaviours a check of the suite's strength found unpinned (a small deliberate bug in the code
// left every test passing): each test here fails when its behaviour breaks. Through the tools, on
// the embedded DynamoDB and the local server's embedded S3 API (a file 1 MB at most, 2 MB a workspace).

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startOwnWorkspacesServer({ DOERS_ATTACHMENT_MAX_MB: '1', DOERS_ATTACHMENT_QUOTA_MB: '2' });
  ws = await createTestWorkspace(server);
});
after(() => server?.close());

const text = toolText;
const owner = () => caller(server, ws.owner.token);
const m = () => caller(server, ws.member.token);
type Out = {
  key: string;
  taskId: string;
  version: number;
  status: string;
  statusCategory: string;
  dueDate?: string;
  repeat?: string;
  completedAt?: string;
  activityId?: string;
};
type Entry = { activityId: string; action: string; summary: string; changes: { field: string; before?: unknown; after?: unknown }[] };

const ok = <T>(r: { isError: boolean; structuredContent?: unknown; content: { text: string }[] }): T => {
  assert.equal(r.isError, false, text(r));
  return r.structuredContent as T;
};
const create = async (title: string, extra: Record<string, unknown> = {}) => ok<Out>(await m()('task_create', { title, ...extra }));
const get = async (key: string) => ok<Out & { attachments?: number }>(await m()('task_get', { taskId: key }));
const project = async (name: string, statuses: { name: string; category: string }[]) =>
  ok<{ projectId: string; version: number }>(await owner()('project_create', { name, statuses }));
const projectVersion = async (projectId: string) =>
  ok<{ project: { version: number } }>(await owner()('project_get', { projectId })).project.version;
const keysOf = (r: { structuredContent?: unknown }) => ((r.structuredContent as { tasks: Out[] }).tasks ?? []).map((t) => t.key);

describe('project statuses', () => {
  test('a status removed into one that a later change removes reads as the final live status, and is found by it', async () => {
    // Arrange: a task in QA; QA removed into Doing
    const p = await project('Chained removals', [
      { name: 'Ready', category: 'unstarted' },
      { name: 'Doing', category: 'started' },
      { name: 'QA', category: 'started' },
      { name: 'Review', category: 'started' },
      { name: 'Shipped', category: 'done' },
    ]);
    const t = await create('Check the release', { projectId: p.projectId, status: 'QA' });
    ok(
      await owner()('project_update', {
        projectId: p.projectId,
        version: await projectVersion(p.projectId),
        statuses: [
          { name: 'Ready', category: 'unstarted' },
          { name: 'Doing', category: 'started' },
          { name: 'Review', category: 'started' },
          { name: 'Shipped', category: 'done' },
        ],
        moveTo: { QA: 'Doing' },
      }),
    );

    // Act: Doing, where QA's tasks went, is removed into Review
    const removed = await owner()('project_update', {
      projectId: p.projectId,
      version: await projectVersion(p.projectId),
      statuses: [
        { name: 'Ready', category: 'unstarted' },
        { name: 'Review', category: 'started' },
        { name: 'Shipped', category: 'done' },
      ],
      moveTo: { Doing: 'Review' },
    });
    const read = await get(t.key);
    const byFinal = await m()('tasks_search', { project: p.projectId, status: 'Review' });
    const byFirst = await m()('tasks_search', { project: p.projectId, status: 'Ready' });

    // Assert
    assert.equal(removed.isError, false, text(removed));
    assert.deepEqual([read.status, read.statusCategory], ['Review', 'started'], 'not Doing (retired) nor the first open status');
    assert.deepEqual(keysOf(byFinal), [t.key]);
    assert.deepEqual(keysOf(byFirst), []);
  });
});

describe('recurring tasks', () => {
  test('undoing the reopening of a canceled recurring task cancels it again: same due date, rule and cancel time', async () => {
    // Arrange
    const t = await create('Water the plants', { repeat: 'every monday' });
    const canceled = ok<Out>(await m()('task_update', { taskId: t.key, version: t.version, status: 'Canceled' }));
    const reopened = ok<Out>(await m()('task_reopen', { taskId: t.key }));

    // Act
    const undo = await m()('change_undo', { activityId: reopened.activityId });
    const now = await get(t.key);

    // Assert
    assert.equal(undo.isError, false, text(undo));
    assert.equal(reopened.statusCategory, 'unstarted');
    assert.deepEqual(
      [now.status, now.statusCategory, now.dueDate, now.repeat, now.completedAt],
      ['Canceled', 'canceled', t.dueDate, 'every Monday', canceled.completedAt],
    );
  });

  test('undoing the reopening of a done recurring task closes it again, not at a next occurrence: its last one, or one done with a rule ahead', async () => {
    // Arrange: one done at its last occurrence, one given a rule after it was done (its rule still has days ahead)
    const counted = await create('Two check-ups', { repeat: 'every day for 2 times' });
    ok(await m()('task_complete', { taskId: counted.key }));
    const last = ok<Out>(await m()('task_complete', { taskId: counted.key }));
    const once = await create('Review the budget', { dueDate: '2030-01-07' });
    const done = ok<Out>(await m()('task_complete', { taskId: once.key }));
    ok(await m()('task_update', { taskId: once.key, version: done.version, repeat: 'every monday' }));

    for (const [t, closed] of [
      [counted, last],
      [once, done],
    ] as const) {
      const reopened = ok<Out>(await m()('task_reopen', { taskId: t.key }));

      // Act
      const undo = await m()('change_undo', { activityId: reopened.activityId });
      const now = await get(t.key);

      // Assert
      assert.equal(undo.isError, false, text(undo));
      assert.deepEqual(
        [now.status, now.statusCategory, now.dueDate, now.completedAt],
        ['Done', 'done', closed.dueDate, closed.completedAt],
        t.key,
      );
      assert.ok(now.repeat, 'the rule is kept');
    }
  });

  test('an RRULE with one BYHOUR and BYMINUTE is due at that time and completes to the next day at it; a list of minutes is refused, writing nothing', async () => {
    // Arrange
    const t = await create('Morning stand-up', { repeat: 'FREQ=DAILY;BYHOUR=7;BYMINUTE=30' });
    const before = ok<{ tasks: Out[] }>(await m()('tasks_search', { recurring: true, limit: 100 })).tasks.length;

    // Act
    const done = ok<Out & { dueTime?: string; doneFor: string }>(await m()('task_complete', { taskId: t.key }));
    const refused = await m()('task_create', { title: 'Every half hour', repeat: 'FREQ=DAILY;BYHOUR=9;BYMINUTE=0,30' });
    const after = ok<{ tasks: Out[] }>(await m()('tasks_search', { recurring: true, limit: 100 })).tasks.length;

    // Assert
    assert.deepEqual([t.repeat, (t as Out & { dueTime?: string }).dueTime], ['every day', '07:30']);
    assert.equal(done.doneFor, t.dueDate);
    assert.deepEqual([done.dueDate, done.dueTime, done.statusCategory], [addDays(t.dueDate!, 1), '07:30', 'unstarted']);
    assert.equal(refused.isError, true);
    assert.match(
      text(refused),
      /^repeat: 'FREQ=DAILY;BYHOUR=9;BYMINUTE=0,30' occurs more than once a day \(BYHOUR or BYMINUTE lists several\)/,
    );
    assert.equal(after, before, 'the refused one wrote nothing');
  });

  test("completing a recurring task in a project with its own statuses stores the project's first open status, and its record says so", async () => {
    // Arrange: in Doing, with Shipped as the project's done status
    const p = await project('Reports', [
      { name: 'Ready', category: 'unstarted' },
      { name: 'Doing', category: 'started' },
      { name: 'Shipped', category: 'done' },
    ]);
    const t = await create('Weekly report', { projectId: p.projectId, repeat: 'every monday', status: 'Doing' });

    // Act
    const done = ok<Out & { doneFor: string }>(await m()('task_complete', { taskId: t.key }));
    const [entry] = ok<{ entries: Entry[] }>(await m()('activity_list', { task: t.key, limit: 1 })).entries;
    const ready = await m()('tasks_search', { project: p.projectId, status: 'Ready' });
    const shipped = await m()('tasks_search', { project: p.projectId, status: 'Shipped' });
    const counts = ok<{ counts: { open: number; done: number } }>(await owner()('project_get', { projectId: p.projectId })).counts;

    // Assert
    assert.equal(done.doneFor, t.dueDate);
    assert.deepEqual([done.status, done.statusCategory], ['Ready', 'unstarted'], 'open at its next occurrence, in the first open status');
    assert.equal(entry!.action, 'completed');
    assert.match(entry!.summary, /^completed TEST-\d+ 'Weekly report': done for /);
    // As a person reads it: Doing → Ready; as the record keeps it for undo: the keys it stored, the phase unchanged.
    const status = entry!.changes.find((c) => c.field === 'status');
    assert.deepEqual([status?.before, status?.after], ['Doing', 'Ready']);
    const stored = (await server.app.services.activity.get(ws.workspaceId, entry!.activityId))!;
    const state = stored.changes.find((c) => c.field === 'state');
    assert.deepEqual([state?.before, state?.after], ['started.doing', 'unstarted.ready'], 'the record holds the status it stored');
    assert.equal(
      stored.changes.some((c) => c.field === 'status'),
      false,
      'the task stays open',
    );
    assert.deepEqual(keysOf(ready), [t.key]);
    assert.deepEqual(keysOf(shipped), []);
    assert.deepEqual([counts.open, counts.done], [1, 0]);
  });
});

describe('attachments', () => {
  test('a declared text type whose bytes are neither text nor a known binary is refused naming type, and nothing is stored', async () => {
    // Arrange: bytes no sniffer knows, with a NUL (not text)
    const t = await create('Declared as text');
    const unknown = Buffer.from([0, 1, 2, 3, 255, 254]).toString('base64');

    // Act
    const declared = await m()('attachment_add', { taskId: t.key, name: 'notes.txt', content: unknown, type: 'text/plain' });
    const asText = await m()('attachment_add', { taskId: t.key, name: 'notes.txt', text: 'a\u0000b' });
    const undeclared = await m()('attachment_add', { taskId: t.key, name: 'notes.txt', content: unknown });

    // Assert
    assert.equal(declared.isError, true);
    assert.match(text(declared), /^type: says text, but the bytes are not text \(UTF-8 without control characters\)/);
    assert.equal(asText.isError, true);
    assert.match(text(asText), /^text: says text, but the bytes are not text/);
    assert.equal((undeclared.structuredContent as { type: string }).type, 'application/octet-stream', 'the control: no type declared');
    assert.equal((await get(t.key)).attachments, 1, 'only the undeclared one was stored');
  });

  test("undoing a delete once the workspace's quota is full is refused naming the quota, and works once there is room again", async () => {
    // Arrange: 2 MB a workspace, 1 MB a file; one deleted, and its room taken by another
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const t = ok<Out>(await call('task_create', { title: 'Quota and undo' }));
    const mb = (byte: number) => Buffer.alloc(1024 * 1024, byte).toString('base64');
    const first = ok<{ attachmentId: string; uri: string }>(await call('attachment_add', { taskId: t.key, name: 'a.bin', content: mb(1) }));
    ok(await call('attachment_add', { taskId: t.key, name: 'b.bin', content: mb(2) }));
    const deleted = ok<{ activityId: string }>(await call('attachment_delete', { attachmentId: first.attachmentId }));
    const third = ok<{ attachmentId: string }>(await call('attachment_add', { taskId: t.key, name: 'c.bin', content: mb(3) }));

    // Act
    const refused = await call('change_undo', { activityId: deleted.activityId });
    const afterRefusal = ok<{ attachments?: number }>(await call('task_get', { taskId: t.key })).attachments;
    const gone = await modernCall(server, 'resources/read', { uri: first.uri }, { token: own.member.token });
    ok(await call('attachment_delete', { attachmentId: third.attachmentId }));
    const again = await call('change_undo', { activityId: deleted.activityId });
    const back = await modernCall(server, 'resources/read', { uri: first.uri }, { token: own.member.token });

    // Assert
    assert.equal(refused.isError, true);
    assert.match(
      text(refused),
      /the workspace's attachments would take 3\.0 MB of its 2\.0 MB \(DOERS_ATTACHMENT_QUOTA_MB\); nothing was stored/,
    );
    assert.equal(afterRefusal, 2, 'the deleted file did not come back');
    assert.equal(gone.json.error?.code, -32602, 'nor its bytes');
    assert.equal(again.isError, false, text(again));
    assert.deepEqual(Buffer.from(back.json.result.contents[0].blob, 'base64'), Buffer.alloc(1024 * 1024, 1), 'the same bytes');
  });
});

describe('the size gate of bodies over 1 MiB', () => {
  /** A tools/call of attachment_add of 900 KB (base64 over 1 MiB) whose name comes first or last in its params. */
  const attachmentCall = (taskId: string, nameFirst: boolean) => {
    const args = { taskId, name: 'big.bin', content: Buffer.alloc(900 * 1024, 7).toString('base64') };
    const params = nameFirst ? { name: 'attachment_add', arguments: args } : { arguments: args, name: 'attachment_add' };
    return { jsonrpc: '2.0', id: 1, method: 'tools/call', params };
  };
  const headers = (token: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': '2025-11-25',
    ...extra,
  });

  test('before the credential, a body naming attachment_add only past its first 4 KB is 413; named within them, it reaches the credential', async () => {
    // Arrange
    const t = await create('Gate before the credential');
    const bogus = 'doers_pat_not-a-token-at-all';

    // Act
    const late = await post(urlOf(server), attachmentCall(t.key, false), headers(bogus));
    const early = await post(urlOf(server), attachmentCall(t.key, true), headers(bogus));
    const lateButValid = await post(urlOf(server), attachmentCall(t.key, false), headers(ws.member.token));

    // Assert
    assert.equal(late.status, 413, late.text.slice(0, 200));
    assert.equal(early.status, 401, 'the control: the gate let it on, the credential refused it');
    assert.equal(lateButValid.status, 413, 'the gate reads the start only, whoever sends it');
    assert.equal((await get(t.key)).attachments, undefined);
  });

  test('after the credential, a body over 1 MiB of another method that names attachment_add is 413', async () => {
    // Arrange: prompts/get and resources/read carrying a name of attachment_add, and the Mcp-Name header saying so
    const padding = Buffer.alloc(900 * 1024, 7).toString('base64');
    const bodies = [
      { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'attachment_add', arguments: { padding } } },
      { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'doers://attachments/x', name: 'attachment_add', padding } },
      { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { name: 'attachment_add', padding } },
    ];

    for (const body of bodies) {
      // Act
      const res = await post(urlOf(server), body, headers(ws.member.token, { 'mcp-name': 'attachment_add' }));

      // Assert
      assert.equal(res.status, 413, `${body.method}: ${res.text.slice(0, 200)}`);
      assert.equal(res.json?.error?.code, -32600, body.method);
    }
  });
});
