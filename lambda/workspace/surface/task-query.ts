import { ToolRefusal } from '../../errors.js';
import type { Principal } from '../../vocabulary.js';
import { type FieldValue, foldedFieldName } from '../model/custom-fields.js';
import { isCalendarDate, readDay } from '../model/date-words.js';
import {
  type CheckedQuery,
  type Comparison,
  type Condition,
  checkQuery,
  conjunctsOf,
  type DateField,
  type Sort,
  type Term,
} from '../model/query.js';
import { queryTermAmbiguous, queryTermBad, queryTermNamesNothing } from '../model/refusals.js';
import { DEFAULT_SET, foldedName, readStatusFilter, type StatusFilter, setOf, statusOf } from '../model/statuses.js';
import { addDays, dateInZone, instantInZone } from '../model/time.js';
import { PRIORITIES, type Priority, type Task } from '../model/types.js';
import type { Names } from '../store/names.js';
import type { WorkspaceStores } from '../store/stores.js';
import { extrasOf } from '../store/task-items.js';
import { inStates, type TaskFilter } from '../store/task-queries.js';
import { labelKey, MAX_SEARCH_WORDS, matchOf, searchWords, taskWords, wordsOf } from '../store/words.js';

/**
 * A query made into a search (docs/workspace.md, "Queries"). Every term becomes a condition on a
 * task, and the whole query one predicate that decides what matches; the terms that every match
 * must meet (the query's top-level AND, not under OR or -) also narrow what is read: the index of
 * its assignee or project, one priority's partition, a due-date range, a word's or a label's
 * entries, a parent's subtasks. So a query costs what the same structured filters cost, and a query
 * no index serves reads the list it falls back to page by page, under the read units of a page,
 * and says where it stopped (a cursor), never the whole workspace.
 */

export interface PlannedQuery {
  /** What the store reads, its `residual` the whole query. */
  readonly filter: TaskFilter;
  /** Tasks named by key at the top level: read by id, no list at all. */
  readonly taskIds?: readonly string[];
  readonly sort?: Sort;
  /** How the query's date words were read, for the answer's text. */
  readonly notes: readonly string[];
}

type Predicate = (t: Task) => boolean;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

interface Reading {
  readonly services: WorkspaceStores;
  readonly principal: Principal;
  readonly names: Names;
  readonly now: Date;
  readonly today: string;
  readonly notes: string[];
  /** Each term planned once (a top-level one both narrows the read and decides). */
  readonly planned: Map<Term, Promise<Planned>>;
}

/** The parameter a term's lookups name: their refusal is then said of the term, in the query's words. */
const TERM = 'term';

/** A lookup's refusal said of the term it was made for (its own words kept, its parameter the query's). */
const withinTerm = async <T>(term: Term, work: () => Promise<T> | T): Promise<T> => {
  try {
    return await work();
  } catch (e) {
    if (e instanceof ToolRefusal && e.data.param !== 'query' && e.reason !== 'limit')
      throw queryTermNamesNothing(term.at, term.text, e.message.replace(/^term: /, ''));
    throw e;
  }
};

/**
 * The one candidate of the first tier that has any, tiers from the closest reading to the loosest; a
 * tier with several is refused naming them, a looser tier is not tried then.
 */
const onlyFit = <T extends { readonly name: string }>(term: Term, kind: 'member' | 'project', tiers: readonly T[][]): T | undefined => {
  for (const fits of tiers) {
    if (fits.length === 1) return fits[0];
    if (fits.length > 1)
      throw queryTermAmbiguous(
        term.at,
        term.text,
        kind,
        fits.map((f) => f.name),
      );
  }
  return undefined;
};

