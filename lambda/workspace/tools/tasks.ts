import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { ConflictRefusal, InvalidArgumentRefusal } from '../../errors.js';
import type { ToolContext } from '../../mcp/tool-registry.js';
import { MAX_TRANSACTION_ACTIONS } from '../../platform/transact.js';
import type { Principal } from '../../vocabulary.js';
import { activityIdOutput, commitWithRecord, sourceOf, taskRecord, undoLine } from '../changes.js';
import { confirmation, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { requireOwnOrAdmin, requireRole } from '../membership.js';
import type { Task } from '../model.js';
import { cursorFor, positionFrom } from '../paging.js';
import { moreLine, taskBlock, taskLine } from '../render.js';
import {
  dateArg,
  dateOut,
  idArg,
  labelArg,
  listFields,
  pagingArgs,
  priorityArg,
  taskOutput,
  taskRefArg,
  taskSummaryOutput,
  timeArg,
  versionArg,
} from '../schemas.js';
import type { WorkspaceServices } from '../services.js';
import { withNewNumbers } from '../task-numbers.js';
import type { TaskPosition } from '../task-store.js';
import { dateInZone } from '../time.js';
import {
  activeProjectOrRefuse,
  loadNames,
  projectArgOrRefuse,
  resolveAssignee,
  taskIdOf,
  taskOrRefuse,
  toSummary,
  toTaskOutput,
} from '../views.js';
import { CREATE, READ, REMOVE, UPDATE } from './annotations.js';

const taskIdArg = taskRefArg;
const titleArg = z.string().check(z.trim(), z.minLength(1), z.maxLength(300));
const notesArg = z.string().check(z.maxLength(10_000));
const labelsArg = z.array(labelArg).check(z.maxLength(10));

/** Reads the task, checks an optional expected version up front, so a stale one is refused before any work. */
const currentTask = async (
  ctx: Pick<ToolContext<WorkspaceServices>, 'services' | 'principal'>,
  taskId: string,
  version?: number,
): Promise<Task> => {
  const task = await taskOrRefuse(ctx.services, ctx.principal, taskId);
  if (version !== undefined && version !== task.version) {
    throw new ConflictRefusal(
      `Conflict: task ${taskId} is at version ${task.version}, not ${version}; someone changed it. Read it again (task_get) and retry with version ${task.version}.`,
    );
  }
  return task;
};

/** The task (being read or written) and the names it shows are fetched together: one round trip, not two. */
const withNames = async (services: WorkspaceServices, principal: Principal, task: Task | Promise<Task>) => {
  const [t, names] = await Promise.all([task, loadNames(services, principal)]);
  return toTaskOutput(t, names);
};

/** A changed task's answer: the task as written, with its record's id. */
const changedTaskOutput = z.extend(taskOutput, activityIdOutput);

/** Writes `next` over `task` (or as new) with its record, reading the names alongside. */
const writeTask = async (
  ctx: ToolContext<WorkspaceServices>,
  action: Parameters<typeof taskRecord>[2],
  task: Task | undefined,
  next: Task,
) => {
  const record = taskRecord(ctx.services, sourceOf(ctx), action, task, next);
  const [out] = await Promise.all([
    withNames(ctx.services, ctx.principal, next),
    commitWithRecord(ctx.services, [ctx.services.tasks.putOp(next, task?.version)], record),
  ]);
  return { ...out, activityId: record.activityId };
};

/** Creates `task` with the next free number, its record and the number's claim in one write. */
const createTask = async (ctx: ToolContext<WorkspaceServices>, task: Task) => {
  const { services, principal } = ctx;
  const [names, written] = await Promise.all([
    loadNames(services, principal),
    withNewNumbers(services.numbers, principal, 1, async (first, counterAndClaims) => {
      const numbered: Task = { ...task, number: first };
      const record = taskRecord(services, sourceOf(ctx), 'created', undefined, numbered);
      await commitWithRecord(services, [...counterAndClaims([task.taskId]), services.tasks.putOp(numbered, undefined)], record);
      services.numbers.remember(task.workspaceId, first, task.taskId);
      return { numbered, record };
    }),
  ]);
  return { ...toTaskOutput(written.numbered, names), activityId: written.record.activityId };
};

// ---- tasks_search -------------------------------------------------------------------------------

const searchInput = z.strictObject({
  text: z
    .optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200)))
    .check(z.describe('Words that must all occur in the title, notes or labels (case-insensitive)')),
  status: z
    ._default(z.enum(['open', 'done', 'any']), 'open')
    .check(z.describe('open (default), done (most recently completed first) or any')),
  assignee: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('"me", "none" (unassigned) or a userId')),
  project: z
    .optional(z.string().check(z.minLength(1), z.maxLength(100)))
    .check(z.describe('A projectId, or "none" for tasks in no project (the inbox)')),
  label: z.optional(labelArg),
  priority: z.optional(priorityArg),
  dueBefore: z.optional(dateArg).check(z.describe('Due on or before this date (YYYY-MM-DD)')),
  dueAfter: z.optional(dateArg).check(z.describe('Due on or after this date (YYYY-MM-DD)')),
  overdue: z.optional(z.boolean()).check(z.describe("true: only open tasks due before the user's today")),
  ...pagingArgs,
});

