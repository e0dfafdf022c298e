import { ConflictRefusal, InvalidArgumentRefusal, NotFoundRefusal, RoleTooLowRefusal, ToolRefusal } from '../errors.js';
import type { ToolContext } from '../mcp/tool-registry.js';
import { MAX_TRANSACTION_ACTIONS, type WriteOp } from '../platform/transact.js';
import type { Member } from '../vocabulary.js';
import { type ActivityAction, type ActivityRecord, buildRecord, stateAfter } from './activity.js';
import { describeChange, whenPhrase } from './activity-render.js';
import { markCommentsExpiring, memberAudit, projectRecord, sourceOf, taskRecord } from './changes.js';
import { openOf, resolveBlockers } from './links.js';
import { changeRole, changeStatus, checkInvite, removeMember, requireOwnOrAdmin, requireRole } from './membership.js';
import type { Comment, Project, Task } from './model.js';
import type { Names } from './names.js';
import type { WorkspaceServices } from './services.js';
import { taskWriteOps } from './task-changes.js';
import { loadNames } from './views.js';

/**
 * change_undo's executors, one per kind of target. Each puts the target back to the state before
 * the record's change, only if it is still in the state that change left it in, and writes the
 * undo's own record and the original's `undoneBy` in the same all-or-nothing write. A target that
 * moved on is a conflict naming the later changes; nothing is written then.
 */

type Ctx = ToolContext<WorkspaceServices>;

export interface UndoResult {
  readonly undo: ActivityRecord;
}

/** The original's mark and the undo's record: what every undo writes besides the target. */
const bookkeeping = (services: WorkspaceServices, original: ActivityRecord, undo: ActivityRecord): WriteOp[] => [
  services.activity.markUndoneOp(original, undo.activityId, undo.at),
  services.activity.recordOp(undo),
];

/** A refusal of the target's condition means it moved on: say by whom and when. */
const conflictNamingLater = async (ctx: Ctx, record: ActivityRecord, names: Names, cause: unknown): Promise<never> => {
  if (!(cause instanceof ToolRefusal) || cause.message.includes('was undone meanwhile')) throw cause;
  const later = (await ctx.services.activity.laterOnTarget(ctx.principal.workspaceId, record, 3)).filter(
    (r) => r.activityId !== record.activityId,
  );
  const what = later.length
    ? later
        .map(
          (r) =>
            `${r.activityId} by ${r.actorName} via ${r.client}, ${whenPhrase(r.at, ctx.now, ctx.principal.timeZone)}: ${describeChange(r, names)}`,
        )
        .join('; ')
    : cause.message;
  throw new ConflictRefusal(
    `Conflict: '${record.targetLabel}' has changed since ${record.activityId} (${what}), so undoing it would overwrite that; nothing was changed. ` +
      'Undo the later change first, or change it back by hand.',
  );
};

const actionOf = (from: { status?: unknown; deletedAt?: unknown }, to: { status?: unknown; deletedAt?: unknown }): ActivityAction => {
  if (to.deletedAt && !from.deletedAt) return 'deleted';
  if (!to.deletedAt && from.deletedAt) return 'restored';
  if (to.status === 'done' && from.status !== 'done') return 'completed';
  if (to.status === 'open' && from.status === 'done') return 'reopened';
  if (to.status === 'archived' && from.status !== 'archived') return 'archived';
  if (to.status === 'active' && from.status === 'archived') return 'unarchived';
  return 'changed';
};

// ---- tasks ---------------------------------------------------------------------------------------

