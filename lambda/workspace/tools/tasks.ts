import * as z from 'zod/mini';
import { ConflictRefusal, InvalidArgumentRefusal } from '../../errors.js';
import type { ToolContext } from '../../mcp/tool-registry.js';
import { MAX_TRANSACTION_ACTIONS } from '../../platform/transact.js';
import type { Principal } from '../../vocabulary.js';
import { activityIdOutput, commitWithRecord, markCommentsExpiring, sourceOf, taskRecord, undoLine } from '../changes.js';
import { confirmation, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { unblockedBy } from '../links.js';
import { requireOwnOrAdmin, requireRole } from '../membership.js';
import type { Task } from '../model.js';
import { cursorFor, positionFrom } from '../paging.js';
import { moreLine, taskBlock, taskLine, taskName } from '../render.js';
import {
  blockedByArg,
  dateArg,
  dateOut,
  idArg,
  labelArg,
  listFields,
  pagingArgs,
  priorityArg,
  taskKeyOut,
  taskOutput,
  taskRefArg,
  taskSummaryOutput,
  timeArg,
  versionArg,
} from '../schemas.js';
import type { WorkspaceServices } from '../services.js';
import { type PlannedTask, plannedChange, plannedNewTask, taskWriteOps } from '../task-changes.js';
import { keyField, keyOf, withNewNumbers } from '../task-numbers.js';
import type { TaskPosition } from '../task-store.js';
import { dateInZone } from '../time.js';
import { loadNames, projectArgOrRefuse, resolveAssignee, taskIdOf, taskOrRefuse, toSummary, toTaskOutput } from '../views.js';
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
      `Conflict: task ${keyOf(ctx.principal.workspaceKey, task.number) ?? taskId} is at version ${task.version}, not ${version}; someone changed it. Read it again (task_get) and retry with version ${task.version}.`,
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
const pick = (t: { key?: string | undefined; taskId: string }) => ({ ...(t.key ? { key: t.key } : {}), taskId: t.taskId });

/** A changed task's answer: what a list shows of it (its key, state and version), and its record. */
const changedTaskOutput = z.extend(taskSummaryOutput, activityIdOutput);

/** Writes a planned change of `task` with its record, reading the names alongside. */
const writeTask = async (
  ctx: ToolContext<WorkspaceServices>,
  action: Parameters<typeof taskRecord>[2],
  task: Task,
  planned: PlannedTask,
  extra: Record<string, unknown> = {},
) => {
  const record = taskRecord(ctx.services, sourceOf(ctx), action, task, planned.next);
  const [names] = await Promise.all([
    loadNames(ctx.services, ctx.principal),
    commitWithRecord(ctx.services, taskWriteOps(ctx.services, task, planned), record),
  ]);
  return { ...toSummary(planned.next, names), ...extra, activityId: record.activityId };
};

/** Creates a planned task with the next free number, its record and the number's claim in one write. */
const createTask = async (ctx: ToolContext<WorkspaceServices>, planned: PlannedTask) => {
  const { services, principal } = ctx;
  const [names, written] = await Promise.all([
    loadNames(services, principal),
    withNewNumbers(services.numbers, principal, 1, async (first, counterAndClaims) => {
      const numbered: PlannedTask = { ...planned, next: { ...planned.next, number: first } };
      const record = taskRecord(services, sourceOf(ctx), 'created', undefined, numbered.next);
      await commitWithRecord(
        services,
        [...counterAndClaims([numbered.next.taskId]), ...taskWriteOps(services, undefined, numbered)],
        record,
      );
      services.numbers.remember(numbered.next.workspaceId, first, numbered.next.taskId);
      return { numbered, record };
    }),
  ]);
  return { ...toSummary(written.numbered.next, names), activityId: written.record.activityId };
};

// ---- tasks_search -------------------------------------------------------------------------------

const searchInput = z.strictObject({
  text: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200))).check(z.describe('All words, in title, notes or labels')),
  status: z._default(z.enum(['open', 'done', 'any']), 'open').check(z.describe('Default open')),
  assignee: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('"me", "none" or a userId')),
  project: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('A projectId or "none"')),
  label: z.optional(labelArg),
  priority: z.optional(priorityArg),
  dueBefore: z.optional(dateArg).check(z.describe('Due on or before')),
  dueAfter: z.optional(dateArg).check(z.describe('Due on or after')),
  overdue: z.optional(z.boolean()).check(z.describe('Open, due before today')),
  blocked: z.optional(z.boolean()).check(z.describe('Waiting on an open task')),
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
    'Finds tasks by text, status, assignee, project, label, priority, due dates, overdue or blocked; summaries by due date ' +
    'then priority, without notes (task_get has them). Narrow rather than page.',
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
        ...(args.blocked !== undefined ? { blocked: args.blocked } : {}),
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
  description: 'One whole task, notes and links included, with its version.',
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
  priority: z._default(priorityArg, 'P4').check(z.describe('P1 most urgent; default P4')),
  dueDate: z.optional(dateArg).check(z.describe("In the user's calendar")),
  dueTime: z.optional(timeArg).check(z.describe('Needs dueDate')),
  assignee: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('"me" or a userId')),
  projectId: z.optional(idArg('project')),
  labels: z.optional(labelsArg),
  blockedBy: z.optional(blockedByArg),
});