const searchOutput = z.object({
  today: dateOut.check(z.describe("Today in the user's time zone")),
  ...listFields,
  tasks: z.array(taskSummaryOutput),
});

const isTaskPosition = (v: unknown): v is TaskPosition => {
  const p = v as TaskPosition | null;
  return (
    !!p &&
    typeof p === 'object' &&
    Number.isInteger(p.segment) &&
    p.segment >= 0 &&
    p.segment < 2 &&
    typeof p.taskId === 'string' &&
    typeof p.orderKey === 'string'
  );
};

export const tasksSearch = defineTool({
  name: 'tasks_search',
  title: 'Search tasks',
  description:
    'Finds tasks by text, status, assignee ("me"), project, label, priority, due range or overdue, and returns one-line summaries ' +
    "with ids and versions but without notes; call task_get for a task's notes. Open tasks come by due date (undated last), then " +
    "priority. Prefer agenda_get for today's view. A long list is better narrowed than paged; to page, pass nextCursor as cursor " +
    'with the same arguments.',
  input: searchInput,
  output: searchOutput,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const { principal, services, now } = ctx;
    const today = dateInZone(now, principal.timeZone);
    if (args.overdue && args.status === 'done') {
      throw new InvalidArgumentRefusal('overdue: only open tasks are overdue; leave status out or set it to "open".');
    }
    if (args.dueAfter && args.dueBefore && args.dueAfter > args.dueBefore) {
      throw new InvalidArgumentRefusal('dueAfter: is later than dueBefore, so nothing can match.');
    }
    const after = await positionFrom(ctx, args, isTaskPosition);
    // An unknown project is refused like an unknown assignee, not answered "no tasks match".
    const [assigneeId, names] = await Promise.all([
      args.assignee === undefined ? undefined : resolveAssignee(services, principal, args.assignee, 'assignee'),
      loadNames(services, principal),
      args.project === undefined || args.project === 'none' ? undefined : projectArgOrRefuse(services, principal, args.project, 'project'),
    ]);
    const words = args.text?.toLowerCase().split(/\s+/).filter(Boolean);
    const page = await services.tasks.search(
      principal.workspaceId,
      {
        status: args.overdue ? 'open' : args.status,
        ...(words?.length ? { words } : {}),
        ...(assigneeId !== undefined ? { assigneeId } : {}),
        ...(args.project !== undefined ? { projectId: args.project === 'none' ? null : args.project } : {}),
        ...(args.label !== undefined ? { label: args.label } : {}),
        ...(args.priority !== undefined ? { priority: args.priority } : {}),
        ...(args.dueAfter !== undefined ? { dueOnOrAfter: args.dueAfter } : {}),
        ...(args.dueBefore !== undefined ? { dueOnOrBefore: args.dueBefore } : {}),
        ...(args.overdue ? { dueBefore: today } : {}),
      },
      args.limit,
      after,
    );
    return {
      today,
      returned: page.tasks.length,
      truncated: page.next !== undefined,
      ...(page.next ? { nextCursor: await cursorFor(ctx, args, page.next) } : {}),
      tasks: page.tasks.map((t) => toSummary(t, names)),
    };
  },
  render: (r) =>
    r.returned === 0
      ? 'No tasks match.'
      : `${r.returned} task(s):\n${r.tasks.map((t) => taskLine(t, r.today)).join('\n')}${moreLine(r.truncated, r.returned)}`,
});

