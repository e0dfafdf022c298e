import type { WriteOp } from '../../platform/transact.js';
import type { Caller } from '../model/caller.js';
import { MAX_LEVELS } from '../model/limits.js';
import { belowItself, nestsTooDeep, ownParent, parentIsDeleted, taskDeleted, taskNotFound } from '../model/refusals.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Task } from '../model/types.js';
import type { WorkspaceStores } from '../store/stores.js';
import { liveParentOf } from '../store/subtask-items.js';
import { subtaskEntriesOf } from '../store/task-items.js';
import { writesOf } from '../store/writes.js';

/**
 * Subtasks. A task names its parent (`parentId`, with the parent's number for list lines) and only
 * its own changes change that; the parent keeps a count of its live subtasks (`subtaskCount`) and
 * an entry per subtask beside it (store/subtask-items.ts), both written in the subtask's own
 * transaction. Tasks nest at most three levels deep and no task is its own ancestor.
 *
 * A placement is checked on what was read and the write holds what the check stood on, so two
 * changes at the same moment cannot together break a rule: the new parent and each task above it
 * are held to their own parent as read (a move of any of them in between refuses this write, and
 * this write refuses it), and a task placed under another is held to its tree as read (a
 * subtask placed below it meanwhile, at any depth, could be a level too deep: every placement raises
 * the `treeVersion` of each task above it, which a move holds). A cycle needs a move of a task above
 * the other; a level too deep needs a move of a task above or a placement below: each is caught.
 *
 * Deleting a task takes it off its parent's count and entries; its restore places it again under
 * every rule (a parent deleted meanwhile is refused, one gone for good leaves it at the top level).
 */

/** A task above the one placed, as read: the write holds it to its own parent. */
export interface Above {
  readonly taskId: string;
  readonly parentId?: string | undefined;
}

/** Where a change puts a task: its parent and the tasks above it, nearest first (the parent itself first). */
export interface Placement {
  readonly parentId: string;
  readonly parentNumber?: number | undefined;
  readonly above: readonly Above[];
  /** The placed task's `treeVersion` as read (an existing task): its write holds it. */
  readonly tree?: number;
}

/**
 * The placement of `self` under `parentId`, checked: the parent is a live task of this workspace,
 * not `self` and not below it, and `self` with its own subtasks fits within three levels. `fresh`
 * are tasks the same call creates before this one (not stored yet).
 */
export const resolveParent = async (
  stores: WorkspaceStores,
  caller: Caller,
  self: Task | Pick<Task, 'taskId' | 'number'>,
  parentId: string,
  param: string,
  refOf: (id: string) => string = (id) => id,
  fresh: ReadonlyMap<string, Task> = new Map(),
): Promise<Placement> => {
  // Tasks by key; one not yet made by the words it was named by (the new task, an earlier item of the call), never by its id.
  const name = (t: Pick<Task, 'number' | 'taskId'>) => {
    if (t.number !== undefined) return taskNameOf(caller.workspaceKey, t);
    if (t.taskId === self.taskId) return 'the new task';
    const given = refOf(t.taskId);
    if (given !== t.taskId) return given;
    return fresh.has(t.taskId) ? 'an earlier item of this call' : taskNameOf(caller.workspaceKey, t);
  };
  if (parentId === self.taskId) throw ownParent(param, name(self));
  const read = async (id: string) => fresh.get(id) ?? (await stores.tasks.getMany(caller.workspaceId, [id])).get(id);
  const parent = await read(parentId);
  if (!parent) throw taskNotFound(refOf(parentId), param);
  // As the caller wrote it, else by its key.
  if (parent.deletedAt) throw taskDeleted(refOf(parentId) === parentId ? name(parent) : refOf(parentId), parent.deletedAt, param);
  // Up from the parent: at most as many tasks as there are levels (stored trees are never deeper).
  const chain: Task[] = [parent];
  for (let at = parent; at.parentId && chain.length <= MAX_LEVELS; ) {
    const up = await read(at.parentId);
    if (!up) break;
    if (up.taskId === self.taskId || chain.some((t) => t.taskId === up.taskId)) {
      const names = [name(self), ...chain.map(name), name(up)];
      throw belowItself(param, name(self), names.reverse());
    }
    chain.push(up);
    at = up;
  }
  // The levels: the parent's (its tasks above, plus one), self one below, and self's own subtasks.
  const parentLevel = chain.length;
  const height = 'version' in self ? await heightOf(stores, caller, self) : 0;
  if (parentLevel + 1 + height > MAX_LEVELS) {
    throw nestsTooDeep(param, name(parent), parentLevel, chain.slice(1).map(name), name(self), height, MAX_LEVELS);
  }
  return {
    parentId,
    ...(parent.number !== undefined ? { parentNumber: parent.number } : {}),
    above: chain.map((t) => ({ taskId: t.taskId, ...(t.parentId ? { parentId: t.parentId } : {}) })),
    ...('version' in self ? { tree: self.treeVersion ?? 0 } : {}),
  };
};

