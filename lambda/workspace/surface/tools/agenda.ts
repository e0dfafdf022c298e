import * as z from 'zod/mini';
import { dayInWords, readDay, readLine } from '../../model/date-words.js';
import { addDays, dateInZone, instantInZone } from '../../model/time.js';
import { loadNames, resolveAssignee } from '../../store/lookups.js';
import { defineTool } from '../define-tool.js';
import { toSummary } from '../outputs.js';
import { cursorFor, isString, positionFrom } from '../paging.js';
import { moreLine, taskLine } from '../render.js';
import { dateArg, dateOut, listFields, pagingArgs, taskBriefListed, taskSummaryOutput } from '../schemas.js';
import { READ } from './annotations.js';

const input = z.strictObject({
  date: z.optional(dateArg).check(z.describe("Default: the user's today; a date or words (tomorrow, monday)")),
  assignee: z
    ._default(z.string().check(z.minLength(1), z.maxLength(100)), 'me')
    .check(z.describe('"me" (default), "anyone", "none" or a userId')),
  ...pagingArgs,
});

const output = z.object({
  day: dateOut,
  timeZone: z.string(),
  counts: z.object({
    open: z.number().check(z.int(), z.describe('Open tasks in view, whenever due')),
    overdue: z.number().check(z.int(), z.describe('Open and due before the day')),
    dueToday: z.number().check(z.int(), z.describe('Open and due on the day')),
    doneToday: z.number().check(z.int(), z.describe("Completed on the day, in the user's time zone")),
  }),
  unread: z.number().check(z.int(), z.describe('Your unread inbox entries (100 means 100 or more): inbox_list')),
  ...listFields,
  tasks: z.array(taskSummaryOutput).check(z.describe('Overdue and due-today open tasks, most urgent priority first')),
});

export const agendaGet = defineTool({
  name: 'agenda_get',
  title: 'Agenda for a day',
  description:
    "The user's day in their zone: counts (open, overdue, due today, done today) and the overdue and due-today tasks by " +
    'priority; tasks_search for the rest.',
  input,
  output,
  listedOutput: z.extend(output, { tasks: z.array(taskBriefListed) }),
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const { principal, services, now } = ctx;
    const read =
      args.date === undefined ? undefined : await readDay(args.date, 'date', { now, timeZone: principal.timeZone, forward: true });
    const day = read?.date ?? dateInZone(now, principal.timeZone);
    const after = await positionFrom(ctx, args, isString);
    const assigneeId = args.assignee === 'anyone' ? undefined : await resolveAssignee(services, principal, args.assignee, 'assignee');
    const who = assigneeId === undefined ? {} : { assigneeId };
    // The day in the user's time zone, as instants: what "done today" counts.
    const from = new Date(instantInZone(day, '00:00', principal.timeZone)).toISOString();
    const to = new Date(instantInZone(addDays(day, 1), '00:00', principal.timeZone)).toISOString();
    // The page of urgent tasks and the scope's counts: each reads about what it returns.
    const [urgent, counts, names, unread] = await Promise.all([
      services.tasks.urgent(principal, who, day, args.limit, after),
      services.tasks.counts(principal, who, day, from, to),
      loadNames(services, principal),
      services.inbox.unreadCount(principal.workspaceId, principal.userId),
    ]);
    return {
      day,
      timeZone: principal.timeZone,
      counts: { open: counts.open, overdue: counts.overdue, dueToday: counts.dueToday, doneToday: counts.doneBetween },
      unread,
      returned: urgent.tasks.length,
      truncated: urgent.next !== undefined,
      ...(urgent.next !== undefined ? { nextCursor: await cursorFor(ctx, args, urgent.next) } : {}),
      tasks: urgent.tasks.map((t) => toSummary(t, names)),
      ...(read?.words ? { textNotes: [readLine('date', { ...read, time: undefined }, principal.timeZone)] } : {}),
    };
  },
  render: (a, reader) => {
    // One person's day names them once, in the heading, not on every line.
    const one = a.tasks.length > 0 && a.tasks.every((t) => t.assigneeId === a.tasks[0]!.assigneeId) ? a.tasks[0]!.assigneeName : undefined;
    // Another day than the reader's today is named, never called today.
    const today = a.day === dateInZone(reader.now, a.timeZone);
    const that = today ? 'today' : `on ${dayInWords(a.day)}`;
    const head =
      `${a.counts.open} open, ${a.counts.overdue} overdue${today ? '' : ' by then'}, ${a.counts.dueToday} due ${that}` +
      (a.counts.doneToday ? `, ${a.counts.doneToday} done ${that}` : '') +
      (one ? ` (@${one})` : '') +
      '.' +
      (a.unread ? ` Inbox: ${a.unread >= 100 ? '99+' : a.unread} unread.` : '');
    if (!a.tasks.length) return `${head}\nNothing overdue or due ${that}.`;
    return `${head}\n${a.tasks.map((t) => taskLine(t, a.day, { omitAssignee: one !== undefined, reader })).join('\n')}${moreLine(a)}`;
  },
});
