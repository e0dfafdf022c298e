import * as z from 'zod/mini';
import { ToolRefusal } from '../../errors.js';
import { describeIssues } from '../../mcp/json-schema.js';
import type { ToolContext } from '../../mcp/tool-registry.js';
import { isTransientDynamoError } from '../../platform/dynamodb.js';
import type { WriteOp } from '../../platform/transact.js';
import { bulkItemId, newActivityId } from '../activity.js';
import { sourceOf, taskRecord } from '../changes.js';
import { defineTool } from '../define-tool.js';
import { requireRole } from '../membership.js';
import type { Task } from '../model.js';
import { blockedByArg, dateArg, idArg, labelArg, priorityArg, taskRefArg, timeArg, versionArg } from '../schemas.js';
import type { WorkspaceServices } from '../services.js';
import { type PlannedTask, plannedChange, plannedNewTask, taskWriteOps } from '../task-changes.js';
import { CounterMoved, keyField, withNewNumbers } from '../task-numbers.js';
import { CREATE, UPDATE } from './annotations.js';

/**
 * Many tasks in one call: each item succeeds or fails on its own, and the answer lists every item in
 * the order given. Writes go in as few transactions as fit (DynamoDB takes 100 actions in one), each
 * item all or nothing with its activity record; the call's id (`act_…`) undoes every item that
 * still can, each item's own id (`act_….07`) just that one.
 */

export const MAX_ITEMS = 50;

const titleArg = z.string().check(z.trim(), z.minLength(1), z.maxLength(300));
const notesArg = z.string().check(z.maxLength(10_000));
const labelsArg = z.array(labelArg).check(z.maxLength(10));
const whoArg = z.string().check(z.minLength(1), z.maxLength(100));

const createItem = z.strictObject({
  title: titleArg,
  notes: z.optional(notesArg),
  priority: z._default(priorityArg, 'P4'),
  dueDate: z.optional(dateArg),
  dueTime: z.optional(timeArg),
  assignee: z.optional(whoArg),
  projectId: z.optional(idArg('project')),
  labels: z.optional(labelsArg),
  blockedBy: z.optional(blockedByArg),
});

const updateItem = z.strictObject({
  taskId: taskRefArg,
  version: z.optional(versionArg).check(z.describe('If given, must be current')),
  title: z.optional(titleArg),
  notes: z.optional(z.nullable(notesArg)),
  priority: z.optional(priorityArg),
  dueDate: z.optional(z.nullable(dateArg)),
  dueTime: z.optional(z.nullable(timeArg)),
  assignee: z.optional(z.nullable(whoArg)),
  projectId: z.optional(z.nullable(idArg('project'))),
  labels: z.optional(labelsArg),
  blockedBy: z.optional(blockedByArg),
  status: z.optional(z.enum(['open', 'done'])).check(z.describe('done or open')),
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
  reason: z.optional(z.string().check(z.describe('Why it was refused, naming the field'))),
  activityId: z.optional(z.string()),
});
type ResultItem = z.output<typeof resultItem>;

const bulkOutput = z.object({
  summary: z.string(),
  activityId: z.optional(z.string().check(z.describe("The call's id: change_undo of it undoes every item that still can"))),
  items: z.array(resultItem),
});

/** A refusal as an item's reason; anything else is the call's failure (a 5xx, no internals). */
const reasonOf = (err: unknown): string => {
  if (err instanceof ToolRefusal) return err.message;
  if (isTransientDynamoError(err)) {
    return 'Not confirmed: the database was too busy or did not answer in time, so this item may not have been written; read it before retrying.';
  }
  throw err;
};

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
        : `- ${i.item}: ${i.status} ${i.key ?? `[${i.taskId}]`}${i.title ? ` ${i.title}` : ''} · v${i.version}`,
    ),
    ...(r.activityId ? [`Undo all: change_undo ${r.activityId}`] : []),
  ].join('\n');

// ---- tasks_create -------------------------------------------------------------------------------

/** Item fields as the schema parses them, or the refusal naming the field. */
const parseItem = <T extends z.core.$ZodType>(schema: T, raw: unknown, n: number): z.output<T> | ResultItem => {
  const parsed = z.safeParse(schema, raw);
  return parsed.success ? parsed.data : refused(n, describeIssues(parsed.error));
};
const isResult = (v: unknown): v is ResultItem => typeof v === 'object' && v !== null && (v as ResultItem).status === 'refused';

/** Actions one created task takes: the task, its number's claim, its record, and its blockers' side. */
const actionsOf = (p: PlannedTask): number => 3 + (p.blockers?.tasks.size ?? 0);

