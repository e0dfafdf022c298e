import * as z from 'zod/mini';
import type { WithTextNotes } from '../../../mcp/tool-registry.js';
import { callBudget } from '../../../platform/call-budget.js';
import { requireOwnOrAdmin, requireRole } from '../../membership/rules.js';
import { dayInWords, readDay, readLine } from '../../model/date-words.js';
import { MAX_QUERY_LENGTH, type Sort, type SortField } from '../../model/query.js';
import {
  dueRangeReversed,
  nothingToChange,
  overdueOnlyOpen,
  queryWithFilters,
  versionConflict,
  viewNotFound,
} from '../../model/refusals.js';
import { categoryOfKey, DEFAULT_SET, phaseOf, readStatusFilter, type StatusFilter, setOf } from '../../model/statuses.js';
import { keyField, parseTaskRef, taskNameOf } from '../../model/task-refs.js';
import { dateInZone } from '../../model/time.js';
import type { Task } from '../../model/types.js';
import { queryOfView, VIEW_GROUPS } from '../../model/views.js';
import { loadNames, projectArgOrRefuse, resolveAssignee, taskIdOf, taskOrRefuse } from '../../store/lookups.js';
import type { Names } from '../../store/names.js';
import { attachmentsOf, subtaskEntriesOf, watchesOf } from '../../store/task-items.js';
import { inStates } from '../../store/task-queries.js';
import type { TaskPosition } from '../../store/task-store.js';
import { searchWords } from '../../store/words.js';
import { unblockedBy } from '../../tasks/links.js';
import { changeTask, changeTree, createTasks } from '../../tasks/task-writer.js';
import { readTree } from '../../tasks/trees.js';
import { watchersOf } from '../../tasks/watching.js';
import { ASKS_FIRST, confirmation, NOT_CONFIRMED, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { toSummary, toTaskOutput } from '../outputs.js';
import { cursorFor, positionFrom } from '../paging.js';
import { moreLine, taskBlock, taskLine, taskName, undoLine, writtenLine } from '../render.js';
import {
  activityIdOutput,
  changedTaskListed,
  dateArg,
  dateOut,
  labelArg,
  listFields,
  newTaskFields,
  pagingArgs,
  priorityArg,
  type TaskSummaryOutput,
  taskBriefListed,
  taskChangeFields,
  taskKeyOut,
  taskListed,
  taskOutput,
  taskRefArg,
  taskSummaryOutput,
  versionArg,
} from '../schemas.js';
import { writeContext } from '../sources.js';
import {
  joinNotes,
  leftBehindNote,
  namesAField,
  newTaskOf,
  notesOf,
  patchOf,
  readFieldValues,
  readTellings,
  readWords,
  refOfBoth,
  resolveTaskRefs,
  watchNote,
} from '../task-input.js';
import { customValueOf, planQuery } from '../task-query.js';
import { CREATE, READ, REMOVE, UPDATE } from './annotations.js';

/** A changed task's answer: what a list shows of it (its key, state and version), and its record. */
const changedTaskOutput = z.extend(taskSummaryOutput, activityIdOutput);

// ---- tasks_search -------------------------------------------------------------------------------

/** The fields of a summary a client may ask for alone (`fields`); key, taskId and title come always. */
const SUMMARY_FIELDS = ['status', 'priority', 'dueDate', 'assigneeName', 'projectName', 'labels', 'parent', 'version'] as const;

const searchInput = z.strictObject({
  query: z
    .optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_QUERY_LENGTH)))
    .check(z.describe('assignee:me -status:done due<friday sort:due … (or the filters below)')),
  view: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(100))).check(z.describe("A saved view's name or id")),
  text: z
    .optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200)))
    .check(z.describe('Words in title, labels or notes start; a key finds its task')),
  status: z
    .optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200)))
    .check(z.describe('open (default), done, any, or statuses/categories, comma-separated')),
  assignee: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('"me", "none", "anyone" or a userId')),
  project: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('A projectId or "none"')),
  label: z.optional(labelArg),
  priority: z.optional(priorityArg),
  dueBefore: z.optional(dateArg).check(z.describe('On or before')),
  dueAfter: z.optional(dateArg).check(z.describe('On or after')),
  overdue: z.optional(z.boolean()),
  blocked: z.optional(z.boolean()).check(z.describe('Waits on an open task')),
  recurring: z.optional(z.boolean()),
  parent: z.optional(taskRefArg).check(z.describe('Its subtasks')),
  topLevel: z.optional(z.boolean()).check(z.describe('Not a subtask')),
  fields: z
    .optional(z.array(z.enum(SUMMARY_FIELDS)).check(z.maxLength(SUMMARY_FIELDS.length)))
    .check(z.describe('Only these fields of each task (key, id and title always)')),
  ...pagingArgs,
});

