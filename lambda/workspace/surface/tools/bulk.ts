import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { ToolRefusal } from '../../../errors.js';
import { describeIssues } from '../../../mcp/json-schema.js';
import { requireRole } from '../../membership/rules.js';
import { bulkItemId, newActivityId } from '../../model/activity.js';
import { MAX_ITEMS } from '../../model/limits.js';
import { nothingToChange, taskDeleted, taskNotFound, twiceInOneCall } from '../../model/refusals.js';
import { keyField, taskNameOf } from '../../model/task-refs.js';
import type { Task } from '../../model/types.js';
import { changeTasks, createTasks, type ItemOutcome } from '../../tasks/task-writer.js';
import { defineTool } from '../define-tool.js';
import { newTaskFields, taskChangeFields, taskRefArg, versionArg } from '../schemas.js';
import { writeContext } from '../sources.js';
import {
  joinNotes,
  leftBehindNote,
  namesAField,
  newTaskOf,
  patchOf,
  readFieldValues,
  readTellings,
  readWords,
  refOfBoth,
  resolveTaskRefs,
  watchNote,
} from '../task-input.js';
import { CREATE, UPDATE } from './annotations.js';

/**
 * Many tasks in one call: each item succeeds or fails on its own, and the answer lists every item in
 * the order given. The task writer packs the writes into as few transactions as fit, each item all
 * or nothing with its activity record; the call's id (`act_…`) undoes every item that still can,
 * each item's own id (`act_….07`) just that one. In tasks_create, `@3` in blockedBy names the task
 * item 3 of the same call creates (no key has that form, so it is never mistaken for DEMO-3).
 */

const createItem = z.strictObject({
  ...newTaskFields,
  blockedBy: z.optional(newTaskFields.blockedBy.check(z.describe('Keys of all tasks it waits on; @2 is item 2 of this call'))),
  parent: z.optional(newTaskFields.parent.check(z.describe('Parent key or @n'))),
});

const updateItem = z.strictObject({
  taskId: taskRefArg,
  version: z.optional(versionArg).check(z.describe('Checked if given')),
  ...taskChangeFields,
});

/**
 * Items are checked one by one (so one bad item refuses only itself), but listed with their whole
 * schema: the input's `tasks` holds objects here and the items' schema in the listing.
 */
const listedArray = <T extends z.core.$ZodType>(item: T, what: string) =>
  z.array(item).check(z.minLength(1), z.maxLength(MAX_ITEMS), z.describe(`1-${MAX_ITEMS} ${what}`));

const resultItem = z.object({
  item: z.number().check(z.int(), z.describe('Its position in the call, from 1')),
  status: z.enum(['created', 'updated', 'unchanged', 'refused']),
  key: z.optional(z.string()),
  taskId: z.optional(z.string()),
  title: z.optional(z.string()),
  version: z.optional(z.number().check(z.int())),
  blockedBy: z.optional(z.array(z.string()).check(z.describe('The keys it waits on after the change'))),
  reason: z.optional(z.string().check(z.describe('Why it was refused, naming the field'))),
  activityId: z.optional(z.string()),
});
type ResultItem = z.output<typeof resultItem>;

const bulkOutput = z.object({
  summary: z.string(),
  activityId: z.optional(z.string().check(z.describe("The call's id: change_undo of it undoes every item that still can"))),
  items: z.array(resultItem),
});

const refused = (item: number, reason: string, extra: Partial<ResultItem> = {}): ResultItem => ({
  item,
  status: 'refused',
  reason,
  ...extra,
});

const summaryOf = (verb: string, items: readonly ResultItem[]): string => {
  const done = items.filter((i) => i.status !== 'refused').length;
  const no = items.filter((i) => i.status === 'refused');
  const first = no[0];
  return `${verb} ${done} of ${items.length}${no.length ? `; ${no.length} refused: item ${first!.item} ${first!.reason}${no.length > 1 ? ' …' : ''}` : ''}`;
};

