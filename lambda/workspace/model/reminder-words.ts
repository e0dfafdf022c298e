import { randomBytes } from 'node:crypto';
import { ToolRefusal } from '../../errors.js';
import { dayInWords, readDay } from './date-words.js';
import { MAX_REMINDERS } from './limits.js';
import { quotedWords, reminderInPast, reminderNeedsDue, reminderUnreadable, tooManyReminders } from './refusals.js';
import { addDays, daysBetween, instantInZone, wallClockOf } from './time.js';

export { MAX_REMINDERS } from './limits.js';

/**
 * Reminders in words: `remind` on the task tools takes a phrase or a list of them, each read on the
 * server in the member's time zone, so a model never converts a time itself. A phrase is either
 *
 * - a time ("friday 9am", "tomorrow at 8", "in 2 hours", "dec 24 at noon", "2026-12-24 17:00"),
 *   read by date-words.ts's readDay, so a phrase reads the same day in `remind` as in `dueDate`
 *   (slash dates, ambiguity and leftover words included). A day without a time of day is 09:00;
 * - or set by the task's due date ("1 hour before", "2 days before", "the day before at 17:00",
 *   "on the day at 8am", "when due"), read by the small grammar below, kept as a rule
 *   (`beforeDue`) so it follows the due date when that moves.
 *
 * Decisions:
 * - Minutes and hours before are elapsed time ("1 hour before" is 60 minutes before the due
 *   instant); days and weeks before are calendar days at the due time on the wall clock, so "1 day
 *   before" stays at the due time across a DST change, while "24 hours before" does not.
 * - A due date without a time counts as 09:00 in the member's zone for every rule set by it ("when
 *   due" is 09:00 that day, "1 hour before" 08:00): the same hour a time phrase without a time gets.
 * - Every reminder is at a whole minute, and one at or before the minute it is given in is refused.
 * - Duplicates collapse silently, keeping the first as written: two phrases are one reminder when
 *   they are the same rule ("1 hour before", "60 minutes before"), or the same instant and neither
 *   follows the due date. A time and a rule that meet today stay two: they part when the due moves.
 */

export interface ReminderRule {
  /** The phrase as given (trimmed). */
  readonly words: string;
  /** Set for a reminder that follows the due date; absent for one at a time of its own. */
  readonly beforeDue?: {
    /** Elapsed minutes before the due instant (or before `days`/`at`, when those are given too). */
    readonly minutes?: number;
    /** Calendar days before the due date, at the due time (or at `at`). */
    readonly days?: number;
    /** HH:MM: the time of day on that day, in place of the due time. */
    readonly at?: string;
  };
}

export interface Reminder extends ReminderRule {
  readonly reminderId: string;
  /** ISO instant, whole minute, UTC: 2026-12-04T09:00:00.000Z. */
  readonly at: string;
}

export interface ReminderOptions {
  readonly now: Date;
  /** The member's IANA zone: what times in words and the due date's wall clock are read in. */
  readonly timeZone: string;
  /** The task's due date (YYYY-MM-DD) and time (HH:MM), when it has one. */
  readonly due?: { readonly date: string; readonly time?: string };
  /** The argument's name in refusals; 'remind' unless told. */
  readonly param?: string;
}

/** A day named without a time of day, and a due date without one, count as this. */
const DEFAULT_TIME = '09:00';
/** The furthest a rule reaches before the due date: past a year it is a typo, not a plan. */
const MOST_DAYS_BEFORE = 366;
const MINUTE_MS = 60_000;

const pad = (n: number): string => String(n).padStart(2, '0');

// A short id (`rem_` and 10 characters of 32, 50 random bits): unique among a task's 20 reminders
// by a wide margin, and short enough to name in a call.
const ID_LETTERS = 'abcdefghijkmnpqrstuvwxyz23456789';
const newReminderId = (): string => `rem_${[...randomBytes(10)].map((b) => ID_LETTERS[b & 31]).join('')}`;

