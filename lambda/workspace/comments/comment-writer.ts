import type { WriteOp } from '../../platform/transact.js';
import { commentRecord } from '../activity/records.js';
import { requireOwnOrAdmin, requireRole } from '../membership/rules.js';
import type { ActivityRecord } from '../model/activity.js';
import { uuidV7 } from '../model/ids.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Comment, Task } from '../model/types.js';
import { confirmedOr, writeClaimed } from '../store/confirmed.js';
import type { WriteContext } from '../store/stores.js';
import { writesOf } from '../store/writes.js';

/**
 * The one writer of comments, for every door (the tools and change_undo): members add; members
 * delete their own, admins anyone's, and restoring a deleted comment needs the same as deleting it.
 * Each change is one write with its record. A deleted comment moves to `GONE#COMMENT#…` and is kept
 * as long as its record; its task must be there (not deleted) for it to go or come back.
 */

type TaskRef = Pick<Task, 'taskId' | 'title' | 'number' | 'projectId'>;

export interface WrittenComment {
  readonly comment: Comment;
  readonly record: ActivityRecord;
}

const commit = (ctx: WriteContext, ops: readonly WriteOp[], check: string): Promise<void> =>
  confirmedOr(check, () => writesOf(ctx.stores).commit(ops));

export const addComment = async (ctx: WriteContext, task: TaskRef, body: string, undoes?: ActivityRecord): Promise<WrittenComment> => {
  const { stores, caller, source } = ctx;
  requireRole(caller, 'member', 'commenting');
  const comment: Comment = {
    workspaceId: caller.workspaceId,
    taskId: task.taskId,
    commentId: uuidV7(source.now),
    authorId: caller.userId,
    body,
    createdAt: source.now.toISOString(),
  };
  const record = commentRecord(stores.activity, source, 'created', comment, task, undoes ? { undoOf: undoes.activityId } : {});
  // No condition on the task itself: every comment of a busy task would then queue on that one
  // item (DynamoDB answers concurrent transactions on an item with conflicts). A comment landing on a
  // task deleted that very moment is invisible with it (docs/workspace.md, known limits).
  await writeClaimed(
    ctx,
    record.activityId,
    `comments_list ${taskNameOf(caller.workspaceKey, task)} shows whether it was added.`,
    (claim) =>
      writesOf(stores).commit([
        ...claim,
        writesOf(stores).comments.addOp(comment),
        writesOf(stores).activity.recordOp(record),
        // Everyone it mentions watches the task from now on.
        ...(record.mentioned ?? []).map((userId) =>
          writesOf(stores).inbox.watchOp(caller.workspaceId, task.taskId, { userId, on: true }, comment.createdAt),
        ),
      ]),
  );
  return { comment, record };
};

export const deleteComment = async (
  ctx: WriteContext,
  task: TaskRef,
  comment: Comment,
  undoes?: ActivityRecord,
): Promise<WrittenComment> => {
  const { stores, caller, source } = ctx;
  requireOwnOrAdmin(caller, comment.authorId, 'delete comments');
  const record = commentRecord(stores.activity, source, 'deleted', comment, task, undoes ? { undoOf: undoes.activityId } : {});
  await commit(
    ctx,
    [
      // The comment's task must be there (not deleted) for the comment to go.
      ...(undoes ? [writesOf(stores).tasks.checkOp(caller.workspaceId, task.taskId)] : []),
      ...writesOf(stores).comments.removeOps(comment, record.expiresAt),
      writesOf(stores).activity.recordOp(record),
      ...(undoes ? [writesOf(stores).activity.markUndoneOp(undoes, record.activityId, record.at)] : []),
    ],
    `comments_list ${taskNameOf(caller.workspaceKey, task)} shows whether it was deleted.`,
  );
  return { comment, record };
};

/** Puts a deleted comment back (an undo of its delete): the role its delete needed. */
export const restoreComment = async (
  ctx: WriteContext,
  task: TaskRef,
  comment: Comment,
  undoes: ActivityRecord,
): Promise<WrittenComment> => {
  const { stores, caller, source } = ctx;
  requireOwnOrAdmin(caller, comment.authorId, 'restore comments');
  const record = commentRecord(stores.activity, source, 'restored', comment, task, { undoOf: undoes.activityId });
  await commit(
    ctx,
    [
      writesOf(stores).tasks.checkOp(caller.workspaceId, task.taskId),
      ...writesOf(stores).comments.restoreOps(comment),
      writesOf(stores).activity.recordOp(record),
      writesOf(stores).activity.markUndoneOp(undoes, record.activityId, record.at),
    ],
    `comments_list ${taskNameOf(caller.workspaceKey, task)} shows whether it is back.`,
  );
  return { comment, record };
};
