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
 * Recurring tasks through the tools, for a member in Los Angeles (the server's UTC day is theirs
 * for only part of each day). The rules themselves are pinned at fixed instants in
 * test/unit/repeat-rules.test.ts; here: every door takes `repeat`, completing moves the one task to
 * its next occurrence and records the one done, undo puts it back, and a refusal writes nothing.
 */

let server: LocalServer;
let ws: TestWorkspace;
let member: TestMember;
const ZONE = 'America/Los_Angeles';
const text = toolText;

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
  member = await addMember(server, ws.workspaceId, 'member', ZONE);
});
after(() => server.close());

const today = () => dateInZone(new Date(), ZONE);
/** The first `weekday` (0 Sunday … 6 Saturday) on or after `from`, counted by hand. */
const onOrAfter = (from: string, weekday: number): string => {
  const day = new Date(`${from}T00:00:00Z`).getUTCDay();
  return addDays(from, (weekday - day + 7) % 7);
};

test("'every monday' without a due date is due the next Monday; completing it twice moves it a week each time, and undo puts one back", async () => {
  const call = caller(server, member.token);
  const first = onOrAfter(today(), 1);

  const made = await call('task_create', { title: 'Water the plants', repeat: 'every monday' });
  assert.equal(made.isError, false, text(made));
  assert.equal(made.structuredContent.repeat, 'every Monday');
  assert.equal(made.structuredContent.dueDate, first);
  assert.match(text(made), new RegExp(`repeat 'every monday' read as every Monday \\(${ZONE}\\)\\.`));
  assert.match(text(made), /↻ every Monday/);

  const once = await call('task_complete', { taskId: made.structuredContent.key });
  const twice = await call('task_complete', { taskId: made.structuredContent.key });

  assert.equal(once.structuredContent.status, 'Todo', 'a recurring task stays open');
  assert.equal(once.structuredContent.doneFor, first);
  assert.equal(once.structuredContent.dueDate, addDays(first, 7));
  assert.match(text(once), new RegExp(`^Done for ${dayInWords(first)}, next due ${dayInWords(addDays(first, 7))}: `));
  assert.equal(twice.structuredContent.doneFor, addDays(first, 7));
  assert.equal(twice.structuredContent.dueDate, addDays(first, 14));
  assert.equal(twice.structuredContent.version, 3, 'one task, one write per completion');

  const history = await call('activity_list', { task: made.structuredContent.key });
  const completions = history.structuredContent.entries.filter((e: { action: string }) => e.action === 'completed');
  assert.equal(completions.length, 2);
  assert.match(completions[1].summary, /done for /);

  const undone = await call('change_undo', { activityId: twice.structuredContent.activityId });
  const now = await call('task_get', { taskId: made.structuredContent.key });

  assert.equal(undone.isError, false, text(undone));
  assert.equal(now.structuredContent.dueDate, addDays(first, 7), 'the occurrence is back');
  assert.equal(now.structuredContent.status, 'Todo');
  assert.equal(now.structuredContent.repeat, 'every Monday', 'the rule is kept');
});

test('a rule after completion counts from the day it was done, even for a task done late', async () => {
  const call = caller(server, member.token);
  const made = await call('task_create', {
    title: 'Clean the filter',
    dueDate: addDays(today(), -5),
    repeat: 'every 3 days after completion',
  });

  const done = await call('task_complete', { taskId: made.structuredContent.key });

  assert.equal(made.structuredContent.dueDate, addDays(today(), -5), 'a given due date is this occurrence');
  assert.equal(done.structuredContent.doneFor, addDays(today(), -5));
  assert.equal(done.structuredContent.dueDate, addDays(today(), 3));
});

test('a fixed rule done late comes back at its next occurrence from today, not overdue again', async () => {
  const call = caller(server, member.token);
  const lastWeek = addDays(onOrAfter(today(), 1), -14);
  const made = await call('task_create', { title: 'Send the timesheet', dueDate: lastWeek, repeat: 'FREQ=WEEKLY;BYDAY=MO' });

  const done = await call('task_complete', { taskId: made.structuredContent.key });

  assert.equal(made.structuredContent.repeat, 'every Monday');
  assert.equal(done.structuredContent.dueDate, onOrAfter(today(), 1));
});

