import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentRefusal } from '../../lambda/errors.js';
import { MAX_REMINDERS, moveReminders, type Reminder, readReminders, reminderAt } from '../../lambda/workspace/model/reminder-words.js';

/**
 * Reminders in words, read at fixed instants. Thursday 3 December 2026 at 10:00:30 UTC is 11:00 in
 * Berlin, 02:00 in Los Angeles and 15:30 in Kolkata; the 30 seconds show every reminder lands on a
 * whole minute. The task is due Thursday 10 December at 17:00 unless a test says otherwise.
 */
const NOW = new Date('2026-12-03T10:00:30Z');
const DUE = { date: '2026-12-10', time: '17:00' };

const read = (
  value: string | readonly string[],
  timeZone = 'Europe/Berlin',
  due: { date: string; time?: string } | undefined = DUE,
  now = NOW,
) => readReminders(value, { now, timeZone, due });
const one = async (words: string, timeZone?: string, due?: { date: string; time?: string }, now?: Date): Promise<Reminder> => {
  const all = await read(words, timeZone, due ?? DUE, now);
  assert.equal(all.length, 1, words);
  return all[0]!;
};

const refusal = async (fn: () => Promise<unknown>): Promise<InvalidArgumentRefusal> => {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof InvalidArgumentRefusal, String(err));
    return err;
  }
  assert.fail('expected a refusal');
};

describe('a time in words is read in the member zone', () => {
  const berlin: [string, string][] = [
    ['friday 9am', '2026-12-04T08:00:00.000Z'],
    ['tomorrow at 8', '2026-12-04T07:00:00.000Z'],
    ['2026-12-24 17:00', '2026-12-24T16:00:00.000Z'],
    ['in 2 hours', '2026-12-03T12:00:00.000Z'],
    ['dec 24 at noon', '2026-12-24T11:00:00.000Z'],
    ['dec 24', '2026-12-24T08:00:00.000Z'],
    ['next monday at 5pm', '2026-12-07T16:00:00.000Z'],
  ];
  for (const [words, at] of berlin) {
    test(`'${words}' in Europe/Berlin`, async () => {
      const r = await one(words);

      assert.equal(r.at, at);
      assert.equal(r.words, words);
      assert.equal(r.beforeDue, undefined, 'a time of its own does not follow the due date');
      assert.match(r.reminderId, /^rem_[a-z2-9]{10}$/);
    });
  }

  test('the same words are another instant in another zone', async () => {
    assert.equal((await one('friday 9am', 'America/Los_Angeles')).at, '2026-12-04T17:00:00.000Z');
    assert.equal((await one('friday 9am', 'Asia/Kolkata')).at, '2026-12-04T03:30:00.000Z');
    assert.equal((await one('dec 24', 'UTC')).at, '2026-12-24T09:00:00.000Z', 'a day without a time is 09:00');
  });

  test('reminders are whole minutes, and one minute ahead is ahead', async () => {
    const r = await one('in 1 minute', 'UTC');

    assert.equal(r.at, '2026-12-03T10:01:00.000Z');
  });

  test('across the March DST change in New York the wall-clock time stays what was said', async () => {
    // Friday 6 March 2026, 10:00 EST; on Sunday 8 March at 02:00 New York moves to EDT.
    const friday = new Date('2026-03-06T15:00:00Z');
    const due = { date: '2026-03-08', time: '09:00' };

    assert.equal((await one('saturday 9am', 'America/New_York', due, friday)).at, '2026-03-07T14:00:00.000Z');
    assert.equal((await one('sunday 9am', 'America/New_York', due, friday)).at, '2026-03-08T13:00:00.000Z');
    // Days before are calendar days at the due time; hours before are hours.
    assert.equal((await one('1 day before', 'America/New_York', due, friday)).at, '2026-03-07T14:00:00.000Z');
    assert.equal((await one('24 hours before', 'America/New_York', due, friday)).at, '2026-03-07T13:00:00.000Z');
    assert.equal((await one('when due', 'America/New_York', due, friday)).at, '2026-03-08T13:00:00.000Z');
  });
});