const undoTask = async (ctx: Ctx, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const { services, principal, now } = ctx;
  requireRole(principal, 'member', 'undoing a task change');
  const current = { ...(stateAfter(record) as unknown as Task), version: record.version! };
  const at = now.toISOString();
  // Undoing a creation deletes the task, so the delete rule applies; anything else restores a state it had.
  const target: Task = record.before
    ? {
        ...(record.before as unknown as Task),
        ...(record.before.deletedAt ? { deletedAt: at } : {}),
        updatedAt: at,
        version: record.version! + 1,
      }
    : { ...current, deletedAt: at, updatedAt: at, version: record.version! + 1 };
  if (!record.before) requireOwnOrAdmin(principal, current.createdBy, 'delete tasks');
  if (!target.deletedAt && target.projectId && !names.projects.has(target.projectId)) {
    throw new ConflictRefusal(
      `Conflict: '${target.title}' belonged to project ${target.projectId}, which no longer exists; restore the project first ` +
        '(activity_list kind project shows its deletion), then undo this again. Nothing was changed.',
    );
  }
  const undo = taskRecord(services, sourceOf(ctx), actionOf(current, target), current, target, { undoOf: record.activityId });
  // Links back as they were: the blockers must still be there (and their status decides which are open).
  const linksMove = JSON.stringify(current.blockedBy ?? {}) !== JSON.stringify(target.blockedBy ?? {});
  const blockers = linksMove
    ? await resolveBlockers(services, principal, target, Object.keys(target.blockedBy ?? {}), 'activityId (its blockedBy)')
    : undefined;
  const { openBlockers: _stale, ...unlinked } = target;
  const planned = blockers
    ? {
        next: { ...unlinked, blockedBy: blockers.blockedBy, ...(openOf(blockers).length ? { openBlockers: openOf(blockers) } : {}) },
        blockers,
      }
    : { next: target };
  const becomesDeleted = !!target.deletedAt && !current.deletedAt;
  const becomesVisible = !target.deletedAt && !!current.deletedAt;
  const comments = becomesDeleted || becomesVisible ? await services.comments.keysOfTask(principal.workspaceId, target.taskId) : [];
  const expiresAt = becomesDeleted ? undo.expiresAt : undefined;
  // The record knows who waited on the task then; if others were linked since, the write is refused
  // and made again once against the task as it is now.
  let base: Task = current;
  for (let attempt = 1; ; attempt++) {
    const ops = [...taskWriteOps(services, base, planned, expiresAt), ...bookkeeping(services, record, undo)];
    const room = MAX_TRANSACTION_ACTIONS - ops.length;
    // Comments past what one write holds: kept again first (still invisible: their task is deleted), so
    // a failure half way leaves nothing visible that will expire.
    if (becomesVisible && attempt === 1) await markCommentsExpiring(services, comments.slice(room), undefined);
    try {
      await services.commit([...ops, ...comments.slice(0, room).map((key) => services.comments.expiryOp(key, expiresAt))]);
      if (becomesDeleted) await markCommentsExpiring(services, comments.slice(room), expiresAt).catch(() => undefined);
      return { undo };
    } catch (err) {
      if (attempt === 1 && err instanceof ConflictRefusal && err.message.includes('was linked to')) {
        const fresh = await services.tasks.getAny(principal.workspaceId, target.taskId);
        if (fresh && fresh.version === record.version) {
          base = { ...current, blocks: fresh.blocks ?? [], linksVersion: fresh.linksVersion ?? 0 } as Task;
          continue;
        }
      }
      return conflictNamingLater(ctx, record, names, err);
    }
  }
};

// ---- projects ------------------------------------------------------------------------------------

const undoProject = async (ctx: Ctx, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const { services, principal, now } = ctx;
  requireRole(principal, 'admin', 'undoing a project change');
  const current = { ...(stateAfter(record) as unknown as Project), version: record.version! };
  const at = now.toISOString();
  const target: Project = record.before
    ? { ...(record.before as unknown as Project), updatedAt: at, version: record.version! + 1 }
    : { ...current, deletedAt: at, updatedAt: at, version: record.version! + 1 };
  if (target.deletedAt && !current.deletedAt) {
    const held = await services.tasks.search(principal.workspaceId, { status: 'any', projectId: target.projectId }, 1);
    if (held.tasks.length) {
      throw new ConflictRefusal(
        `Conflict: project '${target.name}' holds tasks now, so undoing its creation would delete them with it; move them first. Nothing was changed.`,
      );
    }
  }
  const undo = projectRecord(services, sourceOf(ctx), actionOf(current, target), current, target, { undoOf: record.activityId });
  try {
    await services.commit([
      services.projects.putOp(target, record.version, target.deletedAt ? undo.expiresAt : undefined),
      services.names.changeOp(principal.workspaceId),
      ...bookkeeping(services, record, undo),
    ]);
  } catch (err) {
    return conflictNamingLater(ctx, record, names, err);
  }
  services.names.forget(principal.workspaceId);
  return { undo };
};

// ---- comments ------------------------------------------------------------------------------------

const undoComment = async (ctx: Ctx, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const { services, principal, now } = ctx;
  requireRole(principal, 'member', 'undoing a comment change');
  const comment = (record.after ?? record.before) as unknown as Comment;
  const restoring = record.action === 'deleted';
  if (!restoring) requireOwnOrAdmin(principal, comment.authorId, 'delete comments');
  const at = now.toISOString();
  const undo = buildRecord(
    sourceOf(ctx),
    principal.workspaceId,
    {
      kind: 'comment',
      action: restoring ? 'restored' : 'deleted',
      targetId: comment.commentId,
      targetLabel: record.targetLabel,
      taskId: comment.taskId,
      ...(record.projectId ? { projectId: record.projectId } : {}),
      changes: [{ field: 'deletedAt', ...(restoring ? { before: at } : { after: at }) }],
      before: { ...comment },
      undoOf: record.activityId,
    },
    services.activity.expiresAtFor(now),
  );
  try {
    await services.commit([
      // The comment's task must be there (not deleted) for the comment to come back or go.
      services.tasks.checkOp(principal.workspaceId, comment.taskId),
      ...(restoring ? services.comments.restoreOps(comment) : services.comments.removeOps(comment, undo.expiresAt)),
      ...bookkeeping(services, record, undo),
    ]);
  } catch (err) {
    return conflictNamingLater(ctx, record, names, err);
  }
  return { undo };
};

