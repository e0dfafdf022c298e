import * as z from 'zod/mini';
import { InvalidArgumentRefusal, NotFoundRefusal, ToolRefusal } from '../../errors.js';
import type { ToolContext } from '../../mcp/tool-registry.js';
import { ACTIVITY_ID_PATTERN, ACTIVITY_KINDS, type ActivityRecord, TEAM_KINDS } from '../activity.js';
import { describeChange, whenPhrase } from '../activity-render.js';
import { activityIdOutput, undoLine } from '../changes.js';
import { confirmation, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { cursorFor, isString, positionFrom } from '../paging.js';
import { moreLine } from '../render.js';
import { idArg, listFields, pagingArgs } from '../schemas.js';
import type { WorkspaceServices } from '../services.js';
import { addDays, instantInZone } from '../time.js';
import { undoChange } from '../undo.js';
import { loadNames, resolveAssignee } from '../views.js';
import { READ, REMOVE } from './annotations.js';

// ---- activity_list --------------------------------------------------------------------------------

/** A date (the user's day) or a date-time (with an offset, or else in the user's zone). */
const whenArg = z
  .string()
  .check(
    z.regex(
      /^\d{4}-\d{2}-\d{2}(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?)?$/,
      'expected YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][offset]',
    ),
  );

const listInput = z.strictObject({
  task: z.optional(idArg('task')).check(z.describe('Task key or id')),
  project: z.optional(idArg('project')).check(z.describe('projectId: it and its tasks')),
  actor: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('"me" or a userId')),
  client: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(60))).check(z.describe('Part of the client name')),
  since: z.optional(whenArg).check(z.describe("Date or date-time, user's zone unless offset given")),
  until: z.optional(whenArg).check(z.describe('Date (whole day) or date-time')),
  kind: z.optional(z.enum(ACTIVITY_KINDS)),
  ...pagingArgs,
});

const TEXT_MAX = 1000;
const trimmed = (v: unknown): unknown => (typeof v === 'string' && v.length > TEXT_MAX ? `${v.slice(0, TEXT_MAX - 1)}…` : v);

const entryOutput = z.object({
  activityId: z.string(),
  at: z.string(),
  when: z.string().check(z.describe("The time in the user's time zone")),
  actor: z.object({ userId: z.string(), name: z.string() }),
  client: z.string(),
  tool: z.string(),
  kind: z.enum(ACTIVITY_KINDS),
  action: z.string(),
  target: z.object({ id: z.string(), label: z.string(), taskId: z.optional(z.string()), projectId: z.optional(z.string()) }),
  summary: z.string(),
  changes: z.array(z.object({ field: z.string(), before: z.optional(z.unknown()), after: z.optional(z.unknown()) })),
  version: z.optional(z.number().check(z.int())),
  undoOf: z.optional(z.string()),
  undoneBy: z.optional(z.string()),
});
type EntryOutput = z.output<typeof entryOutput>;

const listOutput = z.object({ ...listFields, entries: z.array(entryOutput) });

/** The instant a `since`/`until` argument names; a bare date means the user's day (its start, or for `until` its end). */
const boundOf = (value: string, side: 'since' | 'until', timeZone: string): number => {
  const day = value.slice(0, 10);
  // A calendar date that does not exist (2026-02-30) is not rolled over into the next month.
  const midnight = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(midnight.getTime()) || midnight.toISOString().slice(0, 10) !== day) return Number.NaN;
  if (value.length === 10) {
    return side === 'since' ? instantInZone(value, '00:00:00', timeZone) : instantInZone(addDays(value, 1), '00:00:00', timeZone) - 1;
  }
  if (/(Z|[+-]\d{2}:\d{2})$/.test(value)) return Date.parse(value);
  const [date, time] = value.split('T') as [string, string];
  return instantInZone(date, time.length === 5 ? `${time}:00` : time, timeZone);
};