/** The filters a query replaces: given with one, refused. */
const FILTER_ARGS = [
  'text',
  'status',
  'assignee',
  'project',
  'label',
  'priority',
  'dueBefore',
  'dueAfter',
  'overdue',
  'blocked',
  'recurring',
  'parent',
  'topLevel',
] as const;

const searchOutput = z.object({
  today: dateOut.check(z.describe("Today in the user's time zone")),
  ...listFields,
  partial: z.optional(z.boolean().check(z.describe('Sorted or read among the first matches only; narrow the query for all'))),
  view: z.optional(z.object({ viewId: z.string(), name: z.string(), group: z.enum(VIEW_GROUPS), query: z.string() })),
  // With `fields`, a task carries those and its key, id and title only.
  tasks: z.array(
    z.partial(
      taskSummaryOutput,
      Object.fromEntries(
        Object.keys(taskSummaryOutput._zod.def.shape)
          .filter((k) => k !== 'taskId' && k !== 'title')
          .map((k) => [k, true]),
      ) as {
        [K in Exclude<keyof typeof taskSummaryOutput._zod.def.shape, 'taskId' | 'title'>]: true;
      },
    ),
  ),
});

const isTaskPosition = (v: unknown): v is TaskPosition => {
  const p = v as TaskPosition | null;
  return (
    !!p &&
    typeof p === 'object' &&
    Number.isInteger(p.segment) &&
    p.segment >= -2 &&
    p.segment < 2 &&
    typeof p.taskId === 'string' &&
    typeof p.orderKey === 'string'
  );
};