/** Who a person's word names: me, none, a user id, an e-mail, a name or a first name, when exactly one member fits. */
const memberOf = (term: Term & { value: string }, r: Reading): string | null | undefined => {
  const v = term.value;
  if (v === 'me') return r.principal.userId;
  if (v === 'none') return null;
  if (v === 'anyone') return undefined;
  const members = [...r.names.members.values()];
  const w = foldedName(v);
  const tiers = [
    members.filter((m) => m.userId === v || foldedName(m.email) === w),
    members.filter((m) => foldedName(m.name) === w || foldedName(m.email.split('@')[0]!) === w),
    members.filter((m) => foldedName(m.name).split(' ')[0] === w),
    members.filter((m) => foldedName(m.name).startsWith(w)),
  ];
  const member = onlyFit(term, 'member', tiers);
  if (member) return member.userId;
  throw queryTermNamesNothing(
    term.at,
    term.text,
    `no member '${v}' here; name one by name, first name or e-mail (${members
      .slice(0, 10)
      .map((m) => m.name)
      .join(', ')}), or me or none.`,
    members.map((m) => m.name),
  );
};

/** Which project a word names: none (the inbox), an id, or a name (or the start of one) exactly one project has. */
const projectOf = (term: Term & { value: string }, r: Reading): string | null => {
  const v = term.value;
  if (v === 'none') return null;
  const projects = [...r.names.projects.values()].filter((p) => !p.deletedAt);
  if (projects.some((p) => p.projectId === v)) return v;
  const w = foldedName(v);
  const project = onlyFit(term, 'project', [
    projects.filter((p) => foldedName(p.name) === w),
    projects.filter((p) => foldedName(p.name).startsWith(w)),
  ]);
  if (project) return project.projectId;
  throw queryTermNamesNothing(
    term.at,
    term.text,
    `no project '${v}' here; the projects are ${projects.map((p) => p.name).join(', ') || 'none yet'} (or none for tasks in no project).`,
    projects.map((p) => p.name),
  );
};

const WEEKDAY_FROM_MONDAY = (date: string): number => (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7;
/** The same day of the month `months` later (or earlier), the month's last day where it has fewer. */
const shiftMonths = (date: string, months: number): string => {
  const d = new Date(`${date}T00:00:00Z`);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, last));
  return d.toISOString().slice(0, 10);
};
const monthStart = (date: string, months: number): string => shiftMonths(`${date.slice(0, 7)}-01`, months);

/** A named span around today: weeks start on Monday. */
const SPANS: Readonly<Record<string, (today: string) => [string, string]>> = {
  'this week': (t) => [addDays(t, -WEEKDAY_FROM_MONDAY(t)), addDays(t, 6 - WEEKDAY_FROM_MONDAY(t))],
  'last week': (t) => [addDays(t, -WEEKDAY_FROM_MONDAY(t) - 7), addDays(t, -WEEKDAY_FROM_MONDAY(t) - 1)],
  'next week': (t) => [addDays(t, 7 - WEEKDAY_FROM_MONDAY(t)), addDays(t, 13 - WEEKDAY_FROM_MONDAY(t))],
  'this month': (t) => [monthStart(t, 0), addDays(monthStart(t, 1), -1)],
  'last month': (t) => [monthStart(t, -1), addDays(monthStart(t, 0), -1)],
  'next month': (t) => [monthStart(t, 1), addDays(monthStart(t, 2), -1)],
};

const RELATIVE = /^([+-])(\d{1,5})([dwmy])$/i;
/** How far an offset may reach: a calendar past or future of people's work (and of a date's four digits). */
const MAX_OFFSET_DAYS = 36_600;

/**
 * The days a date term's value covers, first and last: a day (words or ISO, in the member's zone), a
 * named span (this-week, next-month), or an offset from today (-7d, +2w, -1m, -1y). `none`: no date.
 */
