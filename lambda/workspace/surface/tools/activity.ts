import * as z from 'zod/mini';
import type { InputRequired, ToolContext } from '../../../mcp/tool-registry.js';
import type { Role } from '../../../vocabulary.js';
import { changesInWords, describeChange, whenPhrase } from '../../activity/render.js';
import { lowersPower } from '../../membership/rules.js';
import { ACTIVITY_ID_PATTERN, ACTIVITY_KINDS, type ActivityRecord, TEAM_KINDS } from '../../model/activity.js';
import { readDay, readLine } from '../../model/date-words.js';
import {
  actorIsSomeone,
  alreadyUndone,
  changeExpired,
  changeNotFound,
  kindNeedsTeamRead,
  notAnActivityId,
  notARealWhen,
  notAWhen,
  sinceAfterUntil,
} from '../../model/refusals.js';
import { addDays, instantInZone } from '../../model/time.js';
import { privateToAnother } from '../../store/activity-store.js';
import { loadNames, resolveAssignee } from '../../store/lookups.js';
import type { Names } from '../../store/names.js';
import { undoChange } from '../../undo/undo.js';
import { undoCallItems } from '../../undo/undo-call.js';
import { confirmation, NOT_CONFIRMED, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { cursorFor, isString, positionFrom } from '../paging.js';
import { moreLine, undoLine } from '../render.js';
import { activityIdOutput, idArg, listFields, pagingArgs } from '../schemas.js';
import type { WorkspaceServices } from '../services.js';
import { undoContext } from '../sources.js';
import { READ, REMOVE } from './annotations.js';

// ---- activity_list --------------------------------------------------------------------------------

/** A date (the user's day), a date-time (with an offset, or else in the user's zone), or words ("monday", "yesterday 3pm"). */
const whenArg = z.string().check(z.trim(), z.minLength(1), z.maxLength(60));
const ISO_WHEN = /^\d{4}-\d{2}-\d{2}(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?)?$/;

const listInput = z.strictObject({
  task: z.optional(idArg).check(z.describe('Task key or id')),
  project: z.optional(idArg).check(z.describe('projectId: it and its tasks')),
  actor: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('"me" or a userId')),
  client: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(60))).check(z.describe('Part of the client name')),
  since: z.optional(whenArg).check(z.describe("Date, date-time or words (monday, yesterday 3pm); user's zone unless offset given")),
  until: z.optional(whenArg).check(z.describe('Date (whole day), date-time or words')),
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
/** What a client acts on: which change, when, of what kind; who, the target and the changes as their types (each answer has them whole). */
const listedEntries = z.object({
  ...listFields,
  entries: z.array(
    z.object({
      activityId: z.string(),
      at: z.string(),
      actor: z.object({}),
      client: z.string(),
      kind: z.string(),
      action: z.string(),
      target: z.object({}),
      summary: z.string(),
      changes: z.array(z.object({})),
      undoOf: z.optional(z.string()),
      undoneBy: z.optional(z.string()),
    }),
  ),
});

/** The instant a `since`/`until` argument names; a bare date means the user's day (its start, or for `until` its end). */
const dayBoundIn = (day: string, side: 'since' | 'until', timeZone: string): number =>
  side === 'since' ? instantInZone(day, '00:00:00', timeZone) : instantInZone(addDays(day, 1), '00:00:00', timeZone) - 1;

const boundOf = (value: string, side: 'since' | 'until', timeZone: string): number => {
  const day = value.slice(0, 10);
  // A calendar date that does not exist (2026-02-30) is not rolled over into the next month.
  const midnight = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(midnight.getTime()) || midnight.toISOString().slice(0, 10) !== day) return Number.NaN;
  if (value.length === 10) return dayBoundIn(value, side, timeZone);
  if (/(Z|[+-]\d{2}:\d{2})$/.test(value)) return Date.parse(value);
  const [date, time] = value.split('T') as [string, string];
  return instantInZone(date, time.length === 5 ? `${time}:00` : time, timeZone);
};

