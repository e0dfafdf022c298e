import { randomUUID } from 'node:crypto';
import { CURRENT_LAYOUT } from '../../vocabulary.js';
import { requireOwnOrAdmin, requireRole } from '../membership/rules.js';
import { carryValues, type FieldValues } from '../model/custom-fields.js';
import {
  canceledHasNowhere,
  dueTimeNoDueDate,
  dueTimeWithoutDate,
  hasAttachments,
  hasSubtasks,
  noCanceledStatus,
  noOccurrenceFrom,
  recurringDueOutOfRange,
  recurringNeedsDate,
  taskDeleted,
  upgrading,
} from '../model/refusals.js';
import { moveReminders, reminderAt } from '../model/reminder-words.js';
import { firstOccurrence, nextOccurrence, type Repeat, type RepeatRead } from '../model/repeat-rules.js';
import { stableJson } from '../model/stable-json.js';
import {
  categoryOfKey,
  DEFAULT_SET,
  defaultStatus,
  foldedName,
  phaseOf,
  readStatus,
  type StatusSet,
  setOf,
  stateOf,
  statusOf,
  statusOfKey,
  storedKey,
  type WorkflowStatus,
} from '../model/statuses.js';
import { taskNameOf } from '../model/task-refs.js';
import { addDays, dateInZone } from '../model/time.js';
import type { Priority, Task, TaskReminder, TaskStatus } from '../model/types.js';
import { activeProjectOrRefuse, memberIdOrRefuse, statusSetOf } from '../store/lookups.js';
import type { WriteContext } from '../store/stores.js';
import { isWhole, withNotesSet } from '../store/task-items.js';
import { type Blockers, linkFields, resolveBlockers } from './links.js';
import { type Placement, resolveParent, restorePlacement } from './subtasks.js';

/**
 * What a task change is, whoever asks for it: the task a creation makes and the task a change
 * leaves, each checked against every rule (the caller's role now, the assignee a member, the project
 * active, the links acyclic and within their limits) before anything is written. A tool, a bulk
 * item and an undo all describe their change as a patch of the task's fields and go through here.
 */

/** A new task's fields; ids resolved (a key or `me` is the caller's to turn into an id first). */
export interface NewTask {
  /** Given when the call names it before it exists (a later item of the same call links to it); else a new UUID. */
  readonly taskId?: string | undefined;
  readonly title: string;
  readonly notes?: string | undefined;
  readonly priority: Priority;
  readonly dueDate?: string | undefined;
  readonly dueTime?: string | undefined;
  readonly assigneeId?: string | undefined;
  readonly projectId?: string | undefined;
  readonly labels?: readonly string[] | undefined;
  readonly blockedBy?: readonly string[] | undefined;
  /** The task it is a subtask of (an earlier item of the same call, or a stored task). */
  readonly parentId?: string | undefined;
  /** Its rule, read; it counts from dueDate, or from its first occurrence when there is none. */
  readonly repeat?: RepeatRead | undefined;
  /** A task that arrives done (an import of a finished one): when and by whom it was completed. */
  readonly completed?: { readonly at: string; readonly by: string } | undefined;
  /** Its workflow status by name (model/statuses.ts); else the first unstarted (or done, with `completed`). */
  readonly state?: string | undefined;
  /** Its workflow status by key, as a door that maps another tool's states gives it (the import): `statusOfKey`. */
  readonly stateKey?: string | undefined;
  /** Its reminders, read (model/reminder-words.ts); a relative one's instant is taken from the due date it ends with. */
  readonly reminders?: readonly TaskReminder[] | undefined;
  /** Its custom fields' values, checked against its project's fields (model/custom-fields.ts). */
  readonly fields?: FieldValues | undefined;
}

