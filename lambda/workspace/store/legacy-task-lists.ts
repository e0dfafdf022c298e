import { type DynamoDBDocumentClient, paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  AGENDA_DONE_PREFIX,
  DONE_ORDER_PREFIX,
  OPEN_ORDER_PREFIX,
  taskSk,
  tasksGsiPk,
  tasksOfAssigneeGsiPk,
  UNDATED,
  wsPk,
} from '../../platform/item-keys.js';
import { MAX_READ_UNITS_PER_CALL } from '../model/limits.js';
import type { Task } from '../model/types.js';
import { and, Expression, or } from './expressions.js';
import { toTask } from './task-items.js';
import { statesCondition, type TaskFilter, type TaskPage, type TaskPosition } from './task-queries.js';

/**
 * The list reads of layout 1, kept so that a workspace not yet migrated (npm run admin -- migrate)
 * reads as it did: every task in one index partition (`WS#<id>#TASKS`, gsi1) ordered by
 * `O#<due>#<priority>#<id>` / `X#<completedAt>#<id>`, an assignee's in gsi2, filters applied while
 * reading, counts by reading every match. Nothing writes layout 1 any more.
 */

interface Segment {
  readonly condition: (x: Expression) => string;
  readonly forward: boolean;
}

export class LegacyTaskLists {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly seen: (task: Task) => void,
  ) {}

  private task(item: Record<string, unknown>): Task {
    const t = toTask(item);
    this.seen(t);
    return t;
  }

  async search(workspaceId: string, filter: TaskFilter, limit: number, after?: TaskPosition): Promise<TaskPage> {
    const found: { task: Task; segment: number; orderKey: string }[] = [];
    const segments = segmentsFor(filter);
    let spent = 0;
    let stopped: TaskPosition | undefined;
    for (let seg = after?.segment ?? 0; seg < segments.length && found.length <= limit && !stopped; seg++) {
      const s = segments[seg]!;
      let startKey: Record<string, unknown> | undefined =
        after && seg === after.segment
          ? { pk: wsPk(workspaceId), sk: taskSk(after.taskId), gsi1pk: tasksGsiPk(workspaceId), gsi1sk: after.orderKey }
          : undefined;
      do {
        const x = new Expression();
        const key = and(x.eq('gsi1pk', tasksGsiPk(workspaceId)), s.condition(x));
        const filterExpression = filterOf(x, filter);
        const needed = limit + 1 - found.length;
        const out = await this.db.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: 'gsi1',
            KeyConditionExpression: key,
            ...(filterExpression ? { FilterExpression: filterExpression } : {}),
            ...x.input(),
            ScanIndexForward: s.forward,
            ExclusiveStartKey: startKey,
            ReturnConsumedCapacity: 'TOTAL',
            // Unfiltered, exactly what is missing (one more tells whether the list is truncated);
            // filtered, more per round trip, since many items read may not match.
            Limit: filterExpression || filter.residual ? Math.max(needed * 4, 100) : needed,
          }),
        );
        spent += out.ConsumedCapacity?.CapacityUnits ?? (out.ScannedCount ?? 0) * 0.5;
        for (const item of out.Items ?? []) {
          const task = this.task(item);
          if (filter.residual && !filter.residual(task)) continue;
          found.push({ task, segment: seg, orderKey: item.gsi1sk as string });
          if (found.length > limit) break;
        }
        startKey = out.LastEvaluatedKey;
        // A filter that matches little reads on: it stops where the call's read units end, and the
        // cursor goes on from the last item read (not the last one returned).
        if (startKey && found.length <= limit && spent >= MAX_READ_UNITS_PER_CALL) {
          stopped = { segment: seg, taskId: String(startKey.sk).slice('TASK#'.length), orderKey: String(startKey.gsi1sk) };
        }
      } while (startKey && found.length <= limit && !stopped);
    }
    const page = found.slice(0, limit);
    const last = page.at(-1);
    if (stopped) return { tasks: page.map((f) => f.task), next: stopped, cut: true };
    return {
      tasks: page.map((f) => f.task),
      ...(found.length > limit && last ? { next: { segment: last.segment, taskId: last.task.taskId, orderKey: last.orderKey } } : {}),
    };
  }

  async all(workspaceId: string, filter: TaskFilter): Promise<Task[]> {
    const tasks: Task[] = [];
    for (const s of segmentsFor(filter)) {
      // One builder per query: every placeholder it defines is one that query uses.
      const x = new Expression();
      const key = and(x.eq('gsi1pk', tasksGsiPk(workspaceId)), s.condition(x));
      const filterExpression = filterOf(x, filter);
      for await (const page of paginateQuery(
        { client: this.db },
        {
          TableName: this.table,
          IndexName: 'gsi1',
          KeyConditionExpression: key,
          ...(filterExpression ? { FilterExpression: filterExpression } : {}),
          ...x.input(),
          ScanIndexForward: s.forward,
        },
      )) {
        for (const item of page.Items ?? []) tasks.push(this.task(item));
      }
    }
    return filter.residual ? tasks.filter(filter.residual) : tasks;
  }

  async agendaOf(workspaceId: string, assigneeId: string, fromIso: string, toIso: string): Promise<{ open: Task[]; done: Task[] }> {
    const open: Task[] = [];
    const done: Task[] = [];
    const x = new Expression();
    // `D#<from>` up to the last open key: done since `from` (none can be later than now), then open.
    const key = and(
      x.eq('gsi2pk', tasksOfAssigneeGsiPk(workspaceId, assigneeId)),
      x.between('gsi2sk', `${AGENDA_DONE_PREFIX}${fromIso}`, `${OPEN_ORDER_PREFIX}\uffff`),
    );
    for await (const page of paginateQuery(
      { client: this.db },
      { TableName: this.table, IndexName: 'gsi2', KeyConditionExpression: key, ...x.input() },
    )) {
      for (const item of page.Items ?? []) {
        const task = this.task(item);
        if (task.status === 'open') open.push(task);
        else if (task.completedAt! < toIso) done.push(task);
      }
    }
    return { open, done };
  }

  async completedBetween(workspaceId: string, fromIso: string, toIso: string, filter: Omit<TaskFilter, 'status'> = {}): Promise<Task[]> {
    const x = new Expression();
    const key = and(
      x.eq('gsi1pk', tasksGsiPk(workspaceId)),
      x.between('gsi1sk', `${DONE_ORDER_PREFIX}${fromIso}`, `${DONE_ORDER_PREFIX}${toIso}`),
    );
    const filterExpression = filterOf(x, { ...filter, status: 'done' });
    const tasks: Task[] = [];
    for await (const page of paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: key,
        ...(filterExpression ? { FilterExpression: filterExpression } : {}),
        ...x.input(),
      },
    )) {
      tasks.push(...(page.Items ?? []).filter((i) => (i.completedAt as string) < toIso).map((i) => this.task(i)));
    }
    return tasks;
  }

  /** The day's urgent tasks and counts, by reading every open task of the scope (layout 1's way). */
  async agenda(
    workspaceId: string,
    who: { readonly assigneeId?: string | null },
    day: string,
    fromIso: string,
    toIso: string,
  ): Promise<{ urgent: Task[]; counts: { open: number; overdue: number; dueToday: number; doneBetween: number } }> {
    const { open, done } =
      typeof who.assigneeId === 'string'
        ? await this.agendaOf(workspaceId, who.assigneeId, fromIso, toIso)
        : await Promise.all([
            this.all(workspaceId, { status: 'open', ...(who.assigneeId === null ? { assigneeId: null } : {}) }),
            this.completedBetween(workspaceId, fromIso, toIso, who.assigneeId === null ? { assigneeId: null } : {}),
          ]).then(([o, d]) => ({ open: o, done: d }));
    const doneBetween = done.filter((t) => t.completedAt! >= fromIso && t.completedAt! < toIso).length;
    const overdue = open.filter((t) => t.dueDate !== undefined && t.dueDate < day);
    const dueToday = open.filter((t) => t.dueDate === day);
    return {
      urgent: [...overdue, ...dueToday],
      counts: { open: open.length, overdue: overdue.length, dueToday: dueToday.length, doneBetween },
    };
  }
}

