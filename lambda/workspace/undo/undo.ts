import { ToolRefusal } from '../../errors.js';
import type { Member, Scope } from '../../vocabulary.js';
import { describeChange, whenPhrase } from '../activity/render.js';
import { deleteAttachment, restoreAttachment } from '../attachments/attachment-writer.js';
import { deleteComment, restoreComment } from '../comments/comment-writer.js';
import { revokeToken } from '../membership/credentials.js';
import { changeRole, changeStatus, inviteMember, type MemberChange, removeMember } from '../membership/members.js';
import { type ActivityRecord, isWebhookRecord, stateAfter } from '../model/activity.js';
import type { FieldValues } from '../model/custom-fields.js';
import {
  attachmentGoneForGood,
  changedSince,
  nothingToUndo,
  projectDeleted,
  race,
  revokeNotUndoable,
  roleTooLow,
  taskGoneForGood,
  tokenRevokedAlready,
  webhookChangeNotUndoable,
  workspaceSwitchNotUndoable,
} from '../model/refusals.js';
import { undoStatusSet } from '../model/status-sets.js';
import { setOf } from '../model/statuses.js';
import type { Attachment, Comment, Project, TaskReminder } from '../model/types.js';
import type { View } from '../model/views.js';
import { changeProject, type ProjectPatch } from '../projects/project-writer.js';
import { changeView, deleteView, restoreView } from '../saved-views/view-writer.js';
import { loadNames } from '../store/lookups.js';
import type { Names } from '../store/names.js';
import type { WriteContext } from '../store/stores.js';
import type { TaskPatch } from '../tasks/planner.js';
import { changeTask } from '../tasks/task-writer.js';

/**
 * change_undo's executors, one per kind of target. Each computes the state to return to from the
 * record and hands it, as a change, to that kind's own writer: the same rules, the same role check
 * (the caller's role now), the same limits as the change itself went through, so no rule is skipped
 * by undoing. The writer holds the target to the state the change left it in (its version, a
 * member's role or status) and writes the undo's record and the original's `undoneBy` with it; a
 * target that moved on is a conflict naming the later changes, and nothing is written.
 */

export interface UndoContext extends WriteContext {
  /** The caller's scopes, as cut to their role now: member changes need team:admin. */
  readonly scopes: readonly Scope[];
}

export interface UndoResult {
  readonly undo: ActivityRecord;
  /** What the undo's write cost, where the writer counted it (a task's). */
  readonly writeUnits?: number;
}

/** A refusal of the target's held state means it moved on: say by whom and when. */
const conflictNamingLater = async (ctx: UndoContext, record: ActivityRecord, names: Names, cause: unknown): Promise<never> => {
  if (!(cause instanceof ToolRefusal) || (cause.reason !== 'version-conflict' && cause.reason !== 'race')) throw cause;
  const later = (await ctx.stores.activity.laterOnTarget(ctx.caller.workspaceId, record, 3)).filter(
    (r) => r.activityId !== record.activityId,
  );
  throw changedSince(
    record.targetLabel,
    record.activityId,
    later.map(
      (r) =>
        `${r.activityId} by ${r.actorName} via ${r.client}, ${whenPhrase(r.at, ctx.source.now, ctx.caller.timeZone)}: ${describeChange(r, names)}`,
    ),
    later.map((r) => r.activityId),
  );
};

// ---- tasks ---------------------------------------------------------------------------------------

/** The patch that puts a task back to its state before the record's change: each field's value before. */
const taskPatchBack = (record: ActivityRecord): TaskPatch => {
  const patch: Record<string, unknown> = {};
  const was = (field: string) => record.changes.find((c) => c.field === field)?.before;
  for (const c of record.changes) {
    switch (c.field) {
      case 'title':
      case 'priority':
        patch[c.field] = c.before;
        break;
      case 'notes':
      case 'dueDate':
      case 'dueTime':
      case 'assigneeId':
      case 'projectId':
        patch[c.field] = c.before ?? null;
        break;
      case 'repeat':
        patch.repeat = c.before ?? null;
        break;
      case 'labels':
        patch.labels = (c.before as string[] | undefined) ?? [];
        break;
      case 'reminders':
        patch.reminders = (c.before as TaskReminder[] | undefined) ?? [];
        break;
      case 'fields':
        patch.fields = (c.before as FieldValues | undefined) ?? {};
        break;
      case 'parentId':
        patch.parentId = c.before ?? null;
        break;
      case 'state':
        // The key the record kept, not a name: a status renamed since is still the one it was.
        patch.stateKey = c.before ?? null;
        // Done ↔ canceled keeps the phase: the time it was closed before comes back with the status.
        if (!record.changes.some((x) => x.field === 'status') && was('completedAt'))
          patch.completed = { at: was('completedAt'), by: was('completedBy') ?? record.actorId };
        break;
      case 'blockedBy':
        patch.blockedBy = Object.keys((c.before as Record<string, number> | undefined) ?? {});
        break;
      case 'status':
        patch.status = c.before;
        if (c.before === 'done' && was('completedAt'))
          patch.completed = { at: was('completedAt'), by: was('completedBy') ?? record.actorId };
        break;
      case 'deletedAt':
        patch.deleted = c.before !== undefined;
        break;
    }
  }
  return patch as TaskPatch;
};