// ---- members -------------------------------------------------------------------------------------

const undoMember = async (ctx: Ctx, record: ActivityRecord, names: Names): Promise<UndoResult> => {
  const { services, principal } = ctx;
  if (!principal.scopes.includes('team:admin')) {
    throw new RoleTooLowRefusal(`Refused: undoing a member change needs a token with the scope team:admin; ${record.activityId} is one.`);
  }
  const ws = principal.workspaceId;
  const before = record.before as unknown as Member | undefined;
  const after = stateAfter(record) as unknown as (Member & { deletedAt?: string }) | undefined;
  const { audit: recordIt, records } = memberAudit(services.activity, sourceOf(ctx), { undoOf: record.activityId });
  // Each undo record rides in the member write, with the original's mark beside it.
  const audit = (b: Member | undefined, a: Member | undefined): readonly WriteOp[] => {
    const ops = recordIt(b, a);
    return [...ops, services.activity.markUndoneOp(record, records.at(-1)!.activityId, records.at(-1)!.at)];
  };
  const members = await services.directory.listMembers(ws);
  const now = members.find((m) => m.userId === record.targetId);
  // The member must still be as the change left them; the rules of membership.ts then decide as for
  // any change (role, last active owner, never oneself).
  const moved = (): Promise<never> => conflictNamingLater(ctx, record, names, new ConflictRefusal('it changed since'));
  if (record.action === 'invited' || record.action === 'restored') {
    if (!now || now.role !== after?.role || now.status !== after.status) return moved();
    await removeMember(services.directory, principal, ws, record.targetId, audit);
  } else if (record.action === 'removed') {
    if (now || !before) return moved();
    checkInvite(principal, before.role);
    if ((await services.directory.inviteMember(before, audit(undefined, before))) === 'email_taken') {
      throw new ConflictRefusal(
        `Conflict: ${before.email} belongs to someone else now, so ${before.name} cannot come back; nothing was changed.`,
      );
    }
  } else if (record.action === 'role_changed') {
    if (!now || now.role !== after?.role || !before) return moved();
    await changeRole(services.directory, principal, ws, record.targetId, before.role, audit);
  } else {
    if (!now || now.status !== after?.status || !before) return moved();
    await changeStatus(services.directory, principal, ws, record.targetId, before.status, audit);
  }
  return { undo: records.at(-1)! };
};

// ---- tokens --------------------------------------------------------------------------------------

const undoToken = async (ctx: Ctx, record: ActivityRecord): Promise<UndoResult> => {
  const { services, principal, now } = ctx;
  if (record.action !== 'created') {
    throw new InvalidArgumentRefusal(
      `activityId: ${record.activityId} revoked a token or disconnected an app, which cannot be undone: a revoked credential stays ` +
        'revoked. Make a new token on the account page, or connect the app again.',
    );
  }
  const token = record.after as { userId: string; tokenId: string; label: string } | undefined;
  if (token?.userId !== principal.userId && !principal.scopes.includes('team:admin')) {
    throw new RoleTooLowRefusal(`Refused: only the token's owner, or a token with team:admin, may undo ${record.activityId}.`);
  }
  const undo = buildRecord(
    sourceOf(ctx),
    principal.workspaceId,
    {
      kind: 'token',
      action: 'revoked',
      targetId: record.targetId,
      targetLabel: record.targetLabel,
      changes: [{ field: 'revokedAt', after: now.toISOString() }],
      ...(record.after ? { before: record.after } : {}),
      undoOf: record.activityId,
    },
    services.activity.expiresAtFor(now),
  );
  const revoked = await services.tokens.revoke(
    principal.workspaceId,
    record.targetId,
    now.toISOString(),
    bookkeeping(services, record, undo),
  );
  if (!revoked) throw new NotFoundRefusal(`Token ${record.targetId} of ${record.activityId} no longer exists; nothing was changed.`);
  return { undo };
};

/** Undoes one record; the caller has checked it exists, is live, and is not undone yet. */
export const undoChange = async (ctx: Ctx, record: ActivityRecord): Promise<UndoResult> => {
  const names = await loadNames(ctx.services, ctx.principal);
  switch (record.kind) {
    case 'task':
      return undoTask(ctx, record, names);
    case 'project':
      return undoProject(ctx, record, names);
    case 'comment':
      return undoComment(ctx, record, names);
    case 'member':
      return undoMember(ctx, record, names);
    case 'token':
      return undoToken(ctx, record);
    case 'workspace':
      throw new InvalidArgumentRefusal(
        `activityId: ${record.activityId} switched the whole workspace off or on, which only an operator changes (npm run admin -- workspace enable|disable).`,
      );
  }
};