const render = (r: z.output<typeof bulkOutput>): string =>
  [
    r.summary,
    ...r.items.map((i) =>
      i.status === 'refused'
        ? `- ${i.item}: refused${i.key ? ` (${i.key})` : ''}: ${i.reason}`
        : `- ${i.item}: ${i.status} ${i.key ?? `[${i.taskId}]`}${i.title ? ` ${i.title}` : ''}${i.blockedBy?.length ? ` · waits on ${i.blockedBy.join(', ')}` : ''} · v${i.version}`,
    ),
    ...(r.activityId ? [`Undo all: change_undo ${r.activityId}`] : []),
  ].join('\n');

/** Item fields as the schema parses them, or the refusal naming the field. */
const parseItem = <T extends z.core.$ZodType>(
  schema: T,
  raw: unknown,
): { ok: true; value: z.output<T> } | { ok: false; reason: string } => {
  const parsed = z.safeParse(schema, raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, reason: describeIssues(parsed.error) };
};

/** A refusal as an item's reason; the writer has turned everything else into one already. */
const reasonOf = (err: Error): string => {
  if (err instanceof ToolRefusal) return err.message;
  throw err;
};

/** The keys a task waits on, as its line shows them. */
const linksOf = (workspaceKey: string, t: Task): string[] =>
  Object.entries(t.blockedBy ?? {}).map(([taskId, n]) => (n ? `${workspaceKey}-${n}` : `[${taskId}]`));

const written = (workspaceKey: string, n: number, outcome: ItemOutcome & { ok: true }, status: 'created' | 'updated'): ResultItem => {
  if ('unchanged' in outcome) {
    const t = outcome.unchanged;
    return { item: n, status: 'unchanged', ...keyField(workspaceKey, t.number), taskId: t.taskId, title: t.title, version: t.version };
  }
  const t = outcome.written.task;
  const links = linksOf(workspaceKey, t);
  return {
    item: n,
    status,
    ...keyField(workspaceKey, t.number),
    taskId: t.taskId,
    title: t.title,
    version: t.version,
    ...(links.length ? { blockedBy: links } : {}),
    activityId: outcome.written.record.activityId,
  };
};

/** How the items' date words were read, for the items that were written (a refused item's words changed nothing). */
const notesFor = (notes: readonly (string | undefined)[], results: readonly ResultItem[], done: ResultItem['status']): string[] =>
  notes.flatMap((note, i) => (note && (results[i]?.status === done || results[i]?.status === 'unchanged') ? [note] : []));

// ---- tasks_create -------------------------------------------------------------------------------

