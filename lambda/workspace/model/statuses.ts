import { statusFilterEmpty, statusFilterUnknown, statusUnknown } from './refusals.js';

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

/** A task's phase, as model/types.ts has it (named here too: types.ts names these statuses). */
type TaskStatus = 'open' | 'done';

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

/**
 * A set of statuses: the ones offered, in order, and the ones a project removed, kept so that a task
 * still stored in one reads right: as the status its tasks were moved to, or, when none was named (a
 * project that stops offering canceled), as itself.
 */
export interface StatusSet {
  readonly statuses: readonly WorkflowStatus[];
  readonly retired: readonly RetiredStatus[];
}

export interface RetiredStatus extends WorkflowStatus {
  /** Where its tasks went: a key of the set's statuses. */
  readonly movedTo?: string;
}

export const DEFAULT_SET: StatusSet = { statuses: DEFAULT_STATUSES, retired: [] };

type WithStatuses = { readonly statuses?: readonly WorkflowStatus[]; readonly retiredStatuses?: readonly RetiredStatus[] };
const sets = new WeakMap<WithStatuses, StatusSet>();

/** A project's set: its own, or the workspace's; one object per project object (a search tells sets apart by it). */
export const setOf = (project?: WithStatuses): StatusSet => {
  if (!project?.statuses) return DEFAULT_SET;
  const known = sets.get(project);
  if (known) return known;
  const set = { statuses: project.statuses, retired: project.retiredStatuses ?? [] };
  sets.set(project, set);
  return set;
};

/**
 * What a task with no `state` is in: the key `todo` when open, `done` when closed, in every set.
 * Fixed, not "the set's first", so reordering a project's statuses moves no task.
 */
const PHASE_KEY: Readonly<Record<TaskStatus, string>> = { open: 'todo', done: 'done' };

/** The key a task is stored in. */
export const storedKey = (t: { readonly status: TaskStatus; readonly state?: string | undefined }): string =>
  t.state ?? PHASE_KEY[t.status];

/**
 * The category a key was made in, whatever set it is read with: a status keeps its category for
 * life (a default key, or a project's `<category>.<name>`), so counts never need the set.
 */
export const categoryOfKey = (key: string): StatusCategory | undefined =>
  DEFAULT_STATUSES.find((s) => s.key === key)?.category ?? STATUS_CATEGORIES.find((c) => key.startsWith(`${c}.`));

const firstOf = (set: StatusSet, category: StatusCategory): WorkflowStatus =>
  set.statuses.find((s) => s.category === category) ??
  set.statuses.find((s) => phaseOf(s.category) === phaseOf(category)) ??
  (set.statuses[0] as WorkflowStatus);

/** Where a phase starts: an open task's first unstarted status, a closed one's first done status. */
export const defaultStatus = (phase: TaskStatus, set: StatusSet = DEFAULT_SET): WorkflowStatus =>
  firstOf(set, phase === 'open' ? 'unstarted' : 'done');

/** The status a task is in. A key its set no longer offers reads as where its tasks went, else as its phase's first status. */
export const statusOf = (
  t: { readonly status: TaskStatus; readonly state?: string | undefined },
  set: StatusSet = DEFAULT_SET,
): WorkflowStatus => {
  const found = lookup(storedKey(t), set);
  return found && phaseOf(found.category) === t.status ? found : defaultStatus(t.status, set);
};

/** What a key names in a set: its status, where a removed one's tasks went, or a removed one kept as itself. */
const lookup = (key: string, set: StatusSet): WorkflowStatus | undefined => {
  const retired = set.retired.find((s) => s.key === key);
  return set.statuses.find((s) => s.key === (retired?.movedTo ?? key)) ?? (retired && !retired.movedTo ? retired : undefined);
};
/** What a task stores of a status: nothing for its phase's own key. */
export const stateOf = (s: WorkflowStatus): string | undefined => (PHASE_KEY[phaseOf(s.category)] === s.key ? undefined : s.key);

/** "In progress", "in-progress", "IN_PROGRESS", "Ｉｎ ｐｒｏｇｒｅｓｓ" are one name. */
export const foldedName = (s: string): string =>
  s
    .normalize('NFKC')
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, ' ');

/**
 * The status a word names, to set: a name or key of the set, a category (its first status), or the
 * words `open` (the first unstarted) and `done` (the first done), which every earlier client used.
 */
