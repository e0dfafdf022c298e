import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { dayInWords } from '../../lambda/workspace/model/date-words.js';
import { addDays, dateInZone } from '../../lambda/workspace/model/time.js';
import {
  addMember,
  caller,
  createTestWorkspace,
  startOwnWorkspacesServer,
  type TestMember,
  type TestWorkspace,
  toolText,
} from '../helpers/workspace-fixtures.js';

/**
 * Date words through the tools, for a member in Kolkata (5:30 ahead of UTC, so their day is not the
 * server's for five and a half hours of every day). The phrases themselves are pinned at fixed
 * instants in test/unit/date-words.test.ts; here: every date argument takes them, the answer says
 * what they were read as, and a refusal writes nothing.
 */

let server: LocalServer;
let ws: TestWorkspace;
let kolkata: TestMember;
const ZONE = 'Asia/Kolkata';

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
  kolkata = await addMember(server, ws.workspaceId, 'member', ZONE);
});
after(() => server.close());

const today = () => dateInZone(new Date(), ZONE);
const text = toolText;

test("task_create reads 'tomorrow 3pm' in the member's zone, stores the date and time, and says what it read", async () => {
  const call = caller(server, kolkata.token);
  const tomorrow = addDays(today(), 1);

  const r = await call('task_create', { title: 'Call the printer', dueDate: 'tomorrow 3pm' });

  assert.equal(r.isError, false, text(r));
  assert.equal(r.structuredContent.dueDate, tomorrow);
  assert.equal(r.structuredContent.dueTime, '15:00');
  assert.equal(r.structuredContent.textNotes, undefined, 'the note is for the text only');
  const lines = text(r).split('\n');
  assert.match(lines[0]!, /^Created: /);
  assert.equal(lines[1], `dueDate 'tomorrow 3pm' read as ${dayInWords(tomorrow)} 15:00 (${ZONE}).`);
  assert.match(lines[2]!, /^Undo: change_undo act_/);
});

test('an ISO date is taken as it is and adds no line', async () => {
  const r = await caller(server, kolkata.token)('task_create', { title: 'File the return', dueDate: '2031-03-31' });

  assert.equal(r.structuredContent.dueDate, '2031-03-31');
  assert.doesNotMatch(text(r), /read as/);
});

test('words that are not one date, or a time given twice, are refused naming the argument, and nothing is written', async () => {
  const call = caller(server, kolkata.token);
  const created = await call('task_create', { title: 'Renew the lease' });
  const ref = created.structuredContent.key;

  const ambiguous = await call('task_update', { taskId: ref, version: 1, dueDate: '5/6' });
  const twice = await call('task_create', { title: 'Twice timed', dueDate: 'friday 3pm', dueTime: '10:00' });
  const after = await call('task_get', { taskId: ref });
  const found = await call('tasks_search', { text: 'Twice timed' });

  assert.equal(ambiguous.isError, true);
  assert.match(text(ambiguous), /^dueDate: '5\/6' could be 5 jun or may 6/);
  assert.equal(twice.isError, true);
  assert.match(text(twice), /^dueTime: dueDate 'friday 3pm' names a time \(15:00\) and dueTime another \(10:00\)/);
  assert.equal(after.structuredContent.version, 1);
  assert.equal(after.structuredContent.dueDate, undefined);
  assert.equal(found.structuredContent.returned, 0);
});

test("tasks_search reads dueBefore 'in 2 weeks' and says so", async () => {
  const call = caller(server, kolkata.token);
  const soon = await call('task_create', { title: 'Soon task', dueDate: addDays(today(), 10) });
  const later = await call('task_create', { title: 'Later task', dueDate: addDays(today(), 20) });

  const r = await call('tasks_search', { dueBefore: 'in 2 weeks', dueAfter: 'tomorrow', assignee: 'none', limit: 100 });

  assert.equal(r.isError, false, text(r));
  const keys = r.structuredContent.tasks.map((t: { key: string }) => t.key);
  assert.ok(keys.includes(soon.structuredContent.key));
  assert.ok(!keys.includes(later.structuredContent.key));
  assert.match(text(r), new RegExp(`\\ndueAfter 'tomorrow' read as ${dayInWords(addDays(today(), 1))} \\(${ZONE}\\)\\.`));
  assert.match(text(r), new RegExp(`\\ndueBefore 'in 2 weeks' read as ${dayInWords(addDays(today(), 14))} \\(${ZONE}\\)\\.`));
});

test('both bulk tools read each item on its own: a note per item written, a refusal for the item that is not a date', async () => {
  const call = caller(server, kolkata.token);

  const r = await call('tasks_create', {
    tasks: [{ title: 'Bulk one', dueDate: 'in 3 days' }, { title: 'Bulk two', dueDate: 'someday' }, { title: 'Bulk three' }],
  });
  const first = r.structuredContent.items[0];
  const moved = await call('tasks_update', { tasks: [{ taskId: first.key, version: 1, dueDate: 'end of month' }] });

  assert.deepEqual(
    r.structuredContent.items.map((i: { status: string }) => i.status),
    ['created', 'refused', 'created'],
  );
  assert.match(r.structuredContent.items[1].reason, /^dueDate: 'someday' is not a date this server reads/);
  assert.match(
    text(r),
    new RegExp(`^Created 2 of 3.*\\nitem 1 dueDate 'in 3 days' read as ${dayInWords(addDays(today(), 3))} \\(${ZONE}\\)\\.\\n- 1: created`),
  );
  const got = await call('task_get', { taskId: first.key });
  assert.equal(got.structuredContent.version, 2);
  assert.match(text(moved), /\nitem 1 dueDate 'end of month' read as \w{3} (28|29|30|31) /);
  assert.equal(got.structuredContent.dueDate.slice(0, 7), today().slice(0, 7));
});

test("agenda_get reads date 'tomorrow', and activity_list reads since 'yesterday', in the member's zone", async () => {
  const call = caller(server, kolkata.token);

  const agenda = await call('agenda_get', { date: 'tomorrow' });
  const activity = await call('activity_list', { since: 'yesterday', actor: 'me', limit: 100 });

  assert.equal(agenda.structuredContent.day, addDays(today(), 1));
  assert.match(text(agenda), /\ndate 'tomorrow' read as /);
  assert.equal(activity.isError, false, text(activity));
  assert.ok(activity.structuredContent.returned >= 5, 'the changes of the tests above are since yesterday');
  assert.match(text(activity), new RegExp(`\\nsince 'yesterday' read as ${dayInWords(addDays(today(), -1))} \\(${ZONE}\\)\\.`));
});