const undoTask = async (ctx: UndoContext, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  // The task as it is now: the writer holds the undo to the version the change made.
  const current = await ctx.stores.tasks.getAny(ctx.caller.workspaceId, record.targetId);
  if (!current) throw taskGoneForGood(record.activityId);
  const patch: TaskPatch = record.action === 'created' ? { deleted: true } : taskPatchBack(record);
  const projectBack = patch.projectId === undefined ? current.projectId : (patch.projectId ?? undefined);
  if (patch.deleted === false && projectBack && !names.projects.has(projectBack)) {
    // Restoring into a project that is gone would make a task no list shows.
    throw projectDeleted(projectBack, 'meanwhile', 'activityId (its project)');
  }
  try {
    const written = await changeTask(ctx, current, patch, { undoes: record, expectVersion: record.version! });
    if (!written) throw nothingToUndo(record.activityId);
    return { undo: written.record, writeUnits: written.writeUnits };
  } catch (err) {
    return conflictNamingLater(ctx, record, names, err);
  }
};

// ---- projects ------------------------------------------------------------------------------------

const undoProject = async (ctx: UndoContext, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const current = { ...(stateAfter(record) as unknown as Project), version: record.version! };
  const before = record.before as unknown as Project | undefined;
  const patch: ProjectPatch = before
    ? {
        ...(record.changes.some((c) => c.field === 'name') ? { name: before.name } : {}),
        ...(record.changes.some((c) => c.field === 'description') ? { description: before.description ?? null } : {}),
        ...(record.changes.some((c) => c.field === 'status') ? { archived: before.status === 'archived' } : {}),
        ...(record.changes.some((c) => c.field === 'deletedAt') ? { deleted: before.deletedAt !== undefined } : {}),
        ...(record.changes.some((c) => c.field === 'statuses' || c.field === 'retiredStatuses')
          ? { statusSet: undoStatusSet(setOf(current), setOf(before)) }
          : {}),
        // A field removed comes back with its id, and so with every value its tasks kept.
        ...(record.changes.some((c) => c.field === 'fields') ? { fields: before.fields ?? [] } : {}),
      }
    : { deleted: true };
  try {
    const written = await changeProject(ctx, current, patch, { expectVersion: record.version!, undoes: record });
    if (!written) throw nothingToUndo(record.activityId);
    return { undo: written.record };
  } catch (err) {
    return conflictNamingLater(ctx, record, names, err);
  }
};

// ---- comments ------------------------------------------------------------------------------------

const undoComment = async (ctx: UndoContext, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const comment = (record.after ?? record.before) as unknown as Comment;
  const task = {
    taskId: comment.taskId,
    title: record.targetLabel,
    ...(record.taskNumber !== undefined ? { number: record.taskNumber } : {}),
    ...(record.projectId ? { projectId: record.projectId } : {}),
  };
  try {
    const written =
      record.action === 'deleted' ? await restoreComment(ctx, task, comment, record) : await deleteComment(ctx, task, comment, record);
    return { undo: written.record };
  } catch (err) {
    return conflictNamingLater(ctx, record, names, err);
  }
};

// ---- attachments ---------------------------------------------------------------------------------

const undoAttachment = async (ctx: UndoContext, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const kept = (record.after ?? record.before) as unknown as Attachment;
  const task = {
    taskId: kept.taskId,
    title: record.targetLabel,
    ...(record.taskNumber !== undefined ? { number: record.taskNumber } : {}),
    ...(record.projectId ? { projectId: record.projectId } : {}),
  };
  try {
    const now = await ctx.stores.attachments.get(ctx.caller.workspaceId, kept.attachmentId);
    if (!now) throw attachmentGoneForGood(record.activityId);
    // It must still be as the change left it: deleted to undo a delete, there to undo an add.
    if (record.action === 'deleted' ? !now.deletedAt : now.deletedAt) return conflictNamingLater(ctx, record, names, race());
    const written =
      record.action === 'deleted' ? await restoreAttachment(ctx, task, kept, record) : await deleteAttachment(ctx, task, now, record);
    return { undo: written.record };
  } catch (err) {
    return conflictNamingLater(ctx, record, names, err);
  }
};

