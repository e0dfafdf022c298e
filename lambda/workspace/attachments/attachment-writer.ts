import { randomBytes } from 'node:crypto';
import { ToolRefusal } from '../../errors.js';
import { attachmentObjectKey, trashObjectKey } from '../../platform/item-keys.js';
import { attachmentRecord } from '../activity/records.js';
import { requireOwnOrAdmin, requireRole } from '../membership/rules.js';
import type { ActivityRecord } from '../model/activity.js';
import { attachmentGone } from '../model/refusals.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Attachment, Task } from '../model/types.js';
import { newAttachmentId } from '../store/attachment-store.js';
import { confirmedOr, writeClaimed } from '../store/confirmed.js';
import type { WriteContext } from '../store/stores.js';
import { writesOf } from '../store/writes.js';
import { type TextType, typeOf } from './attachment-types.js';

/**
 * The one writer of attachments, for every door (the tools and change_undo). Members add; members
 * delete their own, admins anyone's, and a restore needs what the delete needed. The bytes go to the
 * file store first and the item (with its task's count, the workspace's bytes held to the quota and
 * the record) in one write after: a write that fails takes its bytes out again, so a refused or
 * failed add leaves nothing behind. A delete copies the bytes to the trash before its write and
 * takes them out of the task's place after it; the trash is what its undo copies back, and the
 * bucket's lifecycle removes it after the undo window (docs/workspace.md, "Attachments").
 */

type TaskRef = Pick<Task, 'taskId' | 'title' | 'number' | 'projectId'>;

export interface NewAttachment {
  readonly name: string;
  readonly bytes: Uint8Array;
  /** Given as text (not base64): it must be text. */
  readonly asText: boolean;
  /** The text type the caller declares it is (checked against the bytes). */
  readonly declared?: TextType | undefined;
  readonly commentId?: string | undefined;
}

export interface WrittenAttachment {
  readonly attachment: Attachment;
  readonly record: ActivityRecord;
}

/** The object an attachment's bytes are: under its workspace's prefix, built from the caller's workspace. */
export const objectKeyOf = (a: Pick<Attachment, 'workspaceId' | 'taskId' | 'attachmentId'>): string =>
  attachmentObjectKey(a.workspaceId, a.taskId, a.attachmentId);

/**
 * Runs `after` when `write` failed, then throws what it threw: the bytes follow the write. Not when
 * the write may have landed (DynamoDB did not confirm it): the bytes stay, since an item may name them.
 */
const undoingOnFailure = async <T>(write: () => Promise<T>, after: () => Promise<void>): Promise<T> => {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof ToolRefusal && err.reason === 'unconfirmed')) await after().catch(() => undefined);
    throw err;
  }
};

export const addAttachment = async (ctx: WriteContext, task: TaskRef, file: NewAttachment): Promise<WrittenAttachment> => {
  const { stores, caller, source } = ctx;
  requireRole(caller, 'member', 'attaching files');
  const type = await typeOf(stores.files.sniff, file.bytes, file.asText, file.declared);
  const attachment: Attachment = {
    workspaceId: caller.workspaceId,
    taskId: task.taskId,
    attachmentId: newAttachmentId(task.taskId, randomBytes(10)),
    ...(file.commentId ? { commentId: file.commentId } : {}),
    name: file.name,
    type,
    size: file.bytes.byteLength,
    addedBy: caller.userId,
    addedAt: source.now.toISOString(),
  };
  const record = attachmentRecord(stores.activity, source, 'created', attachment, task);
  const key = objectKeyOf(attachment);
  await stores.files.store.put(key, file.bytes, type);
  await undoingOnFailure(
    () =>
      writeClaimed(ctx, record.activityId, `task_get ${taskNameOf(caller.workspaceKey, task)} lists its attachments.`, (claim) =>
        writesOf(stores).commit([
          ...claim,
          ...writesOf(stores).attachments.addOps(attachment, stores.files.quotaBytes, taskNameOf(caller.workspaceKey, task)),
          writesOf(stores).activity.recordOp(record),
        ]),
      ),
    () => stores.files.store.delete(key),
  );
  return { attachment, record };
};

export const deleteAttachment = async (
  ctx: WriteContext,
  task: TaskRef,
  attachment: Attachment,
  undoes?: ActivityRecord,
): Promise<WrittenAttachment> => {
  const { stores, caller, source } = ctx;
  requireOwnOrAdmin(caller, attachment.addedBy, 'delete attachments');
  const record = attachmentRecord(stores.activity, source, 'deleted', attachment, task, undoes ? { undoOf: undoes.activityId } : {});
  const key = objectKeyOf(attachment);
  // The bytes to the trash first: what its undo copies back. A delete refused after it (another call
  // deleted it first) leaves that copy, which is the other delete's undo too; the lifecycle removes it.
  if (!(await stores.files.store.copy(key, trashObjectKey(key)))) throw attachmentGone(attachment.attachmentId);
  await confirmedOr(`task_get ${taskNameOf(caller.workspaceKey, task)} lists its attachments.`, () =>
    writesOf(stores).commit([
      ...writesOf(stores).attachments.removeOps({ ...attachment, deletedAt: record.at }, record.expiresAt),
      writesOf(stores).activity.recordOp(record),
      ...(undoes ? [writesOf(stores).activity.markUndoneOp(undoes, record.activityId, record.at)] : []),
    ]),
  );
  // The item says deleted; the bytes left in place would be served by nothing, and go now (tried
  // twice; one left by a fault is an object no item names, docs/workspace.md "Attachments").
  await stores.files.store
    .delete(key)
    .catch(() => stores.files.store.delete(key))
    .catch(() => undefined);
  return { attachment, record };
};

/** Puts a deleted attachment back (an undo of its delete): the role its delete needed, its bytes held to the quota again. */
export const restoreAttachment = async (
  ctx: WriteContext,
  task: TaskRef,
  attachment: Attachment,
  undoes: ActivityRecord,
): Promise<WrittenAttachment> => {
  const { stores, caller, source } = ctx;
  requireOwnOrAdmin(caller, attachment.addedBy, 'restore attachments');
  const record = attachmentRecord(stores.activity, source, 'restored', attachment, task, { undoOf: undoes.activityId });
  const key = objectKeyOf(attachment);
  if (!(await stores.files.store.copy(trashObjectKey(key), key))) throw attachmentGone(attachment.attachmentId);
  await undoingOnFailure(
    () =>
      confirmedOr(`task_get ${taskNameOf(caller.workspaceKey, task)} lists its attachments.`, () =>
        writesOf(stores).commit([
          ...writesOf(stores).attachments.restoreOps(attachment, stores.files.quotaBytes, taskNameOf(caller.workspaceKey, task)),
          writesOf(stores).activity.recordOp(record),
          writesOf(stores).activity.markUndoneOp(undoes, record.activityId, record.at),
        ]),
      ),
    // Refused: the bytes go back out, unless another undo put the attachment back meanwhile (its item names them).
    async () => {
      const now = await stores.attachments.get(caller.workspaceId, attachment.attachmentId);
      if (!now || now.deletedAt) await stores.files.store.delete(key);
    },
  );
  return { attachment, record };
};
