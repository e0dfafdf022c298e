import { randomUUID } from 'node:crypto';
import { InvalidArgumentRefusal } from '../errors.js';
import type { ToolContext } from '../mcp/tool-registry.js';
import { MAX_TRANSACTION_ACTIONS, type WriteOp } from '../platform/transact.js';
import { type Blockers, blockerSideOps, openOf, resolveBlockers, transitionOps } from './links.js';
import { requireRole } from './membership.js';
import type { Priority, Task } from './model.js';
import type { WorkspaceServices } from './services.js';
import { activeProjectOrRefuse, resolveAssignee } from './views.js';

/**
 * What a task change is, apart from the tool that asks for it: the task a creation makes and the
 * task a change leaves, each checked (roles, assignee, project, links), and the ops that write it
 * with everything linked to it. `task_create` and `task_update` make one; `tasks_create` and
 * `tasks_update` many, each item on its own; `change_undo` writes them back.
 */

type Ctx = Pick<ToolContext<WorkspaceServices>, 'services' | 'principal' | 'now'>;

export interface NewTaskFields {
  readonly title: string;
  readonly notes?: string | undefined;
  readonly priority: Priority;
  readonly dueDate?: string | undefined;
  readonly dueTime?: string | undefined;
  readonly assignee?: string | undefined;
  readonly projectId?: string | undefined;
  readonly labels?: readonly string[] | undefined;
  readonly blockedBy?: readonly string[] | undefined;
}

export interface TaskChangeFields {
  readonly title?: string | undefined;
  readonly notes?: string | null | undefined;
  readonly priority?: Priority | undefined;
  readonly dueDate?: string | null | undefined;
  readonly dueTime?: string | null | undefined;
  readonly assignee?: string | null | undefined;
  readonly projectId?: string | null | undefined;
  readonly labels?: readonly string[] | undefined;
  readonly blockedBy?: readonly string[] | undefined;
  /** done completes the task, open reopens it. */
  readonly status?: 'open' | 'done' | undefined;
}

/** A checked task about to be written, with the blockers its links name (when they change). */
export interface PlannedTask {
  readonly next: Task;
  readonly blockers?: Blockers;
}