test('moving the due date moves this occurrence only; the rule stays, and the next one follows the rule', async () => {
  const call = caller(server, member.token);
  const made = await call('task_create', { title: 'Team lunch', repeat: 'every friday' });
  const friday = made.structuredContent.dueDate;

  const moved = await call('task_update', { taskId: made.structuredContent.key, version: 1, dueDate: addDays(friday, 1) });
  const done = await call('task_complete', { taskId: made.structuredContent.key });

  assert.equal(moved.structuredContent.repeat, 'every Friday');
  assert.equal(moved.structuredContent.dueDate, addDays(friday, 1));
  assert.equal(done.structuredContent.dueDate, addDays(friday, 7));
});

test("a rule's time sets the due time; another time besides is refused naming it, and nothing is written", async () => {
  const call = caller(server, member.token);

  const made = await call('task_create', { title: 'Stand-up notes', repeat: 'every weekday at 9:00' });
  const clash = await call('task_create', { title: 'Clashing times', repeat: 'every weekday at 9:00', dueTime: '10:00' });
  const found = await call('tasks_search', { text: 'Clashing times' });

  assert.equal(made.structuredContent.dueTime, '09:00');
  assert.equal(made.structuredContent.repeat, 'every weekday', 'the time is the due time, not part of the words');
  assert.match(text(made), /repeat 'every weekday at 9:00' read as every weekday, due at 09:00 \(/);
  assert.equal(clash.isError, true);
  assert.match(text(clash), /^dueTime: repeat 'every weekday at 9:00' names a time \(09:00\) and dueTime another \(10:00\)/);
  assert.equal(found.structuredContent.returned, 0);
});

test('repeat null stops the rule and keeps the date; a recurring task cannot lose its date while it repeats', async () => {
  const call = caller(server, member.token);
  const made = await call('task_create', { title: 'Pay the rent', repeat: 'monthly on the 1st' });
  const key = made.structuredContent.key;

  const noDate = await call('task_update', { taskId: key, version: 1, dueDate: null });
  const stopped = await call('task_update', { taskId: key, version: 1, repeat: null });
  const done = await call('task_complete', { taskId: key });

  assert.equal(made.structuredContent.dueDate.slice(8), '01');
  assert.equal(noDate.isError, true);
  assert.match(text(noDate), /^dueDate: a recurring task is due at its next occurrence \(every month on the 1st\)/);
  assert.equal(stopped.structuredContent.repeat, undefined);
  assert.equal(stopped.structuredContent.dueDate, made.structuredContent.dueDate);
  assert.equal(done.structuredContent.status, 'Done', 'without a rule a completion completes it');
});

test('the last occurrence of a counted rule completes the task', async () => {
  const call = caller(server, member.token);
  const made = await call('task_create', { title: 'Two check-ups', dueDate: today(), repeat: 'every day for 2 times' });

  const first = await call('task_complete', { taskId: made.structuredContent.key });
  const last = await call('task_complete', { taskId: made.structuredContent.key });

  assert.equal(first.structuredContent.status, 'Todo');
  assert.equal(first.structuredContent.dueDate, addDays(today(), 1));
  assert.equal(last.structuredContent.status, 'Done');
  assert.equal(last.structuredContent.doneFor, undefined);
});

test('rules that never occur, occur too often, or have parts a task cannot have are refused by name, and nothing is written', async () => {
  const call = caller(server, member.token);
  const cases: [string, RegExp][] = [
    ['yearly on 30 feb', /never occurs/],
    ['every hour', /more than once a day/],
    ['FREQ=MINUTELY', /more than 1,000 times a year/],
    ['FREQ=DAILY;BYHOUR=9,17', /more than once a day/],
    ['FREQ=WEEKLY;BYWEEKNO=2', /has BYWEEKNO, which a task's rule does not take/],
    ['whenever it rains', /does not start with "every"/],
  ];

  for (const [repeat, why] of cases) {
    const r = await call('task_create', { title: `Refused rule ${repeat}`, repeat });
    assert.equal(r.isError, true, repeat);
    assert.match(text(r), new RegExp(`^repeat: '${repeat.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}' `));
    assert.match(text(r), why);
    assert.match(text(r), /Rules read here: 'every monday'/, 'with examples of what is read');
  }
  const found = await call('tasks_search', { text: 'Refused rule', status: 'any' });
  assert.equal(found.structuredContent.returned, 0);
});

test('tasks_search finds recurring tasks, and those without a rule', async () => {
  const call = caller(server, member.token);
  await call('task_create', { title: 'Searchable recurring chore', repeat: 'every sunday' });
  await call('task_create', { title: 'Searchable one-off chore' });

  const yes = await call('tasks_search', { text: 'searchable chore', recurring: true });
  const no = await call('tasks_search', { text: 'searchable chore', recurring: false });
  const listed = await call('tasks_search', { recurring: true, limit: 100 });

  assert.deepEqual(
    yes.structuredContent.tasks.map((t: { title: string }) => t.title),
    ['Searchable recurring chore'],
  );
  assert.deepEqual(
    no.structuredContent.tasks.map((t: { title: string }) => t.title),
    ['Searchable one-off chore'],
  );
  assert.ok(listed.structuredContent.tasks.length >= 3);
  assert.ok(listed.structuredContent.tasks.every((t: { repeat?: string }) => t.repeat));
});

test('the bulk tools take repeat per item, and a bulk completion moves a recurring item to its next occurrence', async () => {
  const call = caller(server, member.token);

  const made = await call('tasks_create', {
    tasks: [
      { title: 'Bulk recurring', repeat: 'every 2 weeks on friday' },
      { title: 'Bulk refused', repeat: 'every blue moon' },
    ],
  });
  const [ok, refused] = made.structuredContent.items;
  const got = await call('task_get', { taskId: ok.key });
  const done = await call('tasks_update', { tasks: [{ taskId: ok.key, status: 'done' }] });
  const after = await call('task_get', { taskId: ok.key });

  assert.equal(ok.status, 'created');
  assert.equal(refused.status, 'refused');
  assert.match(refused.reason, /repeat: 'every blue moon' is not a rule/);
  assert.match(text(made), /item 1 repeat 'every 2 weeks on friday' read as every 2 weeks on Friday/);
  assert.equal(got.structuredContent.repeat, 'every 2 weeks on Friday');
  assert.equal(done.structuredContent.items[0].status, 'updated');
  assert.equal(after.structuredContent.status, 'Todo');
  assert.equal(after.structuredContent.dueDate, addDays(got.structuredContent.dueDate, 14));
});

test('a new rule on a task with a due date is saved (and "after completion" added to one), not answered "unchanged"', async () => {
  const call = caller(server, member.token);
  const made = await call('task_create', { title: 'Review the budget', repeat: 'every monday' });

  const changed = await call('task_update', { taskId: made.structuredContent.key, version: 1, repeat: 'every tuesday' });
  const after = await call('task_update', { taskId: made.structuredContent.key, version: 2, repeat: 'every tuesday after completion' });
  const got = await call('task_get', { taskId: made.structuredContent.key });

  assert.match(text(changed), /^Updated: /);
  assert.equal(changed.structuredContent.repeat, 'every Tuesday');
  assert.equal(after.structuredContent.version, 3);
  assert.equal(got.structuredContent.repeat, 'every Tuesday after completion');
});

test('a recurring task is due within a year back and ten years ahead; a rule set with dueDate null starts at its first occurrence', async () => {
  const call = caller(server, member.token);
  const old = await call('task_create', { title: 'Ancient chore', dueDate: '1999-01-04', repeat: 'every monday' });
  const made = await call('task_create', { title: 'Morning check', dueDate: addDays(today(), 3), dueTime: '08:00' });
  const far = await call('task_update', { taskId: made.structuredContent.key, version: 1, repeat: 'every day', dueDate: '2999-01-01' });
  const reset = await call('task_update', {
    taskId: made.structuredContent.key,
    version: 1,
    dueDate: null,
    repeat: 'every weekday at 9:00',
  });

  assert.equal(old.isError, true);
  assert.match(text(old), /^dueDate: 1999-01-04 is more than a year back or ten years ahead; a recurring task is due between /);
  assert.equal(far.isError, true);
  assert.match(text(far), /^dueDate: 2999-01-01 is more than a year back or ten years ahead/);
  assert.equal(reset.isError, false, text(reset));
  assert.equal(reset.structuredContent.dueTime, '09:00', "the rule's time, not the one cleared with the date");
  assert.ok(reset.structuredContent.dueDate >= today());
});