export const readStatus = (given: string, set: StatusSet, param: string): WorkflowStatus => {
  const w = foldedName(given);
  if (w === 'open') return firstOf(set, 'unstarted');
  if (w === 'done') return firstOf(set, 'done');
  // By name only: a key is what a task stores, never what a person says (a renamed status keeps its key).
  const named = set.statuses.find((s) => foldedName(s.name) === w);
  if (named) return named;
  const category = STATUS_CATEGORIES.find((c) => c === w);
  if (category && set.statuses.some((s) => s.category === category)) return firstOf(set, category);
  throw statusUnknown(
    param,
    given,
    set.statuses.map((s) => s.name),
    STATUS_CATEGORIES,
  );
};

/**
 * The status a stored key is in this set, for the doors that carry keys (undo puts back the key a
 * record kept; the import maps a tool's workflow state to one): the key itself, or where a removed
 * one went, or the first status of its category here, or its phase's first. Undefined for a
 * canceled key where the set has no canceled status (its tasks cannot be canceled here).
 */
export const statusOfKey = (key: string, set: StatusSet): WorkflowStatus | undefined => {
  const found = lookup(key, set);
  if (found) return found;
  const category = categoryOfKey(key) ?? 'unstarted';
  const same = set.statuses.find((s) => s.category === category);
  if (same) return same;
  return category === 'canceled' ? undefined : defaultStatus(phaseOf(category), set);
};

/** A search's status filter: the phase its index reads, and the keys within it (none: all of them). */
export interface StatusFilter {
  readonly status: TaskStatus | 'any';
  readonly states?: readonly string[];
  /**
   * With `states`, whether a task shows as a status asked for, read with its own project's set
   * (`setFor`). The keys are what a read can filter on, but one key may read as another status in
   * another project (a rename, a status removed into another), so what they find is checked so.
   */
  readonly shows?: (t: {
    readonly status: TaskStatus;
    readonly state?: string | undefined;
    readonly projectId?: string | undefined;
  }) => boolean;
}

/**
 * A search's `status`: `open` (every open status), `any`, or names and categories, comma-separated
 * ("In progress, In review", "started"), read in every set given (the project's, or the workspace's
 * and every project's): a name matches its status wherever it is. `done` is the done category (not
 * canceled). The keys include those retired into a status asked for, whose tasks read as it.
 */
export const readStatusFilter = (
  given: string,
  sets: readonly StatusSet[],
  param: string,
  setFor: (projectId: string | undefined) => StatusSet = () => sets[0] ?? DEFAULT_SET,
): StatusFilter => {
  const asWritten = given
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);
  const words = asWritten.map(foldedName);
  // The default of every search, answered before any set is looked at.
  if (words.length && words.every((w) => w === 'open')) return { status: 'open' };
  const names = () => [...new Set(sets.flatMap((set) => set.statuses.map((s) => s.name)))];
  if (!words.length) throw statusFilterEmpty(param, names(), STATUS_CATEGORIES);
  if (words.includes('any')) return { status: 'any' };
  const picked = new Set<string>();
  const shown = new Map<StatusSet, Set<string>>(sets.map((set) => [set, new Set<string>()]));
  const everyKey = new Set<string>();
  for (const set of sets) for (const s of [...set.statuses, ...set.retired]) everyKey.add(s.key);
  for (const [i, w] of words.entries()) {
    const before = picked.size;
    for (const set of sets) {
      const inSet = set.statuses.filter((s) =>
        w === 'open' ? phaseOf(s.category) === 'open' : foldedName(s.name) === w || s.category === w,
      );
      for (const s of inSet) {
        picked.add(s.key);
        shown.get(set)!.add(s.key);
      }
      // What a set retired reads as where its tasks went, or as itself.
      for (const r of set.retired) {
        if (r.movedTo ? inSet.some((s) => s.key === r.movedTo) : w === 'open' ? false : foldedName(r.name) === w || r.category === w) {
          picked.add(r.key);
          if (!r.movedTo) shown.get(set)!.add(r.key);
        }
      }
    }
    if (picked.size === before && !(w === 'open' || sets.some((set) => set.statuses.some((s) => s.category === w))))
      throw statusFilterUnknown(param, asWritten[i]!, names(), STATUS_CATEGORIES);
  }
  const phaseOfKey = (k: string): TaskStatus => phaseOf(categoryOfKey(k) ?? 'unstarted');
  const phases = new Set([...picked].map(phaseOfKey));
  const status = phases.size === 1 ? [...phases][0]! : phases.size === 0 ? 'open' : 'any';
  const inPhase = [...everyKey].filter((k) => status === 'any' || phaseOfKey(k) === status);
  // Every status of the phase: the phase alone says it (a plain "open" reads as it always did).
  if (inPhase.every((k) => picked.has(k))) return { status };
  const shows: StatusFilter['shows'] = (t) => {
    const set = setFor(t.projectId);
    return shown.get(set)?.has(statusOf(t, set).key) ?? false;
  };
  return { status, states: [...picked], shows };
};