/** The task a creation makes (its number comes with the write); a refusal names the field. */
export const plannedNewTask = async (ctx: Ctx, fields: NewTaskFields, prefix = ''): Promise<PlannedTask> => {
  const { services, principal, now } = ctx;
  requireRole(principal, 'member', 'creating a task');
  if (fields.dueTime && !fields.dueDate) throw new InvalidArgumentRefusal(`${prefix}dueTime: needs a dueDate as well.`);
  const taskId = randomUUID();
  const [assigneeId, , blockers] = await Promise.all([
    fields.assignee === undefined ? undefined : resolveAssignee(services, principal, fields.assignee, `${prefix}assignee`),
    fields.projectId === undefined ? undefined : activeProjectOrRefuse(services, principal, fields.projectId, `${prefix}projectId`),
    fields.blockedBy?.length ? resolveBlockers(services, principal, { taskId }, fields.blockedBy, `${prefix}blockedBy`) : undefined,
  ]);
  const at = now.toISOString();
  const next: Task = {
    workspaceId: principal.workspaceId,
    taskId,
    title: fields.title,
    ...(fields.notes ? { notes: fields.notes } : {}),
    status: 'open',
    priority: fields.priority,
    ...(fields.dueDate ? { dueDate: fields.dueDate } : {}),
    ...(fields.dueTime ? { dueTime: fields.dueTime } : {}),
    ...(assigneeId ? { assigneeId } : {}),
    ...(fields.projectId ? { projectId: fields.projectId } : {}),
    labels: [...new Set(fields.labels ?? [])],
    ...(blockers ? { blockedBy: blockers.blockedBy, ...(openOf(blockers).length ? { openBlockers: openOf(blockers) } : {}) } : {}),
    createdBy: principal.userId,
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  return { next, ...(blockers ? { blockers } : {}) };
};

/**
 * The task a change leaves; undefined when the change changes nothing (completing a done task).
 * A refusal names the field, with `prefix` (a bulk item's position) before it.
 */
export const plannedChange = async (ctx: Ctx, task: Task, fields: TaskChangeFields, prefix = ''): Promise<PlannedTask | undefined> => {
  const { services, principal, now } = ctx;
  requireRole(principal, 'member', 'changing a task');
  const [assigneeId, , blockers] = await Promise.all([
    fields.assignee === undefined
      ? undefined
      : fields.assignee === null
        ? null
        : resolveAssignee(services, principal, fields.assignee, `${prefix}assignee`),
    fields.projectId ? activeProjectOrRefuse(services, principal, fields.projectId, `${prefix}projectId`) : undefined,
    fields.blockedBy === undefined ? undefined : resolveBlockers(services, principal, task, fields.blockedBy, `${prefix}blockedBy`),
  ]);
  const dueDate = fields.dueDate === undefined ? task.dueDate : (fields.dueDate ?? undefined);
  const dueTime = fields.dueDate === null || fields.dueTime === null ? undefined : (fields.dueTime ?? task.dueTime);
  if (dueTime && !dueDate) throw new InvalidArgumentRefusal(`${prefix}dueTime: the task has no due date; set dueDate as well.`);
  const {
    notes: _n,
    dueDate: _d,
    dueTime: _t,
    assigneeId: _a,
    projectId: _p,
    completedAt: _ca,
    completedBy: _cb,
    blockedBy: _bb,
    openBlockers: _ob,
    ...kept
  } = task;
  const notes = fields.notes === undefined ? task.notes : (fields.notes ?? undefined);
  const nextAssignee = assigneeId === undefined ? task.assigneeId : (assigneeId ?? undefined);
  const nextProject = fields.projectId === undefined ? task.projectId : (fields.projectId ?? undefined);
  const status = fields.status ?? task.status;
  const at = now.toISOString();
  const done =
    status === 'done'
      ? task.status === 'done'
        ? { completedAt: task.completedAt!, completedBy: task.completedBy! }
        : { completedAt: at, completedBy: principal.userId }
      : undefined;
  const links = blockers
    ? { blockedBy: blockers.blockedBy, ...(openOf(blockers).length ? { openBlockers: openOf(blockers) } : {}) }
    : { ...(task.blockedBy ? { blockedBy: task.blockedBy } : {}), ...(task.openBlockers ? { openBlockers: task.openBlockers } : {}) };
  const next: Task = {
    ...kept,
    ...(fields.title !== undefined ? { title: fields.title } : {}),
    ...(fields.priority !== undefined ? { priority: fields.priority } : {}),
    ...(fields.labels !== undefined ? { labels: [...new Set(fields.labels)] } : {}),
    ...(notes ? { notes } : {}),
    ...(dueDate ? { dueDate } : {}),
    ...(dueTime ? { dueTime } : {}),
    ...(nextAssignee ? { assigneeId: nextAssignee } : {}),
    ...(nextProject ? { projectId: nextProject } : {}),
    ...(done ?? {}),
    status,
    ...links,
    updatedAt: at,
    version: task.version + 1,
  };
  const same = (a: Task, b: Task) => {
    const strip = ({ updatedAt: _u, version: _v, ...rest }: Task) => JSON.stringify(rest, Object.keys(rest).sort());
    return strip(a) === strip(b);
  };
  if (same(task, next)) return undefined;
  return { next, ...(blockers ? { blockers } : {}) };
};

/**
 * Everything one task's write puts down besides its record: the task (against the version read,
 * and for a change of state against the links read), its blockers' side when its links change, and
 * its dependents' side when its state changes.
 */
export const taskWriteOps = (
  services: WorkspaceServices,
  before: Task | undefined,
  planned: PlannedTask,
  expiresAt?: number,
): WriteOp[] => {
  const { next, blockers } = planned;
  const stateMoves = before !== undefined && (before.status !== next.status || !!before.deletedAt !== !!next.deletedAt);
  const ops = [
    // Held to the `blocks` read: for a change of state, so every dependent is updated; for a change
    // of links, so two changes that each looked acyclic cannot close a cycle between them (one linking
    // this task to its blocker raises its `linksVersion` first: the other is then a conflict).
    services.tasks.putOp(next, before?.version, expiresAt, {
      ...(blockers ? { links: true } : {}),
      ...(before && (stateMoves || blockers) ? { linksVersion: before.linksVersion ?? 0 } : {}),
    }),
    ...(blockers ? blockerSideOps(services, next.workspaceId, next.taskId, before?.blockedBy, blockers) : []),
    ...(before && stateMoves ? transitionOps(services, before, next) : []),
  ];
  // Its record is one action more, and the write must be one transaction.
  if (ops.length + 1 > MAX_TRANSACTION_ACTIONS) {
    throw new InvalidArgumentRefusal(
      `blockedBy: this change would write ${ops.length} tasks at once (its links and the tasks waiting on it), more than one ` +
        'all-or-nothing write holds; change the links and the status in two calls.',
    );
  }
  return ops;
};