const daysOf = async (term: Term & { field: DateField; value: string }, r: Reading): Promise<readonly [string, string] | 'none'> => {
  const v = term.value.toLowerCase();
  if (v === 'none') {
    if (term.op !== ':' || term.field !== 'due') throw queryTermBad(term.at, term.text, 'none goes with due: only', 'due:none');
    return 'none';
  }
  const rel = RELATIVE.exec(v);
  if (rel) {
    const n = Number(rel[2]) * (rel[1] === '-' ? -1 : 1);
    const unit = rel[3]!.toLowerCase();
    const days = Math.abs(n) * (unit === 'd' ? 1 : unit === 'w' ? 7 : unit === 'm' ? 31 : 366);
    if (days > MAX_OFFSET_DAYS) throw queryTermBad(term.at, term.text, 'reaches further than 100 years from today', `${term.field}>=-1y`);
    const day =
      unit === 'd' ? addDays(r.today, n) : unit === 'w' ? addDays(r.today, 7 * n) : shiftMonths(r.today, unit === 'm' ? n : 12 * n);
    return [day, day];
  }
  const words = /^\d{4}-\d{2}-\d{2}$/.test(v) ? v : v.replace(/-/g, ' ');
  const span = SPANS[words];
  if (span) return span(r.today);
  const read = await withinTerm(term, () =>
    readDay(words, TERM, { now: r.now, timeZone: r.principal.timeZone, forward: term.field === 'due' }),
  );
  if (read.words) r.notes.push(`${term.text} read as ${read.date} (${r.principal.timeZone}).`);
  return [read.date, read.date];
};

/** Whether a day is in what `op` says of the span [lo, hi]. */
const compares = (day: string, op: Comparison, [lo, hi]: readonly [string, string]): boolean =>
  op === ':' ? day >= lo && day <= hi : op === '<' ? day < lo : op === '<=' ? day <= hi : op === '>' ? day > hi : day >= lo;

const rankOf = (p: Priority): number => PRIORITIES.indexOf(p) + 1;

/** Every custom field name of the workspace's projects: what a query may name besides the built-in fields. */
export const customFieldNames = (names: Names): string[] => {
  const seen = new Map<string, string>();
  for (const p of names.projects.values()) for (const f of p.fields ?? []) seen.set(foldedFieldName(f.name), f.name);
  return [...seen.values()];
};

/** A task's value of the custom field named so in its own project (a project without it: none). */
export const customValueOf = (t: Task, names: Names, name: string): FieldValue | undefined => {
  if (!t.projectId || !t.fields) return undefined;
  const def = names.projects.get(t.projectId)?.fields?.find((f) => foldedFieldName(f.name) === foldedFieldName(name));
  return def ? t.fields[def.fieldId] : undefined;
};

/** A custom field's term as a predicate: by the type of the field in each task's project. */
const customTest = (term: Extract<Term, { field: 'custom' }>, r: Reading): ((t: Task) => boolean) => {
  const want = term.value.toLocaleLowerCase('en');
  const number = Number(term.value);
  const me = r.principal.userId;
  const person = (id: string): boolean =>
    want === 'me' ? id === me : id === term.value || foldedFieldName(r.names.members.get(id)?.name ?? '') === want;
  return (t) => {
    if (!t.projectId) return false;
    const def = r.names.projects.get(t.projectId)?.fields?.find((f) => foldedFieldName(f.name) === foldedFieldName(term.name));
    const v = def ? t.fields?.[def.fieldId] : undefined;
    if (!def || v === undefined) return false;
    const ordered = (x: number | string, y: number | string): boolean =>
      term.op === '>' ? x > y : term.op === '>=' ? x >= y : term.op === '<' ? x < y : term.op === '<=' ? x <= y : x === y;
    switch (def.type) {
      case 'number':
        return Number.isFinite(number) && ordered(v as number, number);
      case 'date':
        return ordered(String(v), term.value);
      case 'multi-select':
        return (v as readonly string[]).some((o) => o.toLocaleLowerCase('en') === want);
      case 'person':
        return term.op === ':' && person(String(v));
      case 'select':
        return term.op === ':' ? String(v).toLocaleLowerCase('en') === want : ordered(String(v), term.value);
      default:
        return term.op === ':' ? String(v).toLocaleLowerCase('en').includes(want) : ordered(String(v), term.value);
    }
  };
};

/** The priorities `op n` admits. */
const prioritiesOf = (op: Comparison, n: number): Priority[] =>
  PRIORITIES.filter((p) => {
    const k = rankOf(p);
    return op === ':' ? k === n : op === '<' ? k < n : op === '<=' ? k <= n : op === '>' ? k > n : k >= n;
  });