const toEntry = (r: ActivityRecord, summary: string, when: string): EntryOutput => ({
  activityId: r.activityId,
  at: r.at,
  when,
  actor: { userId: r.actorId, name: r.actorName },
  client: r.client,
  tool: r.tool,
  kind: r.kind,
  action: r.action,
  target: {
    id: r.targetId,
    label: r.targetLabel,
    ...(r.taskId ? { taskId: r.taskId } : {}),
    ...(r.projectId ? { projectId: r.projectId } : {}),
  },
  summary,
  changes: r.changes.map((c) => ({
    field: c.field,
    ...(c.before === undefined ? {} : { before: trimmed(c.before) }),
    ...(c.after === undefined ? {} : { after: trimmed(c.after) }),
  })),
  ...(r.version !== undefined ? { version: r.version } : {}),
  ...(r.undoOf ? { undoOf: r.undoOf } : {}),
  ...(r.undoneBy ? { undoneBy: r.undoneBy } : {}),
});

export const activityList = defineTool({
  name: 'activity_list',
  title: 'What changed',
  description:
    'Who changed what, newest first, via which client, before and after, with the id change_undo takes. Member and token ' +
    'changes need team:read.',
  input: listInput,
  output: listOutput,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    const includeTeam = principal.scopes.includes('team:read');
    if (args.kind && TEAM_KINDS.has(args.kind) && !includeTeam) {
      throw new InvalidArgumentRefusal(`kind: ${args.kind} changes need a token with the scope team:read.`);
    }
    const sinceMs = args.since === undefined ? undefined : boundOf(args.since, 'since', principal.timeZone);
    const untilMs = args.until === undefined ? undefined : boundOf(args.until, 'until', principal.timeZone);
    if (Number.isNaN(sinceMs)) throw new InvalidArgumentRefusal(`since: ${args.since} is not a real date or time.`);
    if (Number.isNaN(untilMs)) throw new InvalidArgumentRefusal(`until: ${args.until} is not a real date or time.`);
    if (sinceMs !== undefined && untilMs !== undefined && sinceMs > untilMs) {
      throw new InvalidArgumentRefusal('since: is later than until, so nothing can match.');
    }
    const after = await positionFrom(ctx, args, isString);
    // The task is not read: a deleted one still has its history, and an unknown id simply has none.
    const [names, actorId, taskId] = await Promise.all([
      loadNames(services, principal),
      args.actor === undefined ? undefined : resolveAssignee(services, principal, args.actor, 'actor'),
      args.task === undefined ? undefined : services.numbers.idOf(principal, args.task, 'task'),
    ]);
    if (actorId === null) throw new InvalidArgumentRefusal('actor: "me" or a userId (changes are always made by someone).');
    const page = await services.activity.list(
      principal.workspaceId,
      {
        ...(args.task !== undefined ? { taskId: taskId ?? args.task } : {}),
        ...(args.project !== undefined ? { projectId: args.project } : {}),
        ...(actorId ? { actorId } : {}),
        ...(args.client !== undefined ? { client: args.client.toLowerCase() } : {}),
        ...(args.kind !== undefined ? { kind: args.kind } : {}),
        ...(sinceMs !== undefined ? { sinceMs } : {}),
        ...(untilMs !== undefined ? { untilMs } : {}),
        includeTeam,
      },
      args.limit,
      now,
      after,
    );
    return {
      returned: page.records.length,
      truncated: page.next !== undefined,
      ...(page.next ? { nextCursor: await cursorFor(ctx, args, page.next) } : {}),
      entries: page.records.map((r) => toEntry(r, describeChange(r, names), whenPhrase(r.at, now, principal.timeZone))),
    };
  },
  render: (r) =>
    r.returned === 0
      ? 'No changes match.'
      : `${r.returned} change(s), newest first:\n${r.entries
          .map(
            (e) =>
              `- ${e.when} · ${e.actor.name} via ${e.client} · ${e.summary} · ${e.activityId}${e.undoneBy ? ` (undone by ${e.undoneBy})` : ''}`,
          )
          .join('\n')}${moreLine(r.truncated, r.returned)}`,
});

// ---- change_undo ---------------------------------------------------------------------------------

const undoInput = z.strictObject({
  activityId: z.string().check(z.minLength(1), z.maxLength(100), z.describe('act_… id')),
});

const undoOutput = z.object({
  undone: z.string().check(z.describe('The change that was undone')),
  undid: z.boolean().check(z.describe('false when the person declined or cancelled: nothing changed')),
  summary: z.string(),
  declined: z.optional(z.enum(['declined', 'cancelled'])),
  ...activityIdOutput,
});

