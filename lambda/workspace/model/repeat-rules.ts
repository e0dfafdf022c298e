import { isCalendarDate, readDay } from './date-words.js';
import { repeatUnreadable } from './refusals.js';
import { addDays, dateInZone } from './time.js';

// Loaded on the first rule read or expanded, not at cold start: most calls never touch a rule, and
// every read shows a rule by the words stored with it. esbuild keeps it in the one bundle file.
let library: Promise<typeof import('rrule')> | undefined;
const rrule = async () => {
  library ??= import('rrule');
  const m = await library;
  // The package's ESM build names its exports; its CommonJS build (under a test runner) has them on `default`.
  return (m.RRule ? m : (m as unknown as { default: typeof m }).default) as typeof import('rrule');
};

/**
 * Recurring tasks (docs/workspace.md, "Recurring tasks"). A rule is an RFC 5545 RRULE of whole days,
 * kept with the day it counts from (its anchor, the RRULE's DTSTART) and the time zone it was read
 * in; the `rrule` library expands it. Days are counted on the calendar alone (the library runs in
 * UTC on dates at midnight), so a DST change never moves an occurrence; the zone decides only which
 * day "today" and "the day it was done" are. A time of day is the task's `dueTime`, never a part of
 * the rule, so one occurrence a day is the most a rule can have.
 *
 * Phrases are read by the small grammar below, not by the library's own English reader: that one
 * drops what it does not know without a word ("every year on march 5" reads as every March), and a
 * rule read wrong repeats the mistake forever. What the grammar does not know is refused, naming
 * examples it does.
 */

/** A task's rule as stored. */
export interface Repeat {
  /** The RRULE's parts, without DTSTART: `FREQ=WEEKLY;BYDAY=MO`. */
  readonly rule: string;
  /** YYYY-MM-DD: the day the rule counts from (its first due date). */
  readonly anchor: string;
  /** The IANA zone its days are read in: the member's who set it. */
  readonly zone: string;
  /** The next due date counts from the day it was done, not from the day it was due. */
  readonly afterCompletion?: true;
  /** "every Monday": what every answer shows, so no read needs the library. */
  readonly words: string;
}

/** A rule as read from an argument, before it has an anchor. */
export interface RepeatRead {
  readonly rule: string;
  readonly afterCompletion?: true;
  /** HH:MM, when the phrase named a time ("at 9:00"): the task's dueTime. */
  readonly time?: string;
  readonly words: string;
  /** The argument as given. */
  readonly given: string;
  /** YYYY-MM-DD: its first occurrence from the reader's today (a task without a due date is due then). */
  readonly first: string;
}

const WEEKDAY_CODES = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
const WEEKDAY_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTH_NAMES = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const NTH: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, last: -1, '1st': 1, '2nd': 2, '3rd': 3, '4th': 4 };