// ---- task_get -----------------------------------------------------------------------------------

const getInput = z.strictObject({ taskId: taskIdArg });

export const taskGet = defineTool({
  name: 'task_get',
  title: 'Read a task',
  description:
    'Returns one whole task, notes included, with its current version (needed by task_update). Use it after tasks_search or ' +
    'agenda_get when the notes or exact fields matter; comments_list has the discussion.',
  input: getInput,
  output: taskOutput,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, { services, principal }) => withNames(services, principal, taskOrRefuse(services, principal, args.taskId)),
  render: taskBlock,
});

// ---- task_create --------------------------------------------------------------------------------

const createInput = z.strictObject({
  title: titleArg,
  notes: z.optional(notesArg),
  priority: z._default(priorityArg, 'P4').check(z.describe('P1 (most urgent) to P4 (default)')),
  dueDate: z.optional(dateArg).check(z.describe('YYYY-MM-DD in the user\'s calendar; resolve words like "tomorrow" with me_get first')),
  dueTime: z.optional(timeArg).check(z.describe('HH:MM on the due date; needs dueDate')),
  assignee: z
    .optional(z.string().check(z.minLength(1), z.maxLength(100)))
    .check(z.describe('"me" or a userId from members_list; default: unassigned')),
  projectId: z.optional(idArg('project')),
  labels: z.optional(labelsArg),
});

export const taskCreate = defineTool({
  name: 'task_create',
  title: 'Create a task',
  description:
    'Creates one task (open, version 1) and returns it with its id. Check with tasks_search first if it may already exist: calling ' +
    'this twice creates two tasks. Use task_update to change an existing task.',
  input: createInput,
  output: changedTaskOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    requireRole(principal, 'member', 'creating a task');
    if (args.dueTime && !args.dueDate) throw new InvalidArgumentRefusal('dueTime: needs a dueDate as well.');
    const [assigneeId] = await Promise.all([
      args.assignee === undefined ? undefined : resolveAssignee(services, principal, args.assignee, 'assignee'),
      args.projectId === undefined ? undefined : activeProjectOrRefuse(services, principal, args.projectId, 'projectId'),
    ]);
    const at = now.toISOString();
    const task: Task = {
      workspaceId: principal.workspaceId,
      taskId: randomUUID(),
      title: args.title,
      ...(args.notes ? { notes: args.notes } : {}),
      status: 'open',
      priority: args.priority,
      ...(args.dueDate ? { dueDate: args.dueDate } : {}),
      ...(args.dueTime ? { dueTime: args.dueTime } : {}),
      ...(assigneeId ? { assigneeId } : {}),
      ...(args.projectId ? { projectId: args.projectId } : {}),
      labels: [...new Set(args.labels ?? [])],
      createdBy: principal.userId,
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
    return createTask(ctx, task);
  },
  render: (t) => `Created:\n${taskBlock(t)}${undoLine(t.activityId)}`,
});

// ---- task_update --------------------------------------------------------------------------------

const updateInput = z.strictObject({
  taskId: taskIdArg,
  version: versionArg.check(z.describe('The version you read (task_get, tasks_search); a stale one is refused as a conflict')),
  title: z.optional(titleArg),
  notes: z.optional(z.nullable(notesArg)).check(z.describe('New notes; null clears them')),
  priority: z.optional(priorityArg),
  dueDate: z.optional(z.nullable(dateArg)).check(z.describe('YYYY-MM-DD; null removes the due date (and time)')),
  dueTime: z.optional(z.nullable(timeArg)).check(z.describe('HH:MM; null removes the time')),
  assignee: z
    .optional(z.nullable(z.string().check(z.minLength(1), z.maxLength(100))))
    .check(z.describe('"me" or a userId; null (or "none") unassigns')),
  projectId: z.optional(z.nullable(idArg('project'))).check(z.describe('Move to this project; null moves it out of any project')),
  labels: z.optional(labelsArg).check(z.describe('Replaces all labels')),
});