/** The statuses a status term names, read in every set of the workspace (a name finds its status in each project). */
const statusFilterOf = (term: Term & { value: string }, r: Reading): StatusFilter => {
  const sets = [DEFAULT_SET, ...[...r.names.projects.values()].filter((p) => p.statuses).map(setOf)];
  const setFor = (id: string | undefined) => setOf(id ? r.names.projects.get(id) : undefined);
  try {
    return readStatusFilter(term.value, sets, TERM, setFor);
  } catch (e) {
    if (e instanceof ToolRefusal) throw queryTermNamesNothing(term.at, term.text, e.message.replace(/^term: /, ''));
    throw e;
  }
};

const statusPredicate =
  (f: StatusFilter): Predicate =>
  (t) =>
    (f.status === 'any' || t.status === f.status) && inStates(t, f.states, f.shows);

/** A task's instant as a day of the member's calendar. */
const dayOfInstant = (iso: string | undefined, timeZone: string): string | undefined =>
  iso ? dateInZone(new Date(iso), timeZone) : undefined;

/** One term as a condition on a task, with what it narrows the read to when every match meets it. */
interface Planned {
  readonly test: Predicate;
  readonly narrows?: (f: Mutable<TaskFilter>, ids: string[]) => void;
}

const planTerm = async (term: Term, r: Reading): Promise<Planned> => {
  const tz = r.principal.timeZone;
  switch (term.field) {
    case 'assignee': {
      const id = memberOf(term, r);
      if (id === undefined) return { test: () => true };
      return {
        test: (t) => (t.assigneeId ?? null) === id,
        narrows: (f) => {
          f.assigneeId ??= id;
        },
      };
    }
    case 'project': {
      const id = projectOf(term, r);
      return {
        test: (t) => (t.projectId ?? null) === id,
        narrows: (f) => {
          f.projectId ??= id;
        },
      };
    }
    case 'status': {
      const sf = statusFilterOf(term, r);
      return {
        test: statusPredicate(sf),
        narrows: (f) => {
          if (sf.status === 'any') return;
          if (f.status === 'any') f.status = sf.status;
          if (f.status === sf.status && sf.states && !f.states) {
            f.states = sf.states;
            if (sf.shows) f.shows = sf.shows;
          }
        },
      };
    }
    case 'is': {
      switch (term.value) {
        case 'open':
          return {
            test: (t) => t.status === 'open',
            narrows: (f) => {
              if (f.status === 'any') f.status = 'open';
            },
          };
        case 'done':
        case 'canceled': {
          const category = term.value;
          return {
            test: (t) =>
              t.status === 'done' && statusOf(t, setOf(t.projectId ? r.names.projects.get(t.projectId) : undefined)).category === category,
            narrows: (f) => {
              if (f.status === 'any') f.status = 'done';
            },
          };
        }
        case 'overdue':
          return {
            test: (t) => t.status === 'open' && t.dueDate !== undefined && t.dueDate < r.today,
            narrows: (f) => {
              if (f.status === 'any') f.status = 'open';
              if (f.dueBefore === undefined || r.today < f.dueBefore) f.dueBefore = r.today;
            },
          };
        case 'blocked':
          return {
            test: (t) => (t.openBlockers?.length ?? 0) > 0,
            narrows: (f) => {
              f.blocked ??= true;
            },
          };
        case 'recurring':
          return {
            test: (t) => !!t.repeat,
            narrows: (f) => {
              f.recurring ??= true;
            },
          };
        case 'subtask':
          return {
            test: (t) => !!t.parentId,
            narrows: (f) => {
              f.topLevel ??= false;
            },
          };
      }
      break;
    }
    case 'has': {
      const has: Predicate = {
        files: (t: Task) => (t.attachmentCount ?? 0) > 0,
        subtasks: (t: Task) => (t.subtaskCount ?? 0) > 0,
        labels: (t: Task) => t.labels.length > 0,
        due: (t: Task) => t.dueDate !== undefined,
        blockers: (t: Task) => Object.keys(t.blockedBy ?? {}).length > 0,
        assignee: (t: Task) => t.assigneeId !== undefined,
        project: (t: Task) => t.projectId !== undefined,
        parent: (t: Task) => t.parentId !== undefined,
        repeat: (t: Task) => !!t.repeat,
      }[term.value];
      const absent = term.absent;
      const narrows = (f: Mutable<TaskFilter>) => {
        if (term.value === 'assignee' && absent) f.assigneeId ??= null;
        if (term.value === 'project' && absent) f.projectId ??= null;
        if (term.value === 'parent') f.topLevel ??= absent;
        if (term.value === 'repeat') f.recurring ??= !absent;
      };
      return { test: absent ? (t) => !has(t) : has, narrows };
    }
    case 'label': {
      const key = labelKey(term.value);
      return {
        test: (t) => t.labels.some((l) => labelKey(l) === key),
        narrows: (f) => {
          f.label ??= term.value;
        },
      };
    }
    case 'priority': {
      const allowed = prioritiesOf(term.op, term.value);
      return {
        test: (t) => allowed.includes(t.priority),
        narrows: (f) => {
          const now = f.priorities ?? PRIORITIES;
          f.priorities = now.filter((p) => allowed.includes(p));
        },
      };
    }
    case 'due': {
      const span = await daysOf(term, r);
      if (span === 'none') return { test: (t) => t.dueDate === undefined };
      const op = term.op;
      return {
        test: (t) => t.dueDate !== undefined && compares(t.dueDate, op, span),
        narrows: (f) => {
          const [lo, hi] = span;
          const from = op === ':' || op === '>=' ? lo : op === '>' ? addDays(hi, 1) : undefined;
          const upTo = op === ':' || op === '<=' ? hi : undefined;
          const before = op === '<' ? lo : undefined;
          if (from !== undefined && (f.dueOnOrAfter === undefined || from > f.dueOnOrAfter)) f.dueOnOrAfter = from;
          if (upTo !== undefined && (f.dueOnOrBefore === undefined || upTo < f.dueOnOrBefore)) f.dueOnOrBefore = upTo;
          if (before !== undefined && (f.dueBefore === undefined || before < f.dueBefore)) f.dueBefore = before;
        },
      };
    }
    case 'created':
    case 'updated':
    case 'completed': {
      const span = await daysOf(term, r);
      if (span === 'none') return { test: () => false };
      const op = term.op;
      const at = term.field === 'created' ? 'createdAt' : term.field === 'updated' ? 'updatedAt' : 'completedAt';
      return {
        test: (t) => {
          if (at === 'completedAt' && t.status !== 'done') return false;
          const day = dayOfInstant(t[at], tz);
          return day !== undefined && compares(day, op, span);
        },
        ...(at === 'completedAt'
          ? {
              narrows: (f: Mutable<TaskFilter>) => {
                if (f.status === 'any') f.status = 'done';
                // The days as instants of the member's zone: the done list is keyed by the instant.
                const [lo, hi] = span;
                const startOf = (day: string) => new Date(instantInZone(day, '00:00', tz)).toISOString();
                const from = op === ':' || op === '>=' ? startOf(lo) : op === '>' ? startOf(addDays(hi, 1)) : undefined;
                const before = op === ':' || op === '<=' ? startOf(addDays(hi, 1)) : op === '<' ? startOf(lo) : undefined;
                if (from !== undefined && (f.completedFrom === undefined || from > f.completedFrom)) f.completedFrom = from;
                if (before !== undefined && (f.completedBefore === undefined || before < f.completedBefore)) f.completedBefore = before;
              },
            }
          : {}),
      };
    }
    case 'parent': {
      const id = await withinTerm(term, () => r.services.numbers.idOrRefuse(r.principal, term.value, TERM));
      return {
        test: (t) => t.parentId === id,
        narrows: (f) => {
          f.parentId ??= id;
        },
      };
    }
    case 'key': {
      const id = await withinTerm(term, () => r.services.numbers.idOrRefuse(r.principal, term.value, TERM));
      return {
        test: (t) => t.taskId === id,
        narrows: (_f, ids) => {
          ids.push(id);
        },
      };
    }
    case 'custom': {
      // No index holds custom values: the term decides on each task read (a page at a time).
      const known = r.names.projects.size === 0 || customFieldNames(r.names).some((n) => foldedFieldName(n) === foldedFieldName(term.name));
      if (!known) throw queryTermNamesNothing(term.at, term.text, `no project has a field named '${term.name}'`, customFieldNames(r.names));
      const number = r.names.projects.size
        ? [...r.names.projects.values()].flatMap((p) => p.fields ?? []).find((f) => foldedFieldName(f.name) === foldedFieldName(term.name))
        : undefined;
      if (number?.type === 'number' && !Number.isFinite(Number(term.value)))
        throw queryTermBad(term.at, term.text, `compares '${number.name}', a number, with no number`, `"${number.name}">=3`);
      if (number?.type === 'date' && !isCalendarDate(term.value))
        throw queryTermBad(
          term.at,
          term.text,
          `compares '${number.name}', a date, with no date (YYYY-MM-DD)`,
          `"${number.name}"<2026-12-24`,
        );
      return { test: customTest(term, r) };
    }
    case 'words': {
      const words = await withinTerm(term, () => {
        try {
          return searchWords(term.value);
        } catch (e) {
          if (e instanceof ToolRefusal && wordsOf(term.value).length > MAX_SEARCH_WORDS)
            throw queryTermBad(term.at, term.text, `has more words than a search takes (${MAX_SEARCH_WORDS})`, '"press kit"');
          if (e instanceof ToolRefusal)
            throw queryTermBad(
              term.at,
              term.text,
              'has no word to search by (give a word of 3 letters or more, not a very common one)',
              '"press kit"',
            );
          throw e;
        }
      });
      return {
        test: (t) => matchOf(taskWords({ ...t, nw: extrasOf(t).nw }), words).all,
        narrows: (f) => {
          f.words = [...(f.words ?? []), ...words];
        },
      };
    }
  }
  throw new Error(`unplanned query field ${(term as Term).field}`);
};