export const tasksSearch = defineTool({
  name: 'tasks_search',
  title: 'Search tasks',
  description:
    // Narrowing rather than paging is the server's instructions' advice for every list.
    'Finds tasks by query (or the filters): summaries by due date then priority unless sorted, without notes (task_get has them).',
  input: searchInput,
  output: searchOutput,
  listedOutput: z.extend(searchOutput, { tasks: z.array(taskBriefListed) }),
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    if (args.query !== undefined || args.view !== undefined) return trimmed(await searchByQuery(args, ctx), args.fields);
    const { principal, services, now } = ctx;
    const today = dateInZone(now, principal.timeZone);
    const read = { now, timeZone: principal.timeZone, forward: true };
    const [dueAfter, dueBefore] = await Promise.all([
      args.dueAfter === undefined ? undefined : readDay(args.dueAfter, 'dueAfter', read),
      args.dueBefore === undefined ? undefined : readDay(args.dueBefore, 'dueBefore', read),
    ]);
    if (dueAfter && dueBefore && dueAfter.date > dueBefore.date) throw dueRangeReversed(dueAfter.date, dueBefore.date);
    const textNotes = [
      ...(dueAfter?.words ? [readLine('dueAfter', { ...dueAfter, time: undefined }, principal.timeZone)] : []),
      ...(dueBefore?.words ? [readLine('dueBefore', { ...dueBefore, time: undefined }, principal.timeZone)] : []),
    ];
    const after = await positionFrom(ctx, args, isTaskPosition);
    // An unknown project is refused like an unknown assignee, not answered "no tasks match".
    const [assigneeId, names, parentId, project] = await Promise.all([
      // "anyone" as agenda_get reads it: no filter.
      args.assignee === undefined || args.assignee === 'anyone'
        ? undefined
        : resolveAssignee(services, principal, args.assignee, 'assignee'),
      loadNames(services, principal),
      args.parent === undefined ? undefined : services.numbers.idOrRefuse(principal, args.parent, 'parent'),
      args.project === undefined || args.project === 'none' ? undefined : projectArgOrRefuse(services, principal, args.project, 'project'),
    ]);
    // Status names are the project's, or, across projects, any set's (a name finds its status in each).
    const sets = project ? [setOf(project)] : [DEFAULT_SET, ...[...names.projects.values()].filter((p) => p.statuses).map(setOf)];
    const asked = readStatusFilter(args.status ?? 'open', sets, 'status', (id) => setOf(id ? names.projects.get(id) : undefined));
    // Only open tasks are overdue: of the statuses asked, the open ones.
    const openAsked = asked.states?.filter((k) => phaseOf(categoryOfKey(k) ?? 'unstarted') === 'open');
    if (args.overdue && (asked.status === 'done' || openAsked?.length === 0)) throw overdueOnlyOpen();
    const statuses: StatusFilter = args.overdue
      ? { status: 'open', ...(openAsked ? { states: openAsked, shows: asked.shows } : {}) }
      : asked;
    // A key (`DEMO-42`, `#42`) as the text names that task; other text is searched by its words.
    const ref = args.text !== undefined ? parseTaskRef(args.text) : undefined;
    const keyed = ref && 'number' in ref ? await services.numbers.idOf(principal, args.text!, 'text').catch(() => undefined) : undefined;
    const words =
      keyed || args.text === undefined
        ? undefined
        : principal.layout === 2
          ? searchWords(args.text)
          : args.text.toLowerCase().split(/\s+/).filter(Boolean);
    if (keyed) {
      const task = await services.tasks.get(principal.workspaceId, keyed);
      const shown =
        task && (statuses.status === 'any' || task.status === statuses.status) && inStates(task, statuses.states, statuses.shows)
          ? [task]
          : [];
      return trimmed(
        { today, returned: shown.length, truncated: false, tasks: shown.map((t) => toSummary(t, names)), textNotes },
        args.fields,
      );
    }
    const page = await services.tasks.search(
      principal,
      {
        ...statuses,
        ...(words?.length ? { words } : {}),
        ...(assigneeId !== undefined ? { assigneeId } : {}),
        ...(args.project !== undefined ? { projectId: args.project === 'none' ? null : args.project } : {}),
        ...(args.label !== undefined ? { label: args.label } : {}),
        ...(args.priority !== undefined ? { priority: args.priority } : {}),
        ...(dueAfter !== undefined ? { dueOnOrAfter: dueAfter.date } : {}),
        ...(dueBefore !== undefined ? { dueOnOrBefore: dueBefore.date } : {}),
        ...(args.overdue ? { dueBefore: today } : {}),
        ...(args.blocked !== undefined ? { blocked: args.blocked } : {}),
        ...(args.recurring !== undefined ? { recurring: args.recurring } : {}),
        ...(parentId !== undefined ? { parentId } : {}),
        ...(args.topLevel !== undefined ? { topLevel: args.topLevel } : {}),
      },
      args.limit,
      after,
    );
    return trimmed(
      {
        today,
        returned: page.tasks.length,
        truncated: page.next !== undefined,
        ...(page.next ? { nextCursor: await cursorFor(ctx, args, page.next) } : {}),
        tasks: page.tasks.map((t) => toSummary(t, names)),
        textNotes,
      },
      args.fields,
    );
  },
  render: (r, reader) => {
    const head = r.view ? `View '${r.view.name}' (${r.view.query}): ` : '';
    const line = (t: (typeof r.tasks)[number]) =>
      'labels' in t && 'priority' in t && 'version' in t && 'status' in t
        ? taskLine(t as TaskSummaryOutput, r.today, { reader })
        : fieldsLine(t);
    const partial = r.partial ? '\n(Among the first matches only: narrow the query to see them all in this order.)' : '';
    return r.returned === 0
      ? r.truncated || r.partial
        ? `${head}No tasks match in what one call reads.${moreLine(r)}${r.partial && !r.truncated ? ' Narrow the query to reach further.' : ''}`
        : `${head}No tasks match.`
      : `${head}${r.returned} task(s):\n${r.tasks.map(line).join('\n')}${moreLine(r)}${partial}`;
  },
});

