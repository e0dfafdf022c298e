import type { WriteOp } from '../../platform/transact.js';
import { MAX_BLOCKERS, MAX_DEPENDENTS } from '../model/limits.js';
import { blocksTheMost, chainTooLong, taskDeleted, taskNotFound, tooManyBlockers, waitsOnItself, wouldCycle } from '../model/refusals.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Task } from '../model/types.js';
import type { BlockerChange } from '../store/task-store.js';

export { DanglingLink } from '../store/task-store.js';

import type { Caller } from '../model/caller.js';
import type { WorkspaceStores } from '../store/stores.js';
import { writesOf } from '../store/writes.js';

/**
 * Blocked-by links. A task names the tasks it waits on (`blockedBy`: id → number) and only its own
 * changes change that; a blocker keeps which tasks wait on it (`blocks`). Both sides change in the
 * same all-or-nothing write as the change that moves them. What each link means now is derived and
 * kept by the blockers' own changes of state: `openBlockers` (open ones: the task is blocked) and
 * `goneBlockers` (deleted ones: shown as "(deleted)", waiting on nothing).
 *
 * Deleting or restoring a task changes no link, on either side: a task waiting on a deleted one
 * keeps the link (dormant), the deleted task keeps its own; the delete and the restore move only
 * the derived sets of the tasks linked to it. So the links obey their rules at every moment, deleted
 * tasks included: the graph of all links is acyclic (a cycle is looked for through deleted tasks
 * too), no task waits on more than 20 or is waited on by more than 60 (deleted ones count), and a
 * restore, which adds no link, can break none of these. A link removed by its own task never comes back.
 *
 * A task gone for good (its undo window over, removed by TTL) may still be named by a link; the
 * writer that meets such a name drops it in its next write (`DanglingLink`).
 */

/** How far a cycle is looked for, in tasks read. */
const CYCLE_SEARCH_LIMIT = 200;

export interface Blockers {
  /** The links the task will have: blocker id → number. */
  readonly blockedBy: Readonly<Record<string, number>>;
  /** Each blocker as read (deleted ones too): its state decides `openBlockers` and `goneBlockers`, and the write holds it to that. */
  readonly tasks: ReadonlyMap<string, Task>;
  /** Links the task had that it drops, of tasks that still exist: they forget it. */
  readonly dropped: readonly string[];
  /** When the change adds a link: the links epoch its cycle check started from, which its write holds. */
  readonly epoch?: number;
}

/**
 * The blockers a change asks for, checked: each names a task of this workspace (a deleted one only
 * where the link exists already), not the task itself, and not one waiting on it (directly or
 * through others, deleted ones included): a cycle is refused naming the tasks in it. `ids` are
 * resolved already; `refOf` gives the reference as the caller wrote it. `fresh` are tasks the same
 * call creates before this one (not stored yet).
 */
