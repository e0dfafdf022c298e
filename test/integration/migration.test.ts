import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { BatchWriteCommand, paginateScan, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { migrateWorkspace } from '../../lambda/workspace/admin/migrate.js';
import { addToken, caller, createTestWorkspace, startOwnWorkspacesServer, toolText } from '../helpers/workspace-fixtures.js';

// A workspace as the version before data layout 2 stored it (test/fixtures/layout-1-workspace.json:
// its items, made by that version's own tools, and what its read tools answered), loaded into a
// fresh table; then the migration, stopped half way and run again, as an operator would.

const fixture = JSON.parse(readFileSync(new URL('../fixtures/layout-1-workspace.json', import.meta.url), 'utf8'), (_k, v) =>
  v && typeof v === 'object' && Array.isArray(v.$set) ? new Set(v.$set) : v,
) as {
  workspaceId: string;
  members: Record<'owner' | 'admin' | 'member' | 'viewer', string>;
  projects: { p1: string; p2: string };
  day: string;
  items: Record<string, unknown>[];
  reads: Record<string, any>;
};
const WS = fixture.workspaceId;
const FIXTURE_RECORDS = new Set(fixture.items.filter((i) => String(i.sk).startsWith('ACT#')).map((i) => String(i.activityId)));

let server: LocalServer;
let owner: ReturnType<typeof caller>;
let viewer: ReturnType<typeof caller>;
const db = () => createDocumentClient({ endpoint: server.dynamodbEndpoint });
const table = () => server.app.config.tables.workspace;

/** Activity filters read from the history's partitions before the migration, from its index after. */
const HISTORY_READS: readonly Record<string, string>[] = [{ project: fixture.projects.p1 }, { kind: 'project' }, { kind: 'comment' }];

/** Every item of a workspace, in any partition of it. */
const itemsOfWorkspace = async (ws: string): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateScan(
    { client: db() },
    {
      TableName: table(),
      FilterExpression: 'pk = :pk OR begins_with(pk, :sub)',
      ExpressionAttributeValues: { ':pk': `WS#${ws}`, ':sub': `WS#${ws}#` },
      ConsistentRead: true,
    },
  ))
    items.push(...(page.Items ?? []));
  return items;
};

/** Every item of the workspace, in any partition of it. */
const itemsOf = async (): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateScan(
    { client: db() },
    {
      TableName: table(),
      FilterExpression: 'pk = :pk OR begins_with(pk, :sub)',
      ExpressionAttributeValues: { ':pk': `WS#${WS}`, ':sub': `WS#${WS}#` },
      ConsistentRead: true,
    },
  ))
    items.push(...(page.Items ?? []));
  return items;
};

/** The read tools' answers the fixture holds, asked again. */
const READS: [name: string, tool: string, args: Record<string, unknown>][] = [
  ['search-default', 'tasks_search', { limit: 100 }],
  ['search-any', 'tasks_search', { status: 'any', limit: 100 }],
  ['search-done', 'tasks_search', { status: 'done', limit: 100 }],
  ['search-project', 'tasks_search', { project: fixture.projects.p1, status: 'any', limit: 100 }],
  ['search-inbox', 'tasks_search', { project: 'none', limit: 100 }],
  ['search-assignee', 'tasks_search', { assignee: fixture.members.member, status: 'any', limit: 100 }],
  ['search-unassigned', 'tasks_search', { assignee: 'none', limit: 100 }],
  ['search-label', 'tasks_search', { label: 'sales', status: 'any', limit: 100 }],
  ['search-priority', 'tasks_search', { priority: 'P1', status: 'any', limit: 100 }],
  ['search-text', 'tasks_search', { text: 'pricing', status: 'any', limit: 100 }],
  ['search-due', 'tasks_search', { dueAfter: '2026-11-10', dueBefore: '2026-11-25', limit: 100 }],
  ['search-blocked', 'tasks_search', { blocked: true, limit: 100 }],
  ['agenda-owner', 'agenda_get', { date: fixture.day, limit: 100 }],
  ['agenda-anyone', 'agenda_get', { date: fixture.day, assignee: 'anyone', limit: 100 }],
  ['agenda-none', 'agenda_get', { date: fixture.day, assignee: 'none', limit: 100 }],
  ['task-3', 'task_get', { taskId: 'TEST-3' }],
  ['task-9', 'task_get', { taskId: 'TEST-9' }],
  ['comments-3', 'comments_list', { taskId: 'TEST-3' }],
  ['activity-3', 'activity_list', { task: 'TEST-3' }],
  ['activity-all', 'activity_list', { limit: 100 }],
  ['project-1', 'project_get', { projectId: fixture.projects.p1 }],
];

