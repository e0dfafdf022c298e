import {
  moveToMismatch,
  moveToNotRemoved,
  noDoneStatus,
  noOpenStatus,
  statusesEmpty,
  statusGivenTwice,
  statusKeepsCategory,
  statusNamedAsCategory,
  statusNamedTwice,
  statusNameReserved,
  statusNameUnfit,
  statusWasTooLong,
  statusWasUnknown,
  tooManyRetired,
  tooManyStatuses,
} from './refusals.js';
import {
  DEFAULT_SET,
  DEFAULT_STATUSES,
  foldedName,
  phaseOf,
  type RetiredStatus,
  STATUS_CATEGORIES,
  type StatusCategory,
  type StatusSet,
  type WorkflowStatus,
} from './statuses.js';

/**
 * A project's own statuses, as `project_create` and `project_update` take them: the whole ordered
 * list, each a name and a category. What a task stores is a status's key, which a rename keeps; so a
 * status given with `was` (or under the name it has) is the same status, renamed or moved in the
 * order, and its tasks stay in it. A status left out is removed, and its tasks go where `moveTo` (or
 * the person asked) says: another status of the same phase, and a closed one of the same category,
 * since done and canceled count differently (store/task-derived.ts). Nothing is rewritten: the
 * removed status is kept as retired, pointing at its successor, and a task stored in it reads as
 * that (model/statuses.ts `statusOf`), so the change is one write of the project, however many
 * tasks it holds. A canceled status removed with no canceled one left keeps its tasks as they are.
 */

export interface StatusInput {
  readonly name: string;
  readonly category: StatusCategory;
  /** The current name of the status this one is (a rename). */
  readonly was?: string | undefined;
}

export interface StatusRemoval {
  readonly status: WorkflowStatus;
  /** Where its tasks go; none: they stay as they are (a canceled status with no canceled one left). */
  readonly to?: WorkflowStatus;
  /** What its tasks may go to. */
  readonly choices: readonly WorkflowStatus[];
}

export interface PlannedSet {
  readonly set: StatusSet;
  readonly removed: readonly StatusRemoval[];
}

export const MAX_STATUSES = 20;

/** No statuses yet: where a new project's set is planned from (a name of the workspace's set keeps its key). */
export const NO_STATUSES: StatusSet = { statuses: [], retired: [] };
/** Removed statuses a project keeps (its tasks may be in them): the project item and its records stay small. */
export const MAX_RETIRED = 60;

const RESERVED = new Set(['open', 'any']);

/** `started.code_review`: the category first, so every reader knows it (statuses.ts `categoryOfKey`). */
const newKey = (name: string, category: StatusCategory, taken: ReadonlySet<string>): string => {
  const known = DEFAULT_STATUSES.find((s) => foldedName(s.name) === foldedName(name) && s.category === category);
  const slug =
    foldedName(name)
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 30) || 'status';
  const base = known?.key ?? `${category}.${slug}`;
  let key = base;
  for (let n = 2; taken.has(key); n++) key = `${category}.${slug}_${n}`;
  return key;
};

const sameSet = (a: StatusSet, b: StatusSet): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * The set a project will have, from the one it has and the list given, with what the change removes
 * and where their tasks go. Refused, naming the argument and what it would take: an empty list, one
 * with no open or no done status, a name twice, a reserved name, a status whose category changes.
 */
