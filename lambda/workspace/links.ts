import { InvalidArgumentRefusal } from '../errors.js';
import type { WriteOp } from '../platform/transact.js';
import type { Principal } from '../vocabulary.js';
import type { Task } from './model.js';
import type { WorkspaceServices } from './services.js';
import { keyOf } from './task-numbers.js';
import { type BlockerChange, MAX_DEPENDENTS } from './task-store.js';

/**
 * Blocked-by links. A task names the tasks it waits on (`blockedBy`: id → number, written by its own
 * changes) and keeps which of them are open (`openBlockers`); a blocker keeps which tasks wait on it
 * (`blocks`). Each side changes only in the same all-or-nothing write as the change that moves it: a
 * link added or dropped writes the dependent and each blocker concerned; a blocker completed,
 * reopened, deleted or restored writes each of its dependents. So "blocked by DEMO-12 (open)" is read
 * with the task itself, with no request more, and `blocked: true` is a filter on the task index.
 */

/** A task waits on at most this many others. */
export const MAX_BLOCKERS = 20;
/** How far a cycle is looked for, in tasks read. */
const CYCLE_SEARCH_LIMIT = 200;

export interface Blockers {
  /** The links the task will have: blocker id → number. */
  readonly blockedBy: Readonly<Record<string, number>>;
  /** Each blocker as read: its status decides `openBlockers`, and the write holds it to that status. */
  readonly tasks: ReadonlyMap<string, Task>;
}

const nameOf = (principal: Principal, t: Pick<Task, 'number' | 'taskId'>): string => keyOf(principal.workspaceKey, t.number) ?? t.taskId;

/**
 * The blockers a change asks for, checked: each names a live task of this workspace, not the task
 * itself, and not one waiting on it already (directly or through others): a cycle is refused
 * naming the tasks in it. `refs` are keys or ids as given.
 */
export const resolveBlockers = async (
  services: WorkspaceServices,
  principal: Principal,
  self: Pick<Task, 'taskId' | 'number'>,
  refs: readonly string[],
  param: string,
): Promise<Blockers> => {
  if (refs.length > MAX_BLOCKERS) throw new InvalidArgumentRefusal(`${param}: at most ${MAX_BLOCKERS} tasks.`);
  const ids = await Promise.all(refs.map((r) => services.numbers.idOrRefuse(principal, r, param)));
  const unique = [...new Set(ids)];
  if (unique.includes(self.taskId))
    throw new InvalidArgumentRefusal(`${param}: a task cannot wait on itself (${nameOf(principal, self)}).`);
  const tasks = unique.length ? await services.tasks.getMany(principal.workspaceId, unique) : new Map<string, Task>();
  for (const [i, id] of ids.entries()) {
    const t = tasks.get(id);
    if (!t || t.deletedAt) throw new InvalidArgumentRefusal(`${param}: no task ${refs[i]} in this workspace (or it was deleted).`);
  }
  for (const t of tasks.values()) {
    if ((t.blocks?.length ?? 0) >= MAX_DEPENDENTS && !t.blocks?.includes(self.taskId)) {
      throw new InvalidArgumentRefusal(`${param}: ${nameOf(principal, t)} already blocks ${MAX_DEPENDENTS} tasks, the most one task can.`);
    }
  }
  await refuseCycles(services, principal, self, tasks, param);
  return { blockedBy: Object.fromEntries(unique.map((id) => [id, tasks.get(id)!.number ?? 0])), tasks };
};