/** A change of a task's fields: an absent field stays, `null` clears it. */
export interface TaskPatch {
  readonly title?: string | undefined;
  readonly notes?: string | null | undefined;
  readonly priority?: Priority | undefined;
  readonly dueDate?: string | null | undefined;
  readonly dueTime?: string | null | undefined;
  readonly assigneeId?: string | null | undefined;
  readonly projectId?: string | null | undefined;
  readonly labels?: readonly string[] | undefined;
  /** All the tasks it waits on, by id: the whole set (an empty one clears it). */
  readonly blockedBy?: readonly string[] | undefined;
  /** The task it becomes a subtask of; null makes it a top-level task. */
  readonly parentId?: string | null | undefined;
  /** A rule read from a tool (it counts from the due date), a rule as a record kept it (an undo), or null to stop. */
  readonly repeat?: RepeatRead | Repeat | null | undefined;
  /** done completes the task (a recurring one: this occurrence), open reopens it. */
  readonly status?: TaskStatus | undefined;
  /**
   * Its workflow status by name (model/statuses.ts); its category sets the phase (a done one
   * completes the task as `status: done` does). null: the first of the phase `status` leaves.
   */
  readonly state?: string | null | undefined;
  /** The same by key, as an undo puts back what its record kept (`statusOfKey`: a removed one reads as its successor). */
  readonly stateKey?: string | null | undefined;
  /** When a completion is put back (an undo), when and by whom it was: else now, and the caller. */
  readonly completed?: { readonly at: string; readonly by: string } | undefined;
  /** true deletes the task (kept for undo), false restores it. */
  readonly deleted?: boolean | undefined;
  /**
   * All its reminders, as they are to be (a tool keeps the others' and replaces the caller's; an undo
   * puts back what was). Absent: they stay, those relative to the due date moving with it.
   */
  readonly reminders?: readonly TaskReminder[] | undefined;
  /**
   * All its custom fields' values, as they are to be (checked against the project it ends in). A task
   * moving to another project without them keeps the values whose field is there by name and type.
   */
  readonly fields?: FieldValues | undefined;
}

/** How the planner names a field in a refusal: the parameter, after a bulk item's position. */
export interface PlanOptions {
  readonly prefix?: string;
  /** How a blocker id was given (its key as the caller wrote it), for refusals. */
  readonly refOf?: (id: string) => string;
  /** Tasks the same call creates before this one: a link may name them before they are stored. */
  readonly fresh?: ReadonlyMap<string, Task>;
  /** The change is one of a tree's, its subtasks changed in the same write (task-writer.ts, changeTree). */
  readonly subtree?: boolean;
}

/** A checked task about to be written, with the blockers its links name (when they change). */
export interface PlannedTask {
  readonly before: Task | undefined;
  readonly next: Task;
  readonly blockers?: Blockers;
  /** Where it goes in the tree, when it joins a parent (created under one, moved, restored under one). */
  readonly placement?: Placement;
  /** A recurring task's completion: the due date of the occurrence it completed. */
  readonly occurrence?: string;
  /** Custom fields whose values a move to another project left behind (no field of that name and type there). */
  readonly fieldsLeft?: readonly string[];
}

/**
 * A rule and its anchor: the due date the task has (this occurrence, kept as the person set it),
 * else its first occurrence from the caller's today (found when the rule was read), which becomes the
 * due date.
 */
const anchored = async (
  caller: WriteContext['caller'],
  now: Date,
  read: RepeatRead,
  dueDate: string | undefined,
  param: string,
): Promise<{ repeat: Repeat; dueDate: string }> => {
  const anchor = dueDate ?? read.first;
  if (dueDate !== undefined) {
    recurringDueInRange(dueDate, dateInZone(now, caller.timeZone), param.replace(/repeat$/, 'dueDate'));
    // Looked at again from the day it will count from: a rule that occurs from today may not from there.
    if (!(await firstOccurrence(read, dueDate))) throw noOccurrenceFrom(param, read.given, dueDate);
  }
  return {
    repeat: {
      rule: read.rule,
      anchor,
      zone: caller.timeZone,
      ...(read.afterCompletion ? { afterCompletion: true as const } : {}),
      words: read.words,
    },
    dueDate: anchor,
  };
};

const isStored = (r: RepeatRead | Repeat): r is Repeat => 'anchor' in r;

/**
 * A recurring task is due within a year back and ten years ahead: its rule is expanded from its
 * anchor on every completion, and a due date in the year 1000 would make that thousands of steps.
 */
const recurringDueInRange = (dueDate: string, today: string, param: string): void => {
  if (dueDate < addDays(today, -366) || dueDate > addDays(today, 3_653))
    throw recurringDueOutOfRange(param, dueDate, addDays(today, -366), addDays(today, 3_653));
};

/** Tasks are written in the current layout only: a workspace of an earlier one is migrated first. */
const refuseUnlessCurrentLayout = (caller: WriteContext['caller']): void => {
  if (caller.layout !== CURRENT_LAYOUT || caller.migrating) throw upgrading(!!caller.migrating);
};