/** The index ranges a filter reads, in result order: open ascending, then done most recent first. */
const segmentsFor = (f: TaskFilter): Segment[] => {
  const segments: Segment[] = [];
  if (f.status !== 'done') {
    const dated = f.dueOnOrAfter !== undefined || f.dueOnOrBefore !== undefined || f.dueBefore !== undefined;
    if (!dated) {
      segments.push({ condition: (x) => x.beginsWith('gsi1sk', OPEN_ORDER_PREFIX), forward: true });
    } else {
      // `O#<date>` alone is no key (keys go on with `#…`), so it bounds a date range exactly.
      const lo = `${OPEN_ORDER_PREFIX}${f.dueOnOrAfter ?? ''}`;
      const his = [`${OPEN_ORDER_PREFIX}${UNDATED}`];
      if (f.dueOnOrBefore !== undefined) his.push(`${OPEN_ORDER_PREFIX}${f.dueOnOrBefore}#${UNDATED}`);
      if (f.dueBefore !== undefined) his.push(`${OPEN_ORDER_PREFIX}${f.dueBefore}`);
      const hi = his.sort()[0]!;
      if (lo <= hi) segments.push({ condition: (x) => x.between('gsi1sk', lo, hi), forward: true });
    }
  }
  if (f.status !== 'open') segments.push({ condition: (x) => x.beginsWith('gsi1sk', DONE_ORDER_PREFIX), forward: false });
  return segments;
};

const filterOf = (x: Expression, f: TaskFilter): string | undefined => {
  const equalsOrAbsent = (attr: string, value: string | null | undefined) =>
    value === undefined ? undefined : value === null ? x.absent(attr) : x.eq(attr, value);
  const clause = and(
    ...(f.words ?? []).map((w) => x.contains('search', w)),
    equalsOrAbsent('assigneeId', f.assigneeId),
    equalsOrAbsent('projectId', f.projectId),
    equalsOrAbsent('priority', f.priority),
    // No priority at all (p1 p2) matches no task: every task has its taskId.
    f.priorities ? (f.priorities.length ? or(...f.priorities.map((p) => x.eq('priority', p))) : x.absent('taskId')) : undefined,
    f.label !== undefined ? x.contains('labels', f.label) : undefined,
    f.blocked === undefined ? undefined : f.blocked ? x.exists('openBlockers') : x.absent('openBlockers'),
    f.recurring === undefined ? undefined : f.recurring ? x.exists('repeat') : x.absent('repeat'),
    // No task of layout 1 is a subtask.
    f.parentId === undefined ? undefined : x.eq('parentId', f.parentId),
    f.topLevel === undefined ? undefined : f.topLevel ? x.absent('parentId') : x.exists('parentId'),
    f.states ? statesCondition(x, f.states) : undefined,
    f.dueOnOrAfter !== undefined ? x.ge('dueDate', f.dueOnOrAfter) : undefined,
    f.dueOnOrBefore !== undefined ? x.le('dueDate', f.dueOnOrBefore) : undefined,
    f.dueBefore !== undefined ? x.lt('dueDate', f.dueBefore) : undefined,
  );
  return clause || undefined;
};