type SearchArgs = z.output<typeof searchInput>;
type SearchAnswer = WithTextNotes<Omit<z.input<typeof searchOutput>, 'tasks'> & { tasks: TaskSummaryOutput[] }>;

/** An answer with only the fields asked for of each task (all of them when `fields` is absent). */
const trimmed = (answer: SearchAnswer, fields: readonly (typeof SUMMARY_FIELDS)[number][] | undefined): SearchAnswer => {
  if (!fields) return answer;
  const keep = new Set<string>(['key', 'taskId', 'title', ...fields]);
  return {
    ...answer,
    tasks: answer.tasks.map((t) => Object.fromEntries(Object.entries(t).filter(([k]) => keep.has(k))) as TaskSummaryOutput),
  };
};

/** A task's line from the fields a client asked for. */
const fieldsLine = (t: Readonly<Record<string, unknown>> & { title: string; taskId: string; key?: string | undefined }): string => {
  const rest = Object.entries(t)
    .filter(([k]) => k !== 'key' && k !== 'taskId' && k !== 'title')
    .map(([k, v]) => `${k} ${Array.isArray(v) ? v.map((x) => (typeof x === 'object' ? (x.key ?? x.taskId) : x)).join(', ') : v}`);
  return `- ${t.key ?? `[${t.taskId}]`} ${t.title}${rest.length ? ` · ${rest.join(' · ')}` : ''}`;
};

/** Matches read to sort in an order no list keeps (priority, created, title…): the first this many, sorted. */
const SORT_WINDOW = 50;
/** A sort reads further pages while the call has read fewer units than this (the per-page budget of every read). */
const SORT_READ_UNITS = 40;

const cmp = (a: string | number | undefined, b: string | number | undefined): number =>
  a === b ? 0 : a === undefined ? 1 : b === undefined ? -1 : a < b ? -1 : 1;

/** The value each sort orders tasks by. */
const SORT_VALUE: Readonly<Record<SortField, (t: Task) => string | number | undefined>> = {
  due: (t) => t.dueDate,
  priority: (t) => t.priority,
  created: (t) => t.createdAt,
  updated: (t) => t.updatedAt,
  completed: (t) => t.completedAt,
  title: (t) => t.title.toLocaleLowerCase(),
  key: (t) => t.number ?? 0,
};

/** The order `sort` asks for; ties by due date, then priority, then key. */
const sortOrder = (sort: Sort, names: Names): ((a: Task, b: Task) => number) => {
  // A custom field: each task's value of the field of that name in its own project (a list: its first).
  const by =
    sort.by === 'field'
      ? (t: Task) => {
          const v = customValueOf(t, names, sort.field!);
          return Array.isArray(v) ? v[0] : (v as string | number | undefined);
        }
      : SORT_VALUE[sort.by];
  const sign = sort.desc ? -1 : 1;
  // A task without the value comes last in either direction.
  const directed = (a: Task, b: Task): number => {
    const [x, y] = [by(a), by(b)];
    return x === undefined || y === undefined ? cmp(x, y) : sign * cmp(x, y);
  };
  return (a, b) => directed(a, b) || cmp(a.dueDate, b.dueDate) || cmp(a.priority, b.priority) || cmp(a.number ?? 0, b.number ?? 0);
};

