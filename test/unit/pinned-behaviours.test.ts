import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ToolRefusal } from '../../lambda/errors.js';
import { nextOccurrence, readRepeat } from '../../lambda/workspace/model/repeat-rules.js';
import { addDays } from '../../lambda/workspace/model/time.js';
import { exportedDate, readExport } from '../../lambda/workspace/transfer/import-formats.js';

// Behaviours a check of the suite's strength found unpinned (a small deliberate bug in the code
// left every test passing), pinned here without a server: rules more often than daily, and Jira's
// times at the 12 o'clock hours.

/** Thursday 3 December 2026, 10:00 UTC. */
const THU_10Z = new Date('2026-12-03T10:00:00Z');
const read = (rule: string) => readRepeat(rule, 'repeat', { now: THU_10Z, timeZone: 'UTC' });

describe('rules more often than daily', () => {
  const refused: [string, RegExp][] = [
    ['FREQ=DAILY;BYMINUTE=0,30', /occurs more than once a day \(BYHOUR or BYMINUTE lists several\)/],
    ['FREQ=DAILY;BYHOUR=9;BYMINUTE=0,15,30,45', /occurs more than once a day \(BYHOUR or BYMINUTE lists several\)/],
    ['FREQ=WEEKLY;BYDAY=MO;BYHOUR=9,13', /occurs more than once a day \(BYHOUR or BYMINUTE lists several\)/],
    ['FREQ=HOURLY;INTERVAL=24', /repeats by the hour \(FREQ=HOURLY\); a task repeats by whole days, at most once a day/],
    ['FREQ=HOURLY;INTERVAL=9', /repeats by the hour \(FREQ=HOURLY\)/],
    ['FREQ=HOURLY;INTERVAL=8', /occurs more than 1,000 times a year \(FREQ=HOURLY\); a task repeats by the day at most/],
    ['FREQ=MINUTELY;INTERVAL=1440', /repeats by the minute \(FREQ=MINUTELY\); a task repeats by whole days, at most once a day/],
  ];
  for (const [rule, why] of refused) {
    test(`'${rule}' is refused naming the argument, the rule and why: a task repeats by whole days, at most once a day`, async () => {
      // Arrange / Act / Assert
      await assert.rejects(read(rule), (err: unknown) => {
        assert.ok(err instanceof ToolRefusal);
        assert.equal(err.reason, 'invalid-argument');
        assert.deepEqual(err.data, { param: 'repeat', words: rule });
        assert.match(err.message, why);
        return true;
      });
    });
  }

  test("one BYHOUR and BYMINUTE is the task's due time, and completing it moves it a day (a week), not to later the same day", async () => {
    // Arrange
    const daily = await read('FREQ=DAILY;BYHOUR=7;BYMINUTE=30');
    const weekly = await read('RRULE:FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=5');

    // Act
    const nextDaily = await nextOccurrence(
      { rule: daily.rule, anchor: daily.first, zone: 'UTC', words: daily.words },
      daily.first,
      daily.first,
    );
    const nextWeekly = await nextOccurrence(
      { rule: weekly.rule, anchor: weekly.first, zone: 'UTC', words: weekly.words },
      weekly.first,
      weekly.first,
    );

    // Assert
    assert.deepEqual([daily.rule, daily.time, daily.words, daily.first], ['FREQ=DAILY', '07:30', 'every day', '2026-12-03']);
    assert.deepEqual(
      [weekly.rule, weekly.time, weekly.words, weekly.first],
      ['FREQ=WEEKLY;BYDAY=MO', '09:05', 'every Monday', '2026-12-07'],
    );
    assert.equal(nextDaily, addDays(daily.first, 1));
    assert.equal(nextWeekly, addDays(weekly.first, 7));
  });
});

describe("Jira's times at the 12 o'clock hours", () => {
  const HEADER = 'Summary,Issue key,Issue id,Status,Resolution,Created,Resolved,Due date';

  test('12:xx AM is just after midnight and 12:xx PM just after noon; the hours either side read as before', async () => {
    // Arrange: four issues resolved around midnight and noon (Jira's CSV date format)
    const csv = [
      HEADER,
      'Night shift,OPS-1,101,Done,Done,01/Dec/26 9:00 AM,05/Dec/26 12:05 AM,',
      'Lunch deploy,OPS-2,102,Done,Done,01/Dec/26 9:00 AM,05/Dec/26 12:40 PM,',
      'Before midnight,OPS-3,103,Done,Done,01/Dec/26 9:00 AM,04/Dec/26 11:59 PM,',
      'Just after noon,OPS-4,104,Done,Done,01/Dec/26 9:00 AM,05/Dec/26 1:00 PM,',
      'Due at midnight,OPS-5,105,To Do,,01/Dec/26 9:00 AM,,24/Dec/26 12:00 AM',
    ].join('\n');

    // Act
    const read = readExport(csv, 'jira');

    // Assert
    assert.ok(!('error' in read), JSON.stringify(read));
    const by = (key: string) => read.rows.find((r) => r.sourceId === key)!;
    assert.equal(by('OPS-1').done?.at, '2026-12-05T00:05:00.000Z');
    assert.equal(by('OPS-2').done?.at, '2026-12-05T12:40:00.000Z');
    assert.equal(by('OPS-3').done?.at, '2026-12-04T23:59:00.000Z');
    assert.equal(by('OPS-4').done?.at, '2026-12-05T13:00:00.000Z');
    assert.equal(exportedDate(by('OPS-5').due!), '2026-12-24', 'a due date at 12:00 AM is that day');
    assert.deepEqual(
      read.rows.flatMap((r) => r.problems),
      [],
      'each time read, none said to be unreadable',
    );
  });
});