export const resolveBlockers = async (
  stores: WorkspaceStores,
  caller: Caller,
  self: Task | Pick<Task, 'taskId' | 'number'>,
  ids: readonly string[],
  param: string,
  refOf: (id: string) => string = (id) => id,
  fresh: ReadonlyMap<string, Task> = new Map(),
): Promise<Blockers> => {
  const unique = [...new Set(ids)];
  if (unique.length > MAX_BLOCKERS) throw tooManyBlockers(param, MAX_BLOCKERS);
  const name = (t: Pick<Task, 'number' | 'taskId'>) => taskNameOf(caller.workspaceKey, t);
  if (unique.includes(self.taskId)) throw waitsOnItself(param, name(self));
  const had = Object.keys(('blockedBy' in self ? self.blockedBy : undefined) ?? {});
  const gone = had.filter((id) => !unique.includes(id));
  const toRead = [...unique, ...gone].filter((id) => !fresh.has(id));
  // A task that exists taking a new link could close a cycle with another change landing at the same
  // moment: its blockers are read with the workspace's links epoch, in one snapshot, and the write
  // holds the epoch. (A new task cannot: nothing waits on it yet; nor can a link to a task the same
  // call creates.)
  const adds = 'version' in self && unique.some((id) => !had.includes(id) && !fresh.has(id));
  const snapshot = adds ? await stores.tasks.linkSnapshot(caller.workspaceId, toRead) : undefined;
  const read = snapshot?.tasks ?? (toRead.length ? await stores.tasks.getMany(caller.workspaceId, toRead) : new Map<string, Task>());
  const tasks = new Map<string, Task>();
  for (const id of unique) {
    const t = fresh.get(id) ?? read.get(id);
    if (!t) throw taskNotFound(refOf(id), param);
    // A link to a deleted task stays where it was; a new one to it is refused like any change of it.
    if (t.deletedAt && !had.includes(id)) throw taskDeleted(refOf(id), t.deletedAt, param);
    if (!t.deletedAt && (t.blocks?.length ?? 0) >= MAX_DEPENDENTS && !t.blocks?.includes(self.taskId)) {
      throw blocksTheMost(param, name(t), MAX_DEPENDENTS);
    }
    tasks.set(id, t);
  }
  // A cycle through this task needs a task waiting on it: with none, there is nothing to look for
  // (one made meanwhile moves the links epoch, which this write holds, and is planned again).
  if ('blocks' in self && self.blocks?.length) await refuseCycles(stores, caller, self, tasks, param);
  return {
    blockedBy: Object.fromEntries(unique.map((id) => [id, tasks.get(id)!.number ?? 0])),
    tasks,
    dropped: gone.filter((id) => read.has(id)),
    ...(snapshot ? { epoch: snapshot.epoch } : {}),
  };
};

/** Walks what the new blockers wait on, deleted tasks too; reaching the task itself would close a cycle. */
const refuseCycles = async (
  stores: WorkspaceStores,
  caller: Caller,
  self: Pick<Task, 'taskId' | 'number'>,
  blockers: ReadonlyMap<string, Task>,
  param: string,
): Promise<void> => {
  // Breadth first, remembering how each task was reached, so a cycle is named task by task.
  const via = new Map<string, string | undefined>([...blockers.keys()].map((id) => [id, undefined]));
  const known = new Map(blockers);
  let frontier = [...blockers.values()];
  while (frontier.length) {
    const next: string[] = [];
    for (const t of frontier) {
      for (const id of Object.keys(t.blockedBy ?? {})) {
        if (id === self.taskId) {
          const path: string[] = [];
          for (let at: string | undefined = t.taskId; at; at = via.get(at)) path.push(at);
          const names = [self, ...path.reverse().map((p) => known.get(p)!), self].map(
            (x) => `${taskNameOf(caller.workspaceKey, x)}${'deletedAt' in x && x.deletedAt ? ' (deleted)' : ''}`,
          );
          throw wouldCycle(param, names);
        }
        if (!via.has(id)) {
          via.set(id, t.taskId);
          next.push(id);
        }
      }
    }
    if (!next.length) break;
    // Past this many, the check cannot say there is no cycle: refused, never let through unchecked.
    if (known.size + next.length > CYCLE_SEARCH_LIMIT) {
      throw chainTooLong(param, CYCLE_SEARCH_LIMIT);
    }
    const read = await stores.tasks.getMany(caller.workspaceId, next);
    for (const [id, t] of read) known.set(id, t);
    frontier = [...read.values()];
  }
};

/** Of the blockers, the ones the task waits on now: live and open. */
export const openOf = (blockers: Blockers): string[] =>
  Object.keys(blockers.blockedBy)
    .filter((id) => {
      const t = blockers.tasks.get(id);
      return !!t && !t.deletedAt && t.status === 'open';
    })
    .sort();

/** Of the blockers, the deleted ones. */
export const goneOf = (blockers: Blockers): string[] =>
  Object.keys(blockers.blockedBy)
    .filter((id) => !!blockers.tasks.get(id)?.deletedAt)
    .sort();

/** The task's own link attributes for `blockers`. */
export const linkFields = (blockers: Blockers): Pick<Task, 'blockedBy' | 'openBlockers' | 'goneBlockers'> => {
  const open = openOf(blockers);
  const gone = goneOf(blockers);
  return {
    ...(Object.keys(blockers.blockedBy).length ? { blockedBy: blockers.blockedBy } : {}),
    ...(open.length ? { openBlockers: open } : {}),
    ...(gone.length ? { goneBlockers: gone } : {}),
  };
};

