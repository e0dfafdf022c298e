import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { addDays, dateInZone } from '../../lambda/workspace/model/time.js';

import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

let server: LocalServer;
let ws: TestWorkspace;
let today: string;
const ids: Record<string, string> = {};

const as = (token: string) => caller(server, token);
const text = toolText;
const titles = (r: { structuredContent?: any }) => r.structuredContent.tasks.map((t: { title: string }) => t.title);

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
  today = dateInZone(new Date(), 'UTC');
  const admin = as(ws.admin.token);
  const project = (await admin('project_create', { name: 'Launch' })).structuredContent.projectId;
  ids.project = project;
  const make = async (key: string, args: Record<string, unknown>) => {
    ids[key] = (await admin('task_create', args)).structuredContent.taskId;
  };
  await make('overdue', {
    title: 'Invoice Acme',
    dueDate: addDays(today, -2),
    priority: 'P3',
    assignee: ws.member.userId,
    projectId: project,
    labels: ['finance'],
    notes: 'secret notes about pricing',
  });
  await make('today', { title: 'Call the printer', dueDate: today, priority: 'P1', assignee: 'me' });
  await make('later', { title: 'Plan the launch party', dueDate: addDays(today, 5), priority: 'P2', projectId: project, labels: ['fun'] });
  await make('undated', { title: 'Read about pricing', priority: 'P4' });
  await make('done', { title: 'Book the venue', dueDate: addDays(today, -1), projectId: project });
  await admin('task_complete', { taskId: ids.done });
});
after(() => server.close());

describe('tasks_search filters', () => {
  test('by default lists open tasks by due date, undated last, without notes', async () => {
    const r = await as(ws.viewer.token)('tasks_search');

    assert.equal(r.isError, false);
    assert.deepEqual(titles(r), ['Invoice Acme', 'Call the printer', 'Plan the launch party', 'Read about pricing']);
    assert.equal(r.structuredContent.returned, 4);
    assert.equal(r.structuredContent.truncated, false);
    assert.equal(r.structuredContent.nextCursor, undefined);
    assert.equal(r.structuredContent.today, today);
    assert.ok(r.structuredContent.tasks.every((t: object) => !('notes' in t)));
    assert.ok(!text(r).includes('secret notes'));
    assert.match(text(r), /- TEST-\d+ Invoice Acme · P3, 2 days overdue/);
    assert.match(text(r), /Call the printer · P1, due today/);
    assert.ok(!text(r).includes(ids.overdue!), 'never the id');
  });

  test('text matches title, notes and labels, case-insensitively, every word', async () => {
    const search = as(ws.viewer.token);

    assert.deepEqual(titles(await search('tasks_search', { text: 'PRICING' })), ['Invoice Acme', 'Read about pricing']);
    assert.deepEqual(titles(await search('tasks_search', { text: 'pricing read' })), ['Read about pricing']);
    assert.deepEqual(titles(await search('tasks_search', { text: 'fun' })), ['Plan the launch party']);
  });

  test('assignee "me", "none" and a userId', async () => {
    const asMember = as(ws.member.token);

    assert.deepEqual(titles(await asMember('tasks_search', { assignee: 'me' })), ['Invoice Acme']);
    assert.deepEqual(titles(await asMember('tasks_search', { assignee: ws.admin.userId })), ['Call the printer']);
    assert.deepEqual(titles(await asMember('tasks_search', { assignee: 'none' })), ['Plan the launch party', 'Read about pricing']);
  });

  test('project (and "none" for the inbox), label, priority', async () => {
    const search = as(ws.viewer.token);

    assert.deepEqual(titles(await search('tasks_search', { project: ids.project })), ['Invoice Acme', 'Plan the launch party']);
    assert.deepEqual(titles(await search('tasks_search', { project: 'none' })), ['Call the printer', 'Read about pricing']);
    assert.deepEqual(titles(await search('tasks_search', { label: 'Finance' })), ['Invoice Acme']);
    assert.deepEqual(titles(await search('tasks_search', { priority: 'P2' })), ['Plan the launch party']);
  });

  test('an unknown project is refused naming the parameter, as an unknown assignee is, not answered "no tasks"', async () => {
    const r = await as(ws.viewer.token)('tasks_search', { project: 'prj_nowhere' });

    assert.equal(r.isError, true);
    assert.match(toolText(r), /^project: no project prj_nowhere in this workspace/);
  });

  test("due ranges are inclusive, and overdue means before the user's today", async () => {
    const search = as(ws.viewer.token);

    assert.deepEqual(titles(await search('tasks_search', { dueBefore: today })), ['Invoice Acme', 'Call the printer']);
    assert.deepEqual(titles(await search('tasks_search', { dueAfter: today })), ['Call the printer', 'Plan the launch party']);
    assert.deepEqual(titles(await search('tasks_search', { dueAfter: today, dueBefore: today })), ['Call the printer']);
    assert.deepEqual(titles(await search('tasks_search', { overdue: true })), ['Invoice Acme']);
  });

  test('status done and any', async () => {
    const search = as(ws.viewer.token);

    const done = await search('tasks_search', { status: 'done' });
    const any = await search('tasks_search', { status: 'any', project: ids.project });

    assert.deepEqual(titles(done), ['Book the venue']);
    // A completion as the reader reads it, in their zone: not a raw instant.
    assert.match(text(done), /Book the venue · P4, done (today|yesterday) \d\d:\d\d · /);
    assert.deepEqual(titles(any), ['Invoice Acme', 'Plan the launch party', 'Book the venue']);
  });

  test('contradictory or invalid arguments are tool errors naming the parameter', async () => {
    const search = as(ws.viewer.token);

    const overdueDone = await search('tasks_search', { overdue: true, status: 'done' });
    const range = await search('tasks_search', { dueAfter: '2030-02-01', dueBefore: '2030-01-01' });
    const limit = await search('tasks_search', { limit: 101 });
    const status = await search('tasks_search', { status: 'closed' });
    const assignee = await search('tasks_search', { assignee: 'usr_nobody' });

    assert.match(text(overdueDone), /^overdue: /);
    assert.match(text(range), /^dueAfter: /);
    assert.match(text(limit), /limit/);
    assert.match(text(status), /status/);
    assert.match(text(assignee), /^assignee: /);
    for (const r of [overdueDone, range, limit, status, assignee]) assert.equal(r.isError, true);
  });

  test('finds nothing of another workspace', async () => {
    const other = await createTestWorkspace(server);

    const r = await as(other.owner.token)('tasks_search', { status: 'any' });

    assert.equal(r.structuredContent.returned, 0);
    assert.equal(text(r), 'No tasks match.');
  });
});

