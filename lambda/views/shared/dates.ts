/** Calendar days as `YYYY-MM-DD`, computed in UTC so no local clock or zone shifts them. */

const asUtc = (day: string): Date => new Date(`${day}T00:00:00Z`);

export const addDays = (day: string, n: number): string => {
  const d = asUtc(day);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
};

/** The Monday after `day` (a week on when `day` is a Monday). */
export const nextMonday = (day: string): string => addDays(day, (8 - asUtc(day).getUTCDay()) % 7 || 7);

/** The calendar day an instant falls on in a time zone (the user's, from the tool result). */
export const dayIn = (instant: Date, timeZone: string | undefined): string => {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(instant);
  } catch {
    return instant.toISOString().slice(0, 10); // an unknown zone: UTC rather than nothing
  }
};

export const daysBetween = (from: string, to: string): number => Math.round((asUtc(to).getTime() - asUtc(from).getTime()) / 86_400_000);

/** "Tue 3 Dec" in the host's locale. */
export const shortDate = (day: string, locale: string | undefined): string => {
  const options: Intl.DateTimeFormatOptions = { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' };
  try {
    return new Intl.DateTimeFormat(locale, options).format(asUtc(day));
  } catch {
    return new Intl.DateTimeFormat('en', options).format(asUtc(day));
  }
};

/** How far a due day is from today, as a person says it. */
export const duePhrase = (due: string, today: string, locale: string | undefined): string => {
  const n = daysBetween(today, due);
  if (n === 0) return 'due today';
  if (n === 1) return 'due tomorrow';
  if (n === -1) return '1 day overdue';
  if (n < 0) return `${-n} days overdue`;
  return `due ${shortDate(due, locale)}`;
};