/** The task a creation makes (its number comes with the write); a refusal names the field. */
export const planCreate = async (ctx: WriteContext, fields: NewTask, opts: PlanOptions = {}): Promise<PlannedTask> => {
  const { stores, caller, source } = ctx;
  const prefix = opts.prefix ?? '';
  requireRole(caller, 'member', 'creating a task');
  refuseUnlessCurrentLayout(caller);
  if (fields.dueTime && !fields.dueDate) throw dueTimeWithoutDate(`${prefix}dueTime`);
  const taskId = fields.taskId ?? randomUUID();
  const [assigneeId, project, blockers, placement] = await Promise.all([
    fields.assigneeId === undefined ? undefined : memberIdOrRefuse(stores, caller, fields.assigneeId, `${prefix}assignee`),
    fields.projectId === undefined ? undefined : activeProjectOrRefuse(stores, caller, fields.projectId, `${prefix}projectId`),
    fields.blockedBy?.length
      ? resolveBlockers(stores, caller, { taskId }, fields.blockedBy, `${prefix}blockedBy`, opts.refOf, opts.fresh)
      : undefined,
    fields.parentId ? resolveParent(stores, caller, { taskId }, fields.parentId, `${prefix}parent`, opts.refOf, opts.fresh) : undefined,
  ]);
  const at = source.now.toISOString();
  // A status is one of the project's (its own set, or the workspace's).
  const set = setOf(project);
  const workflow = workflowOf(fields.state, fields.stateKey, set, `${prefix}status`);
  const phase = workflow ? phaseOf(workflow.category) : fields.completed ? 'done' : 'open';
  const closing = phase === 'done' ? (fields.completed ?? { at, by: caller.userId }) : undefined;
  const state = stateOf(workflow ?? defaultStatus(phase, set));
  const rule = fields.repeat ? await anchored(caller, source.now, fields.repeat, fields.dueDate, `${prefix}repeat`) : undefined;
  const dueDate = rule?.dueDate ?? fields.dueDate;
  const dueTime = fields.dueTime ?? fields.repeat?.time;
  const next: Task = {
    workspaceId: caller.workspaceId,
    taskId,
    title: fields.title,
    ...(fields.notes ? { notes: fields.notes } : {}),
    status: phase,
    ...(state ? { state } : {}),
    ...(closing ? { completedAt: closing.at, completedBy: closing.by } : {}),
    priority: fields.priority,
    ...(dueDate ? { dueDate } : {}),
    ...(dueTime ? { dueTime } : {}),
    ...(assigneeId ? { assigneeId } : {}),
    ...(fields.projectId ? { projectId: fields.projectId } : {}),
    labels: [...new Set(fields.labels ?? [])],
    ...(rule ? { repeat: rule.repeat } : {}),
    ...(fields.reminders?.length ? { reminders: dueWith(fields.reminders, dueDate, dueTime, caller.timeZone) } : {}),
    ...(fields.fields && Object.keys(fields.fields).length ? { fields: fields.fields } : {}),
    ...(blockers ? linkFields(blockers) : {}),
    ...(placement ? parentFields(placement) : {}),
    createdBy: caller.userId,
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  return { before: undefined, next, ...(blockers ? { blockers } : {}), ...(placement ? { placement } : {}) };
};

/**
 * The status a task moving to another project takes there: the one of the same name, else the first
 * of its category, else its phase's first. A canceled task goes only where canceled is a status
 * (done and canceled count differently: store/task-derived.ts).
 */
const carried = async (stores: WriteContext['stores'], caller: WriteContext['caller'], task: Task, set: StatusSet, param: string) => {
  const now = statusOf(task, await statusSetOf(stores, caller, task.projectId));
  // An open one may change category (any open status is open); a closed one keeps it (done and canceled count apart).
  const fits = (s: WorkflowStatus) => (task.status === 'open' ? phaseOf(s.category) === 'open' : s.category === now.category);
  const same: WorkflowStatus | undefined =
    set.statuses.find((s) => foldedName(s.name) === foldedName(now.name) && fits(s)) ??
    set.statuses.find((s) => s.category === now.category);
  if (same) return same;
  if (now.category === 'canceled') throw canceledHasNowhere(param, now.name);
  return defaultStatus(task.status, set);
};

/**
 * The status a change names: by name (a tool's argument) or by key (an undo, the import), read in the
 * task's project's set; a canceled key where that set has no canceled status is refused.
 */
const workflowOf = (
  name: string | null | undefined,
  key: string | null | undefined,
  set: StatusSet,
  param: string,
): WorkflowStatus | undefined => {
  if (name) return readStatus(name, set, param);
  if (!key) return undefined;
  const found = statusOfKey(key, set);
  if (!found) throw noCanceledStatus(param);
  return found;
};

/** Reminders relative to the due date at their instant for `dueDate` (the others as they are). */
const dueWith = (
  reminders: readonly TaskReminder[],
  dueDate: string | undefined,
  dueTime: string | undefined,
  timeZone: string,
): TaskReminder[] =>
  reminders.map((r) => {
    // In its own member's zone: "the day before at 17:00" is 17:00 where they are, whoever moved the date.
    const at = r.beforeDue
      ? reminderAt(r, dueDate ? { date: dueDate, ...(dueTime ? { time: dueTime } : {}) } : undefined, r.zone ?? timeZone)
      : undefined;
    return at && at !== r.at ? { ...r, at } : r;
  });

/**
 * A task's reminders after a change: as the patch gives them; moved with a recurring task to its next
 * occurrence; those relative to the due date following a due date that moved; else as they were.
 * A due date taken away leaves a relative one where it last was.
 */
const remindersAfter = (
  task: Task,
  given: readonly TaskReminder[] | undefined,
  occurrence: string | undefined,
  dueDate: string | undefined,
  dueTime: string | undefined,
  timeZone: string,
): readonly TaskReminder[] | undefined => {
  if (given) return dueWith(given, dueDate, dueTime, timeZone);
  const was = task.reminders;
  if (!was?.length) return was;
  if (occurrence && dueDate) {
    const from = { date: occurrence, ...(task.dueTime ? { time: task.dueTime } : {}) };
    const to = { date: dueDate, ...(dueTime ? { time: dueTime } : {}) };
    // Each in its own member's zone: "9am" stays 9am where they are.
    return was.map((r) => ({
      ...moveReminders([r], from, to, r.zone ?? timeZone)[0]!,
      userId: r.userId,
      ...(r.zone ? { zone: r.zone } : {}),
    }));
  }
  if (dueDate && (dueDate !== task.dueDate || dueTime !== task.dueTime)) return dueWith(was, dueDate, dueTime, timeZone);
  return was;
};

/** The task's own side of its placement. */
const parentFields = (p: Placement): Pick<Task, 'parentId' | 'parentNumber'> => ({
  parentId: p.parentId,
  ...(p.parentNumber !== undefined ? { parentNumber: p.parentNumber } : {}),
});

/** Whether two states of a task are the same change-wise (bookkeeping aside). */
const sameTask = (a: Task, b: Task): boolean => {
  const strip = ({ updatedAt: _u, version: _v, ...rest }: Task) => stableJson(rest);
  return strip(a) === strip(b);
};

/**
 * The task a change leaves; undefined when the change changes nothing (completing a done task).
 * Deleting needs the task's creator or an admin, as does restoring it (the door the delete came
 * through); every other change needs a member. A deleted task takes no change but its restore.
 */
export const planChange = async (
  ctx: WriteContext,
  task: Task,
  patch: TaskPatch,
  opts: PlanOptions = {},
): Promise<PlannedTask | undefined> => {
  const { stores, caller, source } = ctx;
  const prefix = opts.prefix ?? '';
  const at = source.now.toISOString();
  refuseUnlessCurrentLayout(caller);
  if (patch.deleted !== undefined && patch.deleted !== !!task.deletedAt) {
    requireOwnOrAdmin(caller, task.createdBy, 'delete tasks');
    // A delete or a restore changes nothing else (links stay: tasks/links.ts), but a restore takes
    // its place under its parent again by every rule of a placement (tasks/subtasks.ts).
    const { deletedAt: _d, parentId: _p, parentNumber: _pn, ...live } = task;
    // A parent goes with its subtasks, in one write, or not at all (its delete through any other door).
    if (patch.deleted && task.subtaskCount && !opts.subtree) throw hasSubtasks(taskNameOf(caller.workspaceKey, task), task.subtaskCount);
    if (patch.deleted && task.attachmentCount) throw hasAttachments(taskNameOf(caller.workspaceKey, task), task.attachmentCount);
    if (patch.deleted) return { before: task, next: { ...task, deletedAt: at, updatedAt: at, version: task.version + 1 } };
    // Only change_undo restores: its refusals name what it took.
    const placement = await restorePlacement(stores, caller, task, `${prefix}activityId`);
    const next: Task = { ...live, ...(placement ? parentFields(placement) : {}), updatedAt: at, version: task.version + 1 };
    return { before: task, next, ...(placement ? { placement } : {}) };
  }
  if (task.deletedAt) throw taskDeleted(taskNameOf(caller.workspaceKey, task), task.deletedAt);
  requireRole(caller, 'member', 'changing a task');
  const moving = patch.parentId !== undefined && patch.parentId !== null && patch.parentId !== task.parentId;
  const [assigneeId, newProject, blockers, placement] = await Promise.all([
    patch.assigneeId === undefined || patch.assigneeId === null || patch.assigneeId === task.assigneeId
      ? patch.assigneeId
      : memberIdOrRefuse(stores, caller, patch.assigneeId, `${prefix}assignee`),
    patch.projectId && patch.projectId !== task.projectId
      ? activeProjectOrRefuse(stores, caller, patch.projectId, `${prefix}projectId`)
      : undefined,
    patch.blockedBy === undefined
      ? undefined
      : resolveBlockers(stores, caller, task, patch.blockedBy, `${prefix}blockedBy`, opts.refOf, opts.fresh),
    moving ? resolveParent(stores, caller, task, patch.parentId!, `${prefix}parent`, opts.refOf, opts.fresh) : undefined,
  ]);
  let dueDate = patch.dueDate === undefined ? task.dueDate : (patch.dueDate ?? undefined);
  // A rule read from a tool counts from the due date the task will have; a rule kept (an undo) comes back as it was.
  const newRule = patch.repeat && !isStored(patch.repeat) ? patch.repeat : undefined;
  let dueTime =
    patch.dueTime === null ? undefined : (patch.dueTime ?? newRule?.time ?? (patch.dueDate === null ? undefined : task.dueTime));
  let repeat: Repeat | undefined =
    patch.repeat === undefined ? task.repeat : patch.repeat !== null && isStored(patch.repeat) ? patch.repeat : undefined;
  if (newRule) {
    const rule = await anchored(caller, source.now, newRule, dueDate, `${prefix}repeat`);
    repeat = rule.repeat;
    dueDate = rule.dueDate;
  } else if (repeat && dueDate && patch.dueDate) recurringDueInRange(dueDate, dateInZone(source.now, repeat.zone), `${prefix}dueDate`);
  if (repeat && !dueDate) throw recurringNeedsDate(`${prefix}dueDate`, repeat.words);
  if (dueTime && !dueDate) throw dueTimeNoDueDate(`${prefix}dueTime`);
  // A status names its phase; a phase alone (a completion, a reopening) starts at its first status.
  // Statuses are the project's: a task moving to another project takes the status of its name there.
  const nextProject = patch.projectId === undefined ? task.projectId : (patch.projectId ?? undefined);
  const stateGiven = patch.state ?? patch.stateKey;
  const statusTouched = stateGiven !== undefined || patch.status !== undefined || nextProject !== task.projectId;
  const set = statusTouched ? (newProject ? setOf(newProject) : await statusSetOf(stores, caller, nextProject)) : undefined;
  const workflow = set && workflowOf(patch.state, patch.stateKey, set, `${prefix}status`);
  let status = workflow ? phaseOf(workflow.category) : (patch.status ?? task.status);
  let state = !set
    ? task.state
    : stateOf(
        workflow ??
          (stateGiven === null || status !== task.status
            ? defaultStatus(status, set)
            : nextProject !== task.projectId
              ? await carried(stores, caller, task, set, `${prefix}projectId`)
              : statusOf(task, set)),
      );
  // Completing an occurrence of a recurring task moves it to the next one; the last one completes it.
  // Canceling one closes it, rule and all, until it is reopened.
  let occurrence: string | undefined;
  const completing = status === 'done' && task.status !== 'done' && workflow?.category !== 'canceled';
  if (completing && repeat && dueDate && !patch.completed) {
    const doneOn = dateInZone(source.now, repeat.zone);
    const after = await nextOccurrence(repeat, dueDate, doneOn);
    if (after) {
      occurrence = dueDate;
      dueDate = after;
      status = 'open';
      state = stateOf(defaultStatus('open', set ?? DEFAULT_SET));
    }
  }
  if (dueDate === undefined) dueTime = undefined;
  const reminders = remindersAfter(task, patch.reminders, occurrence, dueDate, dueTime, caller.timeZone);
  // Values move with the task to another project where a field of the same name and type is there.
  const moved =
    patch.fields === undefined && nextProject !== task.projectId && task.fields && Object.keys(task.fields).length
      ? await carriedFields(ctx, task, nextProject)
      : undefined;
  const fieldValues = patch.fields ?? moved?.values ?? task.fields;
  const {
    notes: _n,
    dueDate: _d,
    dueTime: _t,
    assigneeId: _a,
    projectId: _p,
    completedAt: _ca,
    completedBy: _cb,
    state: _st,
    blockedBy: _bb,
    openBlockers: _ob,
    goneBlockers: _gb,
    repeat: _r,
    parentId: _pid,
    parentNumber: _pnum,
    reminders: _rem,
    fields: _fields,
    ...kept
  } = task;
  if (patch.notes !== undefined && !isWhole(task))
    throw new Error(`task ${task.taskId} was read without its notes; a change of them needs them`);
  const notes = patch.notes === undefined ? task.notes : (patch.notes ?? undefined);
  const nextAssignee = assigneeId === undefined ? task.assigneeId : (assigneeId ?? undefined);
  // Closed as it was keeps its time; closed anew (completed, canceled, or done after canceled) is closed now.
  const canceled = (st: TaskStatus, key: string | undefined) =>
    st === 'done' && categoryOfKey(key ?? storedKey({ status: st })) === 'canceled';
  const done =
    status === 'done'
      ? task.status === 'done' && canceled(task.status, task.state) === canceled(status, state) && !patch.completed
        ? { completedAt: task.completedAt!, completedBy: task.completedBy! }
        : { completedAt: patch.completed?.at ?? at, completedBy: patch.completed?.by ?? caller.userId }
      : undefined;
  const links = blockers
    ? linkFields(blockers)
    : {
        ...(task.blockedBy ? { blockedBy: task.blockedBy } : {}),
        ...(task.openBlockers ? { openBlockers: task.openBlockers } : {}),
        ...(task.goneBlockers ? { goneBlockers: task.goneBlockers } : {}),
      };
  const next: Task = {
    ...kept,
    ...(patch.title !== undefined ? { title: patch.title } : {}),
    ...(patch.priority !== undefined ? { priority: patch.priority } : {}),
    ...(patch.labels !== undefined ? { labels: [...new Set(patch.labels)] } : {}),
    ...(notes ? { notes } : {}),
    ...(dueDate ? { dueDate } : {}),
    ...(dueTime ? { dueTime } : {}),
    ...(nextAssignee ? { assigneeId: nextAssignee } : {}),
    ...(nextProject ? { projectId: nextProject } : {}),
    ...(repeat ? { repeat } : {}),
    ...(reminders?.length ? { reminders } : {}),
    ...(fieldValues && Object.keys(fieldValues).length ? { fields: fieldValues } : {}),
    ...(done ?? {}),
    status,
    ...(state ? { state } : {}),
    ...links,
    ...(placement
      ? parentFields(placement)
      : patch.parentId === null || !task.parentId
        ? {}
        : { parentId: task.parentId, ...(task.parentNumber !== undefined ? { parentNumber: task.parentNumber } : {}) }),
    updatedAt: at,
    version: task.version + 1,
  };
  if (sameTask(task, next)) return undefined;
  return {
    before: task,
    // Its item and word entries derive from the notes it now has, not from the ones it was read with.
    next: patch.notes === undefined ? next : withNotesSet(next, notes),
    ...(blockers ? { blockers } : {}),
    ...(placement ? { placement } : {}),
    ...(occurrence ? { occurrence } : {}),
    ...(moved?.left.length ? { fieldsLeft: moved.left } : {}),
  };
};

/** A task's values as it moves to `projectId` (none: no project), and the fields whose values stay behind. */
const carriedFields = async (ctx: WriteContext, task: Task, projectId: string | undefined) => {
  const names = await ctx.stores.names.get(ctx.caller, { projects: [task.projectId, projectId] });
  const fieldsOf = (id: string | undefined) => (id ? (names.projects.get(id)?.fields ?? []) : []);
  return carryValues(task.fields, fieldsOf(task.projectId), fieldsOf(projectId));
};