export const taskCreate = defineTool({
  name: 'task_create',
  title: 'Create a task',
  description: 'Creates a task and returns its key; calling it twice makes two (tasks_create makes many).',
  input: createInput,
  output: changedTaskOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => createTask(ctx, await plannedNewTask(ctx, args)),
  render: (t) => `Created: ${taskLine(t).slice(2)}${undoLine(t.activityId)}`,
});

// ---- task_update --------------------------------------------------------------------------------

const updateInput = z.strictObject({
  taskId: taskIdArg,
  version: versionArg.check(z.describe('The version read')),
  title: z.optional(titleArg),
  notes: z.optional(z.nullable(notesArg)).check(z.describe('null clears')),
  priority: z.optional(priorityArg),
  dueDate: z.optional(z.nullable(dateArg)).check(z.describe('null clears (and the time)')),
  dueTime: z.optional(z.nullable(timeArg)).check(z.describe('null clears')),
  assignee: z.optional(z.nullable(z.string().check(z.minLength(1), z.maxLength(100)))).check(z.describe('"me", a userId or null')),
  projectId: z.optional(z.nullable(idArg('project'))).check(z.describe('null: no project')),
  labels: z.optional(labelsArg).check(z.describe('All labels')),
  blockedBy: z.optional(blockedByArg),
});

export const taskUpdate = defineTool({
  name: 'task_update',
  title: 'Change a task',
  description:
    'Changes fields of a task; give only what changes and the version read (a stale one is a conflict). tasks_update changes many.',
  input: updateInput,
  output: changedTaskOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'changing a task');
    const { taskId, version, ...changes } = args;
    if (Object.values(changes).every((v) => v === undefined))
      throw new InvalidArgumentRefusal('arguments: name at least one field to change.');
    const task = await currentTask(ctx, taskId, version);
    const planned = await plannedChange(ctx, task, changes);
    if (!planned) return toSummary(task, await loadNames(services, principal));
    return writeTask(ctx, 'changed', task, planned);
  },
  render: (t) => `Updated: ${taskLine(t).slice(2)}${undoLine(t.activityId)}`,
});

// ---- task_complete / task_reopen ----------------------------------------------------------------

const stateInput = z.strictObject({
  taskId: taskIdArg,
  version: z.optional(versionArg).check(z.describe('If given, must be current')),
});

const completedOutput = z.extend(changedTaskOutput, {
  unblocked: z.optional(z.array(z.object({ key: z.optional(z.string()), taskId: z.string(), title: z.string() }))),
});

