import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentRefusal } from '../../lambda/errors.js';
import { dayInWords, readDay } from '../../lambda/workspace/model/date-words.js';

/**
 * Dates as people type them, read in the member's zone at fixed instants. Thursday 3 December 2026
 * at 10:00 UTC is Thursday in all four zones (02:00 in Los Angeles, 11:00 in Berlin, 15:30 in Kolkata).
 */
const THURSDAY = new Date('2026-12-03T10:00:00Z');
const ZONES = ['UTC', 'America/Los_Angeles', 'Europe/Berlin', 'Asia/Kolkata'];

const due = (words: string, now: Date, timeZone: string) => readDay(words, 'dueDate', { now, timeZone, forward: true });
const since = (words: string, now: Date, timeZone: string) => readDay(words, 'since', { now, timeZone, forward: false });

const refusal = async (fn: () => Promise<unknown>): Promise<InvalidArgumentRefusal> => {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof InvalidArgumentRefusal, String(err));
    return err;
  }
  assert.fail('expected a refusal');
};

describe('due dates in words', () => {
  const table: [string, string, string?][] = [
    ['today', '2026-12-03'],
    ['tomorrow', '2026-12-04'],
    ['friday', '2026-12-04'],
    ['by friday', '2026-12-04'],
    ['next friday 3pm', '2026-12-11', '15:00'],
    ['in 2 weeks', '2026-12-17'],
    ['end of month', '2026-12-31'],
    ['dec 24', '2026-12-24'],
    ['24/12', '2026-12-24'],
    ['12/24', '2026-12-24'],
    ['6/6', '2027-06-06'],
    ['mar 5', '2027-03-05'],
    ['2026-12-24', '2026-12-24'],
  ];
  for (const timeZone of ZONES) {
    test(`on Thursday 3 December in ${timeZone}, every phrase names the day a person means`, async () => {
      for (const [words, date, time] of table) {
        const read = await due(words, THURSDAY, timeZone);
        assert.equal(read.date, date, words);
        assert.equal(read.time, time, words);
        assert.equal(read.words, words === '2026-12-24' ? undefined : words, 'an ISO date is taken as it is');
      }
    });
  }

  test("late on Thursday in UTC it is already Friday in Berlin and Kolkata: today is the member's day", async () => {
    const late = new Date('2026-12-03T23:30:00Z');

    const today = await Promise.all(ZONES.map(async (z) => (await due('today', late, z)).date));
    const tomorrow = await Promise.all(ZONES.map(async (z) => (await due('tomorrow', late, z)).date));

    assert.deepEqual(today, ['2026-12-03', '2026-12-03', '2026-12-04', '2026-12-04']);
    assert.deepEqual(tomorrow, ['2026-12-04', '2026-12-04', '2026-12-05', '2026-12-05']);
  });

  test('across a DST change the wall-clock time stays what was said', async () => {
    // 01:30 PDT on Sunday 1 November 2026; at 02:00 Los Angeles goes back to PST.
    const beforeChange = new Date('2026-11-01T08:30:00Z');
    // 01:30 CET on Sunday 29 March 2026; at 02:00 Berlin skips to CEST.
    const berlinSpring = new Date('2026-03-29T00:30:00Z');

    assert.deepEqual(await due('tomorrow 9am', beforeChange, 'America/Los_Angeles'), {
      date: '2026-11-02',
      time: '09:00',
      words: 'tomorrow 9am',
    });
    assert.equal((await due('in 1 week', beforeChange, 'America/Los_Angeles')).date, '2026-11-08');
    assert.equal((await due('today', beforeChange, 'UTC')).date, '2026-11-01');
    assert.equal((await due('tomorrow', berlinSpring, 'Europe/Berlin')).date, '2026-03-30');
    assert.equal((await due('today', berlinSpring, 'Asia/Kolkata')).date, '2026-03-29');
  });

  test('activity bounds read a weekday as the last one, not the next', async () => {
    assert.equal((await since('monday', THURSDAY, 'Europe/Berlin')).date, '2026-11-30');
    assert.deepEqual(await since('yesterday 3pm', THURSDAY, 'Asia/Kolkata'), { date: '2026-12-02', time: '15:00', words: 'yesterday 3pm' });
  });

  test('the answer shows the weekday a date fell on', () => {
    assert.equal(dayInWords('2026-12-04'), 'Fri 4 Dec 2026');
    assert.equal(dayInWords('2027-03-05'), 'Fri 5 Mar 2027');
  });
});

describe('words that are not one date are refused, naming the argument, the words and examples', () => {
  const cases: [string, RegExp][] = [
    ['5/6', /^dueDate: '5\/6' could be 5 jun or may 6 .*write '5 jun' or 'may 6'/],
    ['2026-02-30', /^dueDate: 2026-02-30 is not a date \(no such day\)/],
    ['31/2', /^dueDate: '31\/2' is not a date this server reads/],
    ['someday', /^dueDate: 'someday' is not a date this server reads/],
    ['sometime friday', /^dueDate: 'sometime friday' has words that are not part of a date \('sometime'\)/],
    ['friday and monday', /^dueDate: 'friday and monday' names 2 dates \('friday', 'monday'\); give one/],
  ];
  for (const [words, message] of cases) {
    test(`'${words}'`, async () => {
      const err = await refusal(() => due(words, THURSDAY, 'Europe/Berlin'));

      assert.match(err.message, message);
      assert.match(err.message, /Dates read here: 'friday', 'next friday 3pm', 'in 2 weeks'/);
      assert.equal(err.reason, 'invalid-argument');
      // The problem rides in the data too, typed, for a door that words it its own way (reminders).
      assert.deepEqual(Object.keys(err.data).sort(), ['param', 'problem', 'words']);
      assert.deepEqual([err.data.param, err.data.words], ['dueDate', words]);
      const quoted = /^[\d-]+$/.test(words) ? words : `'${words}'`;
      assert.ok(err.message.startsWith(`dueDate: ${quoted} ${err.data.problem}. Dates read here`), err.message);
    });
  }
});

describe('a weekday read backward, or said to be past, is never ahead of today', () => {
  // Saturday 5 December 2026, noon in UTC.
  const saturday = new Date('2026-12-05T12:00:00Z');

  test('"since monday" on a Saturday is the Monday before, not the one ahead', async () => {
    assert.equal((await since('monday', saturday, 'UTC')).date, '2026-11-30');
    assert.equal((await since('friday', saturday, 'UTC')).date, '2026-12-04');
    assert.equal((await since('saturday', saturday, 'UTC')).date, '2026-12-05', 'today is the latest Saturday');
  });

  test('"last friday" is yesterday whichever way it is read; "friday" forward is the next one', async () => {
    assert.equal((await due('last friday', saturday, 'UTC')).date, '2026-12-04');
    assert.equal((await since('last friday', saturday, 'UTC')).date, '2026-12-04');
    assert.equal((await due('friday', saturday, 'UTC')).date, '2026-12-11');
    assert.equal((await due('monday', saturday, 'UTC')).date, '2026-12-07');
  });
});