/** How many levels of subtasks a task has below it: 0, 1, or 2 (its subtasks have subtasks). */
const heightOf = async (stores: WorkspaceStores, caller: Caller, t: Task): Promise<number> => {
  if (!t.subtaskCount) return 0;
  const entries = subtaskEntriesOf(t) ?? (await stores.tasks.subtasksOf(caller.workspaceId, t.taskId));
  if (!entries.length) return 0;
  const children = await stores.tasks.getMany(
    caller.workspaceId,
    entries.map((e) => e.taskId),
  );
  return [...children.values()].some((c) => !c.deletedAt && (c.subtaskCount ?? 0) > 0) ? 2 : 1;
};

/**
 * The placement a restore needs: its parent must be live (a deleted one is restored first), and one
 * gone for good (its undo window over) leaves it at the top level (undefined).
 */
export const restorePlacement = async (
  stores: WorkspaceStores,
  caller: Caller,
  task: Task,
  param: string,
): Promise<Placement | undefined> => {
  if (!task.parentId) return undefined;
  const parent = (await stores.tasks.getMany(caller.workspaceId, [task.parentId])).get(task.parentId);
  if (!parent) return undefined;
  const name = (t: Pick<Task, 'number' | 'taskId'>) => taskNameOf(caller.workspaceKey, t);
  if (parent.deletedAt) throw parentIsDeleted(name(task), name(parent), parent.deletedAt, param);
  return resolveParent(stores, caller, task, task.parentId, param, undefined, new Map([[parent.taskId, parent]]));
};

/**
 * What a change writes to the parents around it: the parent it leaves (or leaves by being deleted)
 * counts one subtask less; the parent it joins (or rejoins by a restore) one more, held to its place,
 * and every task above that is held to its own. The entries are written with the task (task-store.ts).
 */
export const parentSideOps = (
  stores: WorkspaceStores,
  caller: Caller,
  before: Task | undefined,
  next: Task,
  placement: Placement | undefined,
): WriteOp[] => {
  const was = liveParentOf(before);
  const now = liveParentOf(next);
  if (was === now) return [];
  const name = (id: string, n?: number) => taskNameOf(caller.workspaceKey, { taskId: id, ...(n !== undefined ? { number: n } : {}) });
  const ops: WriteOp[] = [];
  if (was) ops.push(writesOf(stores).tasks.parentSideOp(caller.workspaceId, was, -1, undefined, name(was, before?.parentNumber)));
  if (now) {
    if (!placement || placement.parentId !== now) throw new Error(`task ${next.taskId} joins ${now} without a checked placement`);
    placement.above.forEach((a, i) => {
      ops.push(
        writesOf(stores).tasks.parentSideOp(
          caller.workspaceId,
          a.taskId,
          i === 0 ? 1 : 0,
          { parentOf: a.parentId ?? null },
          name(a.taskId, i === 0 ? placement.parentNumber : undefined),
        ),
      );
    });
  }
  return ops;
};