export const taskComplete = defineTool({
  name: 'task_complete',
  title: 'Complete a task',
  description: 'Marks a task done, listing the tasks that waited only on it. Prefer it to task_delete when the work was done.',
  input: stateInput,
  output: completedOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    requireRole(ctx.principal, 'member', 'completing a task');
    const task = await currentTask(ctx, args.taskId, args.version);
    if (task.status === 'done') return toSummary(task, await loadNames(ctx.services, ctx.principal));
    // Who waits on it and is free once it is done: read with the change (only when anyone waits on it).
    const [planned, freed, names] = await Promise.all([
      plannedChange(ctx, task, { status: 'done' }),
      unblockedBy(ctx.services, ctx.principal, task),
      loadNames(ctx.services, ctx.principal),
    ]);
    return writeTask(
      ctx,
      'completed',
      task,
      planned!,
      freed.length ? { unblocked: freed.map((t) => ({ ...pick(toSummary(t, names)), title: t.title })) } : {},
    );
  },
  render: (t) =>
    `Done: ${taskLine(t).slice(2)}${t.unblocked?.length ? `\nUnblocked: ${t.unblocked.map((u) => `${taskName(u)} ${u.title}`).join('; ')}` : ''}${undoLine(t.activityId)}`,
});

export const taskReopen = defineTool({
  name: 'task_reopen',
  title: 'Reopen a task',
  description: 'Marks a done task open again (work left after all); tasks that wait on it are blocked again.',
  input: stateInput,
  output: changedTaskOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    requireRole(ctx.principal, 'member', 'reopening a task');
    const task = await currentTask(ctx, args.taskId, args.version);
    if (task.status === 'open') return toSummary(task, await loadNames(ctx.services, ctx.principal));
    return writeTask(ctx, 'reopened', task, (await plannedChange(ctx, task, { status: 'open' }))!);
  },
  render: (t) => `Reopened: ${taskLine(t).slice(2)}${undoLine(t.activityId)}`,
});

// ---- task_delete --------------------------------------------------------------------------------

const deleteOutput = z.object({
  key: taskKeyOut,
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
    'Deletes a task and its comments (members their own; admins any), asking the person first where the client can; ' +
    'change_undo restores it.',
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
    const named = { ...keyField(principal.workspaceKey, task.number), taskId: task.taskId, title: task.title };
    if (asked.kind !== 'proceed') return { ...named, deleted: false, comments: 0, declined: asked.kind };
    const at = now.toISOString();
    const deleted: Task = { ...task, deletedAt: at, updatedAt: at, version: task.version + 1 };
    const record = taskRecord(services, sourceOf(ctx), 'deleted', task, deleted, { commentCount: comments.length });
    const expiresAt = record.expiresAt;
    const linked = taskWriteOps(services, task, { next: deleted }, expiresAt);
    await commitWithRecord(
      services,
      [...linked, ...comments.slice(0, COMMENTS_IN_DELETE - linked.length + 1).map((key) => services.comments.expiryOp(key, expiresAt))],
      record,
    );
    // The task is invisible now, and its comments with it; the rest only learn when they expire.
    await markCommentsExpiring(services, comments.slice(COMMENTS_IN_DELETE - linked.length + 1), expiresAt).catch(() => undefined);
    return { ...named, deleted: true, comments: comments.length, activityId: record.activityId };
  },
  render: (d) =>
    d.deleted
      ? `Deleted task ${taskName(d)} ${d.title}${d.comments ? ` and its ${d.comments} comment(s)` : ''}.${undoLine(d.activityId)}`
      : notConfirmedText(d.declined ?? 'declined', `deleting task ${taskName(d)} ${d.title}`),
});

export const TASK_TOOLS = [tasksSearch, taskGet, taskCreate, taskUpdate, taskComplete, taskReopen, taskDelete];