export const tasksCreate = defineTool({
  name: 'tasks_create',
  title: 'Create several tasks',
  description:
    'Creates 1 to 50 tasks in one call (the fields of task_create each), e.g. from notes or a list. Each is created or refused on its ' +
    'own; the answer lists every item in order with its key, or the refusal naming the field.',
  input: z.strictObject({ tasks: listedArray(z.record(z.string(), z.unknown()), 'tasks to create') }),
  listedInput: z.strictObject({ tasks: listedArray(createItem, 'tasks to create') }),
  output: bulkOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  itemsOf: (args) => args.tasks.length,
  run: async (args, ctx) => {
    const { principal } = ctx;
    requireRole(principal, 'member', 'creating tasks');
    const callId = newActivityId(ctx.now);
    const results: ResultItem[] = [];
    const planned: { n: number; p: PlannedTask }[] = [];
    await Promise.all(
      args.tasks.map(async (raw, i) => {
        const fields = parseItem(createItem, raw, i + 1);
        if (isResult(fields)) {
          results[i] = fields;
          return;
        }
        try {
          planned.push({ n: i, p: await plannedNewTask(ctx, fields, `item ${i + 1} `) });
        } catch (err) {
          results[i] = refused(i + 1, reasonOf(err));
        }
      }),
    );
    planned.sort((a, b) => a.n - b.n);
    // Numbers in input order; a transaction holds as many as fit (its own counter move first).
    for (const chunk of chunks(planned, (x) => actionsOf(x.p), 99)) {
      const outcome = await createChunk(ctx, callId, chunk);
      for (const [j, r] of outcome.entries()) results[chunk[j]!.n] = r;
    }
    const anyDone = results.some((r) => r.status !== 'refused');
    return { summary: summaryOf('Created', results), ...(anyDone ? { activityId: callId } : {}), items: results };
  },
  render,
});

/** Splits in order into runs whose weights fit `max`. */
const chunks = <T>(items: readonly T[], weight: (t: T) => number, max: number): T[][] => {
  const out: T[][] = [];
  let run: T[] = [];
  let size = 0;
  for (const t of items) {
    if (run.length && size + weight(t) > max) {
      out.push(run);
      run = [];
      size = 0;
    }
    run.push(t);
    size += weight(t);
  }
  if (run.length) out.push(run);
  return out;
};

/**
 * One transaction of creates: numbers first … first + k - 1 and all items, or none. If it fails for
 * something else than the counter (a blocker changed meanwhile), each item is tried on its own, so
 * only the one at fault is refused.
 */
const createChunk = async (ctx: ToolContext<WorkspaceServices>, callId: string, chunk: readonly { n: number; p: PlannedTask }[]) => {
  const { services, principal } = ctx;
  const write = (items: readonly { n: number; p: PlannedTask }[]) =>
    withNewNumbers(services.numbers, principal, items.length, async (first, counterAndClaims) => {
      const numbered = items.map(({ n, p }, j) => ({ n, p: { ...p, next: { ...p.next, number: first + j } } }));
      const records = numbered.map(({ n, p }) =>
        taskRecord(services, sourceOf(ctx), 'created', undefined, p.next, {}, bulkItemId(callId, n)),
      );
      await services.commit([
        ...counterAndClaims(numbered.map(({ p }) => p.next.taskId)),
        ...numbered.flatMap(({ p }, j) => [...taskWriteOps(services, undefined, p), services.activity.recordOp(records[j]!)]),
      ]);
      return numbered.map(({ n, p }, j): ResultItem => {
        services.numbers.remember(p.next.workspaceId, p.next.number, p.next.taskId);
        return {
          item: n + 1,
          status: 'created',
          ...keyField(principal.workspaceKey, p.next.number),
          taskId: p.next.taskId,
          title: p.next.title,
          version: 1,
          activityId: records[j]!.activityId,
        };
      });
    });
  try {
    return await write(chunk);
  } catch (err) {
    if (err instanceof CounterMoved) throw err;
    if (chunk.length === 1) return [refused(chunk[0]!.n + 1, reasonOf(err))];
    const one: ResultItem[] = [];
    for (const item of chunk) {
      try {
        one.push(...(await write([item])));
      } catch (e) {
        one.push(refused(item.n + 1, reasonOf(e)));
      }
    }
    return one;
  }
};

// ---- tasks_update -------------------------------------------------------------------------------