describe('a reminder set by the due date', () => {
  const rules: [string, NonNullable<Reminder['beforeDue']>, string][] = [
    ['1 hour before', { minutes: 60 }, '2026-12-10T15:00:00.000Z'],
    ['30 minutes before', { minutes: 30 }, '2026-12-10T15:30:00.000Z'],
    ['half an hour before the due date', { minutes: 30 }, '2026-12-10T15:30:00.000Z'],
    ['1 hour and 30 minutes before', { minutes: 90 }, '2026-12-10T14:30:00.000Z'],
    ['1h 30m before', { minutes: 90 }, '2026-12-10T14:30:00.000Z'],
    ['2 days before', { days: 2 }, '2026-12-08T16:00:00.000Z'],
    ['1 week before', { days: 7 }, '2026-12-03T16:00:00.000Z'],
    ['a day and 2 hours before', { days: 1, minutes: 120 }, '2026-12-09T14:00:00.000Z'],
    ['the day before at 17:00', { days: 1, at: '17:00' }, '2026-12-09T16:00:00.000Z'],
    ['2 days before at 9am', { days: 2, at: '09:00' }, '2026-12-08T08:00:00.000Z'],
    ['on the day at 8am', { days: 0, at: '08:00' }, '2026-12-10T07:00:00.000Z'],
    ['when due', { minutes: 0 }, '2026-12-10T16:00:00.000Z'],
    ['On the day.', { minutes: 0 }, '2026-12-10T16:00:00.000Z'],
  ];
  for (const [words, beforeDue, at] of rules) {
    test(`'${words}'`, async () => {
      const r = await one(words);

      assert.deepEqual(r.beforeDue, beforeDue);
      assert.equal(r.at, at);
      assert.equal(r.words, words);
    });
  }

  test('a due date without a time counts as 09:00 in the member zone', async () => {
    const due = { date: '2026-12-10' };

    assert.equal((await one('when due', 'Europe/Berlin', due)).at, '2026-12-10T08:00:00.000Z');
    assert.equal((await one('1 hour before', 'Europe/Berlin', due)).at, '2026-12-10T07:00:00.000Z');
    assert.equal((await one('the day before at 17:00', 'Europe/Berlin', due)).at, '2026-12-09T16:00:00.000Z');
  });

  test('reminderAt works a rule out for a new due date, and leaves a time of its own alone', async () => {
    const [rule, time] = await read(['1 hour before', 'friday 9am']);

    assert.equal(reminderAt(rule!, { date: '2026-12-18', time: '10:00' }, 'Europe/Berlin'), '2026-12-18T08:00:00.000Z');
    assert.equal(reminderAt(rule!, { date: '2026-12-18' }, 'UTC'), '2026-12-18T08:00:00.000Z');
    assert.equal(reminderAt(rule!, undefined, 'Europe/Berlin'), undefined);
    assert.equal(reminderAt(time!, { date: '2026-12-18', time: '10:00' }, 'Europe/Berlin'), undefined);
  });
});

describe('a list of reminders', () => {
  test('is read in order, each with its own id; an empty list is none', async () => {
    const all = await read(['friday 9am', '1 hour before', 'when due']);

    assert.deepEqual(
      all.map((r) => r.words),
      ['friday 9am', '1 hour before', 'when due'],
    );
    assert.equal(new Set(all.map((r) => r.reminderId)).size, 3);
    assert.deepEqual(await read([]), []);
  });

  test('duplicates collapse silently to the first as written: the same rule, or the same instant', async () => {
    const all = await read(['1 hour before', '60 minutes before', 'friday 9am', 'Friday 9am', 'tomorrow at 9', 'when due']);

    assert.deepEqual(
      all.map((r) => r.words),
      ['1 hour before', 'friday 9am', 'when due'],
    );
  });

  test('a time and a rule that meet today stay two: they part when the due date moves', async () => {
    const all = await read(['1 hour before', '2026-12-10 16:00']);

    assert.equal(all.length, 2);
    assert.equal(all[0]!.at, all[1]!.at);
  });

  test(`${MAX_REMINDERS} are taken; one more is refused as a limit`, async () => {
    const phrases = Array.from({ length: MAX_REMINDERS + 1 }, (_, i) => `${i + 1} minutes before`);

    assert.equal((await read(phrases.slice(0, MAX_REMINDERS))).length, MAX_REMINDERS);
    const err = await refusal(() => read(phrases));
    assert.match(err.message, /^remind: 21 reminders; a task holds at most 20\./);
    assert.equal(err.reason, 'limit');
    assert.deepEqual(err.data, { param: 'remind', count: 21, most: 20 });
  });
});

