import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from '../../platform/dynamodb.js';
import {
  assigneeCountScope,
  assigneeListPk,
  countsPk,
  labelPk,
  projectCountScope,
  projectListPk,
  SUBTASK_PREFIX,
  taskPk,
  WORKSPACE_COUNT_SHARDS,
  wordPk,
  workspaceListPk,
} from '../../platform/item-keys.js';
import { MAX_READ_UNITS_PER_CALL } from '../model/limits.js';
import { categoryOfKey } from '../model/statuses.js';
import { PRIORITIES, type Priority, type Task } from '../model/types.js';
import { and, Expression } from './expressions.js';
import { extrasOf, taskKey, toTask } from './task-items.js';
import { inStates, statesCondition, type TaskFilter, type TaskPage, type TaskPosition } from './task-queries.js';
import { indexedWord, labelKey, matchOf, taskWords } from './words.js';

/**
 * The list reads of layout 2: every one reads about what it returns, whatever the size of the
 * workspace (docs/workspace.md, "Access patterns").
 *
 * - A list is a scope (the workspace, an assignee, a project) split by priority: four index
 *   partitions, each in due-date order (done ones by completion). A page reads each of them from
 *   where the last page ended, at most a page plus one, and merges them: due date, then priority.
 *   A priority filter reads one partition. Other filters are a filter expression on the partitions
 *   read; when they match little, the page stops at the call's read units and says so.
 * - Text and labels read their entries (a word's tasks, a label's tasks), newest first, and then
 *   the tasks themselves, a page's worth at a time.
 * - Counts are read from the scope's count items, never by counting tasks.
 */

/** Index name and partition key attribute of each kind of list. */
const LISTS = {
  workspace: { index: 'gsi1', pk: 'gsi1pk', sk: 'gsi1sk' },
  assignee: { index: 'gsi2', pk: 'gsi2pk', sk: 'gsi2sk' },
  project: { index: 'gsi3', pk: 'gsi3pk', sk: 'gsi3sk' },
} as const;
type ListKind = keyof typeof LISTS;

/** Tasks read per round while a text or label search fills its page. */
const CANDIDATE_CHUNK = 40;

/**
 * How many entries to read next for `missing` more matches, from the share of those read so far that
 * matched: a page that is short of one task after mostly hits reads a few more, not a whole chunk.
 */
const chunkAfter = (missing: number, read: number, matched: number): number =>
  read === 0 ? missing : Math.min(CANDIDATE_CHUNK, Math.ceil((missing * read) / Math.max(matched, 1)) + 1);
/** The read units one page of a list may spend. */
const READ_CEILING = Math.min(MAX_READ_UNITS_PER_CALL, 40);

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The merge key of an open task: due date, then priority, then id (`O#<due>#<P>#<id>`); of a done one its list key. */
const mergeKeyOf = (t: Task): string =>
  t.status === 'open' ? `O#${t.dueDate ?? '~'}#${t.priority}#${t.taskId}` : `X#${t.completedAt ?? ''}#${t.taskId}`;

interface Segment {
  readonly status: 'open' | 'done';
  /** Inclusive bounds of the list sort key. */
  readonly lo: string;
  readonly hi: string;
}

/** The ranges a filter reads, in result order: open ascending, then done most recent first. */
const segmentsOf = (f: TaskFilter): Segment[] => {
  const out: Segment[] = [];
  if (f.status !== 'done') {
    const los = ['O#'];
    if (f.dueOnOrAfter !== undefined) los.push(`O#${f.dueOnOrAfter}`);
    const his = ['O#\uffff'];
    if (f.dueOnOrBefore !== undefined) his.push(`O#${f.dueOnOrBefore}#\uffff`);
    if (f.dueBefore !== undefined) his.push(`O#${f.dueBefore}`);
    const dated = f.dueOnOrAfter !== undefined || f.dueOnOrBefore !== undefined || f.dueBefore !== undefined;
    // A date filter leaves undated tasks out (`O#~` sorts after every date).
    if (dated) his.push('O#9999-12-31#\uffff');
    const lo = los.sort().at(-1)!;
    const hi = his.sort()[0]!;
    if (lo <= hi) out.push({ status: 'open', lo, hi });
  }
  if (f.status !== 'open') {
    // Most recent first: a completion range bounds the read on both sides (`X#<completedAt>#<id>`).
    const lo = f.completedFrom === undefined ? 'X#' : `X#${f.completedFrom}`;
    const hi = f.completedBefore === undefined ? 'X#\uffff' : `X#${f.completedBefore}`;
    if (lo <= hi) out.push({ status: 'done', lo, hi });
  }
  return out;
};