/** What of an answer must not change with the layout: which tasks, in which order, and what the counts say. */
const essence = (name: string, r: any): unknown => {
  if (r.tasks) {
    const counts = r.counts ? { ...r.counts } : undefined;
    // "Done on a day" is kept for the last days only; the fixture's day may be long past.
    if (counts && Date.now() - Date.parse(fixture.day) > 2 * 86_400_000) delete counts.doneToday;
    return { keys: r.tasks.map((t: { key: string }) => t.key), ...(counts ? { counts } : {}) };
  }
  // Records of changes made by these tests (the comment added before the migration) are not the fixture's.
  if (name.startsWith('activity'))
    return r.entries.map((e: { activityId: string }) => e.activityId).filter((id: string) => FIXTURE_RECORDS.has(id));
  if (name.startsWith('comments')) return r.comments.map((c: { commentId: string; body: string }) => [c.commentId, c.body]);
  if (name.startsWith('project')) return { open: r.counts.open, done: r.counts.done };
  return withStatusNames(r);
};

/**
 * The fixture was recorded before workflow statuses, when a task's `status` was open or done: such a
 * task reads as Todo or Done now, with its category, and nothing else of it may differ.
 */
const withStatusNames = (answer: any): unknown => {
  // Who made it, by name, and who watches it: said since (the fixture's answer had the id alone, and no watchers).
  const { createdByName: _name, watchers: _watchers, ...t } = answer;
  if (t.statusCategory !== undefined || (t.status !== 'open' && t.status !== 'done')) return t;
  const { status, ...rest } = t;
  return status === 'open' ? { ...rest, status: 'Todo', statusCategory: 'unstarted' } : { ...rest, status: 'Done', statusCategory: 'done' };
};

const readsAgree = async (when: string) => {
  for (const [name, tool, args] of READS) {
    const r = await owner(tool, args);
    assert.equal(r.isError, false, `${when} ${name}: ${toolText(r)}`);
    assert.deepEqual(essence(name, r.structuredContent), essence(name, fixture.reads[name]), `${when}: ${name}`);
  }
};