export const changeUndo = defineTool({
  name: 'change_undo',
  title: 'Undo a change',
  description:
    "Puts back what one change (act_… id, or a bulk call's) altered, unless the target changed since (then it names the later " +
    'changes). Undoing a delete restores it with its comments; an undo can be undone.',
  input: undoInput,
  output: undoOutput,
  // Undoing a creation removes what it made.
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    const id = args.activityId;
    if (!ACTIVITY_ID_PATTERN.test(id)) {
      throw new InvalidArgumentRefusal(
        `activityId: ${id} is not an activity id (act_ and 16 letters and digits); activity_list shows them.`,
      );
    }
    const record = await services.activity.get(principal.workspaceId, id);
    const items = record ? [] : await services.activity.itemsOfCall(principal.workspaceId, id);
    if (!record && !items.length) {
      throw new NotFoundRefusal(`Change ${id} was not found in this workspace; activity_list shows the changes there are.`);
    }
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const names = await loadNames(services, principal);
    if (!record) return undoCall(ctx, id, items, names, nowSeconds);
    if (record.expiresAt <= nowSeconds) {
      throw new NotFoundRefusal(
        `Change ${id} is older than the ${services.activity.retentionDays} days changes are kept for; it cannot be undone.`,
      );
    }
    if (record.undoneBy) {
      throw new InvalidArgumentRefusal(`Change ${id} was undone already by ${record.undoneBy}; to redo it, undo ${record.undoneBy}.`);
    }
    if (TEAM_KINDS.has(record.kind) && !principal.scopes.includes('team:read')) {
      throw new NotFoundRefusal(`Change ${id} was not found in this workspace; activity_list shows the changes there are.`);
    }
    const summary = describeChange(record, names);
    const fields = record.changes.filter((c) => !['updatedAt', 'completedBy'].includes(c.field));
    if (fields.length > 1) {
      const asked = confirmation(
        ctx,
        { id, state: 'live' },
        `Undo ${record.actorName}'s change (${summary}) from ${whenPhrase(record.at, now, principal.timeZone)}? ` +
          `It puts back ${fields.length} fields: ${fields.map((c) => c.field).join(', ')}.`,
        'Undo the change',
      );
      if (asked.kind === 'ask') return asked.request;
      if (asked.kind !== 'proceed') return { undone: id, undid: false, summary, declined: asked.kind };
    }
    const { undo } = await undoChange(ctx, record);
    return { undone: id, undid: true, summary: describeChange(undo, names), activityId: undo.activityId };
  },
  render: (r) =>
    r.undid
      ? `Undone ${r.undone}: ${r.summary}.${undoLine(r.activityId)}`
      : notConfirmedText(r.declined ?? 'declined', `undoing ${r.undone}`),
});

/**
 * Undoes the items of a bulk call that still can, each on its own: the others are named with why
 * (moved on since, undone already, expired).
 */
const undoCall = async (
  ctx: ToolContext<WorkspaceServices>,
  callId: string,
  items: readonly ActivityRecord[],
  names: Awaited<ReturnType<typeof loadNames>>,
  nowSeconds: number,
) => {
  const asked = confirmation(
    ctx,
    { id: callId, state: 'live' },
    `Undo all ${items.length} changes of that one call (${items
      .map((r) => describeChange(r, names))
      .slice(0, 3)
      .join('; ')}${items.length > 3 ? '; …' : ''})?`,
    'Undo them all',
  );
  if (asked.kind === 'ask') return asked.request;
  if (asked.kind !== 'proceed') return { undone: callId, undid: false, summary: `${items.length} change(s)`, declined: asked.kind };
  const lines: string[] = [];
  let undone = 0;
  for (const r of items) {
    if (r.undoneBy || r.expiresAt <= nowSeconds) {
      lines.push(`${r.activityId}: ${r.undoneBy ? `undone already by ${r.undoneBy}` : 'expired'}`);
      continue;
    }
    try {
      await undoChange(ctx, r);
      undone++;
    } catch (err) {
      if (!(err instanceof ToolRefusal)) throw err;
      lines.push(`${r.activityId}: ${err.message}`);
    }
  }
  return {
    undone: callId,
    undid: undone > 0,
    summary: `undid ${undone} of ${items.length} change(s)${lines.length ? `; not: ${lines.join(' | ')}` : ''}`,
  };
};

export const ACTIVITY_TOOLS = [activityList, changeUndo];
