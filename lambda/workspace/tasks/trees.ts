import { MAX_TRANSACTION_ACTIONS } from '../../platform/transact.js';
import { roleAtLeast } from '../../vocabulary.js';
import { othersSubtasks, treeTooBig } from '../model/refusals.js';
import { taskNameOf } from '../model/task-refs.js';
import type { SubtaskEntry, Task } from '../model/types.js';
import type { WriteContext } from '../store/stores.js';
import { subtaskEntriesOf } from '../store/task-items.js';

/**
 * A tree's change (a task deleted with its subtasks, completed with them) is one all-or-nothing
 * write, so what cannot fit in one is refused before anything of the tree is read beyond what its
 * counts say. Each subtask the change touches takes at least three actions of the write (its own
 * item, its record, its entry in its parent), the task itself two: the counts each level keeps
 * (`subtaskCount`) and the entries its parent lists (status, creator) decide the size and the
 * rights of the next level before it is read, and what is read is the task items alone, never
 * their notes (a delete moves the notes' expiry, a completion leaves them), nor their comments
 * (task-writer.ts reads their keys for a delete, once the tree is known to fit).
 */

/** The fewest actions of a tree's write: two for the task it starts at, three for each subtask it changes. */
export const LEAST_ROOT_ACTIONS = 2;
export const LEAST_SUBTASK_ACTIONS = 3;

export type TreeChange = 'delete' | 'complete';

/**
 * The subtasks a tree's change changes (every live one for a delete, the open ones for a
 * completion), read level by level without their notes, in the order they were made. Refused,
 * before the level that would not fit is read, when the change could not be one write; and for a
 * member deleting, when any subtask is someone else's (from the entries where they say it).
 */
export const readTree = async (ctx: WriteContext, root: Task, change: TreeChange, param: string): Promise<Task[]> => {
  const { stores, caller } = ctx;
  const name = (t: Pick<Task, 'taskId' | 'number'>) => taskNameOf(caller.workspaceKey, t);
  const member = change === 'delete' && !roleAtLeast(caller.role, 'admin');
  const changes = (t: Pick<SubtaskEntry, 'status'>) => change === 'delete' || t.status === 'open';
  const out: Task[] = [];
  let least = LEAST_ROOT_ACTIONS;
  let level: readonly Task[] = [root];
  const tooBig = (more: number, actions: number) =>
    treeTooBig(name(root), change, out.length + more, actions, MAX_TRANSACTION_ACTIONS, param);
  while (level.length) {
    const parents = level.filter((t) => t.subtaskCount);
    if (!parents.length) break;
    // A delete takes every subtask there is: the counts alone say whether it can fit.
    if (change === 'delete') {
      const below = parents.reduce((n, t) => n + (t.subtaskCount ?? 0), 0);
      if (least + below * LEAST_SUBTASK_ACTIONS > MAX_TRANSACTION_ACTIONS) throw tooBig(below, least + below * LEAST_SUBTASK_ACTIONS);
    }
    const entries = (
      await Promise.all(parents.map(async (t) => subtaskEntriesOf(t) ?? (await stores.tasks.subtasksOf(caller.workspaceId, t.taskId))))
    ).flat();
    const changed = entries.filter(changes);
    least += changed.length * LEAST_SUBTASK_ACTIONS;
    if (least > MAX_TRANSACTION_ACTIONS) throw tooBig(changed.length, least);
    if (member) {
      const theirs = entries.filter((e) => e.createdBy !== undefined && e.createdBy !== caller.userId);
      if (theirs.length) throw othersSubtasks(name(root), theirs.map(name));
    }
    if (!entries.length) break;
    const read = await stores.tasks.getMany(
      caller.workspaceId,
      entries.map((e) => e.taskId),
    );
    const live = [...read.values()].filter((t) => !t.deletedAt).sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
    // Entries written before they named their creator: the tasks themselves say.
    if (member) {
      const theirs = live.filter((t) => t.createdBy !== caller.userId);
      if (theirs.length) throw othersSubtasks(name(root), theirs.map(name));
    }
    out.push(...live.filter(changes));
    level = live;
  }
  return out;
};