export const tasksUpdate = defineTool({
  name: 'tasks_update',
  title: 'Change several tasks',
  description:
    'Changes 1 to 50 tasks in one call: each entry a task key or id, optionally the version read, and the fields of task_update, ' +
    'plus status done/open to complete or reopen. Each is changed or refused on its own (conflict, not found, role, field).',
  input: z.strictObject({ tasks: listedArray(z.record(z.string(), z.unknown()), 'changes') }),
  listedInput: z.strictObject({ tasks: listedArray(updateItem, 'changes') }),
  output: bulkOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  itemsOf: (args) => args.tasks.length,
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'changing tasks');
    const callId = newActivityId(ctx.now);
    const results: ResultItem[] = [];
    // Each entry's fields, and the task it names (keys resolved; all tasks read in one request).
    const entries = await Promise.all(
      args.tasks.map(async (raw, i) => {
        const fields = parseItem(updateItem, raw, i + 1);
        if (isResult(fields)) {
          results[i] = fields;
          return;
        }
        const { taskId: ref, version, ...changes } = fields;
        if (Object.values(changes).every((v) => v === undefined)) {
          results[i] = refused(i + 1, 'arguments: name at least one field to change.');
          return;
        }
        try {
          return { i, ref, version, changes, taskId: await services.numbers.idOrRefuse(principal, ref, `item ${i + 1} taskId`) };
        } catch (err) {
          results[i] = refused(i + 1, reasonOf(err));
        }
      }),
    );
    const live = entries.filter((e): e is NonNullable<typeof e> => e !== undefined);
    // One task twice in one call: which change should win is not for the server to guess.
    const seen = new Map<string, number[]>();
    for (const e of live) seen.set(e.taskId, [...(seen.get(e.taskId) ?? []), e.i + 1]);
    const tasks = live.length ? await services.tasks.getMany(principal.workspaceId, [...seen.keys()]) : new Map<string, Task>();
    const groups: { e: (typeof live)[number]; task: Task; planned: PlannedTask; ops: WriteOp[]; recordId: string }[] = [];
    await Promise.all(
      live.map(async (e) => {
        const n = e.i + 1;
        const twins = seen.get(e.taskId)!;
        if (twins.length > 1) {
          results[e.i] = refused(n, `items ${twins.join(' and ')} both name ${e.ref}; give each task once.`);
          return;
        }
        const task = tasks.get(e.taskId);
        if (!task || task.deletedAt) {
          results[e.i] = refused(n, `taskId: ${e.ref} was ${task ? 'deleted' : 'not found in this workspace'}.`);
          return;
        }
        const key = keyField(principal.workspaceKey, task.number);
        if (e.version !== undefined && e.version !== task.version) {
          results[e.i] = refused(
            n,
            `version: conflict, ${e.ref} is at version ${task.version}, not ${e.version}; read it again and retry with version ${task.version}.`,
            { ...key, taskId: task.taskId, version: task.version },
          );
          return;
        }
        try {
          const planned = await plannedChange(ctx, task, e.changes, `item ${n} `);
          if (!planned) {
            results[e.i] = {
              item: n,
              status: 'unchanged',
              ...key,
              taskId: task.taskId,
              title: task.title,
              version: task.version,
            };
            return;
          }
          const action = planned.next.status !== task.status ? (planned.next.status === 'done' ? 'completed' : 'reopened') : 'changed';
          const recordId = bulkItemId(callId, e.i);
          const record = taskRecord(services, sourceOf(ctx), action, task, planned.next, {}, recordId);
          groups.push({ e, task, planned, recordId, ops: [...taskWriteOps(services, task, planned), services.activity.recordOp(record)] });
        } catch (err) {
          results[e.i] = refused(n, reasonOf(err), { ...key, taskId: task.taskId });
        }
      }),
    );
    groups.sort((a, b) => a.e.i - b.e.i);
    const outcomes = await services.commitEach(groups.map((g) => g.ops));
    for (const [j, g] of groups.entries()) {
      const err = outcomes[j];
      const named = { ...keyField(principal.workspaceKey, g.task.number), taskId: g.task.taskId, title: g.planned.next.title };
      results[g.e.i] = err
        ? refused(g.e.i + 1, reasonOf(err), named)
        : { item: g.e.i + 1, status: 'updated', ...named, version: g.planned.next.version, activityId: g.recordId };
    }
    const anyDone = results.some((r) => r.status === 'updated');
    return { summary: summaryOf('Changed', results), ...(anyDone ? { activityId: callId } : {}), items: results };
  },
  render,
});

export const BULK_TOOLS = [tasksCreate, tasksUpdate];