/** Walks what the new blockers wait on; reaching the task itself would close a cycle. */
const refuseCycles = async (
  services: WorkspaceServices,
  principal: Principal,
  self: Pick<Task, 'taskId' | 'number'>,
  blockers: ReadonlyMap<string, Task>,
  param: string,
): Promise<void> => {
  // Breadth first, remembering how each task was reached, so a cycle is named task by task.
  const via = new Map<string, string | undefined>([...blockers.keys()].map((id) => [id, undefined]));
  const known = new Map(blockers);
  let frontier = [...blockers.values()];
  while (frontier.length && known.size < CYCLE_SEARCH_LIMIT) {
    const next: string[] = [];
    for (const t of frontier) {
      for (const id of Object.keys(t.blockedBy ?? {})) {
        if (id === self.taskId) {
          const path: string[] = [];
          for (let at: string | undefined = t.taskId; at; at = via.get(at)) path.push(at);
          const names = [self, ...path.reverse().map((p) => known.get(p)!), self].map((x) => nameOf(principal, x));
          throw new InvalidArgumentRefusal(`${param}: that would make a cycle (${names.join(' → ')}); a task cannot wait on itself.`);
        }
        if (!via.has(id)) {
          via.set(id, t.taskId);
          next.push(id);
        }
      }
    }
    if (!next.length) break;
    const read = await services.tasks.getMany(principal.workspaceId, next);
    for (const [id, t] of read) known.set(id, t);
    frontier = [...read.values()];
  }
};

/** Of the blockers, the open ones: the dependent's `openBlockers`. */
export const openOf = (blockers: Blockers): string[] =>
  Object.keys(blockers.blockedBy)
    .filter((id) => blockers.tasks.get(id)?.status === 'open')
    .sort();

/**
 * The blockers' side of a dependent's new links: each blocker it keeps or gains records it, held to
 * the status it was read in (so `openBlockers` is right when the write lands); each one it drops
 * forgets it.
 */
export const blockerSideOps = (
  services: WorkspaceServices,
  workspaceId: string,
  dependentId: string,
  before: Readonly<Record<string, number>> | undefined,
  after: Blockers,
): WriteOp[] => [
  ...[...after.tasks.values()].map((t) => services.tasks.dependentOp(workspaceId, t.taskId, dependentId, 'add', t.status)),
  ...Object.keys(before ?? {})
    .filter((id) => !after.tasks.has(id))
    .map((id) => services.tasks.dependentOp(workspaceId, id, dependentId, 'forget')),
];

/**
 * What a task's change of state writes to the tasks linked to it: completing it takes it out of its
 * dependents' open blockers, reopening puts it back; deleting it takes it out of their links and out
 * of its blockers' dependents, restoring it puts both back.
 */
export const transitionOps = (services: WorkspaceServices, before: Task, after: Task): WriteOp[] => {
  const ws = after.workspaceId;
  const wasLive = !before.deletedAt;
  const isLive = !after.deletedAt;
  const isOpen = isLive && after.status === 'open';
  const change: BlockerChange | undefined =
    wasLive && !isLive
      ? 'deleted'
      : !wasLive && isLive
        ? isOpen
          ? 'restored-open'
          : 'restored-done'
        : before.status !== after.status
          ? isOpen
            ? 'opened'
            : 'closed'
          : undefined;
  if (!change) return [];
  // Who waits on it now: the state it leaves knows (the state it goes to may be an old snapshot).
  const ops = (before.blocks ?? []).map((dep) => services.tasks.blockerStateOp(ws, dep, after, change));
  if (wasLive !== isLive) {
    for (const blocker of Object.keys(after.blockedBy ?? {})) {
      ops.push(services.tasks.dependentOp(ws, blocker, after.taskId, wasLive ? 'forget' : 'add'));
    }
  }
  return ops;
};

/**
 * The dependents a completion unblocks: the open ones whose only open blocker was this task. Read
 * alongside (one request, only when the task blocks others).
 */
export const unblockedBy = async (services: WorkspaceServices, principal: Principal, task: Task): Promise<Task[]> => {
  if (!task.blocks?.length) return [];
  const deps = await services.tasks.getMany(principal.workspaceId, task.blocks);
  return [...deps.values()].filter((d) => !d.deletedAt && d.status === 'open' && (d.openBlockers ?? []).every((b) => b === task.taskId));
};
