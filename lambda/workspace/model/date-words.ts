import { dateUnreadable } from './refusals.js';

// Loaded on the first words read, not at cold start: its module builds some hundred patterns when
// evaluated (about 9 ms here), and most calls carry ISO dates or none. esbuild keeps it in the one
// bundle file, evaluated on this import.
let parsers: Promise<typeof import('chrono-node/en')> | undefined;
const chrono = () => {
  parsers ??= import('chrono-node/en');
  return parsers;
};

/**
 * Dates as people type them ("friday", "next friday 3pm", "in 2 weeks", "end of month", "dec 24",
 * "24/12"), read on the server in the member's time zone, so a model never converts a date itself.
 * chrono-node does the reading (its English parser only); this file decides what it is read against
 * and what is refused:
 *
 * - `YYYY-MM-DD` is taken as it is, and a date that does not exist (2026-02-30) is refused by name.
 * - Numbers with a slash are day/month ("24/12" is 24 December). When both numbers could be a month
 *   and differ ("5/6"), the phrase is refused as ambiguous, naming both readings.
 * - The phrase must name exactly one date, and nothing may be left over but a leading "on", "by",
 *   "due", "at" or "before" and punctuation: "sometime friday-ish" is refused rather than guessed at.
 * - `forward`: a due date or a filter reads "friday" and "dec 24" as the next one (today included
 *   for a date, so "dec 3" on 3 December is today); activity's since/until read them as the last one.
 *
 * The reference is the member's wall clock as a Date whose local fields hold it: chrono reads
 * weekdays from local fields, so handing it a UTC instant made "thursday" depend on the process's
 * own zone. A time of day comes back only when the phrase names one.
 */

export interface DayRead {
  /** YYYY-MM-DD in the member's calendar. */
  readonly date: string;
  /** HH:MM, when the words named a time. */
  readonly time?: string;
  /** The words as given, when they were not an ISO date. */
  readonly words?: string;
}

export interface ReadOptions {
  readonly now: Date;
  readonly timeZone: string;
  readonly forward: boolean;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const SLASH = /\b(\d{1,2})\/(\d{1,2})\b/;
const FILLER = /^(on|by|due|at|before|[.,!?]+)$/i;
const PAST_WORDS = /\b(last|past|previous)\b/i;
const shiftDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const pad = (n: number): string => String(n).padStart(2, '0');

/** Whether a YYYY-MM-DD string is a day of the calendar (not 2026-02-30). */
export const isCalendarDate = (date: string): boolean => {
  const t = Date.parse(`${date}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === date;
};

/** "Fri 4 Dec 2026": how an answer shows a date it read, so the reader sees the weekday it fell on. */
export const dayInWords = (date: string): string => {
  const d = new Date(`${date}T00:00:00Z`);
  return `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
};

const wallClock = (now: Date, timeZone: string): Date => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    })
      .formatToParts(now)
      .map((p) => [p.type, Number(p.value)]),
  ) as Record<string, number>;
  return new Date(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!);
};

/** Reads a date argument (`param` names it in refusals): an ISO date as it is, else the words. */
export const readDay = async (value: string, param: string, opts: ReadOptions): Promise<DayRead> => {
  const words = value.trim();
  if (ISO_DATE.test(words)) {
    if (!isCalendarDate(words)) throw dateUnreadable(param, words, 'is not a date (no such day)');
    return { date: words };
  }
  const slash = SLASH.exec(words);
  if (slash) {
    const [a, b] = [Number(slash[1]), Number(slash[2])];
    if (a <= 12 && b <= 12 && a !== b) {
      const month = (n: number) => MONTHS[n - 1]!.toLowerCase();
      throw dateUnreadable(
        param,
        words,
        `could be ${a} ${month(b)} or ${month(a)} ${b} (a slash date is day/month, but here both numbers could be the month); write '${a} ${month(b)}' or '${month(a)} ${b}'`,
      );
    }
  }
  const reference = wallClock(opts.now, opts.timeZone);
  const { casual, GB } = await chrono();
  const found = (slash ? GB : casual).parse(words, reference, { forwardDate: opts.forward });
  if (found.length === 0) throw dateUnreadable(param, words, 'is not a date this server reads');
  if (found.length > 1)
    throw dateUnreadable(param, words, `names ${found.length} dates (${found.map((f) => `'${f.text}'`).join(', ')}); give one`);
  const hit = found[0]!;
  const rest = `${words.slice(0, hit.index)} ${words.slice(hit.index + hit.text.length)}`.split(/\s+/).filter(Boolean);
  const extra = rest.filter((w) => !FILLER.test(w));
  if (extra.length) throw dateUnreadable(param, words, `has words that are not part of a date ('${extra.join(' ')}')`);
  if (hit.end) throw dateUnreadable(param, words, 'names a range; give one date');
  const s = hit.start;
  let date = `${s.get('year')}-${pad(s.get('month')!)}-${pad(s.get('day')!)}`;
  if (!isCalendarDate(date)) throw dateUnreadable(param, words, `is ${date}, which is not a date (no such day)`);
  // A weekday read backward ("since monday"), or said to be past ("last friday"), is the latest one
  // on or before today: chrono reads a weekday as the one of this week, which may still be ahead.
  const today = `${reference.getFullYear()}-${pad(reference.getMonth() + 1)}-${pad(reference.getDate())}`;
  if (s.isCertain('weekday') && !s.isCertain('day') && (!opts.forward || PAST_WORDS.test(words)) && date > today)
    date = shiftDays(date, -7);
  return { date, ...(s.isCertain('hour') ? { time: `${pad(s.get('hour')!)}:${pad(s.get('minute') ?? 0)}` } : {}), words };
};

/** The line an answer gives for words it read: `dueDate 'next friday 3pm' read as Fri 11 Dec 2026 15:00 (Europe/Berlin).` */
export const readLine = (param: string, read: DayRead, timeZone: string): string =>
  `${param} '${read.words}' read as ${dayInWords(read.date)}${read.time ? ` ${read.time}` : ''} (${timeZone}).`;
