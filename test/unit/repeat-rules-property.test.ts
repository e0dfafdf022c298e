import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ToolRefusal } from '../../lambda/errors.js';
import { firstOccurrence, nextOccurrence, readRepeat } from '../../lambda/workspace/model/repeat-rules.js';
import { addDays } from '../../lambda/workspace/model/time.js';

/**
 * Any RRULE made of the parts a rule may have, with values in and out of range, is either refused
 * or expands quickly: the first occurrence from a due date within the range a recurring task may
 * have, and the next after completing it early, on time or late. The library steps through empty
 * periods without bound, so a rule that slipped through the shape checks would show here as a call
 * of seconds (or one that never returns, which the test's timeout ends).
 */

const NOW = new Date('2026-12-03T10:00:00Z');
const TODAY = '2026-12-03';
const SLOW_MS = 100;

const weekday = fc.constantFrom('MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU');
const part = fc.oneof(
  fc.constantFrom('1', '2', '3', '7', '12', '52', '999', '0', '-1', 'abc', '1.5').map((v) => `INTERVAL=${v}`),
  fc
    .array(fc.tuple(fc.constantFrom('', '1', '2', '4', '5', '-1', '-2', '53', '0'), weekday), { minLength: 1, maxLength: 3 })
    .map((ds) => `BYDAY=${ds.map(([n, d]) => `${n}${d}`).join(',')}`),
  fc.array(fc.integer({ min: -2, max: 14 }), { minLength: 1, maxLength: 3 }).map((ms) => `BYMONTH=${ms.join(',')}`),
  fc.array(fc.integer({ min: -33, max: 33 }), { minLength: 1, maxLength: 3 }).map((ds) => `BYMONTHDAY=${ds.join(',')}`),
  fc.constantFrom('1', '2', '10', '1000', '0', 'x').map((v) => `COUNT=${v}`),
  fc.constantFrom('20261231', '20200101', '20991231', '2026', '20260230').map((v) => `UNTIL=${v}`),
  fc.constantFrom('BYSETPOS=1', 'BYHOUR=9', 'BYHOUR=9,17', 'BYMINUTE=30', 'WKST=SU', 'WKST=XX', 'BYWEEKNO=2'),
);
const rruleArb = fc
  .tuple(fc.constantFrom('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY', 'HOURLY'), fc.array(part, { maxLength: 4 }), fc.boolean())
  .map(([freq, parts, after]) => ({ rule: [`FREQ=${freq}`, ...parts].join(';'), after }));
const anchorArb = fc.integer({ min: -366, max: 3_653 }).map((d) => addDays(TODAY, d));
const doneArb = fc.integer({ min: -30, max: 400 });

const timed = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
  const started = performance.now();
  const out = await f();
  const ms = performance.now() - started;
  assert.ok(ms < SLOW_MS, `${what}: ${ms.toFixed(0)} ms`);
  return out;
};

test('every rule is refused or expands in well under 100 ms, from any due date a recurring task may have', {
  timeout: 120_000,
}, async () => {
  await readRepeat('every monday until dec 31', 'repeat', { now: NOW, timeZone: 'UTC' }); // both libraries loaded
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(rruleArb, anchorArb, doneArb, async ({ rule, after }, anchor, doneAfter) => {
      // RRULEs take no "after completion"; the phrase form is where it is said.
      void after;
      let read: Awaited<ReturnType<typeof readRepeat>>;
      try {
        read = await timed(rule, () => readRepeat(rule, 'repeat', { now: NOW, timeZone: 'UTC' }));
      } catch (err) {
        if (err instanceof ToolRefusal) return;
        throw err;
      }
      accepted++;
      const first = await timed(`${rule} from ${anchor}`, () => firstOccurrence(read, anchor));
      if (!first) return;
      const repeat = { rule: read.rule, anchor: first, zone: 'UTC', words: read.words };
      const next = await timed(`${rule} next after ${first}`, () => nextOccurrence(repeat, first, addDays(first, doneAfter)));
      if (next) assert.ok(next > first && next >= addDays(first, doneAfter), `${rule}: ${next} after ${first} done +${doneAfter}`);
    }),
    { numRuns: 1_500, seed: 20261203 },
  );
  assert.ok(accepted > 100, `only ${accepted} rules were accepted: the generator should reach the expansions`);
});