// ---- the grammar of rules set by the due date ----------------------------------------------------

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
};
/** Minutes per unit, by the unit's first letter; days and weeks count calendar days instead. */
const MINUTES_PER: Record<string, number> = { m: 1, h: 60 };
const DAYS_PER: Record<string, number> = { d: 1, w: 7 };
/** One length of time: "30 minutes", "2h", "an hour", "half an hour", "1 week". */
const AMOUNT = new RegExp(
  `\\b(?:(?:(\\d{1,6}) ?|(${Object.keys(NUMBER_WORDS).join('|')}) )(minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|wks?|w)|(half an? hour))\\b`,
  'g',
);
/** What may follow "before": "before due", "before it is due", "before the due date", "before the deadline". */
const BEFORE = / before(?: (?:it is |it's |its |the )?(?:due|deadline)(?: date| time)?)?$/;
const WHEN_DUE = /^(?:when (?:it is |it's |its )?due|at (?:the )?due time|on time|on the (?:due )?(?:day|date))$/;
const ON_THE_DAY = /^on the (?:due )?(?:day|date)$/;
const THE_DAY_BEFORE = /^(?:the )?day before$/;
const AT_TIME = /^(.*?),? at (.+)$/;

/** "17:00", "5pm", "5:30 pm", "8", "noon", "midnight" → HH:MM; undefined when not a time. */
const timeOfDay = (words: string): string | undefined => {
  if (words === 'noon' || words === 'midday') return '12:00';
  if (words === 'midnight') return '00:00';
  const m = /^(\d{1,2})(?:[:.h](\d{2}))? ?(am|pm|a\.m\.|p\.m\.)?$/.exec(words);
  if (!m) return undefined;
  let hour = Number(m[1]);
  const minute = m[2] === undefined ? 0 : Number(m[2]);
  if (m[3]) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (m[3].startsWith('p') ? 12 : 0);
  }
  return hour > 23 || minute > 59 ? undefined : `${pad(hour)}:${pad(minute)}`;
};

type Rule = NonNullable<ReminderRule['beforeDue']>;

/**
 * A rule set by the due date, in one canonical shape so equal rules compare equal: "when due" is
 * `{minutes: 0}`, a time of day on a day is `{days, at}`, else whichever of days and minutes are
 * not zero. A string is why the phrase, which is one of these forms, is not read; undefined means
 * it is not one of them (and is read as a time).
 */
const readRule = (text: string): Rule | string | undefined => {
  if (WHEN_DUE.test(text)) return { minutes: 0 };
  const timed = AT_TIME.exec(text);
  const head = timed ? timed[1]! : text;
  let at: string | undefined;
  const relative = ON_THE_DAY.test(head) || THE_DAY_BEFORE.test(head) || BEFORE.test(head);
  if (!relative) return undefined;
  if (timed) {
    at = timeOfDay(timed[2]!);
    if (!at) return `has a time of day that is not one ('at ${timed[2]}')`;
  }
  let days = THE_DAY_BEFORE.test(head) ? 1 : 0;
  let minutes = 0;
  if (!ON_THE_DAY.test(head) && !THE_DAY_BEFORE.test(head)) {
    const body = head.replace(BEFORE, '');
    const rest = body
      .replace(AMOUNT, ' ')
      .replace(/\band\b|,/g, ' ')
      .trim();
    if (rest || !body.trim()) return `has '${rest || 'before'}', which is no length of time before ('30 minutes', '2 hours', '1 day')`;
    for (const m of body.matchAll(AMOUNT)) {
      if (m[4]) minutes += 30;
      else {
        // A number in digits may touch its unit ("2h"); a number in words is one word ("an hour"), so "and" is not "an d".
        const count = m[1] !== undefined ? Number(m[1]) : NUMBER_WORDS[m[2]!]!;
        const unit = m[3]![0]!;
        if (DAYS_PER[unit]) days += count * DAYS_PER[unit];
        else minutes += count * MINUTES_PER[unit]!;
      }
    }
  }
  if (days + minutes / 1_440 > MOST_DAYS_BEFORE) return `is more than ${MOST_DAYS_BEFORE} days before the due date`;
  if (at !== undefined) {
    if (minutes) return `gives both a time of day and hours or minutes before ('the day before at 17:00', or '2 hours before')`;
    return { days, at };
  }
  if (days) return minutes ? { days, minutes } : { days };
  return { minutes };
};

// ---- instants -------------------------------------------------------------------------------------

/** The instant (ms) a rule names for a due date: its day and time on the wall clock, then its minutes before. */
const ruleInstant = (rule: Rule, due: { date: string; time?: string }, timeZone: string): number =>
  instantInZone(addDays(due.date, -(rule.days ?? 0)), rule.at ?? due.time ?? DEFAULT_TIME, timeZone) - (rule.minutes ?? 0) * MINUTE_MS;

const iso = (ms: number): string => new Date(Math.floor(ms / MINUTE_MS) * MINUTE_MS).toISOString();

/**
 * What readDay refused, said of the reminder: the date refusal's own `problem` (its data), without
 * its list of date forms; the reminder's refusal names the reminder forms in its place.
 */
const dateProblem = (err: ToolRefusal, words: string): string =>
  typeof err.data.problem === 'string' ? `${quotedWords(words)} ${err.data.problem}` : `'${words}' is not a time this server reads`;

// ---- the exports ------------------------------------------------------------------------------------

/**
 * Reads `remind`: one phrase or a list (an empty list is no reminders). Each is checked to be ahead
 * of `now`'s minute; a rule set by the due date needs `due`. Refuses more than MAX_REMINDERS
 * different phrases before reading any.
 */
export async function readReminders(value: string | readonly string[], opts: ReminderOptions): Promise<Reminder[]> {
  const param = opts.param ?? 'remind';
  const given = (typeof value === 'string' ? [value] : value).map((w) => w.trim());
  const distinct = [...new Map(given.map((w) => [normalize(w), w])).keys()];
  if (distinct.length > MAX_REMINDERS) throw tooManyReminders(param, distinct.length, MAX_REMINDERS);
  const nowMinute = Math.floor(opts.now.getTime() / MINUTE_MS) * MINUTE_MS;
  const seen = new Set<string>();
  const out: Reminder[] = [];
  for (const words of given) {
    if (!words) throw reminderUnreadable(param, words, `'' is empty`);
    const text = normalize(words);
    const rule = readRule(text);
    if (typeof rule === 'string') throw reminderUnreadable(param, words, `'${words}' ${rule}`);
    let ms: number;
    if (rule) {
      if (!opts.due) throw reminderNeedsDue(param, words);
      ms = ruleInstant(rule, opts.due, opts.timeZone);
    } else {
      let day: Awaited<ReturnType<typeof readDay>>;
      try {
        day = await readDay(text, param, { now: opts.now, timeZone: opts.timeZone, forward: true });
      } catch (err) {
        if (err instanceof ToolRefusal) throw reminderUnreadable(param, words, dateProblem(err, text));
        throw err;
      }
      ms = instantInZone(day.date, day.time ?? DEFAULT_TIME, opts.timeZone);
    }
    const at = iso(ms);
    if (Date.parse(at) <= nowMinute) {
      const wall = wallClockOf(Date.parse(at), opts.timeZone);
      throw reminderInPast(param, words, `${dayInWords(wall.date)} ${wall.time} ${opts.timeZone}`, at);
    }
    const key = rule ? `rule ${JSON.stringify(rule)}` : `at ${at}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ reminderId: newReminderId(), words, ...(rule ? { beforeDue: rule } : {}), at });
  }
  return out;
}

/** Lower case, one space between words, no full stop at the end: how phrases are compared and read. */
const normalize = (words: string): string =>
  words
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[.!]+$/, '');

/**
 * The instant a rule set by the due date names for `due` (a new due date, or the same after its
 * time changed), as an ISO string; undefined for a reminder at a time of its own, or without a due
 * date. It may be in the past: the caller decides what a reminder that has gone by means.
 */
export function reminderAt(rule: ReminderRule, due: { date: string; time?: string } | undefined, timeZone: string): string | undefined {
  if (!rule.beforeDue || !due) return undefined;
  return iso(ruleInstant(rule.beforeDue, due, timeZone));
}

/**
 * A recurring task's reminders for its next occurrence: a rule set by the due date is worked out
 * from `to`; a reminder at a time of its own moves by the calendar days the due date moved, at the
 * same time on the wall clock (so it keeps its hour across a DST change). Ids and words stay.
 */
export function moveReminders(
  reminders: readonly Reminder[],
  from: { date: string; time?: string },
  to: { date: string; time?: string },
  timeZone: string,
): Reminder[] {
  const shift = daysBetween(from.date, to.date);
  return reminders.map((r) => {
    const derived = reminderAt(r, to, timeZone);
    if (derived !== undefined) return { ...r, at: derived };
    const wall = wallClockOf(Date.parse(r.at), timeZone);
    return { ...r, at: iso(instantInZone(addDays(wall.date, shift), wall.time, timeZone)) };
  });
}
