import { invalid } from './refusals.js';
import type { TaskStatus } from './types.js';

/**
 * Workflow statuses. Every task is in one named status of one category; the category is what the
 * rest of the workspace goes by: backlog, unstarted and started are open (on the agenda, can be
 * overdue, keep what waits on them waiting), done and canceled are closed (off the agenda; what
 * waits on them is free, as after a completion: nobody will do the canceled work, and the waiting
 * task's link still says "canceled").
 *
 * A task stores its phase in `status` ('open' or 'done': what the list indexes are keyed on) and its
 * status in `state` only when it is not its phase's first one (Todo for an open task, Done for a
 * closed one). So a task from before statuses is in Todo or Done as it stands, with nothing to
 * migrate, and a move between open statuses (Todo → In progress) leaves every index key as it was.
 */

export const STATUS_CATEGORIES = ['backlog', 'unstarted', 'started', 'done', 'canceled'] as const;
export type StatusCategory = (typeof STATUS_CATEGORIES)[number];

export interface WorkflowStatus {
  /** Stable: what a task stores. */
  readonly key: string;
  readonly name: string;
  readonly category: StatusCategory;
}

/** The workspace's statuses, in order. */
export const DEFAULT_STATUSES: readonly WorkflowStatus[] = [
  { key: 'backlog', name: 'Backlog', category: 'backlog' },
  { key: 'todo', name: 'Todo', category: 'unstarted' },
  { key: 'in_progress', name: 'In progress', category: 'started' },
  { key: 'in_review', name: 'In review', category: 'started' },
  { key: 'done', name: 'Done', category: 'done' },
  { key: 'canceled', name: 'Canceled', category: 'canceled' },
];

export const phaseOf = (category: StatusCategory): TaskStatus => (category === 'done' || category === 'canceled' ? 'done' : 'open');

const firstOf = (set: readonly WorkflowStatus[], category: StatusCategory): WorkflowStatus =>
  set.find((s) => s.category === category) ?? (set[0] as WorkflowStatus);

/** Where a phase starts: an open task's first unstarted status, a closed one's first done status. */
export const defaultStatus = (phase: TaskStatus, set: readonly WorkflowStatus[] = DEFAULT_STATUSES): WorkflowStatus =>
  firstOf(set, phase === 'open' ? 'unstarted' : 'done');

/** The status a task is in. A stored key its set no longer has reads as its phase's first status. */
export const statusOf = (
  t: { readonly status: TaskStatus; readonly state?: string | undefined },
  set: readonly WorkflowStatus[] = DEFAULT_STATUSES,
): WorkflowStatus => {
  const stored = t.state === undefined ? undefined : set.find((s) => s.key === t.state);
  return stored && phaseOf(stored.category) === t.status ? stored : defaultStatus(t.status, set);
};

/** What a task stores of a status: nothing for its phase's first one. */
export const stateOf = (s: WorkflowStatus, set: readonly WorkflowStatus[] = DEFAULT_STATUSES): string | undefined =>
  defaultStatus(phaseOf(s.category), set).key === s.key ? undefined : s.key;

/** "In progress", "in-progress", "IN_PROGRESS" are one name. */
const folded = (s: string): string =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');

const accepted = (set: readonly WorkflowStatus[]): string =>
  `${set.map((s) => s.name).join(', ')} (or a category: ${STATUS_CATEGORIES.join(', ')}; or open, done)`;

/**
 * The status a word names, to set: a name or key of the set, a category (its first status), or the
 * words `open` (the first unstarted) and `done` (the first done), which every earlier client used.
 */
export const readStatus = (given: string, set: readonly WorkflowStatus[], param: string): WorkflowStatus => {
  const w = folded(given);
  if (w === 'open') return firstOf(set, 'unstarted');
  const named = set.find((s) => folded(s.name) === w || folded(s.key) === w);
  if (named) return named;
  const category = STATUS_CATEGORIES.find((c) => c === w);
  if (category && set.some((s) => s.category === category)) return firstOf(set, category);
  throw invalid(param, `'${given}' is no status here; one of ${accepted(set)}.`);
};

/** A search's status filter: the phase its index reads, and the statuses within it (none: all of them). */
export interface StatusFilter {
  readonly status: TaskStatus | 'any';
  readonly states?: readonly string[];
}

/**
 * A search's `status`: `open` (every open status), `any`, or names and categories, comma-separated
 * ("In progress, In review", "started"). `done` is the done category (not canceled).
 */
export const readStatusFilter = (given: string, set: readonly WorkflowStatus[], param: string): StatusFilter => {
  const words = given.split(',').map(folded).filter(Boolean);
  if (!words.length) throw invalid(param, `name a status; one of ${accepted(set)}, or any.`);
  if (words.includes('any')) return { status: 'any' };
  const picked = new Set<WorkflowStatus>();
  for (const w of words) {
    if (w === 'open') {
      for (const s of set) if (phaseOf(s.category) === 'open') picked.add(s);
      continue;
    }
    const named = set.filter((s) => folded(s.name) === w || folded(s.key) === w || s.category === w);
    if (!named.length) throw invalid(param, `'${w}' is no status here; one of ${accepted(set)}, or any.`);
    for (const s of named) picked.add(s);
  }
  const phases = new Set([...picked].map((s) => phaseOf(s.category)));
  const status = phases.size === 1 ? [...phases][0]! : 'any';
  const inPhase = set.filter((s) => status === 'any' || phaseOf(s.category) === status);
  // Every status of the phase: the phase alone says it (a plain "open" reads as it always did).
  return picked.size === inPhase.length ? { status } : { status, states: [...picked].map((s) => s.key) };
};