/** Where one priority's partition of a segment goes on after the merged page ended at `after` (its merge key). */
const startOf = (seg: Segment, priority: Priority, after: string | undefined): { lo: string; hi: string; skip?: string } => {
  if (!after || after[0] !== seg.lo[0]) return { lo: seg.lo, hi: seg.hi };
  if (seg.status === 'done') {
    // Most recent first, and one order for every priority: what comes after is below the last key.
    return { lo: seg.lo, hi: after < seg.hi ? after : seg.hi, skip: after };
  }
  const [, due, prio, id] = after.split('#') as [string, string, Priority, string];
  const lo = priority < prio ? `O#${due}#\uffff` : priority === prio ? `O#${due}#${id}` : `O#${due}#`;
  // biome-ignore lint/complexity/useMathMinMax: these are strings, which Math.max would make NaN.
  return { lo: lo > seg.lo ? lo : seg.lo, hi: seg.hi, ...(priority === prio ? { skip: `O#${due}#${id}` } : {}) };
};

export class TaskLists {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly seen: (t: Task) => void,
  ) {}

  private task(item: Record<string, unknown>): Task {
    const t = toTask(item);
    this.seen(t);
    return t;
  }

  /** Which list a filter reads: its project's, its assignee's, or the workspace's. */
  private listOf(ws: string, f: TaskFilter): { kind: ListKind; pkOf: (p: Priority) => string } {
    if (f.projectId !== undefined) return { kind: 'project', pkOf: (p) => projectListPk(ws, f.projectId ?? undefined, p) };
    if (f.assigneeId !== undefined) return { kind: 'assignee', pkOf: (p) => assigneeListPk(ws, f.assigneeId ?? undefined, p) };
    return { kind: 'workspace', pkOf: (p) => workspaceListPk(ws, p) };
  }

  async search(workspaceId: string, filter: TaskFilter, limit: number, after?: TaskPosition): Promise<TaskPage> {
    if (filter.parentId !== undefined || filter.words?.length || filter.label !== undefined)
      return this.searchEntries(workspaceId, filter, limit, after);
    const list = this.listOf(workspaceId, filter);
    const priorities = filter.priority ? [filter.priority] : [...(filter.priorities ?? PRIORITIES)];
    // What a read item must also be: a status as its project reads it, and a query's whole condition.
    const { shows, residual: query } = filter;
    const keep = shows && query ? (t: Task) => shows(t) && query(t) : (shows ?? query);
    const residual = (x: Expression) => residualFilter(x, filter, list.kind);
    // Closed tasks are mostly done: leaving the canceled ones out filters few, so such a read asks
    // for a page plus one as an unfiltered one does (and goes on when some were canceled).
    const dense =
      !query &&
      !!filter.states?.some((k) => categoryOfKey(k) === 'done') &&
      !residualFilter(new Expression(), { ...filter, states: undefined }, list.kind);
    const found: { task: Task; key: string }[] = [];
    let spent = 0;
    const segments = segmentsOf(filter);
    const startSeg = after
      ? Math.max(
          0,
          segments.findIndex((s) => s.status === (after.orderKey.startsWith('X#') ? 'done' : 'open')),
        )
      : 0;
    for (let si = startSeg; si < segments.length && found.length <= limit; si++) {
      const seg = segments[si]!;
      const from = after && si === startSeg ? after.orderKey : undefined;
      const budget = (READ_CEILING - spent) / priorities.length;
      const read = await Promise.all(
        priorities.map((p) =>
          this.readPartition(
            list.kind,
            list.pkOf(p),
            seg,
            startOf(seg, p, from),
            limit + 1 - found.length,
            residual,
            budget,
            dense && seg.status === 'done',
            keep,
            !!query,
          ),
        ),
      );
      spent += read.reduce((s, r) => s + r.units, 0);
      const merged = read.flatMap((r) => r.tasks.map((task) => ({ task, key: mergeKeyOf(task) })));
      merged.sort((a, b) => (seg.status === 'open' ? cmp(a.key, b.key) : cmp(b.key, a.key)));
      // Past a partition that stopped short (its reads spent), nothing is known: the page ends there.
      const stops = read.filter((r) => r.stoppedAt !== undefined).map((r) => r.stoppedAt!);
      const bound = stops.length ? (seg.status === 'open' ? stops.sort()[0] : stops.sort().at(-1)) : undefined;
      for (const m of merged) {
        if (bound !== undefined && (seg.status === 'open' ? m.key > bound : m.key < bound)) break;
        found.push(m);
        if (found.length > limit) break;
      }
      if (bound !== undefined && found.length <= limit) {
        return { tasks: found.map((f) => f.task), next: { segment: si, taskId: '', orderKey: bound }, cut: true };
      }
    }
    const page = found.slice(0, limit);
    const last = page.at(-1);
    return {
      tasks: page.map((f) => f.task),
      ...(found.length > limit && last ? { next: { segment: 0, taskId: last.task.taskId, orderKey: last.key } } : {}),
    };
  }

  /**
   * Up to `want` tasks of one partition in a range, after a filter. A filter that matches little
   * reads on until the read units of a page are spent; `stoppedAt` is then the merge key of the last
   * item read (what the next page goes on after).
   */
  private async readPartition(
    kind: ListKind,
    pk: string,
    seg: Segment,
    range: { lo: string; hi: string; skip?: string },
    want: number,
    residual: (x: Expression) => string | undefined,
    budget = READ_CEILING,
    /** The filter leaves out few (see search): read as if there were none. */
    dense = false,
    /** What a read item must also be (a status as its project reads it, a query). */
    keep?: (t: Task) => boolean,
    /** `keep` leaves out many: read more per request, as for a filter expression. */
    sparse = false,
  ): Promise<{ tasks: Task[]; units: number; stoppedAt?: string }> {
    const l = LISTS[kind];
    const tasks: Task[] = [];
    let units = 0;
    let start: Record<string, unknown> | undefined;
    // A query's condition is checked here, on what is read: the first request asks for a page, and
    // each next one for more while it matches little, never for more than the units left.
    let ask = want + 1;
    let scanned = 0;
    if (range.lo > range.hi) return { tasks, units };
    do {
      const x = new Expression();
      const filterExpression = residual(x);
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: l.index,
          KeyConditionExpression: and(x.eq(l.pk, pk), x.between(l.sk, range.lo, range.hi)),
          ...(filterExpression ? { FilterExpression: filterExpression } : {}),
          ...x.input(),
          ScanIndexForward: seg.status === 'open',
          ExclusiveStartKey: start,
          ReturnConsumedCapacity: 'TOTAL',
          // One more than wanted (the skipped last item of the page before may be among them).
          Limit: filterExpression && !dense ? Math.max(2 * (want + 1), 50) : sparse && !dense ? ask : want + 1,
        }),
      );
      units += out.ConsumedCapacity?.CapacityUnits ?? (out.ScannedCount ?? 0) * 0.5;
      scanned += out.ScannedCount ?? 0;
      for (const item of out.Items ?? []) {
        if (item[l.sk] === range.skip) continue;
        const task = this.task(item);
        if (keep && !keep(task)) continue;
        tasks.push(task);
        if (tasks.length >= want) return { tasks, units };
      }
      start = out.LastEvaluatedKey;
      if (sparse) {
        const perItem = units / Math.max(scanned, 1);
        ask = Math.max(1, Math.min(ask * 4, 200, Math.floor((budget - units) / perItem) + 1));
      }
      if (start && units >= budget) {
        // The merge key of the last item read: the page cannot say what lies past it here.
        const [, due, id] = String(start[l.sk]).split('#');
        const stoppedAt = seg.status === 'open' ? `O#${due}#${pk.slice(-2)}#${id}` : String(start[l.sk]);
        return { tasks, units, stoppedAt };
      }
    } while (start);
    return { tasks, units };
  }

  /**
   * A search by text or label. Entries name the tasks (a word's: every task with it in its title,
   * labels or first words of notes; a label's: every task with it), newest first; they are read a
   * chunk at a time, the tasks they name read by id and checked against every filter (the other
   * words included) until the page is full, so a page reads about a page of entries and tasks. Text
   * reads its longest word's entries: the word's own first, then those of longer words it starts.
   * Each page lists its tasks in the usual order, whole words first.
   */
  private async searchEntries(workspaceId: string, filter: TaskFilter, limit: number, after?: TaskPosition): Promise<TaskPage> {
    const phases: { segment: number; pk: string; lo: string; hi: string; whole: boolean }[] = [];
    if (filter.parentId !== undefined) {
      // A parent's entries of its subtasks, beside it: never more than a parent has.
      phases.push({
        segment: -1,
        pk: taskPk(workspaceId, filter.parentId),
        lo: SUBTASK_PREFIX,
        hi: `${SUBTASK_PREFIX}\uffff`,
        whole: true,
      });
    } else if (filter.words?.length) {
      const w = indexedWord([...filter.words].sort((a, b) => b.length - a.length || cmp(a, b))[0]!);
      const pk = wordPk(workspaceId, w);
      phases.push({ segment: -1, pk, lo: `${w}#`, hi: `${w}#\uffff`, whole: true });
      phases.push({ segment: -2, pk, lo: `${w}#\uffff`, hi: `${w}\uffff`, whole: false });
    } else {
      phases.push({ segment: -1, pk: labelPk(workspaceId, labelKey(filter.label!)), lo: ' ', hi: '\uffff', whole: true });
    }
    const idOf = (sk: string) => sk.slice(sk.lastIndexOf('#') + 1);
    const found: { task: Task; whole: boolean }[] = [];
    const pageOf = (next?: TaskPosition, cut = false): TaskPage => {
      const page = found.slice(0, limit).sort((a, b) => Number(b.whole) - Number(a.whole) || listOrder(a.task, b.task));
      return { tasks: page.map((f) => f.task), ...(next ? { next } : {}), ...(cut ? { cut: true } : {}) };
    };
    let spent = 0;
    let read = 0;
    let lastShown = '';
    const first = after
      ? Math.max(
          0,
          phases.findIndex((p) => p.segment === after.segment),
        )
      : 0;
    for (let pi = first; pi < phases.length; pi++) {
      const phase = phases[pi]!;
      // Entries below `hi` (inclusive), newest first; `skip` is where the page before ended.
      let hi = after && pi === first ? after.orderKey : phase.hi;
      let skip = after && pi === first ? after.orderKey : undefined;
      for (;;) {
        if (spent >= READ_CEILING) return pageOf({ segment: phase.segment, taskId: '', orderKey: hi }, true);
        const x = new Expression();
        const res = await this.db.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: and(x.eq('pk', phase.pk), x.between('sk', phase.lo, hi)),
            ...x.input(),
            ScanIndexForward: false,
            ReturnConsumedCapacity: 'TOTAL',
            Limit: chunkAfter(limit + 1 - found.length, read, found.length) + 1,
          }),
        );
        spent += res.ConsumedCapacity?.CapacityUnits ?? 0.5;
        const entries = (res.Items ?? []).map((i) => String(i.sk)).filter((sk) => sk !== skip);
        read += entries.length;
        if (entries.length) {
          const items = await batchGet(
            this.db,
            this.table,
            entries.map((sk) => taskKey(workspaceId, idOf(sk))),
            false,
          );
          spent += entries.length * 0.5;
          const byId = new Map(items.map((it) => [String(it.taskId), it]));
          for (const sk of entries) {
            const item = byId.get(idOf(sk));
            if (!item) continue;
            const task = this.task(item);
            if (!matchesFilter(task, filter)) continue;
            found.push({ task, whole: phase.whole });
            // One more than a page: the next page goes on after the last one this one shows.
            if (found.length > limit) return pageOf({ segment: phase.segment, taskId: '', orderKey: lastShown });
            lastShown = sk;
          }
        }
        const evaluated = res.LastEvaluatedKey?.sk;
        if (evaluated === undefined) break;
        hi = String(evaluated);
        skip = hi;
      }
    }
    return pageOf();
  }

  /**
   * One page of a day's most urgent open tasks (overdue and due on `day`), by priority then due
   * date: each priority's partition of the list read from the start of time up to `day`.
   */
  async urgent(
    workspaceId: string,
    who: { readonly assigneeId?: string | null },
    day: string,
    limit: number,
    after?: string,
  ): Promise<{ tasks: Task[]; next?: string }> {
    const kind: ListKind = who.assigneeId === undefined ? 'workspace' : 'assignee';
    const pkOf = (p: Priority) =>
      kind === 'workspace' ? workspaceListPk(workspaceId, p) : assigneeListPk(workspaceId, who.assigneeId ?? undefined, p);
    const seg: Segment = { status: 'open', lo: 'O#', hi: `O#${day}#\uffff` };
    const [ap, adue, aid] = after ? (after.split('#') as [Priority, string, string]) : [];
    const reads = await Promise.all(
      PRIORITIES.filter((p) => !ap || p >= ap).map(async (p) => {
        const range = ap && p === ap ? { lo: `O#${adue}#${aid}`, hi: seg.hi, skip: `O#${adue}#${aid}` } : { lo: seg.lo, hi: seg.hi };
        const r = await this.readPartition(kind, pkOf(p), seg, range, limit + 1, () => undefined);
        return r.tasks;
      }),
    );
    const all = reads.flat().sort((a, b) => cmp(urgentKey(a), urgentKey(b)));
    const page = all.slice(0, limit);
    return { tasks: page, ...(all.length > limit ? { next: urgentKey(page.at(-1)!) } : {}) };
  }

  /**
   * The counts of a scope on `day`: open, overdue (due before it), due on it, done (a project's),
   * and done within [fromIso, toIso) (the day in the reader's time zone). One query per count
   * partition; what it reads grows with the dates that have open tasks and the last days' quarter
   * hours, never with the number of tasks.
   */
  async counts(
    workspaceId: string,
    scope: { readonly assigneeId?: string | null; readonly projectId?: string | null },
    day: string,
    fromIso: string,
    toIso: string,
  ): Promise<{ open: number; overdue: number; dueToday: number; done: number; doneBetween: number }> {
    const pks =
      scope.projectId !== undefined
        ? [countsPk(workspaceId, projectCountScope(scope.projectId ?? undefined))]
        : scope.assigneeId !== undefined
          ? [countsPk(workspaceId, assigneeCountScope(scope.assigneeId ?? undefined))]
          : Array.from({ length: WORKSPACE_COUNT_SHARDS }, (_, s) => countsPk(workspaceId, `W#${s}`));
    const from = `C#${fromIso.slice(0, 16)}`;
    const to = `C#${toIso.slice(0, 16)}`;
    const totals = { open: 0, overdue: 0, dueToday: 0, done: 0, doneBetween: 0 };
    await Promise.all(
      pks.map(async (pk) => {
        let start: Record<string, unknown> | undefined;
        do {
          const x = new Expression();
          const res = await this.db.send(
            new QueryCommand({ TableName: this.table, KeyConditionExpression: x.eq('pk', pk), ...x.input(), ExclusiveStartKey: start }),
          );
          for (const item of res.Items ?? []) {
            const sk = String(item.sk);
            if (sk.startsWith('D#')) {
              const o = Number(item.o ?? 0);
              const date = sk.slice(2);
              totals.open += o;
              if (date !== '~' && date < day) totals.overdue += o;
              if (date === day) totals.dueToday += o;
            } else if (sk === 'X') totals.done += Number(item.x ?? 0);
            else if (sk.startsWith('C#') && sk >= from && sk < to) totals.doneBetween += Number(item.n ?? 0);
          }
          start = res.LastEvaluatedKey;
        } while (start);
      }),
    );
    return totals;
  }
}