export const tasksCreate = defineTool({
  name: 'tasks_create',
  title: 'Create several tasks',
  description:
    'Creates 1-50 tasks (the fields of task_create each); @2 names the task of item 2. ' +
    'Each is created or refused on its own; the answer lists each item in order with its key.',
  input: z.strictObject({ tasks: listedArray(z.record(z.string(), z.unknown()), 'tasks to create') }),
  listedInput: z.strictObject({ tasks: listedArray(createItem, 'tasks to create') }),
  itemsDescribe: ['blockedBy', 'parent'],
  output: bulkOutput,
  // Each item's outcome is what a client acts on: listed whole.
  listedOutput: bulkOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  itemsOf: (args) => args.tasks.length,
  run: async (args, ctx) => {
    const { principal, services } = ctx;
    requireRole(principal, 'member', 'creating tasks');
    const callId = newActivityId(ctx.now);
    const results: ResultItem[] = new Array(args.tasks.length);
    const parsed = args.tasks.map((raw) => parseItem(createItem, raw));
    const notes: (string | undefined)[] = [];
    // Each item's task id, known before any is written, so a later item can name an earlier one (@n).
    const ids = parsed.map((p) => (p.ok ? randomUUID() : undefined));
    const resolved = await Promise.all(
      parsed.map(async (p, i) => {
        if (!p.ok) {
          results[i] = refused(i + 1, p.reason);
          return undefined;
        }
        try {
          const due = await readWords(p.value, principal, ctx.now, `item ${i + 1} `);
          const told = await readTellings(services, principal, ctx.now, due.fields, undefined, `item ${i + 1} `);
          const note = joinNotes(due.note, told.note);
          if (note) notes[i] = note;
          const [fields, refs] = await Promise.all([
            readFieldValues(services, principal, told.fields, undefined, `item ${i + 1} `),
            resolveTaskRefs(services, principal, p.value, { position: i, idOf: (n) => ids[n] }),
          ]);
          return { i, fields, refs };
        } catch (err) {
          results[i] = refused(i + 1, reasonOf(err as Error));
          return undefined;
        }
      }),
    );
    // An earlier item named, as the rules see it before it is stored: new, open, at the place its own parent gives it.
    const stubOf = (j: number): Task => {
      const parentId = resolved[j]?.refs.parent?.ids[0];
      return { taskId: ids[j]!, status: 'open', labels: [], version: 1, ...(parentId ? { parentId } : {}) } as unknown as Task;
    };
    const items = resolved.map((r) => {
      if (!r) return undefined;
      const { i, fields, refs } = r;
      const named = [...(refs.blockedBy?.items ?? []), ...(refs.parent?.items ?? [])];
      // The parent's own earlier parents too: the levels are counted through them.
      const fresh = new Map<string, Task>();
      const add = (j: number) => {
        if (fresh.has(ids[j]!)) return;
        fresh.set(ids[j]!, stubOf(j));
        const up = resolved[j]?.refs.parent?.items[0];
        if (up !== undefined) add(up);
      };
      for (const j of named) add(j);
      const refOf = refOfBoth(refs);
      return {
        i,
        item: {
          fields: { ...newTaskOf(principal, fields, refs.blockedBy, refs.parent), taskId: ids[i]! },
          recordId: bulkItemId(callId, i),
          ...(named.length || refOf ? { after: [...new Set(named)], plan: { ...(refOf ? { refOf } : {}), fresh } } : {}),
        },
      };
    });
    // An item naming an earlier item refused before any write is refused too, before anything is written.
    const live: NonNullable<(typeof items)[number]>[] = [];
    for (const x of items) {
      if (!x) continue;
      const missing = (x.item.after ?? []).find((j) => !live.some((l) => l.i === j));
      if (missing !== undefined)
        results[x.i] = refused(x.i + 1, `@${missing + 1} (item ${missing + 1}) is not created, so this task cannot name it.`);
      else live.push(x);
    }
    const outcomes = await createTasks(
      writeContext(ctx),
      live.map((x) => ({ ...x.item, after: (x.item.after ?? []).map((j) => live.findIndex((l) => l.i === j)) })),
    );
    for (const [j, x] of live.entries()) {
      const o = outcomes[j]!;
      results[x.i] = o.ok ? written(principal.workspaceKey, x.i + 1, o, 'created') : refused(x.i + 1, reasonOf(o.error));
    }
    const anyDone = results.some((r) => r.status === 'created');
    return {
      summary: summaryOf('Created', results),
      ...(anyDone ? { activityId: callId } : {}),
      items: results,
      textNotes: notesFor(notes, results, 'created'),
    };
  },
  render,
});

// ---- tasks_update -------------------------------------------------------------------------------