/** A search by query or by saved view (surface/task-query.ts plans it). */
const searchByQuery = async (args: SearchArgs, ctx: Parameters<typeof writeContext>[0]): Promise<SearchAnswer> => {
  const { principal, services, now } = ctx;
  const given: string[] = FILTER_ARGS.filter((k) => args[k] !== undefined);
  if (args.query !== undefined && args.view !== undefined) given.unshift('view');
  if (given.length) throw queryWithFilters(given);
  const today = dateInZone(now, principal.timeZone);
  const [names, view] = await Promise.all([
    loadNames(services, principal),
    args.view === undefined ? undefined : services.views.find(principal.workspaceId, principal.userId, args.view),
  ]);
  if (args.view !== undefined && !view) throw viewNotFound(args.view);
  const query = view ? queryOfView(view) : args.query!;
  const plan = await planQuery(services, principal, names, now, query);
  const shown = view ? { view: { viewId: view.viewId, name: view.name, group: view.group, query } } : {};
  const answer = (tasks: readonly Task[], more: { nextCursor?: string; partial?: boolean } = {}): SearchAnswer => ({
    today,
    returned: tasks.length,
    truncated: more.nextCursor !== undefined,
    ...more,
    ...shown,
    tasks: tasks.map((t) => toSummary(t, names)),
    textNotes: plan.notes,
  });
  const keep = plan.filter.residual!;
  if (plan.taskIds) {
    const found = await Promise.all(plan.taskIds.map((id) => services.tasks.get(principal.workspaceId, id)));
    const tasks = found.filter((t): t is Task => !!t && !t.deletedAt && keep(t));
    return answer(plan.sort ? [...tasks].sort(sortOrder(plan.sort, names)) : tasks);
  }
  const native =
    !plan.sort ||
    (plan.sort.by === 'due' && !plan.sort.desc) ||
    (plan.sort.by === 'completed' && plan.sort.desc && plan.filter.status === 'done');
  if (!native) {
    // The first SORT_WINDOW matches, page after page while the call has read units to spare.
    const matches: Task[] = [];
    let next: TaskPosition | undefined;
    do {
      const page = await services.tasks.search(principal, plan.filter, SORT_WINDOW - matches.length, next);
      matches.push(...page.tasks);
      next = page.next;
    } while (next && matches.length < SORT_WINDOW && (callBudget()?.readUnits ?? 0) < SORT_READ_UNITS);
    const sorted = matches.sort(sortOrder(plan.sort!, names));
    const partial = next !== undefined || sorted.length > args.limit;
    return answer(sorted.slice(0, args.limit), partial ? { partial: true } : {});
  }
  // The cursor is bound to what the view ran: a view changed between pages refuses it (call again without).
  const bound = view ? { ...args, viewQuery: query } : args;
  const after = await positionFrom(ctx, bound, isTaskPosition);
  const page = await services.tasks.search(principal, plan.filter, args.limit, after);
  return answer(page.tasks, {
    ...(page.next ? { nextCursor: await cursorFor(ctx, bound, page.next) } : {}),
    ...(page.cut ? { partial: true } : {}),
  });
};

// ---- task_get -----------------------------------------------------------------------------------

export const taskGet = defineTool({
  name: 'task_get',
  title: 'Read a task',
  description: 'One whole task, notes and links included, with its version.',
  input: z.strictObject({ taskId: taskRefArg }),
  output: taskOutput,
  listedOutput: taskListed,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, { services, principal }) => {
    // The task and the names it shows are fetched together: one round trip, not two.
    const [t, names] = await Promise.all([taskOrRefuse(services, principal, args.taskId), loadNames(services, principal)]);
    return toTaskOutput(t, names, subtaskEntriesOf(t), attachmentsOf(t), watchersOf(t, watchesOf(t) ?? []));
  },
  render: taskBlock,
});

// ---- task_create --------------------------------------------------------------------------------

export const taskCreate = defineTool({
  name: 'task_create',
  title: 'Create a task',
  description: 'Creates a task and returns its key; calling it twice makes two (tasks_create makes many).',
  input: z.strictObject(newTaskFields),
  output: changedTaskOutput,
  listedOutput: changedTaskListed,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'creating a task');
    const due = await readWords(args, principal, ctx.now);
    const [told, refs] = await Promise.all([
      readTellings(services, principal, ctx.now, due.fields).then(async (t) => ({
        ...t,
        fields: await readFieldValues(services, principal, t.fields),
      })),
      resolveTaskRefs(services, principal, args),
    ]);
    const refOf = refOfBoth(refs);
    const [names, [outcome]] = await Promise.all([
      loadNames(services, principal),
      createTasks(writeContext(ctx), [
        { fields: newTaskOf(principal, told.fields, refs.blockedBy, refs.parent), ...(refOf ? { plan: { refOf } } : {}) },
      ]),
    ]);
    if (!outcome!.ok) throw outcome!.error;
    const written = 'written' in outcome! ? outcome!.written : undefined;
    return { ...toSummary(written!.task, names), activityId: written!.record.activityId, ...notesOf(joinNotes(due.note, told.note)) };
  },
  render: (t, reader) => `Created: ${writtenLine(t, reader)}${undoLine(t.activityId)}`,
});