/** The order of every list: open by due date, then priority; then done, the most recent first. */
const listOrder = (a: Task, b: Task): number => {
  if (a.status !== b.status) return a.status === 'open' ? -1 : 1;
  return a.status === 'open' ? cmp(mergeKeyOf(a), mergeKeyOf(b)) : cmp(mergeKeyOf(b), mergeKeyOf(a));
};

/** A priority's urgency order: priority, due date, id. */
const urgentKey = (t: Task): string => `${t.priority}#${t.dueDate ?? '~'}#${t.taskId}`;

/** The conditions a list read cannot put in its key: applied while reading. */
const residualFilter = (x: Expression, f: TaskFilter, kind: ListKind): string | undefined => {
  const equalsOrAbsent = (attr: string, value: string | null | undefined) =>
    value === undefined ? undefined : value === null ? x.absent(attr) : x.eq(attr, value);
  const clause = and(
    kind !== 'assignee' ? equalsOrAbsent('assigneeId', f.assigneeId) : undefined,
    kind !== 'project' ? equalsOrAbsent('projectId', f.projectId) : undefined,
    f.blocked === undefined ? undefined : f.blocked ? x.exists('openBlockers') : x.absent('openBlockers'),
    f.recurring === undefined ? undefined : f.recurring ? x.exists('repeat') : x.absent('repeat'),
    f.topLevel === undefined ? undefined : f.topLevel ? x.absent('parentId') : x.exists('parentId'),
    f.states ? statesCondition(x, f.states) : undefined,
  );
  return clause || undefined;
};