const toEntry = (r: ActivityRecord, summary: string, when: string, names: Names): EntryOutput => ({
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
  changes: changesInWords(r, names).map((c) => ({
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
  listedOutput: listedEntries,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    const includeTeam = principal.scopes.includes('team:read');
    if (args.kind && TEAM_KINDS.has(args.kind) && !includeTeam) throw kindNeedsTeamRead(args.kind);
    // Words are read as the last such day ("monday" is the one before today), in the user's zone.
    const textNotes: string[] = [];
    const bound = async (value: string | undefined, side: 'since' | 'until'): Promise<number | undefined> => {
      if (value === undefined) return undefined;
      if (ISO_WHEN.test(value)) {
        const ms = boundOf(value, side, principal.timeZone);
        if (Number.isNaN(ms)) throw notARealWhen(side, value);
        return ms;
      }
      if (/^\d{4}-/.test(value)) throw notAWhen(side, value);
      const read = await readDay(value, side, { now, timeZone: principal.timeZone, forward: false });
      textNotes[side === 'since' ? 0 : 1] = readLine(side, read, principal.timeZone);
      return read.time ? instantInZone(read.date, `${read.time}:00`, principal.timeZone) : dayBoundIn(read.date, side, principal.timeZone);
    };
    const [sinceMs, untilMs] = await Promise.all([bound(args.since, 'since'), bound(args.until, 'until')]);
    if (sinceMs !== undefined && untilMs !== undefined && sinceMs > untilMs) throw sinceAfterUntil();
    const after = await positionFrom(ctx, args, isString);
    // The task is not read: a deleted one still has its history, and an unknown id simply has none.
    const [names, actorId, taskId] = await Promise.all([
      loadNames(services, principal),
      args.actor === undefined ? undefined : resolveAssignee(services, principal, args.actor, 'actor'),
      args.task === undefined ? undefined : services.numbers.idOf(principal, args.task, 'task'),
    ]);
    if (actorId === null) throw actorIsSomeone();
    const page = await services.activity.list(
      principal,
      {
        ...(args.task !== undefined ? { taskId: taskId ?? args.task } : {}),
        ...(args.project !== undefined ? { projectId: args.project } : {}),
        ...(actorId ? { actorId } : {}),
        ...(args.client !== undefined ? { client: args.client.toLowerCase() } : {}),
        ...(args.kind !== undefined ? { kind: args.kind } : {}),
        ...(sinceMs !== undefined ? { sinceMs } : {}),
        ...(untilMs !== undefined ? { untilMs } : {}),
        includeTeam,
        readerId: principal.userId,
      },
      args.limit,
      now,
      after,
    );
    return {
      returned: page.records.length,
      truncated: page.next !== undefined,
      ...(page.next ? { nextCursor: await cursorFor(ctx, args, page.next) } : {}),
      entries: page.records.map((r) => toEntry(r, describeChange(r, names), whenPhrase(r.at, now, principal.timeZone), names)),
      textNotes: textNotes.filter(Boolean),
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
          .join('\n')}${moreLine(r)}`,
});

// ---- change_undo ---------------------------------------------------------------------------------

const undoInput = z.strictObject({
  activityId: z.string().check(z.minLength(1), z.maxLength(100), z.describe('act_… id')),
});

const undoOutput = z.object({
  undone: z.string().check(z.describe('The change (or bulk call) asked to undo')),
  undid: z.boolean().check(z.describe('Whether anything was undone')),
  summary: z.string(),
  declined: z.optional(z.enum(NOT_CONFIRMED)),
  ...activityIdOutput,
  items: z.optional(
    z
      .array(
        z.object({
          activityId: z.string(),
          undid: z.boolean(),
          undoId: z.optional(z.string()),
          reason: z.optional(z.string().check(z.describe('Why not'))),
        }),
      )
      .check(z.describe("A bulk call's changes, each undone or not and why")),
  ),
});
type UndoOutput = z.output<typeof undoOutput>;

/** The fields an undo writes back: what the person is told before more than one goes back. */

/**
 * Why an undo is asked first (where the client can ask): it puts back more than one field, takes
 * power away from an admin or owner, takes someone out of the workspace, or deletes what the change made.
 */
const askBecause = (record: ActivityRecord, summary: string, names: Names): string | undefined => {
  if (record.kind === 'member' && record.action === 'role_changed') {
    const before = record.changes.find((c) => c.field === 'role');
    if (before && lowersPower(before.after as Role, before.before as Role))
      return `It takes ${record.targetLabel} from ${String(before.after)} back to ${String(before.before)}.`;
  }
  if (record.kind === 'member' && (record.action === 'invited' || record.action === 'restored')) {
    return `It removes ${record.targetLabel} from the workspace again and revokes their tokens and connected apps.`;
  }
  if (
    record.action === 'created' &&
    (record.kind === 'task' || record.kind === 'project' || record.kind === 'comment' || record.kind === 'attachment')
  )
    return `It deletes what that change made (${summary}).`;
  const fields = changesInWords(record, names);
  if (fields.length > 1) return `It puts back ${fields.length} fields: ${fields.map((c) => c.field).join(', ')}.`;
  return undefined;
};

/** What the undo itself did, in words (its record says "undid act_…", which the answer names apart). */
const whatItDid = (undo: ActivityRecord, names: Awaited<ReturnType<typeof loadNames>>): string => {
  const { undoOf: _u, ...change } = undo;
  return describeChange(change, names);
};

export const changeUndo = defineTool({
  name: 'change_undo',
  title: 'Undo a change',
  description:
    "Puts back what one change (act_… id, or a bulk call's) altered, unless the target changed since (it then names the later " +
    'changes). An undo can be undone.',
  input: undoInput,
  output: undoOutput,
  // Undoing a creation removes what it made.
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    const id = args.activityId;
    if (!ACTIVITY_ID_PATTERN.test(id)) {
      throw notAnActivityId(id);
    }
    const record = await services.activity.get(principal.workspaceId, id);
    const items = record ? [] : await services.activity.itemsOfCall(principal, id);
    // What activity_list would not show the caller is not theirs to undo (nor to learn of by its answer).
    const visible = (r: ActivityRecord) =>
      (!TEAM_KINDS.has(r.kind) || principal.scopes.includes('team:read')) && !privateToAnother(r, principal.userId);
    if ((!record && !items.length) || (record && !visible(record))) throw changeNotFound(id);
    const names = await loadNames(services, principal);
    if (!record) return undoCall(ctx, id, items.filter(visible), names);
    if (record.expiresAt <= Math.floor(now.getTime() / 1000)) throw changeExpired(id, services.activity.retentionDays);
    if (record.undoneBy) throw alreadyUndone(id, record.undoneBy);
    const summary = describeChange(record, names);
    const because = askBecause(record, summary, names);
    if (because) {
      const asked = confirmation(
        ctx,
        { id, state: 'live' },
        `Undo ${record.actorName}'s change (${summary}) from ${whenPhrase(record.at, now, principal.timeZone)}? ${because}`,
        'Undo the change',
      );
      if (asked.kind === 'ask') return asked.request;
      if (asked.kind !== 'proceed') return { undone: id, undid: false, summary, declined: asked.kind };
    }
    const { undo } = await undoChange(undoContext(ctx), record);
    return { undone: id, undid: true, summary: whatItDid(undo, names), activityId: undo.activityId };
  },
  render: (r) => {
    if (r.declined) return notConfirmedText(r.declined, `undoing ${r.undone}`);
    if (!r.items) return `Undone ${r.undone}: ${r.summary}.${undoLine(r.activityId)}`;
    const not = r.items.filter((i) => !i.undid);
    return [
      `${r.summary}.`,
      ...not.map((i) => `- not undone ${i.activityId}: ${i.reason}`),
      ...(r.items.some((i) => i.undid) ? [`Each undo is a change of its own: activity_list shows their ids.`] : []),
    ].join('\n');
  },
});

/** Undoes the changes of a bulk call that still can, once the person agreed (undo/undo-call.ts does it). */
const undoCall = async (
  ctx: ToolContext<WorkspaceServices>,
  callId: string,
  items: readonly ActivityRecord[],
  names: Awaited<ReturnType<typeof loadNames>>,
): Promise<UndoOutput | InputRequired> => {
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
  const { items: results, cut } = await undoCallItems(undoContext(ctx), items, ctx.services.activity.retentionDays);
  const undid = results.filter((i) => i.undid).length;
  const summary =
    `Undid ${undid} of ${items.length} change(s) of ${callId}` +
    (cut ? `; call change_undo ${callId} again to go on (what is undone is skipped)` : '');
  return { undone: callId, undid: undid > 0, summary, items: [...results] };
};

export const ACTIVITY_TOOLS = [activityList, changeUndo];
