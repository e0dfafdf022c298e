import type { WriteOp } from '../../platform/transact.js';
import { newlyMentioned } from '../activity/records.js';
import type { Task } from '../model/types.js';
import type { WatchChoice } from '../store/inbox-store.js';
import type { WriteContext } from '../store/stores.js';
import { writesOf } from '../store/writes.js';

/**
 * Who watches a task: its creator and its assignee unless they said not to, and everyone who chose to
 * (`watch: true`) or was mentioned in its notes or comments. A choice is an item in the task's own
 * partition (store/inbox-store.ts), written with the change that makes it, so it never conflicts
 * with a change of the task itself, and task_get reads it with the task.
 */
export const watchersOf = (task: Pick<Task, 'createdBy' | 'assigneeId'>, choices: readonly WatchChoice[]): string[] => {
  const off = new Set(choices.filter((c) => !c.on).map((c) => c.userId));
  const all = [task.createdBy, ...(task.assigneeId ? [task.assigneeId] : []), ...choices.filter((c) => c.on).map((c) => c.userId)];
  return [...new Set(all)].filter((id) => !off.has(id));
};

/**
 * The watch choices a change writes: the caller's own (`watch`), and every member its notes mention
 * anew, who then watches. One op per member, so the transaction never holds two on one item.
 */
export const watchOps = (ctx: WriteContext, before: Task | undefined, next: Task, watch?: boolean): WriteOp[] => {
  const choices = new Map<string, boolean>();
  for (const id of newlyMentioned(before, next)) choices.set(id, true);
  if (watch !== undefined) choices.set(ctx.caller.userId, watch);
  const at = ctx.source.now.toISOString();
  return [...choices].map(([userId, on]) => writesOf(ctx.stores).inbox.watchOp(next.workspaceId, next.taskId, { userId, on }, at));
};