// ---- task_update --------------------------------------------------------------------------------

export const taskUpdate = defineTool({
  name: 'task_update',
  title: 'Change a task',
  description:
    'Changes fields of a task; give only what changes and the version read (a stale one is a conflict). tasks_update changes many.',
  input: z.strictObject({ taskId: taskRefArg, version: versionArg.check(z.describe('The version read')), ...taskChangeFields }),
  output: changedTaskOutput,
  listedOutput: changedTaskListed,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'changing a task');
    const { taskId, version, watch, ...given } = args;
    if (!namesAField(given) && watch === undefined) throw nothingToChange();
    const read = await readWords(given, principal, ctx.now);
    const [task, refs] = await Promise.all([taskOrRefuse(services, principal, taskId), resolveTaskRefs(services, principal, read.fields)]);
    const { fields: toldFields, note: told } = await readTellings(services, principal, ctx.now, read.fields, task);
    const fields = await readFieldValues(services, principal, toldFields, task);
    const note = joinNotes(read.note, told, watch === undefined ? undefined : watchNote(taskNameOf(principal.workspaceKey, task), watch));
    const refOf = refOfBoth(refs);
    const [names, written] = await Promise.all([
      loadNames(services, principal),
      changeTask(writeContext(ctx), task, patchOf(principal, fields, refs.blockedBy, refs.parent), {
        expectVersion: version,
        ...(refOf ? { plan: { refOf } } : {}),
        ...(watch !== undefined ? { watch } : {}),
      }),
    ]);
    if (!written) return { ...toSummary(task, names), ...notesOf(note) };
    const left = leftBehindNote(written.fieldsLeft ?? fields.fieldsLeft);
    return { ...toSummary(written.task, names), activityId: written.record.activityId, ...notesOf(joinNotes(note, left)) };
  },
  render: (t, reader) =>
    t.activityId
      ? `Updated: ${writtenLine(t, reader)}${undoLine(t.activityId)}`
      : `Unchanged (it was so already): ${writtenLine(t, reader)}`,
});

// ---- task_complete / task_reopen ----------------------------------------------------------------

const stateInput = z.strictObject({
  taskId: taskRefArg,
  version: z.optional(versionArg).check(z.describe('Checked if given')),
});

const completeInput = z.extend(stateInput, {
  withSubtasks: z.optional(z.boolean()).check(z.describe('Completes its open subtasks too')),
});

const completedExtras = {
  doneFor: z.optional(dateOut),
  openSubtasks: z.optional(z.array(z.string()).check(z.describe('Subtasks left open'))),
  completedSubtasks: z.optional(z.array(z.string())),
  unblocked: z.optional(z.array(z.object({ key: z.optional(z.string()), taskId: z.string(), title: z.string() }))),
};
const completedOutput = z.extend(changedTaskOutput, completedExtras);
const completedListed = z.extend(changedTaskListed, completedExtras);