// ---- views ---------------------------------------------------------------------------------------

const undoView = async (ctx: UndoContext, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const kept = (record.after ?? record.before) as unknown as View;
  try {
    const now = (await ctx.stores.views.visible(ctx.caller.workspaceId, ctx.caller.userId)).find((v) => v.viewId === record.targetId);
    if (record.action === 'deleted') {
      if (now) return conflictNamingLater(ctx, record, names, race());
      return { undo: (await restoreView(ctx, kept, record)).record };
    }
    // It must still be as the change left it.
    if (!now || now.version !== record.version) return conflictNamingLater(ctx, record, names, race());
    if (record.action === 'changed' && record.before) {
      const was = record.before as unknown as View;
      const fields = { name: was.name, query: was.query, sort: was.sort, group: was.group, shared: was.shared };
      return { undo: (await changeView(ctx, now, fields, record)).record };
    }
    return { undo: (await deleteView(ctx, now, record)).record };
  } catch (err) {
    return conflictNamingLater(ctx, record, names, err);
  }
};

// ---- members -------------------------------------------------------------------------------------

const undoMember = async (ctx: UndoContext, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const { stores, caller, source } = ctx;
  if (!ctx.scopes.includes('team:admin'))
    throw roleTooLow(`undoing ${record.activityId} (a member change) with this token`, 'admin (a token with team:admin)', caller.role);
  const ws = caller.workspaceId;
  const before = record.before as unknown as Member | undefined;
  const after = stateAfter(record) as unknown as (Member & { deletedAt?: string }) | undefined;
  const members = await stores.directory.listMembers(ws);
  const now = members.find((m) => m.userId === record.targetId);
  // The member must still be as the change left them; the writer's rules then decide as for any change.
  const moved = (): Promise<never> => conflictNamingLater(ctx, record, names, race());
  const opts = { undoes: record };
  let change: MemberChange;
  if (record.action === 'invited' || record.action === 'restored') {
    if (!now || now.role !== after?.role || now.status !== after.status) return moved();
    change = await removeMember(stores, caller, source, ws, record.targetId, opts);
  } else if (record.action === 'removed') {
    if (now || !before) return moved();
    change = await inviteMember(stores, caller, source, before, opts);
  } else if (record.action === 'role_changed') {
    if (!now || now.role !== after?.role || !before) return moved();
    change = await changeRole(stores, caller, source, ws, record.targetId, before.role, { ...opts, expected: after.role });
    if (!change.changed) return moved();
  } else {
    if (!now || now.status !== after?.status || !before) return moved();
    change = await changeStatus(stores, caller, source, ws, record.targetId, before.status, opts);
  }
  return { undo: change.record! };
};

// ---- tokens --------------------------------------------------------------------------------------

const undoToken = async (ctx: UndoContext, record: ActivityRecord): Promise<UndoResult> => {
  const { stores, caller, source } = ctx;
  if (record.action !== 'created') {
    throw revokeNotUndoable(record.activityId);
  }
  const token = record.after as unknown as Parameters<typeof revokeToken>[3];
  // Someone else's token is a member change, and needs what member changes need.
  if (token.userId !== caller.userId && !ctx.scopes.includes('team:admin')) {
    throw roleTooLow(
      `undoing ${record.activityId} (another member's token) with this token`,
      'admin (a token with team:admin)',
      caller.role,
    );
  }
  const owner = await stores.directory.getMember(caller.workspaceId, token.userId);
  const revoked = await revokeToken(stores, caller, source, token, owner, { undoes: record });
  if (!revoked.record) throw tokenRevokedAlready(record.activityId);
  return { undo: revoked.record };
};

/** Undoes one record; the caller has checked it exists, is live, and is not undone yet. */
export const undoChange = async (ctx: UndoContext, record: ActivityRecord): Promise<UndoResult> => {
  const names = await loadNames(ctx.stores, ctx.caller);
  switch (record.kind) {
    case 'task':
      return undoTask(ctx, record, names);
    case 'project':
      return undoProject(ctx, record, names);
    case 'comment':
      return undoComment(ctx, record, names);
    case 'attachment':
      return undoAttachment(ctx, record, names);
    case 'member':
      return undoMember(ctx, record, names);
    case 'token':
      return undoToken(ctx, record);
    case 'workspace':
      if (isWebhookRecord(record)) throw webhookChangeNotUndoable(record.activityId, record.action === 'created' ? 'created' : 'removed');
      throw workspaceSwitchNotUndoable(record.activityId);
    case 'view':
      return undoView(ctx, record, names);
  }
};