export const taskUpdate = defineTool({
  name: 'task_update',
  title: 'Change a task',
  description:
    'Changes fields of one task: title, notes, priority, due date/time, assignee, project, labels. Give only what changes, plus the ' +
    'version you read; if someone changed the task since, it is refused as a conflict naming the current version. To finish or ' +
    'reopen a task use task_complete / task_reopen.',
  input: updateInput,
  output: changedTaskOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    requireRole(principal, 'member', 'changing a task');
    const { taskId, version, ...changes } = args;
    if (Object.values(changes).every((v) => v === undefined))
      throw new InvalidArgumentRefusal('arguments: name at least one field to change.');
    const task = await currentTask(ctx, taskId, version);
    const [assigneeId] = await Promise.all([
      changes.assignee === undefined
        ? undefined
        : changes.assignee === null
          ? null
          : resolveAssignee(services, principal, changes.assignee, 'assignee'),
      changes.projectId ? activeProjectOrRefuse(services, principal, changes.projectId, 'projectId') : undefined,
    ]);
    const dueDate = changes.dueDate === undefined ? task.dueDate : (changes.dueDate ?? undefined);
    const dueTime = changes.dueDate === null || changes.dueTime === null ? undefined : (changes.dueTime ?? task.dueTime);
    if (dueTime && !dueDate) throw new InvalidArgumentRefusal('dueTime: the task has no due date; set dueDate as well.');
    const { notes: _n, dueDate: _d, dueTime: _t, assigneeId: _a, projectId: _p, ...kept } = task;
    const notes = changes.notes === undefined ? task.notes : (changes.notes ?? undefined);
    const nextAssignee = assigneeId === undefined ? task.assigneeId : (assigneeId ?? undefined);
    const nextProject = changes.projectId === undefined ? task.projectId : (changes.projectId ?? undefined);
    const next: Task = {
      ...kept,
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.priority !== undefined ? { priority: changes.priority } : {}),
      ...(changes.labels !== undefined ? { labels: [...new Set(changes.labels)] } : {}),
      ...(notes ? { notes } : {}),
      ...(dueDate ? { dueDate } : {}),
      ...(dueTime ? { dueTime } : {}),
      ...(nextAssignee ? { assigneeId: nextAssignee } : {}),
      ...(nextProject ? { projectId: nextProject } : {}),
      updatedAt: now.toISOString(),
      version: task.version + 1,
    };
    return writeTask(ctx, 'changed', task, next);
  },
  render: (t) => `Updated:\n${taskBlock(t)}${undoLine(t.activityId)}`,
});

// ---- task_complete / task_reopen ----------------------------------------------------------------

const stateInput = z.strictObject({
  taskId: taskIdArg,
  version: z.optional(versionArg).check(z.describe('If given, the change is refused when the task has moved on from this version')),
});

export const taskComplete = defineTool({
  name: 'task_complete',
  title: 'Complete a task',
  description:
    'Marks one task done (records who and when). Completing a task that is already done changes nothing. Undo with task_reopen; ' +
    'prefer this over task_delete when the work was done.',
  input: stateInput,
  output: changedTaskOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    requireRole(ctx.principal, 'member', 'completing a task');
    const task = await currentTask(ctx, args.taskId, args.version);
    if (task.status === 'done') return withNames(ctx.services, ctx.principal, task);
    const at = ctx.now.toISOString();
    const next: Task = {
      ...task,
      status: 'done',
      completedAt: at,
      completedBy: ctx.principal.userId,
      updatedAt: at,
      version: task.version + 1,
    };
    return writeTask(ctx, 'completed', task, next);
  },
  render: (t) => `Done:\n${taskBlock(t)}${undoLine(t.activityId)}`,
});