describe('reminders that cannot be are refused, naming the argument first', () => {
  test('a time in the past, or at the minute it is given in, says when it was', async () => {
    const yesterday = await refusal(() => read('yesterday 3pm'));
    const now = await refusal(() => read('now', 'UTC'));
    const before = await refusal(() => read('1 week before', 'Europe/Berlin', { date: '2026-12-10', time: '09:00' }));

    assert.match(
      yesterday.message,
      /^remind: 'yesterday 3pm' is in the past \(Wed 2 Dec 2026 15:00 Europe\/Berlin\); give a time still ahead\./,
    );
    assert.deepEqual(yesterday.data, { param: 'remind', words: 'yesterday 3pm', at: '2026-12-02T14:00:00.000Z' });
    assert.equal(yesterday.reason, 'invalid-argument');
    assert.match(now.message, /^remind: 'now' is in the past \(Thu 3 Dec 2026 10:00 UTC\)/);
    assert.match(before.message, /^remind: '1 week before' is in the past \(Thu 3 Dec 2026 09:00 Europe\/Berlin\)/);
  });

  test('a rule set by the due date on a task without one', async () => {
    const err = await refusal(() => readReminders('1 hour before', { now: NOW, timeZone: 'Europe/Berlin' }));

    assert.match(err.message, /^remind: '1 hour before' needs a due date; give the task a dueDate/);
    assert.deepEqual(err.data, { param: 'remind', words: '1 hour before' });
  });

  const unreadable: [string, RegExp][] = [
    ['someday', /^remind: 'someday' is not a date this server reads\./],
    ['5/6 9am', /^remind: '5\/6 9am' could be 5 jun or may 6 .*write '5 jun' or 'may 6'\./],
    ['5 months before', /^remind: '5 months before' has '5 months', which is no length of time before/],
    ['2 hours before at 5pm', /^remind: '2 hours before at 5pm' gives both a time of day and hours or minutes before/],
    ['the day before at teatime', /^remind: 'the day before at teatime' has a time of day that is not one \('at teatime'\)/],
    ['400 days before', /^remind: '400 days before' is more than 366 days before the due date/],
    ['  ', /^remind: '' is empty\./],
  ];
  for (const [words, message] of unreadable) {
    test(`unreadable: '${words}', with the forms that are read`, async () => {
      const err = await refusal(() => read(words));

      assert.match(err.message, message);
      assert.match(err.message, /Reminders read here: a time in your zone \('friday 9am'.*'1 hour before'.*'when due'\)\.$/);
      assert.equal(err.reason, 'invalid-argument');
      assert.equal(err.data.param, 'remind');
    });
  }

  test('another parameter name leads when one is given', async () => {
    const err = await refusal(() => readReminders(['friday 9am', 'someday'], { now: NOW, timeZone: 'UTC', param: 'items[2].remind' }));

    assert.match(err.message, /^items\[2\]\.remind: 'someday'/);
    assert.equal(err.data.param, 'items[2].remind');
  });
});

describe('moveReminders: a weekly task done, due again a week later', () => {
  test('rules follow the new due date; times of their own move by the same days at the same wall-clock time, across DST', async () => {
    // Friday 27 February 2026 in New York (EST); due Monday 2 March at 09:00, next Monday 9 March (EDT).
    const friday = new Date('2026-02-27T15:00:00Z');
    const from = { date: '2026-03-02', time: '09:00' };
    const to = { date: '2026-03-09', time: '09:00' };
    const made = await readReminders(['sunday 6pm', '1 hour before', 'the day before at 17:00', '2 days before'], {
      now: friday,
      timeZone: 'America/New_York',
      due: from,
    });
    assert.deepEqual(
      made.map((r) => r.at),
      ['2026-03-01T23:00:00.000Z', '2026-03-02T13:00:00.000Z', '2026-03-01T22:00:00.000Z', '2026-02-28T14:00:00.000Z'],
    );

    const moved = moveReminders(made, from, to, 'America/New_York');

    assert.deepEqual(
      moved.map((r) => r.at),
      ['2026-03-08T22:00:00.000Z', '2026-03-09T12:00:00.000Z', '2026-03-08T21:00:00.000Z', '2026-03-07T14:00:00.000Z'],
    );
    assert.deepEqual(
      moved.map((r) => [r.reminderId, r.words, r.beforeDue]),
      made.map((r) => [r.reminderId, r.words, r.beforeDue]),
      'ids, words and rules stay',
    );
  });

  test('a due time that changes moves the rules with it, and not the times of their own', async () => {
    const made = await read(['when due', 'friday 9am']);

    const moved = moveReminders(made, DUE, { date: '2026-12-17' }, 'Europe/Berlin');

    assert.equal(moved[0]!.at, '2026-12-17T08:00:00.000Z', 'a due date without a time counts as 09:00');
    assert.equal(moved[1]!.at, '2026-12-11T08:00:00.000Z');
  });
});