/**
 * The blockers' side of a dependent's new links: each blocker it keeps or gains records it, held to
 * the state it was read in (so `openBlockers` and `goneBlockers` are right when the write lands);
 * each one it drops forgets it. `fresh` blockers are created in the same call: their side is part
 * of their own Put when they land in the same transaction.
 */
export const blockerSideOps = (
  stores: WorkspaceStores,
  caller: Caller,
  dependent: Pick<Task, 'taskId' | 'number'>,
  blockers: Blockers,
): WriteOp[] => [
  ...(blockers.epoch !== undefined
    ? [writesOf(stores).tasks.linksEpochOp(caller.workspaceId, blockers.epoch, taskNameOf(caller.workspaceKey, dependent))]
    : []),
  ...[...blockers.tasks.values()].map((t) =>
    t.deletedAt
      ? writesOf(stores).tasks.checkDeletedOp(caller.workspaceId, t.taskId)
      : writesOf(stores).tasks.dependentOp(
          caller.workspaceId,
          t.taskId,
          dependent.taskId,
          'add',
          t.status,
          taskNameOf(caller.workspaceKey, t),
          t.blocks?.includes(dependent.taskId) ?? false,
        ),
  ),
  ...blockers.dropped.map((id) => writesOf(stores).tasks.dependentOp(caller.workspaceId, id, dependent.taskId, 'forget')),
];

/**
 * What a task's change of state writes to the tasks waiting on it: completing it takes it out of
 * their open blockers, reopening puts it back; deleting it marks it gone for them, restoring it
 * live again. No link changes.
 */
export const transitionOps = (stores: WorkspaceStores, before: Task, after: Task, dependents: readonly string[]): WriteOp[] => {
  const change = blockerChangeOf(before, after);
  if (!change) return [];
  return dependents.map((dep) => writesOf(stores).tasks.blockerStateOp(after.workspaceId, dep, after, change));
};

/**
 * A dependent changed in the same write as its blocker (a parent and its subtasks deleted or
 * completed together) takes the blocker's change into its own state instead: one item cannot take
 * two actions in one transaction.
 */
export const withBlockerChange = (dependent: Task, blockerId: string, change: BlockerChange): Task => {
  const open = new Set(dependent.openBlockers ?? []);
  const gone = new Set(dependent.goneBlockers ?? []);
  if (change === 'closed' || change === 'deleted') open.delete(blockerId);
  if (change === 'opened' || change === 'restored-open') open.add(blockerId);
  if (change === 'deleted') gone.add(blockerId);
  if (change === 'restored-open' || change === 'restored-done') gone.delete(blockerId);
  const { openBlockers: _o, goneBlockers: _g, ...rest } = dependent;
  return {
    ...rest,
    ...(open.size ? { openBlockers: [...open].sort() } : {}),
    ...(gone.size ? { goneBlockers: [...gone].sort() } : {}),
  };
};

/** What a task's change means to the tasks waiting on it, if anything. */
export const blockerChangeOf = (before: Task, after: Task): BlockerChange | undefined => {
  const wasLive = !before.deletedAt;
  const isLive = !after.deletedAt;
  return wasLive && !isLive
    ? 'deleted'
    : !wasLive && isLive
      ? after.status === 'open'
        ? 'restored-open'
        : 'restored-done'
      : isLive && before.status !== after.status
        ? after.status === 'open'
          ? 'opened'
          : 'closed'
        : undefined;
};

/** Whether the change moves what the tasks waiting on it see: status, or deleted. */
export const changesState = (before: Task, after: Task): boolean =>
  before.status !== after.status || !!before.deletedAt !== !!after.deletedAt;

/**
 * The dependents a completion unblocks: the open ones whose only open blocker was this task. Read
 * alongside (one request, only when the task blocks others).
 */
export const unblockedBy = async (stores: WorkspaceStores, caller: Caller, task: Task): Promise<Task[]> => {
  if (!task.blocks?.length) return [];
  const deps = await stores.tasks.getMany(caller.workspaceId, task.blocks);
  return [...deps.values()].filter((d) => !d.deletedAt && d.status === 'open' && (d.openBlockers ?? []).every((b) => b === task.taskId));
};