export const taskReopen = defineTool({
  name: 'task_reopen',
  title: 'Reopen a task',
  description: 'Marks a done task open again (e.g. completed by mistake). Reopening an open task changes nothing.',
  input: stateInput,
  output: changedTaskOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    requireRole(ctx.principal, 'member', 'reopening a task');
    const task = await currentTask(ctx, args.taskId, args.version);
    if (task.status === 'open') return withNames(ctx.services, ctx.principal, task);
    const { completedAt: _c, completedBy: _b, ...rest } = task;
    const next: Task = { ...rest, status: 'open', updatedAt: ctx.now.toISOString(), version: task.version + 1 };
    return writeTask(ctx, 'reopened', task, next);
  },
  render: (t) => `Reopened:\n${taskBlock(t)}${undoLine(t.activityId)}`,
});

// ---- task_delete --------------------------------------------------------------------------------

const deleteOutput = z.object({
  taskId: z.string(),
  title: z.string(),
  deleted: z.boolean().check(z.describe('false when the person declined or cancelled: nothing changed')),
  comments: z.number().check(z.int(), z.describe('Comments deleted with it')),
  declined: z.optional(z.enum(['declined', 'cancelled'])),
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

/** The task item, its record, and as many of its comments as fit: one all-or-nothing write. */
const COMMENTS_IN_DELETE = MAX_TRANSACTION_ACTIONS - 2;

export const taskDelete = defineTool({
  name: 'task_delete',
  title: 'Delete a task',
  description:
    'Deletes one task and its comments (members only tasks they created; admins any). Where the client can ask, the person confirms ' +
    'first. change_undo restores it while the activity record lasts. If the work was done, use task_complete instead.',
  input: stateInput,
  output: deleteOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    requireRole(principal, 'member', 'deleting a task');
    const taskId = await taskIdOf(services, principal, args.taskId);
    const [task, comments, names] = await Promise.all([
      currentTask(ctx, taskId, args.version),
      services.comments.keysOfTask(principal.workspaceId, taskId),
      loadNames(services, principal),
    ]);
    requireOwnOrAdmin(principal, task.createdBy, 'delete tasks');
    const what = `Delete task ${taskPhrase(task, names)}${comments.length ? ` and its ${comments.length} comment(s)` : ''}?`;
    const asked = confirmation(
      ctx,
      { id: task.taskId, state: `v${task.version}` },
      `${what} You can undo this for ${services.activity.retentionDays} days.`,
      'Delete the task',
    );
    if (asked.kind === 'ask') return asked.request;
    if (asked.kind !== 'proceed') return { taskId: task.taskId, title: task.title, deleted: false, comments: 0, declined: asked.kind };
    const at = now.toISOString();
    const deleted: Task = { ...task, deletedAt: at, updatedAt: at, version: task.version + 1 };
    const record = taskRecord(services, sourceOf(ctx), 'deleted', task, deleted, { commentCount: comments.length });
    const expiresAt = record.expiresAt;
    await commitWithRecord(
      services,
      [
        services.tasks.putOp(deleted, task.version, expiresAt),
        ...comments.slice(0, COMMENTS_IN_DELETE).map((key) => services.comments.expiryOp(key, expiresAt)),
      ],
      record,
    );
    // The task is invisible now, and its comments with it; the rest only learn when they expire.
    await markExpiring(services, comments.slice(COMMENTS_IN_DELETE), expiresAt).catch(() => undefined);
    return { taskId: task.taskId, title: task.title, deleted: true, comments: comments.length, activityId: record.activityId };
  },
  render: (d) =>
    d.deleted
      ? `Deleted task [${d.taskId}] ${d.title}${d.comments ? ` and its ${d.comments} comment(s)` : ''}.${undoLine(d.activityId)}`
      : notConfirmedText(d.declined ?? 'declined', `deleting task [${d.taskId}] ${d.title}`),
});

/** Comments past what one write holds, marked a few at a time. */
export const markExpiring = async (
  services: WorkspaceServices,
  keys: readonly Parameters<WorkspaceServices['comments']['expiryOp']>[0][],
  expiresAt: number | undefined,
): Promise<void> => {
  for (let i = 0; i < keys.length; i += MAX_TRANSACTION_ACTIONS) {
    await services.commit(keys.slice(i, i + MAX_TRANSACTION_ACTIONS).map((key) => services.comments.expiryOp(key, expiresAt)));
  }
};

export const TASK_TOOLS = [tasksSearch, taskGet, taskCreate, taskUpdate, taskComplete, taskReopen, taskDelete];
