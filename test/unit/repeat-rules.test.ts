import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { ToolRefusal } from '../../lambda/errors.js';
import { firstOccurrence, nextOccurrence, type Repeat, readRepeat } from '../../lambda/workspace/model/repeat-rules.js';
import { dateInZone, instantInZone } from '../../lambda/workspace/model/time.js';

/**
 * Every phrase and rule of the recurrence issue, read at fixed instants in four zones. Thursday
 * 3 December 2026 at 10:00 UTC is Thursday in all four; at 05:00 UTC it is still Wednesday in
 * Los Angeles, and the first occurrence "from today" is the zone's.
 */

const THU_10Z = new Date('2026-12-03T10:00:00Z');
const THU_05Z = new Date('2026-12-03T05:00:00Z');
const ZONES = ['UTC', 'America/Los_Angeles', 'Europe/Berlin', 'Asia/Kolkata'] as const;

const read = (phrase: string, timeZone: string = 'UTC', now = THU_10Z) => readRepeat(phrase, 'repeat', { now, timeZone });

describe('phrases and RRULEs, as rules and words', () => {
  const table: [string, string, string, string?][] = [
    // phrase, rule, words, time
    ['every monday', 'FREQ=WEEKLY;BYDAY=MO', 'every Monday'],
    ['every weekday at 9:00', 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR', 'every weekday', '09:00'],
    ['every 2 weeks on friday', 'FREQ=WEEKLY;BYDAY=FR;INTERVAL=2', 'every 2 weeks on Friday'],
    ['monthly on the 1st', 'FREQ=MONTHLY;BYMONTHDAY=1', 'every month on the 1st'],
    ['every last friday', 'FREQ=MONTHLY;BYDAY=-1FR', 'every month on the last Friday'],
    ['yearly on 5 march', 'FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=5', 'every March on the 5th'],
    ['every 3 days after completion', 'FREQ=DAILY;INTERVAL=3', 'every 3 days after completion'],
    ['FREQ=WEEKLY;BYDAY=MO', 'FREQ=WEEKLY;BYDAY=MO', 'every Monday'],
    ['RRULE:FREQ=DAILY;BYHOUR=7;BYMINUTE=30', 'FREQ=DAILY', 'every day', '07:30'],
    ['every tuesday and thursday at 3pm', 'FREQ=WEEKLY;BYDAY=TU,TH', 'every Tuesday, Thursday', '15:00'],
    ['every other week', 'FREQ=WEEKLY;INTERVAL=2', 'every 2 weeks'],
    ['every month on the 15th and 30th', 'FREQ=MONTHLY;BYMONTHDAY=15,30', 'every month on the 15th and 30th'],
    ['every month on the last day', 'FREQ=MONTHLY;BYMONTHDAY=-1', 'every month on the last day'],
    ['every week for 3 times', 'FREQ=WEEKLY;COUNT=3', 'every week for 3 times'],
    ['Daily.', 'FREQ=DAILY', 'every day'],
  ];
  for (const [phrase, rule, words, time] of table) {
    test(`'${phrase}' is ${rule} ("${words}")`, async () => {
      const r = await read(phrase);

      assert.equal(r.rule, rule);
      assert.equal(r.words, words);
      assert.equal(r.time, time);
      assert.equal(r.afterCompletion, phrase.includes('after completion') ? true : undefined);
    });
  }

  test("an UNTIL in words is read in the member's zone", async () => {
    const r = await read('every weekday until dec 31', 'Asia/Kolkata');

    assert.equal(r.rule, 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20261231');
  });
});

describe("the first occurrence from the member's today", () => {
  const firsts: [string, string][] = [
    ['every monday', '2026-12-07'],
    ['every weekday at 9:00', '2026-12-03'],
    ['every 2 weeks on friday', '2026-12-04'],
    ['monthly on the 1st', '2027-01-01'],
    ['every last friday', '2026-12-25'],
    ['yearly on 5 march', '2027-03-05'],
    ['every 3 days after completion', '2026-12-03'],
    ['FREQ=WEEKLY;BYDAY=MO', '2026-12-07'],
  ];
  for (const zone of ZONES) {
    for (const [phrase, first] of firsts) {
      test(`${zone}: '${phrase}' read on Thu 3 Dec 2026 first falls on ${first}`, async () => {
        const rule = await read(phrase, zone);

        assert.equal(await firstOccurrence(rule, dateInZone(THU_10Z, zone)), first);
      });
    }
  }

  test('at 05:00 UTC it is still Wednesday in Los Angeles: "every weekday" is due that Wednesday there, Thursday in Kolkata', async () => {
    const rule = await read('every weekday', 'America/Los_Angeles', THU_05Z);

    assert.equal(await firstOccurrence(rule, dateInZone(THU_05Z, 'America/Los_Angeles')), '2026-12-02');
    assert.equal(await firstOccurrence(rule, dateInZone(THU_05Z, 'Asia/Kolkata')), '2026-12-03');
  });
});

describe('the next due date after a completion', () => {
  const weekly: Repeat = { rule: 'FREQ=WEEKLY;BYDAY=MO', anchor: '2026-12-07', zone: 'UTC', words: 'every Monday' };

  test('done early or on the day: the occurrence after the one due', async () => {
    assert.equal(await nextOccurrence(weekly, '2026-12-07', '2026-12-03'), '2026-12-14');
    assert.equal(await nextOccurrence(weekly, '2026-12-07', '2026-12-07'), '2026-12-14');
  });

  test('done late: the next occurrence from the day it was done, so it does not come back overdue', async () => {
    assert.equal(await nextOccurrence(weekly, '2026-11-23', '2026-12-03'), '2026-12-07');
  });

  test('after completion: counted from the day it was done', async () => {
    const filter: Repeat = { rule: 'FREQ=DAILY;INTERVAL=3', anchor: '2026-11-01', zone: 'UTC', afterCompletion: true, words: '' };

    assert.equal(await nextOccurrence(filter, '2026-11-01', '2026-12-10'), '2026-12-13');
  });

  test('"every 2 weeks" keeps the cadence of its anchor, and a moved occurrence does not shift it', async () => {
    const fortnightly: Repeat = { rule: 'FREQ=WEEKLY;INTERVAL=2', anchor: '2026-12-03', zone: 'UTC', words: 'every 2 weeks' };

    assert.equal(await nextOccurrence(fortnightly, '2026-12-03', '2026-12-03'), '2026-12-17');
    assert.equal(await nextOccurrence(fortnightly, '2026-12-05', '2026-12-05'), '2026-12-17');
  });

  test('a counted or ending rule has no next after its last', async () => {
    const twice: Repeat = { rule: 'FREQ=WEEKLY;COUNT=2', anchor: '2026-12-03', zone: 'UTC', words: '' };
    const ending: Repeat = { rule: 'FREQ=WEEKLY;UNTIL=20261215', anchor: '2026-12-03', zone: 'UTC', words: '' };

    assert.equal(await nextOccurrence(twice, '2026-12-03', '2026-12-03'), '2026-12-10');
    assert.equal(await nextOccurrence(twice, '2026-12-10', '2026-12-10'), undefined);
    assert.equal(await nextOccurrence(ending, '2026-12-10', '2026-12-10'), undefined);
  });

  test('across a DST change the days stay whole and the due time stays the wall-clock time', async () => {
    // Los Angeles leaves DST on Sunday 1 November 2026, Berlin enters it on Sunday 28 March 2027.
    const la: Repeat = { rule: 'FREQ=WEEKLY;BYDAY=SU', anchor: '2026-10-25', zone: 'America/Los_Angeles', words: 'every Sunday' };
    const berlin: Repeat = { rule: 'FREQ=DAILY', anchor: '2027-03-27', zone: 'Europe/Berlin', words: 'every day' };

    const laNext = await nextOccurrence(la, '2026-10-25', '2026-10-25');
    const berlinNext = await nextOccurrence(berlin, '2027-03-27', '2027-03-27');

    assert.equal(laNext, '2026-11-01');
    assert.equal(berlinNext, '2027-03-28');
    // 09:00 there is 16:00 UTC before the change and 17:00 after; the task says 09:00 throughout.
    assert.equal(new Date(instantInZone('2026-10-25', '09:00:00', 'America/Los_Angeles')).toISOString(), '2026-10-25T16:00:00.000Z');
    assert.equal(new Date(instantInZone(laNext!, '09:00:00', 'America/Los_Angeles')).toISOString(), '2026-11-01T17:00:00.000Z');
    assert.equal(new Date(instantInZone(berlinNext!, '09:00:00', 'Europe/Berlin')).toISOString(), '2027-03-28T07:00:00.000Z');
  });
});

describe('refusals name the argument, the phrase and the cause', () => {
  // Both libraries loaded first (each is imported on its first use), so the timings are the refusals'.
  before(async () => {
    await read('every monday until dec 31');
  });
  const refused: [string, RegExp][] = [
    ['yearly on 30 feb', /never occurs \(no month has that day\)/],
    ['every february on the 30th', /never occurs/],
    ['FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30', /never occurs/],
    ['every hour', /more than once a day/],
    ['FREQ=HOURLY;INTERVAL=12', /repeats by the hour/],
    ['FREQ=MINUTELY', /more than 1,000 times a year/],
    ['FREQ=SECONDLY;INTERVAL=60', /more than 1,000 times a year/],
    ['FREQ=DAILY;BYHOUR=9,17', /more than once a day/],
    ['FREQ=WEEKLY;BYYEARDAY=1', /has BYYEARDAY, which a task's rule does not take/],
    ['FREQ=WEEKLY;BYSECOND=5', /has BYSECOND/],
    ['BYDAY=MO', /has no FREQ/],
    ['FREQ=WEEKLY;BYDAY=XX', /has BYDAY=XX, which names no weekday/],
    ['FREQ=WEEKLY;INTERVAL=0', /has INTERVAL=0; give a whole number from 1 to 999/],
    // What the library would take and then expand to the year 9999, or read wrong (a review's finds).
    ['FREQ=DAILY;INTERVAL=abc', /has INTERVAL=ABC; give a whole number/],
    ['FREQ=DAILY;INTERVAL=1.5', /has INTERVAL=1\.5/],
    ['FREQ=DAILY;INTERVAL=Infinity', /has INTERVAL=INFINITY/],
    ['FREQ=DAILY;COUNT=abc', /has COUNT=ABC; give a whole number from 1 to 1,000/],
    ['FREQ=DAILY;BYSETPOS=2', /has BYSETPOS, which a task's rule does not take/],
    ['FREQ=DAILY;BYMONTH=0', /has BYMONTH=0; give months 1 to 12/],
    ['FREQ=MONTHLY;BYMONTHDAY=', /has BYMONTHDAY=; give days 1 to 31/],
    ['FREQ=DAILY;INTERVAL=7;BYDAY=MO', /every few days on set weekdays, months or days, which may never meet/],
    ['FREQ=MONTHLY;INTERVAL=12;BYMONTH=3', /INTERVAL with BYMONTH/],
    ['FREQ=YEARLY;INTERVAL=2;BYMONTH=2;BYMONTHDAY=29', /a day after the 28th/],
    ['FREQ=MONTHLY;BYDAY=1MO;BYMONTHDAY=13', /both BYDAY and BYMONTHDAY/],
    ['FREQ=MONTHLY;BYDAY=6MO', /a numbered weekday runs from 1 to 4/],
    ['FREQ=WEEKLY;BYDAY=2MO', /only a monthly or yearly rule takes/],
    ['FREQ=WEEKLY;COUNT=3;UNTIL=20271231', /both COUNT and UNTIL/],
    ['FREQ=DAILY;FREQ=WEEKLY', /gives FREQ twice/],
    ['FREQ=WEEKLY;BYDAY=MO=TU', /is not one part/],
    ['FREQ=DAILY;BYHOUR=-1', /BYHOUR or BYMINUTE that is no time of day/],
    ['FREQ=DAILY;BYHOUR=9;BYMINUTE=-5', /BYHOUR or BYMINUTE that is no time of day/],
    ['FREQ=DAILY;BYHOUR=1.5', /BYHOUR or BYMINUTE that is no time of day/],
    ['every weekend on monday', /words after 'weekend' that are not read/],
    ['every monday at 9 at 10', /says 'at' twice/],
    ['every week for 3 times for 5 times', /says 'for' twice/],
    ['every monday until tomorrow 3pm', /a time after 'until'/],
    ['every monday and', /is not a rule this server reads/],
    ['every 2 weeks on friday after completion', /counts an interval from completion and names days too/],
    ['FREQ=WEEKLY;UNTIL=20200101', /ends before it first occurs/],
    ['every 3 days after completion for 4 times', /counts occurrences \(COUNT\) and counts from completion/],
    ['every day at 25:00', /has a time that is not one/],
    ['sometimes', /does not start with "every"/],
    ['every blue moon', /is not a rule this server reads/],
    ['every month on the blue', /names no day of the month/],
  ];
  for (const [phrase, why] of refused) {
    test(`'${phrase}', at once`, async () => {
      const started = performance.now();
      await assert.rejects(read(phrase), (err: unknown) => {
        assert.ok(err instanceof ToolRefusal);
        assert.equal(err.reason, 'invalid-argument');
        assert.deepEqual(err.data, { param: 'repeat', words: phrase });
        assert.ok(err.message.startsWith(`repeat: '${phrase}' `), err.message);
        assert.match(err.message, why);
        assert.match(err.message, /Rules read here: 'every monday', 'every weekday at 9:00', 'monthly on the 1st'/);
        return true;
      });
      // A refusal on the request path: no expansion to the year 9999 first.
      assert.ok(performance.now() - started < 100, `${(performance.now() - started).toFixed(0)} ms`);
    });
  }
});