describe('cursors', () => {
  test('a page carries a nextCursor that continues the same search; limit may change between pages', async () => {
    const search = as(ws.viewer.token);

    const first = await search('tasks_search', { limit: 2 });
    const second = await search('tasks_search', { limit: 5, cursor: first.structuredContent.nextCursor });

    assert.equal(first.structuredContent.truncated, true);
    assert.equal(first.structuredContent.returned, 2);
    assert.match(text(first), /more follow/);
    assert.deepEqual(
      [...titles(first), ...titles(second)],
      ['Invoice Acme', 'Call the printer', 'Plan the launch party', 'Read about pricing'],
    );
    assert.equal(second.structuredContent.truncated, false);
  });

  test('is refused with a tool error naming cursor: tampered, other arguments, other tool, other user', async () => {
    const first = await as(ws.viewer.token)('tasks_search', { limit: 1 });
    const cursor: string = first.structuredContent.nextCursor;
    const [h, p, s] = cursor.split('.');
    const tampered = `${h}.${p!.slice(0, 8)}${p![8] === 'x' ? 'y' : 'x'}${p!.slice(9)}.${s}`;

    const results = await Promise.all([
      as(ws.viewer.token)('tasks_search', { limit: 1, cursor: 'garbage' }),
      as(ws.viewer.token)('tasks_search', { limit: 1, cursor: tampered }),
      as(ws.viewer.token)('tasks_search', { limit: 1, cursor, status: 'any' }),
      as(ws.viewer.token)('projects_list', { limit: 1, cursor }),
      as(ws.member.token)('tasks_search', { limit: 1, cursor }),
      as(ws.viewer.token)('agenda_get', { cursor }),
    ]);

    for (const r of results) {
      assert.equal(r.isError, true);
      assert.match(text(r), /^cursor: not valid for this call/);
    }
  });
});

describe('the order of a text or label search', () => {
  test('pages go from the newest task with the word (or label) to the oldest, the tasks of one call by their numbers', async () => {
    // Arrange: five tasks with the word, made by three calls, one after the other.
    const w = await createTestWorkspace(server);
    const owner = as(w.owner.token);
    const made: string[] = [];
    for (const titlesOfCall of [['Walrus one'], ['Walrus two', 'Walrus three'], ['Walrus four', 'Walrus five']]) {
      const r = await owner('tasks_create', { tasks: titlesOfCall.map((title) => ({ title, labels: ['tusk'] })) });
      assert.equal(r.isError, false, text(r));
      made.push(...titlesOfCall);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }

    // Act: one task a page.
    const pages = async (args: Record<string, unknown>) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const r = await owner('tasks_search', { ...args, limit: 1, ...(cursor ? { cursor } : {}) });
        assert.equal(r.isError, false, text(r));
        seen.push(...titles(r));
        cursor = r.structuredContent.nextCursor;
      } while (cursor);
      return seen;
    };

    // Assert
    const newestFirst = [...made].reverse();
    assert.deepEqual(await pages({ text: 'walrus' }), newestFirst);
    assert.deepEqual(await pages({ text: 'walr' }), newestFirst);
    assert.deepEqual(await pages({ label: 'tusk' }), newestFirst);
  });
});