export const planStatusSet = (
  current: StatusSet,
  given: readonly StatusInput[],
  moveTo: Readonly<Record<string, string>> | undefined,
  param = 'statuses',
): PlannedSet => {
  if (!given.length) throw statusesEmpty(param);
  if (given.length > MAX_STATUSES) throw tooManyStatuses(param, given.length, MAX_STATUSES);
  const seen = new Set<string>();
  given.forEach((g, i) => {
    const name = foldedName(g.name);
    if (!name || g.name.trim().length > 40 || /[\p{Cc}\p{Cf}]/u.test(g.name)) throw statusNameUnfit(`${param}[${i}].name`, g.name);
    if (g.was !== undefined && g.was.length > 40) throw statusWasTooLong(`${param}[${i}].was`);
    if (RESERVED.has(name)) throw statusNameReserved(`${param}[${i}].name`, g.name);
    const asCategory = STATUS_CATEGORIES.find((c) => c === name);
    if (asCategory && asCategory !== g.category) throw statusNamedAsCategory(`${param}[${i}].name`, g.name, asCategory);
    if (seen.has(name)) throw statusNamedTwice(param, g.name);
    seen.add(name);
  });
  if (!given.some((g) => g.category === 'done')) throw noDoneStatus(param);
  if (!given.some((g) => phaseOf(g.category) === 'open')) throw noOpenStatus(param);

  // Which of the current statuses each entry is: by `was`, else by the name it has now.
  const claimed = new Map<string, number>();
  const currentNames = current.statuses.map((s) => s.name);
  const matchOf = (g: StatusInput, i: number): WorkflowStatus | undefined => {
    const wanted = foldedName(g.was ?? g.name);
    const found =
      current.statuses.find((s) => foldedName(s.name) === wanted) ??
      // A canceled status set aside with its tasks comes back as itself.
      (g.was ? undefined : current.retired.find((r) => !r.movedTo && foldedName(r.name) === wanted && r.category === g.category));
    if (!found) {
      if (g.was !== undefined) throw statusWasUnknown(`${param}[${i}].was`, g.was, currentNames);
      return undefined;
    }
    if (claimed.has(found.key)) throw statusGivenTwice(`${param}[${i}]`, found.name, claimed.get(found.key), i);
    if (found.category !== g.category) throw statusKeepsCategory(`${param}[${i}].category`, found.name, found.category, g.category);
    claimed.set(found.key, i);
    return found;
  };
  const matches = given.map(matchOf);
  const taken = new Set([...current.statuses, ...current.retired].map((s) => s.key));
  const statuses: WorkflowStatus[] = given.map((g, i) => {
    const kept = matches[i];
    const key = kept?.key ?? newKey(g.name, g.category, taken);
    taken.add(key);
    return { key, name: g.name.trim(), category: g.category };
  });

  const gone = current.statuses.filter((s) => !claimed.has(s.key));
  const moves = moveTo ?? {};
  for (const from of Object.keys(moves)) {
    if (!gone.some((s) => foldedName(s.name) === foldedName(from)))
      throw moveToNotRemoved(
        from,
        gone.map((s) => s.name),
      );
  }
  const removed: StatusRemoval[] = gone.map((s) => {
    const choices = statuses.filter((n) => (phaseOf(s.category) === 'open' ? phaseOf(n.category) === 'open' : n.category === s.category));
    const asked = Object.entries(moves).find(([from]) => foldedName(from) === foldedName(s.name))?.[1];
    if (asked !== undefined) {
      const to = choices.find((n) => foldedName(n.name) === foldedName(asked));
      if (!to)
        throw moveToMismatch(
          s.name,
          s.category,
          phaseOf(s.category) === 'open',
          asked,
          choices.map((n) => n.name),
        );
      return { status: s, to, choices };
    }
    const to = choices.find((n) => n.category === s.category) ?? choices[0];
    return { status: s, ...(to ? { to } : {}), choices };
  });

  const target = new Map(removed.map((r) => [r.status.key, r.to?.key]));
  const revived = new Set(matches.filter((m): m is WorkflowStatus => m !== undefined).map((m) => m.key));
  const retired: RetiredStatus[] = [
    // Statuses retired earlier into one removed now follow its tasks.
    ...current.retired
      .filter((r) => !revived.has(r.key))
      .map((r): RetiredStatus => {
        if (!r.movedTo || !target.has(r.movedTo)) return r;
        const next = target.get(r.movedTo);
        const { movedTo: _m, ...self } = r;
        return next ? { ...self, movedTo: next } : self;
      }),
    ...removed.map((r): RetiredStatus => ({ ...r.status, ...(r.to ? { movedTo: r.to.key } : {}) })),
  ];
  if (retired.length > MAX_RETIRED) throw tooManyRetired(param, current.retired.length, MAX_RETIRED);
  const set: StatusSet = { statuses, retired };
  return { set: sameSet(set, DEFAULT_SET) ? DEFAULT_SET : set, removed };
};

/**
 * The set an undo of a set change puts back: the statuses as they were, and every status the change
 * brought in retired into one of them (the first of its category, else its phase's first: a task
 * moved into it meanwhile reads as that, counted as it is), so no task is left in a key nobody reads.
 */
export const undoStatusSet = (now: StatusSet, was: StatusSet): StatusSet => {
  const back = new Set(was.statuses.map((s) => s.key));
  const into = (category: StatusCategory): string | undefined =>
    (
      was.statuses.find((s) => s.category === category) ??
      (phaseOf(category) === 'open' ? was.statuses.find((s) => phaseOf(s.category) === 'open') : undefined)
    )?.key;
  const retired = new Map<string, RetiredStatus>();
  for (const r of was.retired) if (!back.has(r.key)) retired.set(r.key, r);
  for (const s of [...now.statuses, ...now.retired] as RetiredStatus[]) {
    if (back.has(s.key) || retired.has(s.key)) continue;
    const target = s.movedTo && back.has(s.movedTo) ? s.movedTo : into(s.category);
    const { movedTo: _m, ...status } = s;
    retired.set(s.key, target ? { ...status, movedTo: target } : status);
  }
  const set: StatusSet = { statuses: was.statuses, retired: [...retired.values()] };
  return sameSet(set, DEFAULT_SET) ? DEFAULT_SET : set;
};
