import * as z from 'zod/mini';
import { INBOX_KINDS } from '../../../delivery/notice.js';
import { whenPhrase } from '../../activity/render.js';
import { MARK_LIMIT, markEntries } from '../../inbox/inbox-writer.js';
import { inboxMarkNeedsOne } from '../../model/refusals.js';
import { taskNameOf } from '../../model/task-refs.js';
import { ENTRY_STATES, type EntryState, type InboxEntry } from '../../store/inbox-store.js';
import { defineTool } from '../define-tool.js';
import { cursorFor, positionFrom } from '../paging.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../schemas.js';
import { READ, UPDATE } from './annotations.js';

/**
 * The inbox (docs/notifications.md): what others did that concerns you, newest first, the unread
 * before the read; the notifier files each entry from a change's record, so an entry may arrive a
 * moment after the change. Done entries leave the list.
 */

const entryOutput = z.object({
  entryId: z.string(),
  kind: z.enum(INBOX_KINDS),
  task: z.string().check(z.describe('DEMO-42')),
  taskId: z.string(),
  title: z.string(),
  by: z.string(),
  client: z.string(),
  at: z.iso.datetime({ offset: true }),
  state: z.enum(ENTRY_STATES),
  detail: z.optional(z.string()),
});

const WHAT: Record<InboxEntry['kind'], (by: string, detail?: string) => string> = {
  assigned: (by) => `${by} assigned it to you`,
  mentioned: (by) => `${by} mentioned you`,
  status: (by, d) => `${by} changed its status${d ? ` (${d})` : ''}`,
  completed: (by) => `${by} completed it`,
  comment: (by) => `${by} commented`,
  due: (by, d) => `${by} moved its due date${d ? ` to ${d}` : ''}`,
  unblocked: (by) => `${by} finished it: a task of yours waits on it no more`,
  reminder: (_by, d) => `your reminder${d ? ` (${d})` : ''}`,
};

const toOutput = (e: InboxEntry, workspaceKey: string): z.input<typeof entryOutput> => ({
  entryId: e.entryId,
  kind: e.kind,
  task: taskNameOf(workspaceKey, { taskId: e.taskId, ...(e.taskNumber !== undefined ? { number: e.taskNumber } : {}) }),
  taskId: e.taskId,
  title: e.taskTitle,
  by: e.actorName,
  client: e.client,
  at: e.at,
  state: e.state,
  ...(e.detail ? { detail: e.detail } : {}),
});

interface Position {
  readonly state: EntryState;
  readonly after?: string;
}
const isPosition = (v: unknown): v is Position =>
  typeof v === 'object' && v !== null && ENTRY_STATES.includes((v as Position).state) && ((v as Position).after ?? '').length < 200;

/** The states a list walks, in order: unread first, then read (done ones only when asked for by name). */
const statesOf = (unread: boolean | undefined): EntryState[] => (unread ? ['unread'] : ['unread', 'read']);

export const inboxList = defineTool({
  name: 'inbox_list',
  title: 'My inbox',
  description: 'What others did that concerns you and your reminders, unread first, newest first.',
  input: z.strictObject({
    unread: z.optional(z.boolean()),
    kind: z.optional(z.enum(INBOX_KINDS)),
    limit: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_LIMIT))),
    cursor: z.optional(z.string().check(z.maxLength(2000))),
  }),
  output: z.object({ entries: z.array(entryOutput), unread: z.number().check(z.int()), nextCursor: z.optional(z.string()) }),
  // What a client acts on: which entry, of what, on which task; the rest is in each answer and its text.
  listedOutput: z.object({
    entries: z.array(z.object({ entryId: z.string(), kind: z.string(), task: z.string(), state: z.string() })),
    unread: z.number(),
    nextCursor: z.optional(z.string()),
  }),
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const { principal, services } = ctx;
    const { workspaceId, userId } = principal;
    const limit = args.limit ?? DEFAULT_LIMIT;
    const from = await positionFrom(ctx, args, isPosition);
    // The unread and the read are each one key range, read together (one round trip): a page is the
    // unread first, the read after them. A kind is a filter on what is read (a page may come back short, with a cursor).
    const states = statesOf(args.unread).filter((s) => !from || ENTRY_STATES.indexOf(s) >= ENTRY_STATES.indexOf(from.state));
    const [unread, ...pages] = await Promise.all([
      services.inbox.unreadCount(workspaceId, userId),
      ...states.map((state) => services.inbox.list(workspaceId, userId, state, limit, from?.state === state ? from.after : undefined)),
    ]);
    const entries: InboxEntry[] = [];
    let position: Position | undefined;
    for (const [i, page] of pages.entries()) {
      const room = limit - entries.length;
      const taken = page.entries.slice(0, room);
      entries.push(...taken);
      const state = states[i]!;
      if (taken.length < page.entries.length || (page.next && taken.length === page.entries.length && room <= page.entries.length)) {
        position = { state, after: taken.at(-1)?.entryId ?? from?.after ?? '' };
        break;
      }
      if (page.next) {
        position = { state, after: page.next };
        break;
      }
    }
    const nextCursor = position ? await cursorFor(ctx, args, position) : undefined;
    return {
      entries: entries.filter((e) => !args.kind || e.kind === args.kind).map((e) => toOutput(e, principal.workspaceKey)),
      unread,
      ...(nextCursor ? { nextCursor } : {}),
    };
  },
  render: (out, ctx) => {
    const head = `Inbox: ${out.unread >= 100 ? '99+' : out.unread} unread.`;
    if (!out.entries.length) return `${head} Nothing${out.nextCursor ? ' on this page (pass cursor for more)' : ' here'}.`;
    const lines = out.entries.map(
      (e) =>
        `${e.state === 'unread' ? '●' : '○'} ${e.task} "${e.title}": ${WHAT[e.kind](e.by, e.detail)} · via ${e.client} · ${whenPhrase(e.at, ctx.now, ctx.timeZone)} · ${e.entryId}`,
    );
    return [head, ...lines, ...(out.nextCursor ? ['More: pass cursor.'] : [])].join('\n');
  },
});

export const inboxMark = defineTool({
  name: 'inbox_mark',
  title: 'Mark inbox entries',
  description: `Marks your inbox entries read or done: those named, or all up to upTo (at most ${MARK_LIMIT}).`,
  input: z.strictObject({
    // An id is a key: never empty.
    entries: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(200))).check(z.maxLength(100))),
    upTo: z.optional(z.string().check(z.maxLength(200))),
    state: z.enum(['read', 'done']),
  }),
  output: z.object({ marked: z.number().check(z.int()), more: z.boolean(), unread: z.number().check(z.int()) }),
  annotations: UPDATE,
  scope: 'tasks:read',
  run: async (args, { principal, services }) => {
    const target = args.entries ? { entries: args.entries } : args.upTo ? { upTo: args.upTo } : undefined;
    if (!target || !(args.entries?.length ?? args.upTo) || (args.entries && args.upTo)) throw inboxMarkNeedsOne();
    const { marked, more } = await markEntries(services, principal, target, args.state);
    // Counted after the marks: the count is capped, so it cannot be worked out from one before.
    return { marked, more, unread: await services.inbox.unreadCount(principal.workspaceId, principal.userId) };
  },
  render: (out) =>
    `Marked ${out.marked} ${out.marked === 1 ? 'entry' : 'entries'}${out.more ? ` (more left: call again)` : ''}. ${out.unread >= 100 ? '99+' : out.unread} unread.`,
});

export const INBOX_TOOLS = [inboxList, inboxMark];