/** Completes or reopens: the writer moves what waits on it in the same write. */
const setStatus = async (ctx: Parameters<typeof writeContext>[0], args: z.output<typeof completeInput>, status: Task['status']) => {
  const { services, principal } = ctx;
  requireRole(principal, 'member', status === 'done' ? 'completing a task' : 'reopening a task');
  const task = await taskOrRefuse(services, principal, args.taskId);
  // Who waits on it and is free once it is done: read with the change (only when anyone waits on it).
  // A recurring task stays open at its next occurrence, so what waits on it waits still (but after its last).
  const freeing = status === 'done' && task.status !== 'done';
  const expect = args.version !== undefined ? { expectVersion: args.version } : {};
  // Its open subtasks: completed with it in the same write when asked, else named in the answer.
  const wctx = writeContext(ctx);
  const open = (subtaskEntriesOf(task) ?? []).filter((s) => s.status === 'open');
  if (args.version !== undefined && args.version !== task.version)
    throw versionConflict(`task ${taskNameOf(principal.workspaceKey, task)}`, task.version, args.version, 'task_get');
  // Read without notes, once its counts say the tree can be completed in one write.
  const subtree = status === 'done' && args.withSubtasks && open.length ? await readTree(wctx, task, 'complete', 'withSubtasks') : [];
  const [names, tree, early] = await Promise.all([
    loadNames(services, principal),
    // Completing sets the first done status (a canceled task too); reopening, the first unstarted one.
    changeTree(wctx, task, subtree, status === 'done' ? { status, state: 'done' } : { status }, { ...expect, param: 'withSubtasks' }),
    freeing && !task.repeat ? unblockedBy(services, principal, task) : Promise.resolve([]),
  ]);
  // The task's own write (a parent done already changes only its subtasks), and its subtasks'.
  const written = tree?.written.find((w) => w.task.taskId === task.taskId);
  const others = tree?.written.filter((w) => w.task.taskId !== task.taskId) ?? [];
  const keyOf = (n: number | undefined, id: string) => (n && principal.workspaceKey ? `${principal.workspaceKey}-${n}` : `[${id}]`);
  const left = status === 'done' && !subtree.length && open.length ? { openSubtasks: open.map((s) => keyOf(s.number, s.taskId)) } : {};
  const withIt = others.length ? { completedSubtasks: others.map((w) => keyOf(w.task.number, w.task.taskId)) } : {};
  if (!written) return { ...toSummary(task, names), ...left, ...withIt, ...(tree?.callId ? { activityId: tree.callId } : {}) };
  // What waited on it and is free now, but not its own subtasks completed with it.
  const freed = (freeing && task.repeat && written.task.status === 'done' ? await unblockedBy(services, principal, task) : early).filter(
    (t) => !others.some((w) => w.task.taskId === t.taskId),
  );
  return {
    ...toSummary(written.task, names),
    ...(written.record.occurrence ? { doneFor: written.record.occurrence } : {}),
    ...left,
    ...withIt,
    ...(freed.length
      ? { unblocked: freed.map((t) => ({ ...keyField(principal.workspaceKey, t.number), taskId: t.taskId, title: t.title })) }
      : {}),
    activityId: tree!.callId ?? written.record.activityId,
  };
};

/**
 * How a completion reads: done, done for an occurrence, done already; or, for a task left open and
 * unchanged (a rule counted from each completion, completed again the same day, gives the same next
 * occurrence), that nothing changed and why.
 */
const completionWords = (t: z.output<typeof completedOutput>): string => {
  if (t.doneFor) return `Done for ${dayInWords(t.doneFor)}, next due ${dayInWords(t.dueDate!)}`;
  if (t.activityId) return 'Done';
  if (t.statusCategory === 'done' || t.statusCategory === 'canceled') return 'Done already';
  return `Nothing changed: it is open at its next occurrence${t.dueDate ? ` (due ${dayInWords(t.dueDate)})` : ''}, which completing it now gives again${t.repeat ? ` (${t.repeat})` : ''}`;
};

export const taskComplete = defineTool({
  name: 'task_complete',
  title: 'Complete a task',
  description: 'Marks a task done, listing tasks that waited only on it. Prefer it to task_delete for finished work.',
  input: completeInput,
  output: completedOutput,
  listedOutput: completedListed,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: (args, ctx) => setStatus(ctx, args, 'done'),
  render: (t, reader) =>
    `${completionWords(t)}: ${writtenLine(t, reader)}${t.completedSubtasks?.length ? `\nWith its subtasks: ${t.completedSubtasks.join(', ')}` : ''}${t.openSubtasks?.length ? `\nSubtasks still open: ${t.openSubtasks.join(', ')} (withSubtasks: true completes them too)` : ''}${t.unblocked?.length ? `\nUnblocked: ${t.unblocked.map((u) => `${taskName(u)} ${u.title}`).join('; ')}` : ''}${undoLine(t.activityId)}`,
});

export const taskReopen = defineTool({
  name: 'task_reopen',
  title: 'Reopen a task',
  description: 'Reopens a closed task (work left after all); what waits on it is blocked again.',
  input: stateInput,
  output: changedTaskOutput,
  listedOutput: changedTaskListed,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: (args, ctx) => setStatus(ctx, args, 'open'),
  render: (t, reader) => `${t.activityId ? 'Reopened' : 'Open already'}: ${writtenLine(t, reader)}${undoLine(t.activityId)}`,
});