before(async () => {
  // Arrange: the fixture's items as they were stored, and tokens for its people.
  server = await startOwnWorkspacesServer({ DOERS_AUTH_CACHE_SECONDS: '0' });
  const items = fixture.items.filter((i) => !String(i.pk).startsWith('TOKEN#'));
  for (let i = 0; i < items.length; i += 25) {
    await db().send(
      new BatchWriteCommand({ RequestItems: { [table()]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
  owner = caller(server, await addToken(server, WS, fixture.members.owner, ['tasks:read', 'tasks:write', 'team:read', 'team:admin']));
  viewer = caller(server, await addToken(server, WS, fixture.members.viewer, ['tasks:read', 'team:read']));
});
after(() => server.close());

describe('a workspace of the version before, migrated', () => {
  test('before the migration, every read answers as that version did, and task changes wait, saying why', async () => {
    await readsAgree('before');
    const refused = await owner('task_create', { title: 'Not yet' });
    const comment = await owner('comment_add', { taskId: 'TEST-4', body: 'Comments work before the migration' });

    assert.equal(refused.isError, true);
    assert.match(
      toolText(refused),
      /earlier version of doers: reads work, and changes to tasks wait until its operator runs npm run admin -- migrate/,
    );
    assert.equal(comment.isError, false, toolText(comment));
  });

  test('stopped half way, reads still answer and changes say the move is under way; run again, it finishes, and every read answers the same', async () => {
    // The history by project and by kind before: read from its partitions, as the version before kept them.
    const historyBefore = await Promise.all(HISTORY_READS.map((args) => owner('activity_list', { ...args, limit: 100 })));
    // Act: the first run stops after its first batch of tasks, as a killed process would.
    const stop = new Error('stopped');
    let stoppedAt = 0;
    await assert.rejects(
      migrateWorkspace(db(), table(), WS, {
        drainMs: 0,
        afterTasks: (n) => {
          stoppedAt = n;
          throw stop;
        },
      }),
      stop,
    );
    const midwayRead = await viewer('tasks_search', { status: 'any', limit: 100 });
    const midwayWrite = await owner('task_update', { taskId: 'TEST-4', version: 1, title: 'Not during the move' });
    const summary = await migrateWorkspace(db(), table(), WS, { drainMs: 0 });
    const again = await migrateWorkspace(db(), table(), WS, { drainMs: 0 });

    // Assert
    assert.deepEqual(essence('search-any', midwayRead.structuredContent), essence('search-any', fixture.reads['search-any']));
    assert.equal(midwayWrite.isError, true);
    assert.match(toolText(midwayWrite), /being moved to a new data layout/);
    assert.equal(summary.tasks, 45);
    assert.ok(stoppedAt > 0 && stoppedAt < 45, `stopped after ${stoppedAt} tasks`);
    assert.equal(summary.written, 45 - stoppedAt, 'the tasks written before the stop are not written again');
    assert.equal(summary.deleted, 1);
    assert.ok(summary.recordsMoved > 40, `${summary.recordsMoved} records moved`);
    assert.equal(summary.removed, 45);
    assert.equal(again.already, true);
    assert.equal(again.removed, 0);
    await readsAgree('after');
    // Every record in the history's index by project and kind, once; the same pages read from it.
    assert.equal(summary.recordsIndexed, 0, 'the records moved are indexed as they move');
    assert.equal(again.recordsIndexed, 0);
    const workspace = await server.app.services.directory.getWorkspace(WS);
    assert.equal(workspace?.activityIndexed, true);
    const historyAfter = await Promise.all(HISTORY_READS.map((args) => owner('activity_list', { ...args, limit: 100 })));
    for (const [i, args] of HISTORY_READS.entries()) {
      const ids = (r: { structuredContent?: any }) => r.structuredContent.entries.map((e: { activityId: string }) => e.activityId);
      assert.ok(ids(historyBefore[i]!).length > 0, JSON.stringify(args));
      assert.deepEqual(ids(historyAfter[i]!), ids(historyBefore[i]!), JSON.stringify(args));
    }
  });

  test('a workspace in layout 2 from before the history index gets its records indexed by migrate, and the same pages', async () => {
    // Arrange: a workspace whose records were written without the index, as the version before wrote them.
    const old = await createTestWorkspace(server);
    const as = caller(server, old.owner.token);
    const project = (await as('project_create', { name: 'Indexed later' })).structuredContent.projectId;
    for (let i = 0; i < 5; i++) await as('task_create', { title: `Old ${i}`, projectId: project });
    for (const item of await itemsOfWorkspace(old.workspaceId)) {
      if (String(item.sk).startsWith('ACT#'))
        await db().send(
          new UpdateCommand({ TableName: table(), Key: { pk: item.pk, sk: item.sk }, UpdateExpression: 'REMOVE gsi3pk, gsi3sk' }),
        );
    }
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: { pk: `WS#${old.workspaceId}`, sk: 'META' },
        UpdateExpression: 'REMOVE activityIndexed',
      }),
    );
    const before = await caller(server, old.owner.token)('activity_list', { project, limit: 100 });

    // Act
    const summary = await migrateWorkspace(db(), table(), old.workspaceId, { drainMs: 0 });
    const after = await caller(server, old.owner.token)('activity_list', { project, limit: 100 });
    const byKind = await caller(server, old.owner.token)('activity_list', { kind: 'project', limit: 100 });

    // Assert
    assert.equal(summary.already, true);
    assert.equal(summary.recordsIndexed, 6, 'the project and the five tasks');
    assert.deepEqual(after.structuredContent.entries, before.structuredContent.entries);
    assert.equal(after.structuredContent.returned, 6, 'the project and its five tasks');
    assert.equal(byKind.structuredContent.returned, 1);
  });

  test('after it, every task is in layout 2 once, nothing of layout 1 is left, and no record was lost or doubled', async () => {
    const items = await itemsOf();
    const taskItems = items.filter((i) => i.sk === 'TASK');
    const legacy = items.filter((i) => String(i.sk).startsWith('TASK#') || (i.pk === `WS#${WS}` && String(i.sk).startsWith('ACT#')));
    const records = items.filter((i) => String(i.sk).startsWith('ACT#')).map((i) => String(i.activityId));
    const fixtureRecords = fixture.items.filter((i) => String(i.sk).startsWith('ACT#')).map((i) => String(i.activityId));

    assert.equal(taskItems.length, 45);
    assert.equal(new Set(taskItems.map((i) => i.taskId)).size, 45);
    assert.deepEqual(legacy, []);
    // Each record once; the comment added before the migration has its record too.
    assert.equal(new Set(records).size, records.length);
    assert.ok(fixtureRecords.every((id) => records.includes(id)));
    assert.equal(records.length, fixtureRecords.length + 1);
  });

  test('task changes work again, on layout 2, and a change made before the migration can be undone', async () => {
    const made = await owner('task_create', { title: 'After the migration', priority: 'P1', dueDate: fixture.day });
    const oldChange = fixture.reads['activity-3'].entries.find(
      (e: { summary?: string; action?: string }) => e.action === 'changed' || /waits on/.test(e.summary ?? ''),
    );
    const undo = oldChange ? await owner('change_undo', { activityId: oldChange.activityId }) : undefined;
    const agenda = await owner('agenda_get', { date: fixture.day, assignee: 'anyone', limit: 100 });

    assert.equal(made.isError, false, toolText(made));
    assert.equal(made.structuredContent.key, 'TEST-46', 'numbers go on from the counter');
    assert.ok(undo, 'the fixture holds a change of TEST-3');
    assert.equal(undo!.isError, false, toolText(undo!));
    assert.equal(agenda.structuredContent.counts.open, fixture.reads['agenda-anyone'].counts.open + 1);
    assert.equal(agenda.structuredContent.counts.dueToday, fixture.reads['agenda-anyone'].counts.dueToday + 1);
  });
});