const plannedTerm = (term: Term, r: Reading): Promise<Planned> => {
  const known = r.planned.get(term);
  if (known) return known;
  const p = planTerm(term, r);
  r.planned.set(term, p);
  return p;
};

const planCondition = async (c: Condition, r: Reading): Promise<Predicate> => {
  if (c.kind === 'term') return (await plannedTerm(c.term, r)).test;
  if (c.kind === 'not') {
    const inner = await planCondition(c.item, r);
    return (t) => !inner(t);
  }
  const items = await Promise.all(c.items.map((i) => planCondition(i, r)));
  return c.kind === 'and' ? (t) => items.every((p) => p(t)) : (t) => items.some((p) => p(t));
};

/**
 * Plans a query for a caller: refused, naming the part, when it cannot be read or names nothing of
 * this workspace. The phase is open unless a term names one (status, is:open/done/canceled, completed).
 */
export const planQuery = async (
  services: WorkspaceStores,
  principal: Principal,
  names: Names,
  now: Date,
  query: string,
  checked: CheckedQuery = checkQuery(query, customFieldNames(names)),
): Promise<PlannedQuery> => {
  const r: Reading = { services, principal, names, now, today: dateInZone(now, principal.timeZone), notes: [], planned: new Map() };
  const filter: Mutable<TaskFilter> = { status: checked.namesPhase ? 'any' : 'open' };
  const ids: string[] = [];
  // The top-level AND's terms narrow the read; the whole condition decides.
  const top = conjunctsOf(checked.root);
  await Promise.all(
    top.map(async (c) => {
      if (c.kind !== 'term') return;
      const planned = await plannedTerm(c.term, r);
      planned.narrows?.(filter, ids);
    }),
  );
  const whole = checked.root ? await planCondition(checked.root, r) : () => true;
  const phase = filter.status;
  filter.residual = (t) => (checked.namesPhase || t.status === 'open') && whole(t) && (phase === 'any' || t.status === phase);
  // A word search reads the word's entries; a layout-1 workspace has none, and its labels are
  // matched as stored (case and all): there the predicate alone decides.
  if (principal.layout !== 2) {
    delete filter.words;
    delete filter.label;
  }
  if (filter.priorities?.length === PRIORITIES.length) delete filter.priorities;
  return {
    filter,
    ...(ids.length ? { taskIds: [...new Set(ids)] } : {}),
    ...(checked.sort ? { sort: checked.sort } : {}),
    notes: r.notes,
  };
};