// ---- task_delete --------------------------------------------------------------------------------

const deleteOutput = z.object({
  key: taskKeyOut,
  taskId: z.string(),
  title: z.string(),
  deleted: z.boolean().check(z.describe('false when the person did not confirm: nothing changed')),
  comments: z.number().check(z.int(), z.describe('Comments deleted with it')),
  subtasks: z.optional(z.number().check(z.int(), z.describe('Subtasks deleted with it'))),
  declined: z.optional(z.enum(NOT_CONFIRMED)),
  ...activityIdOutput,
});

/** "Send the Acme quote (P1, due 2026-12-05, assigned to Grace Hopper)". */
const taskPhrase = (t: Task, names: Awaited<ReturnType<typeof loadNames>>): string => {
  const facts = [
    t.priority,
    t.dueDate ? `due ${t.dueDate}` : undefined,
    t.assigneeId ? `assigned to ${names.members.get(t.assigneeId)?.name ?? t.assigneeId}` : undefined,
  ].filter(Boolean);
  return `'${t.title}' (${facts.join(', ')})`;
};

export const taskDelete = defineTool({
  name: 'task_delete',
  title: 'Delete a task',
  description: `Deletes a task and its comments (members their own; admins any); change_undo restores it. ${ASKS_FIRST}`,
  input: stateInput,
  output: deleteOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'deleting a task');
    const taskId = await taskIdOf(services, principal, args.taskId);
    const wctx = writeContext(ctx);
    const [task, comments, names] = await Promise.all([
      taskOrRefuse(services, principal, taskId),
      services.comments.keysOfTask(principal.workspaceId, taskId),
      loadNames(services, principal),
    ]);
    // Refused before the person is asked about a state the caller did not read, or a task they may not delete.
    if (args.version !== undefined && args.version !== task.version) {
      throw versionConflict(`task ${taskName(toSummary(task, names))}`, task.version, args.version, 'task_get');
    }
    requireOwnOrAdmin(principal, task.createdBy, 'delete tasks');
    // Its subtasks go with it, in the same write, each under the same rule: decided from the counts
    // and entries each level keeps before that level is read (tasks/trees.ts), and the person is told how many.
    const subtree = task.subtaskCount ? await readTree(wctx, task, 'delete', 'taskId') : [];
    const withIt = [
      subtree.length
        ? `its ${subtree.length} subtask(s) (${subtree
            .slice(0, 3)
            .map((t) => `'${t.title}'`)
            .join(', ')}${subtree.length > 3 ? ', …' : ''})`
        : '',
      comments.length ? `its ${comments.length} comment(s)` : '',
    ].filter(Boolean);
    const what = `Delete task ${taskPhrase(task, names)}${withIt.length ? ` and ${withIt.join(' and ')}` : ''}?`;
    const asked = confirmation(
      ctx,
      { id: task.taskId, state: `v${task.version}${subtree.length ? `+${subtree.length}` : ''}` },
      `${what} You can undo this for ${services.activity.retentionDays} days.`,
      'Delete the task',
    );
    if (asked.kind === 'ask') return asked.request;
    const named = { ...keyField(principal.workspaceKey, task.number), taskId: task.taskId, title: task.title };
    if (asked.kind !== 'proceed') return { ...named, deleted: false, comments: 0, declined: asked.kind };
    const tree = await changeTree(wctx, task, subtree, { deleted: true }, { expectVersion: task.version, comments });
    return {
      ...named,
      deleted: true,
      comments: comments.length,
      ...(subtree.length ? { subtasks: subtree.length } : {}),
      activityId: tree!.callId ?? tree!.written[0]!.record.activityId,
    };
  },
  render: (d) =>
    d.deleted
      ? `Deleted task ${taskName(d)} ${d.title}${d.subtasks ? ` with its ${d.subtasks} subtask(s)` : ''}${d.comments ? ` and its ${d.comments} comment(s)` : ''}.${undoLine(d.activityId)}`
      : notConfirmedText(d.declined ?? 'declined', `deleting task ${taskName(d)} ${d.title}`),
});

export const TASK_TOOLS = [tasksSearch, taskGet, taskCreate, taskUpdate, taskComplete, taskReopen, taskDelete];
