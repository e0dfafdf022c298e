import { BoundedMap } from '../../platform/bounded-map.js';

// A formatter per zone, made once: making one costs about 0.3 ms, using one a few microseconds.
const dayFormats = new BoundedMap<string, Intl.DateTimeFormat>(1_000);

/** The calendar date (YYYY-MM-DD) of an instant in a time zone: "today" is the user's day, not UTC's. */
export const dateInZone = (instant: Date, timeZone: string): string => {
  let format = dayFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormats.set(timeZone, format);
  }
  return format.format(instant);
};

/**
 * The first time-zone-aware formatter of a process loads ICU's zone and locale data: about 30 ms on
 * this machine. Lambda's init calls this while the secret read is in flight, so the first tools/call
 * (nearly every tool knows the user's today) does not pay it.
 */
export const loadTimeZoneData = (): void => {
  dateInZone(new Date(), 'UTC');
};

export const isValidTimeZone = (timeZone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
};

const DAY_MS = 86_400_000;

/** The date `days` after a YYYY-MM-DD date (calendar arithmetic, no time zone involved). */
export const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** Whole days from `from` to `to` (both YYYY-MM-DD): positive when `to` is later. */
export const daysBetween = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

const offsetFormats = new BoundedMap<string, Intl.DateTimeFormat>(1_000);

/** How far a zone's wall clock is ahead of UTC at an instant, in ms. */
const zoneOffsetMs = (instantMs: number, timeZone: string): number => {
  let f = offsetFormats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    offsetFormats.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(instantMs)).map((x) => [x.type, x.value]));
  const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return wall - Math.floor(instantMs / 1000) * 1000;
};

/** An instant's date and time of day on a zone's wall clock: `{date: '2026-12-05', time: '09:30'}`. */
export const wallClockOf = (instantMs: number, timeZone: string): { date: string; time: string } => {
  const wall = new Date(instantMs + zoneOffsetMs(instantMs, timeZone)).toISOString();
  return { date: wall.slice(0, 10), time: wall.slice(11, 16) };
};

/**
 * The instant a wall-clock time names in a zone ("2026-12-05" at "09:30" in Europe/Berlin), in ms.
 * A time that does not exist (skipped by a DST change) lands just after the gap.
 */
export const instantInZone = (date: string, time: string, timeZone: string): number => {
  const wall = Date.parse(`${date}T${time}Z`);
  const first = wall - zoneOffsetMs(wall, timeZone);
  return wall - zoneOffsetMs(first, timeZone);
};