/** The parts a rule may have; any other is refused by name (a time of day goes to dueTime). */
const RRULE_PARTS = new Set(['FREQ', 'INTERVAL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'COUNT', 'UNTIL', 'WKST', 'BYHOUR', 'BYMINUTE']);
const DAY_FREQS = new Set(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);
const PER_YEAR: Record<string, number> = { HOURLY: 8_760, MINUTELY: 525_600, SECONDLY: 31_536_000 };

const EXAMPLES = "'every monday', 'every weekday at 9:00', 'monthly on the 1st' or FREQ=WEEKLY;BYDAY=MO";

const weekdayOf = (word: string): string | undefined => {
  const i = WEEKDAY_NAMES.findIndex((n) => word.length >= 3 && n.startsWith(word.replace(/s$/, '')));
  return i < 0 ? undefined : WEEKDAY_CODES[i];
};
const monthOf = (word: string): number | undefined => {
  const i = MONTH_NAMES.findIndex((n) => word.length >= 3 && n.startsWith(word));
  return i < 0 ? undefined : i + 1;
};
const dayNumber = (word: string): number | undefined => {
  const m = /^(\d{1,2})(st|nd|rd|th)?$/.exec(word);
  return m ? Number(m[1]) : undefined;
};
/** "monday, wednesday and fri" → MO,WE,FR; undefined when any word is not a weekday. */
const weekdayList = (text: string): string[] | undefined => {
  // A list that starts or ends with "and" or a comma, or has two in a row, is not one ("monday and").
  if (/^\s*(,|and\b|&)|(,|\band|&)\s*$|(,|\band\b|&)\s*(,|and\b|&)/.test(text)) return undefined;
  const words = text.split(/\s*(?:,|\band\b|&)\s*|\s+/).filter(Boolean);
  const days = words.map(weekdayOf);
  return days.length && days.every(Boolean) ? [...new Set(days as string[])] : undefined;
};

const pad = (n: number): string => String(n).padStart(2, '0');

/** "at 9", "at 9:00", "at 3pm", "at 15:30" → HH:MM. */
const timeOf = (h: string, m: string | undefined, half: string | undefined): string | undefined => {
  let hour = Number(h);
  const minute = m === undefined ? 0 : Number(m);
  if (half) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (half === 'pm' ? 12 : 0);
  }
  return hour > 23 || minute > 59 ? undefined : `${pad(hour)}:${pad(minute)}`;
};

interface Parts {
  FREQ: string;
  [part: string]: string;
}

/** A phrase's rule parts (the grammar of the file's comment), or why not. */
const phraseParts = (phrase: string): Parts | string => {
  let p = phrase
    .replace(/^(daily)\b/, 'every day')
    .replace(/^(weekly)\b/, 'every week')
    .replace(/^(monthly)\b/, 'every month')
    .replace(/^(yearly|annually)\b/, 'every year')
    .replace(/^(each)\b/, 'every')
    .replace(/^every other\b/, 'every 2')
    .replace(/^(every )?fortnight(ly)?\b/, 'every 2 weeks');
  if (!p.startsWith('every ')) return 'does not start with "every" (or daily, weekly, monthly, yearly)';
  p = p.slice(6);
  const interval = /^(\d{1,3}) /.exec(p);
  const n = interval ? Number(interval[1]) : 1;
  if (interval) p = p.slice(interval[0].length);
  if (n < 1) return 'repeats every 0, which is never';
  const withInterval = (parts: Parts): Parts => (n > 1 ? { ...parts, INTERVAL: String(n) } : parts);
  const [unit = '', ...rest] = p.split(' ');
  const on = rest
    .join(' ')
    .replace(/^on (the )?/, '')
    .replace(/^the /, '');
  const nth = NTH[unit];
  if (nth !== undefined) {
    // "every last friday", "every first monday": in each month.
    const day = weekdayOf(rest[0] ?? '');
    if (!day || rest.length > 1) return `has '${unit}' without one weekday after it ('every last friday')`;
    return withInterval({ FREQ: 'MONTHLY', BYDAY: `${nth}${day}` });
  }
  switch (unit.replace(/s$/, '')) {
    case 'day':
      return rest.length ? `has words a daily rule does not take ('${rest.join(' ')}')` : withInterval({ FREQ: 'DAILY' });
    case 'weekday':
    case 'workday':
      if (rest.length) return `has words after '${unit}' that are not read ('${rest.join(' ')}')`;
      return withInterval({ FREQ: 'WEEKLY', BYDAY: 'MO,TU,WE,TH,FR' });
    case 'weekend':
      if (rest.length) return `has words after '${unit}' that are not read ('${rest.join(' ')}')`;
      return withInterval({ FREQ: 'WEEKLY', BYDAY: 'SA,SU' });
    case 'week': {
      if (!rest.length) return withInterval({ FREQ: 'WEEKLY' });
      const days = weekdayList(on);
      return days ? withInterval({ FREQ: 'WEEKLY', BYDAY: days.join(',') }) : `names no weekdays after 'on' ('${on}')`;
    }
    case 'month': {
      if (!rest.length) return withInterval({ FREQ: 'MONTHLY' });
      if (/^last( day)?$/.test(on)) return withInterval({ FREQ: 'MONTHLY', BYMONTHDAY: '-1' });
      const byDay = /^(first|second|third|fourth|last|1st|2nd|3rd|4th) (\w+)$/.exec(on);
      if (byDay && weekdayOf(byDay[2]!)) return withInterval({ FREQ: 'MONTHLY', BYDAY: `${NTH[byDay[1]!]}${weekdayOf(byDay[2]!)}` });
      const days = on
        .replace(/^day /, '')
        .split(/\s*(?:,|\band\b|&)\s*(?:the )?/)
        .map(dayNumber);
      if (days.length && days.every((d) => d !== undefined && d >= 1 && d <= 31))
        return withInterval({ FREQ: 'MONTHLY', BYMONTHDAY: days.join(',') });
      return `names no day of the month after 'on' ('${on}'; say 'on the 1st', 'on the 15th and 30th' or 'on the last friday')`;
    }
    case 'year': {
      if (!rest.length) return withInterval({ FREQ: 'YEARLY' });
      // "5 march", "march 5", "the 5th of march", "march 5th".
      const words = on
        .replace(/\bof\b/, ' ')
        .split(/\s+/)
        .filter(Boolean);
      if (words.length === 2) {
        const [a, b] = words as [string, string];
        const [day, month] = dayNumber(a) !== undefined ? [dayNumber(a), monthOf(b)] : [dayNumber(b), monthOf(a)];
        if (day !== undefined && month !== undefined)
          return withInterval({ FREQ: 'YEARLY', BYMONTH: String(month), BYMONTHDAY: String(day) });
      }
      return `names no day of the year after 'on' ('${on}'; say 'on 5 march')`;
    }
    case 'hour':
    case 'minute':
      return 'repeats more than once a day; a task is due once a day at most';
    default: {
      // "every march on the 5th", "every february on the 30th" (refused below: it never occurs).
      const month = monthOf(unit);
      const day = dayNumber(on);
      if (month !== undefined && day !== undefined)
        return withInterval({ FREQ: 'YEARLY', BYMONTH: String(month), BYMONTHDAY: String(day) });
      // "every monday", "every tuesday and thursday", "every 2 mondays".
      const days = weekdayList(p);
      return days ? withInterval({ FREQ: 'WEEKLY', BYDAY: days.join(',') }) : `is not a rule this server reads`;
    }
  }
};

/** An RRULE's parts as given (`FREQ=WEEKLY;BYDAY=MO`), each checked to be one a task's rule may have. */
const rruleParts = (text: string, param: string, given: string): Parts => {
  const parts: Record<string, string> = {};
  for (const piece of text
    .replace(/^RRULE:/i, '')
    .split(';')
    .filter(Boolean)) {
    const [key = '', value = '', ...more] = piece.split('=');
    const part = key.toUpperCase();
    if (more.length) throw repeatUnreadable(param, given, `has '${piece}', which is not one part (PART=value)`, EXAMPLES);
    if (!RRULE_PARTS.has(part)) {
      throw repeatUnreadable(
        param,
        given,
        `has ${part || `'${piece}'`}, which a task's rule does not take (it takes FREQ, INTERVAL, BYDAY, BYMONTHDAY, BYMONTH, COUNT, UNTIL; a time of day is dueTime)`,
        EXAMPLES,
      );
    }
    if (parts[part] !== undefined) throw repeatUnreadable(param, given, `gives ${part} twice`, EXAMPLES);
    parts[part] = value.toUpperCase();
  }
  if (!parts.FREQ) throw repeatUnreadable(param, given, 'has no FREQ', EXAMPLES);
  return parts as Parts;
};

/**
 * Reads a `repeat` argument: a phrase or an RRULE, checked to occur, at most once a day and at
 * most 1,000 times a year. `timeZone` is the member's (an UNTIL in words is read in it).
 */
export const readRepeat = async (value: string, param: string, opts: { now: Date; timeZone: string }): Promise<RepeatRead> => {
  const given = value.trim();
  let text = given
    .toLowerCase()
    .replace(/[.!]+$/, '')
    .replace(/\s+/g, ' ');
  const isRrule = /^(rrule:)?[a-z]+=/i.test(given);
  let afterCompletion = false;
  let time: string | undefined;
  let parts: Parts;
  if (isRrule) {
    parts = rruleParts(given, param, given);
  } else {
    // The endings, in any order: "after completion", "for 3 times", "until dec 31", "at 9:00".
    let after: RegExpExecArray | null = null;
    let count: RegExpExecArray | null = null;
    let until: RegExpExecArray | null = null;
    let at: RegExpExecArray | null = null;
    const seen = new Set<RegExp>();
    const endings: [RegExp, (m: RegExpExecArray) => void][] = [
      [/ (after|from) (completion|(it is |it's )?(done|completed))$/, (m) => (after = m)],
      [/ for (\d{1,4}) times?$/, (m) => (count = m)],
      [/ at (\d{1,2})(?::(\d{2}))? ?(am|pm)?$/, (m) => (at = m)],
      [/ until (.+)$/, (m) => (until = m)],
    ];
    for (let found = true; found; ) {
      found = false;
      for (const [pattern, keep] of endings) {
        const m = pattern.exec(text);
        if (!m) continue;
        if (seen.has(pattern)) throw repeatUnreadable(param, given, `says '${m[0].trim().split(' ')[0]}' twice`, EXAMPLES);
        seen.add(pattern);
        keep(m);
        text = text.slice(0, m.index);
        found = true;
      }
    }
    if (after) afterCompletion = true;
    if (at) {
      const m: RegExpExecArray = at;
      time = timeOf(m[1]!, m[2], m[3]);
      if (!time) throw repeatUnreadable(param, given, `has a time that is not one ('${m[0].trim()}')`, EXAMPLES);
    }
    const read = phraseParts(text);
    if (typeof read === 'string') throw repeatUnreadable(param, given, read, EXAMPLES);
    parts = read;
    if (count) parts.COUNT = count[1]!;
    if (until) {
      const day = await readDay(until[1]!, param, { now: opts.now, timeZone: opts.timeZone, forward: true });
      if (day.time) throw repeatUnreadable(param, given, `has a time after 'until' ('${until[1]}'); until takes a day`, EXAMPLES);
      parts.UNTIL = day.date.replaceAll('-', '');
    }
  }
  if (PER_YEAR[parts.FREQ] !== undefined) {
    const perYear = PER_YEAR[parts.FREQ]! / Math.max(1, Number(parts.INTERVAL ?? 1));
    throw repeatUnreadable(
      param,
      given,
      perYear > 1_000
        ? `occurs more than 1,000 times a year (FREQ=${parts.FREQ}); a task repeats by the day at most`
        : `repeats by the ${({ HOURLY: 'hour', MINUTELY: 'minute', SECONDLY: 'second' } as Record<string, string>)[parts.FREQ]} (FREQ=${parts.FREQ}); a task repeats by whole days, at most once a day`,
      EXAMPLES,
    );
  }
  if (!DAY_FREQS.has(parts.FREQ)) throw repeatUnreadable(param, given, `has FREQ=${parts.FREQ}, which is no frequency`, EXAMPLES);
  // A time of day in an RRULE becomes the task's due time; more than one is more than once a day.
  if (parts.BYHOUR !== undefined || parts.BYMINUTE !== undefined) {
    const hours = (parts.BYHOUR ?? '0').split(',');
    const minutes = (parts.BYMINUTE ?? '0').split(',');
    if (hours.length > 1 || minutes.length > 1)
      throw repeatUnreadable(param, given, 'occurs more than once a day (BYHOUR or BYMINUTE lists several)', EXAMPLES);
    time = /^\d{1,2}$/.test(hours[0]!) && /^\d{1,2}$/.test(minutes[0]!) ? timeOf(hours[0]!, minutes[0], undefined) : undefined;
    if (!time) throw repeatUnreadable(param, given, 'has a BYHOUR or BYMINUTE that is no time of day', EXAMPLES);
    delete parts.BYHOUR;
    delete parts.BYMINUTE;
  }
  if (afterCompletion && parts.COUNT)
    throw repeatUnreadable(param, given, 'counts occurrences (COUNT) and counts from completion; give one', EXAMPLES);
  const shape = shapeProblem(parts, afterCompletion);
  if (shape) throw repeatUnreadable(param, given, shape, EXAMPLES);
  const { RRule } = await rrule();
  const rule = Object.entries(parts)
    .map(([k, v]) => `${k}=${v}`)
    .join(';');
  let made: InstanceType<typeof RRule>;
  try {
    made = new RRule({ ...RRule.parseString(rule), dtstart: new Date(Date.UTC(2000, 0, 1)) });
    // The library takes values it cannot expand without a word (BYDAY=XX, INTERVAL=0): checked here.
    made.toText();
  } catch {
    throw repeatUnreadable(param, given, 'has a part whose value is not one', EXAMPLES);
  }
  const o = made.origOptions;
  if ((o.interval ?? 1) < 1 || (o.count !== undefined && o.count !== null && o.count < 1))
    throw repeatUnreadable(param, given, 'repeats every 0 times or counts to 0, which is never', EXAMPLES);
  if (neverOccurs(parts)) throw repeatUnreadable(param, given, 'never occurs (no month has that day)', EXAMPLES);
  // Whether it occurs from today at all (the shapes above make this a short look: each period the
  // library steps through has a day the rule falls on). The planner looks again from the real anchor.
  const first = await firstOccurrence({ rule }, dateInZone(opts.now, opts.timeZone));
  if (!first) throw repeatUnreadable(param, given, parts.UNTIL ? 'ends before it first occurs (UNTIL)' : 'never occurs', EXAMPLES);
  return {
    rule,
    first,
    ...(afterCompletion ? { afterCompletion: true as const } : {}),
    ...(time ? { time } : {}),
    words: wordsOf(made.toText(), afterCompletion),
    given,
  };
};

/** A day of the month that no month named has (the 30th of February, the 32nd): the rule would never occur. */
const neverOccurs = (parts: Parts): boolean => {
  const days = (parts.BYMONTHDAY ?? '').split(',').filter(Boolean).map(Number);
  if (days.some((d) => d === 0 || Math.abs(d) > 31)) return true;
  if (!days.length || !parts.BYMONTH) return false;
  const longest = Math.max(...parts.BYMONTH.split(',').map((m) => MONTH_DAYS[Number(m) - 1] ?? 0));
  return days.every((d) => Math.abs(d) > longest);
};

/**
 * "every week on Monday" → "every Monday", and "after completion" as the task keeps it. The time is
 * not in the words: it is the task's dueTime, which a later change may move.
 */
const wordsOf = (text: string, afterCompletion: boolean): string =>
  `${text.replace(/^every week on (?!the )/, 'every ').replace(/ on the last$/, ' on the last day')}${afterCompletion ? ' after completion' : ''}`;

const WEEKDAY = /^(MO|TU|WE|TH|FR|SA|SU)$/;
const NUMBERED_DAY = /^([+-]?)(\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/;
const list = (v: string | undefined): string[] => (v === undefined ? [] : v.split(','));
const whole = (v: string, low: number, high: number): boolean => /^[+-]?\d{1,4}$/.test(v) && Number(v) >= low && Number(v) <= high;

/**
 * Why a rule's values or their combination are refused, or undefined. Beyond values that are not
 * whole numbers in range, these are the shapes in which the library could step through periods
 * without ever finding a day (a daily rule every 7 days on Mondays from a Thursday; every 12 months
 * in March from April; a numbered weekday that is also a day of the month), which would take it to
 * the year 9999 on a request: each is refused, naming what to give instead.
 */
const shapeProblem = (parts: Parts, afterCompletion: boolean): string | undefined => {
  const interval = parts.INTERVAL ?? '1';
  if (!whole(interval, 1, 999) || interval.startsWith('+') || interval.startsWith('-'))
    return `has INTERVAL=${interval}; give a whole number from 1 to 999`;
  if (parts.COUNT !== undefined && (!/^\d{1,4}$/.test(parts.COUNT) || Number(parts.COUNT) < 1 || Number(parts.COUNT) > 1_000))
    return `has COUNT=${parts.COUNT}; give a whole number from 1 to 1,000`;
  if (parts.UNTIL !== undefined) {
    const m = /^(\d{4})(\d{2})(\d{2})(T\d{6}Z?)?$/.exec(parts.UNTIL);
    if (!m || !isCalendarDate(`${m[1]}-${m[2]}-${m[3]}`)) return `has UNTIL=${parts.UNTIL}, which is no date (YYYYMMDD)`;
    if (parts.COUNT !== undefined) return 'has both COUNT and UNTIL; give one (RFC 5545 allows one)';
  }
  if (parts.WKST !== undefined && !WEEKDAY.test(parts.WKST)) return `has WKST=${parts.WKST}, which is no weekday (MO … SU)`;
  const months = list(parts.BYMONTH);
  if (months.some((m) => !whole(m, 1, 12) || /^[+-]/.test(m))) return `has BYMONTH=${parts.BYMONTH}; give months 1 to 12`;
  const monthDays = list(parts.BYMONTHDAY);
  if (monthDays.some((d) => !whole(d, -31, 31) || Number(d) === 0))
    return `has BYMONTHDAY=${parts.BYMONTHDAY}; give days 1 to 31, or -1 for the last`;
  const days = list(parts.BYDAY);
  const numbered = days.map((d) => NUMBERED_DAY.exec(d));
  if (numbered.some((m) => !m)) return `has BYDAY=${parts.BYDAY}, which names no weekday (MO … SU, or 1MO, -1FR in a month or year)`;
  const nths = numbered.filter((m) => m![2] !== undefined).map((m) => Number(`${m![1]}${m![2]}`));
  if (nths.length) {
    if (parts.FREQ !== 'MONTHLY' && parts.FREQ !== 'YEARLY')
      return `has a numbered weekday (${parts.BYDAY}), which only a monthly or yearly rule takes`;
    const most = parts.FREQ === 'MONTHLY' || months.length ? 4 : 52;
    if (nths.some((n) => n === 0 || Math.abs(n) > most))
      return `has BYDAY=${parts.BYDAY}; a numbered weekday runs from 1 to ${most} (or -1 to -${most}) there`;
  }
  if (days.length && monthDays.length) return 'has both BYDAY and BYMONTHDAY (a weekday that is also a day of the month); give one';
  const n = Number(interval);
  if (n > 1 && parts.FREQ === 'DAILY' && (days.length || months.length || monthDays.length))
    return 'repeats every few days on set weekdays, months or days, which may never meet; give FREQ=WEEKLY with BYDAY, or INTERVAL alone';
  if (n > 1 && months.length && parts.FREQ !== 'YEARLY')
    return 'has INTERVAL with BYMONTH, which may never meet; give FREQ=YEARLY with BYMONTH';
  if (n > 1 && monthDays.some((d) => Math.abs(Number(d)) > 28))
    return 'has INTERVAL with a day after the 28th, which may fall only in months without it; give a day up to the 28th or -1 (the last)';
  if (afterCompletion && n > 1 && (days.length || months.length || monthDays.length))
    return 'counts an interval from completion and names days too; give "every 2 weeks after completion" or "every friday after completion"';
  return undefined;
};

const ymd = (date: string): number[] => date.split('-').map((v, i) => Number(v) - (i === 1 ? 1 : 0));
const dayOf = (date: string): Date => new Date(Date.UTC(...(ymd(date) as [number, number, number])));
const dateOf = (d: Date): string => d.toISOString().slice(0, 10);

/** The first day on or after `from` (YYYY-MM-DD) the rule falls on, counted from `from` itself. */
export const firstOccurrence = async (read: Pick<RepeatRead, 'rule'>, from: string): Promise<string | undefined> => {
  const { RRule } = await rrule();
  const start = dayOf(from);
  const found = new RRule({ ...RRule.parseString(read.rule), dtstart: start }).after(start, true);
  return found ? dateOf(found) : undefined;
};

/**
 * The due date after completing the occurrence due `due`, done on `doneOn` (both in the rule's
 * zone): for a rule after completion, the first occurrence after the day it was done; else the
 * first after the day it was due that is not before the day it was done, so a task done late does
 * not come back overdue. Undefined when the rule has no more (its COUNT or UNTIL is reached).
 */
export const nextOccurrence = async (repeat: Repeat, due: string, doneOn: string): Promise<string | undefined> => {
  const { RRule } = await rrule();
  const options = RRule.parseString(repeat.rule);
  if (repeat.afterCompletion) {
    const start = dayOf(doneOn);
    const next = new RRule({ ...options, dtstart: start }).after(start, false);
    return next ? dateOf(next) : undefined;
  }
  const rule = new RRule({ ...options, dtstart: dayOf(repeat.anchor) });
  const from = due >= doneOn ? dayOf(due) : dayOf(addDays(doneOn, -1));
  const next = rule.after(from, false);
  return next ? dateOf(next) : undefined;
};