/** Every filter, checked on a task read by id (a text or label search). */
const matchesFilter = (t: Task, f: TaskFilter): boolean => {
  if (t.deletedAt) return false;
  if (f.status !== 'any' && t.status !== f.status) return false;
  if (!inStates(t, f.states, f.shows)) return false;
  if (f.assigneeId !== undefined && (t.assigneeId ?? null) !== f.assigneeId) return false;
  if (f.projectId !== undefined && (t.projectId ?? null) !== f.projectId) return false;
  if (f.priority !== undefined && t.priority !== f.priority) return false;
  if (f.priorities !== undefined && !f.priorities.includes(t.priority)) return false;
  if (f.label !== undefined && !t.labels.map(labelKey).includes(labelKey(f.label))) return false;
  if (f.dueOnOrAfter !== undefined && (t.dueDate === undefined || t.dueDate < f.dueOnOrAfter)) return false;
  if (f.dueOnOrBefore !== undefined && (t.dueDate === undefined || t.dueDate > f.dueOnOrBefore)) return false;
  if (f.dueBefore !== undefined && (t.dueDate === undefined || t.dueDate >= f.dueBefore)) return false;
  if (f.completedFrom !== undefined && (t.completedAt === undefined || t.completedAt < f.completedFrom)) return false;
  if (f.completedBefore !== undefined && (t.completedAt === undefined || t.completedAt >= f.completedBefore)) return false;
  if (f.blocked !== undefined && (t.openBlockers?.length ?? 0) > 0 !== f.blocked) return false;
  if (f.recurring !== undefined && !!t.repeat !== f.recurring) return false;
  if (f.parentId !== undefined && t.parentId !== f.parentId) return false;
  if (f.topLevel !== undefined && !t.parentId !== f.topLevel) return false;
  if (f.words?.length && !matchOf(taskWords({ ...t, nw: extrasOf(t).nw }), f.words).all) return false;
  return !f.residual || f.residual(t);
};