export const tasksUpdate = defineTool({
  name: 'tasks_update',
  title: 'Change several tasks',
  description:
    'Changes 1-50 tasks: each entry a task key, optionally the version read, the fields of task_update. ' +
    'Each is changed or refused on its own.',
  input: z.strictObject({ tasks: listedArray(z.record(z.string(), z.unknown()), 'changes') }),
  listedInput: z.strictObject({ tasks: listedArray(updateItem, 'changes') }),
  itemsDescribe: ['taskId', 'version'],
  output: bulkOutput,
  // Each item's outcome is what a client acts on: listed whole.
  listedOutput: bulkOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  itemsOf: (args) => args.tasks.length,
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'changing tasks');
    const callId = newActivityId(ctx.now);
    const results: ResultItem[] = new Array(args.tasks.length);
    const notes: (string | undefined)[] = [];
    // Each entry's fields, and the task it names (keys resolved; all tasks read in one request).
    const entries = await Promise.all(
      args.tasks.map(async (raw, i) => {
        const p = parseItem(updateItem, raw);
        if (!p.ok) {
          results[i] = refused(i + 1, p.reason);
          return undefined;
        }
        const { taskId: ref, version, watch, ...given } = p.value;
        if (!namesAField(given) && watch === undefined) {
          results[i] = refused(i + 1, nothingToChange().message);
          return undefined;
        }
        try {
          const { fields, note } = await readWords(given, principal, ctx.now, `item ${i + 1} `);
          if (note) notes[i] = note;
          const [taskId, refs] = await Promise.all([
            services.numbers.idOrRefuse(principal, ref, 'taskId'),
            resolveTaskRefs(services, principal, fields),
          ]);
          return { i, ref, version, fields, refs, refOf: refOfBoth(refs), taskId, watch };
        } catch (err) {
          results[i] = refused(i + 1, reasonOf(err as Error));
          return undefined;
        }
      }),
    );
    const live = entries.filter((e): e is NonNullable<typeof e> => e !== undefined);
    // One task twice in one call: which change should win is not for the server to guess.
    const seen = new Map<string, number[]>();
    for (const e of live) seen.set(e.taskId, [...(seen.get(e.taskId) ?? []), e.i + 1]);
    // Whole (with their notes): each is the "before" of its change.
    const tasks = live.length
      ? await services.tasks.getMany(principal.workspaceId, [...seen.keys()], { notes: true })
      : new Map<string, Task>();
    const go = live.filter((e) => {
      const n = e.i + 1;
      const twins = seen.get(e.taskId)!;
      const task = tasks.get(e.taskId);
      if (twins.length > 1) results[e.i] = refused(n, twiceInOneCall(twins, e.ref).message);
      else if (!task) results[e.i] = refused(n, taskNotFound(e.ref).message);
      else if (task.deletedAt) results[e.i] = refused(n, taskDeleted(e.ref, task.deletedAt).message, { taskId: task.taskId });
      else return true;
      return false;
    });
    // Mentions and reminders are read against the task each entry changes (a reminder before its due date).
    const ready = (
      await Promise.all(
        go.map(async (e) => {
          try {
            const task = tasks.get(e.taskId)!;
            const told = await readTellings(services, principal, ctx.now, e.fields, task, `item ${e.i + 1} `);
            const withValues = await readFieldValues(services, principal, told.fields, task, `item ${e.i + 1} `);
            const key = taskNameOf(principal.workspaceKey, task);
            const note = joinNotes(notes[e.i], told.note, e.watch === undefined ? undefined : watchNote(key, e.watch));
            if (note) notes[e.i] = note;
            return { ...e, patch: patchOf(principal, withValues, e.refs.blockedBy, e.refs.parent), left: withValues.fieldsLeft };
          } catch (err) {
            results[e.i] = refused(e.i + 1, reasonOf(err as Error));
            return undefined;
          }
        }),
      )
    ).filter((e) => e !== undefined);
    const outcomes = await changeTasks(
      writeContext(ctx),
      ready.map((e) => ({
        before: tasks.get(e.taskId)!,
        patch: e.patch,
        opts: {
          recordId: bulkItemId(callId, e.i),
          ...(e.version !== undefined ? { expectVersion: e.version } : {}),
          ...(e.refOf ? { plan: { refOf: e.refOf } } : {}),
          ...(e.watch !== undefined ? { watch: e.watch } : {}),
        },
      })),
    );
    for (const [j, e] of ready.entries()) {
      const o = outcomes[j]!;
      const task = tasks.get(e.taskId)!;
      const left = o.ok && 'written' in o ? leftBehindNote(o.written.fieldsLeft ?? e.left, `item ${e.i + 1} `) : undefined;
      if (left) notes[e.i] = joinNotes(notes[e.i], left);
      results[e.i] = o.ok
        ? written(principal.workspaceKey, e.i + 1, o, 'updated')
        : refused(e.i + 1, reasonOf(o.error), {
            ...keyField(principal.workspaceKey, task.number),
            taskId: task.taskId,
            ...(o.error instanceof ToolRefusal && o.error.reason === 'version-conflict' ? { version: task.version } : {}),
          });
    }
    const anyDone = results.some((r) => r.status === 'updated');
    return {
      summary: summaryOf('Changed', results),
      ...(anyDone ? { activityId: callId } : {}),
      items: results,
      textNotes: notesFor(notes, results, 'updated'),
    };
  },
  render,
});

export const BULK_TOOLS = [tasksCreate, tasksUpdate];
