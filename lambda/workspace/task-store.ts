import { type DynamoDBDocumentClient, GetCommand, PutCommand, paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictRefusal, NotFoundRefusal } from '../errors.js';
import { batchGetConsistent, fromItem } from '../platform/dynamodb.js';
import {
  AGENDA_DONE_PREFIX,
  agendaOrderKey,
  DONE_ORDER_PREFIX,
  OPEN_ORDER_PREFIX,
  taskOrderKey,
  taskSk,
  tasksGsiPk,
  tasksOfAssigneeGsiPk,
  UNDATED,
  wsPk,
} from '../platform/item-keys.js';
import type { WriteOp } from '../platform/transact.js';
import { conditionally } from './item-support.js';
import type { Priority, Task } from './model.js';

/** Which tasks a search wants. Every condition must hold; an absent one does not filter. */
export interface TaskFilter {
  readonly status: 'open' | 'done' | 'any';
  /** Lower-case words, each of which must occur in the title, notes or labels. */
  readonly words?: readonly string[];
  /** `null`: unassigned tasks only. */
  readonly assigneeId?: string | null;
  /** `null`: tasks in no project (the inbox). */
  readonly projectId?: string | null;
  readonly label?: string;
  readonly priority?: Priority;
  readonly dueOnOrAfter?: string;
  readonly dueOnOrBefore?: string;
  /** Exclusive upper bound: "overdue" is due before the user's today. */
  readonly dueBefore?: string;
  /** true: waiting on an open task; false: not. */
  readonly blocked?: boolean;
}

/** Where a page ended: the search continues strictly after this task. */
export interface TaskPosition {
  readonly segment: number;
  readonly taskId: string;
  readonly orderKey: string;
}

export interface TaskPage {
  readonly tasks: readonly Task[];
  /** Present when more matches follow. */
  readonly next?: TaskPosition;
}

/** What happened to a blocker, as its dependents record it. */
export type BlockerChange = 'closed' | 'opened' | 'deleted' | 'restored-open' | 'restored-done';

export interface PutOptions {
  /** The change is to the task's own links (`blockedBy`, `openBlockers`), which it then writes. */
  readonly links?: boolean;
  /**
   * Written only if `blocks` is still as read (this `linksVersion`, 0: never linked): a change of the
   * task's status updates its dependents, which must be all of them.
   */
  readonly linksVersion?: number;
}

/** A task is waited on by at most this many (one write must reach every one of them); links.ts checks it first. */
export const MAX_DEPENDENTS = 60;

export interface TaskStore {
  /** A task that exists and is not deleted. */
  get(workspaceId: string, taskId: string): Promise<Task | undefined>;
  /** Also a deleted one (kept for undo): what "was deleted" answers and undo read. */
  getAny(workspaceId: string, taskId: string): Promise<Task | undefined>;
  /** Creates the task; false when its id is taken (the demo seed relies on this). */
  create(task: Task): Promise<boolean>;
  /**
   * Writes `task` as part of an all-or-nothing write: a new task (`expectedVersion` undefined) or
   * one still at `expectedVersion`. A task with `deletedAt` is stored deleted: out of every index,
   * kept until `expiresAt`. A failed condition becomes NotFoundRefusal or ConflictRefusal.
   */
  putOp(task: Task, expectedVersion: number | undefined, expiresAt?: number, opts?: PutOptions): WriteOp;
  /** Holds the write unless the task exists, is not deleted, and (if given) is at `version`. */
  checkOp(workspaceId: string, taskId: string, version?: number): WriteOp;
  /** Tasks by id, deleted ones too, in one request per hundred. */
  getMany(workspaceId: string, taskIds: readonly string[]): Promise<Map<string, Task>>;
  /**
   * A blocker's side of a link: `add` records the dependent (the blocker live, and in `status` if
   * given), `forget` drops it. Either raises the blocker's `linksVersion`.
   */
  dependentOp(workspaceId: string, blockerId: string, dependentId: string, change: 'add' | 'forget', status?: string): WriteOp;
  /** A dependent's side of its blocker's change of state (workspace/links.ts). */
  blockerStateOp(workspaceId: string, dependentId: string, blocker: Pick<Task, 'taskId' | 'number'>, change: BlockerChange): WriteOp;
  /** One page in search order: open tasks by due date (undated last), then priority; done tasks most recent first. */
  search(workspaceId: string, filter: TaskFilter, limit: number, after?: TaskPosition): Promise<TaskPage>;
  /** Every match, for views that count (agenda, project summary). */
  all(workspaceId: string, filter: TaskFilter): Promise<Task[]>;
  /** One member's open tasks and the tasks they completed in [fromIso, toIso): one query of gsi2. */
  agendaOf(workspaceId: string, assigneeId: string, fromIso: string, toIso: string): Promise<{ open: Task[]; done: Task[] }>;
  /** Done tasks completed in [fromIso, toIso). */
  completedBetween(workspaceId: string, fromIso: string, toIso: string, filter?: Omit<TaskFilter, 'status'>): Promise<Task[]>;
}

interface Segment {
  readonly condition: string;
  readonly values: Record<string, string>;
  readonly forward: boolean;
}

const searchText = (t: Task): string => [t.title, t.notes ?? '', ...t.labels].join('\n').toLowerCase();

/** Sets as DynamoDB keeps them (no empty set exists: an empty one is no attribute). */
const asSet = (values: readonly string[] | undefined): Set<string> | undefined => (values?.length ? new Set(values) : undefined);

const toItem = (t: Task, expiresAt?: number): Record<string, unknown> => {
  const { openBlockers, blocks, ...rest } = t;
  const sets = {
    ...(openBlockers?.length ? { openBlockers: asSet(openBlockers) } : {}),
    ...(blocks?.length ? { blocks: asSet(blocks) } : {}),
  };
  return t.deletedAt
    ? // Out of both indexes: no search, agenda, count or project check sees a deleted task.
      { pk: wsPk(t.workspaceId), sk: taskSk(t.taskId), ...rest, ...sets, ...(expiresAt ? { expiresAt } : {}) }
    : {
        pk: wsPk(t.workspaceId),
        sk: taskSk(t.taskId),
        gsi1pk: tasksGsiPk(t.workspaceId),
        gsi1sk: taskOrderKey(t),
        ...(t.assigneeId ? { gsi2pk: tasksOfAssigneeGsiPk(t.workspaceId, t.assigneeId), gsi2sk: agendaOrderKey(t) } : {}),
        search: searchText(t),
        ...rest,
        ...sets,
      };
};

/** Attributes a task item may lack: a change that leaves one out removes it. */
const OPTIONAL = [
  'notes',
  'dueDate',
  'dueTime',
  'assigneeId',
  'projectId',
  'completedAt',
  'completedBy',
  'deletedAt',
  'gsi1pk',
  'gsi1sk',
  'gsi2pk',
  'gsi2sk',
  'search',
  'expiresAt',
  'blockedBy',
  'openBlockers',
] as const;
/** Kept by other tasks' changes (workspace/links.ts): a task's own change never writes them. */
const MAINTAINED = new Set(['blocks', 'linksVersion']);
/** A task's links, written by its own change only when the change is to its links. */
const LINKS = new Set(['blockedBy', 'openBlockers']);

/**
 * A change of an existing task as an update of every attribute it owns, so what other tasks keep
 * on it (`blocks`) survives, and its links too unless `links` says the change is to them.
 */
const changeOf = (task: Task, expiresAt: number | undefined, links: boolean) => {
  const item = toItem(task, expiresAt);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const set: string[] = [];
  const remove: string[] = [];
  let i = 0;
  for (const [attr, value] of Object.entries(item)) {
    if (attr === 'pk' || attr === 'sk' || MAINTAINED.has(attr) || (!links && LINKS.has(attr))) continue;
    names[`#a${i}`] = attr;
    values[`:a${i}`] = value;
    set.push(`#a${i} = :a${i}`);
    i++;
  }
  for (const attr of OPTIONAL) {
    if (attr in item || (!links && LINKS.has(attr))) continue;
    names[`#a${i}`] = attr;
    remove.push(`#a${i}`);
    i++;
  }
  return { expression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`, names, values };
};

/** A task item as stored, read elsewhere (with a comment, say), as the store hands tasks out. */
export const toTask = (item: Record<string, unknown>): Task => {
  const { expiresAt: _e, openBlockers, blocks, ...rest } = fromItem<Record<string, unknown>>(item);
  return {
    ...(rest as unknown as Task),
    ...(openBlockers ? { openBlockers: [...(openBlockers as Iterable<string>)].sort() } : {}),
    ...(blocks ? { blocks: [...(blocks as Iterable<string>)].sort() } : {}),
  };
};

/** What a refused write on a task means, from the task as the failed condition saw it. */
export const taskRefusal = (taskId: string, expectedVersion: number | undefined, current: Record<string, unknown> | undefined): never => {
  if (!current) throw new NotFoundRefusal(`Task ${taskId} was not found in this workspace`);
  if (current.deletedAt) {
    throw new NotFoundRefusal(
      `Task ${taskId} was deleted (${String(current.deletedAt)}); activity_list shows the change, change_undo restores it.`,
    );
  }
  if (expectedVersion === undefined) throw new ConflictRefusal(`Conflict: task ${taskId} exists already`);
  throw new ConflictRefusal(
    `Conflict: task ${taskId} is at version ${String(current.version)}, not ${expectedVersion}; someone changed it. ` +
      `Read it again (task_get) and retry with version ${String(current.version)}.`,
  );
};

/**
 * Tasks live under the workspace partition (`TASK#<id>`) and in gsi1 under `WS#<id>#TASKS`, ordered
 * by `taskOrderKey`. Searches read the index in that order and page with the last returned task's
 * key, so paging to the end yields every match exactly once. Writes are conditional on `version`.
 */
export class DynamoTaskStore implements TaskStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** Told of every task read (the instance remembers numbers by it). */
    private readonly seen: (task: Task) => void = () => {},
  ) {}

  private task(item: Record<string, unknown>): Task {
    const t = toTask(item);
    this.seen(t);
    return t;
  }

  async get(workspaceId: string, taskId: string): Promise<Task | undefined> {
    const task = await this.getAny(workspaceId, taskId);
    return task?.deletedAt ? undefined : task;
  }

  async getAny(workspaceId: string, taskId: string): Promise<Task | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: taskSk(taskId) }, ConsistentRead: true }),
    );
    return out.Item ? this.task(out.Item) : undefined;
  }

  async create(task: Task): Promise<boolean> {
    return conditionally(
      async () => {
        await this.db.send(new PutCommand({ TableName: this.table, Item: toItem(task), ConditionExpression: 'attribute_not_exists(pk)' }));
        return true;
      },
      async () => false,
    );
  }

  putOp(task: Task, expectedVersion: number | undefined, expiresAt?: number, opts: PutOptions = {}): WriteOp {
    if (expectedVersion === undefined) {
      return {
        item: { Put: { TableName: this.table, Item: toItem(task, expiresAt), ConditionExpression: 'attribute_not_exists(pk)' } },
        refused: (current) => taskRefusal(task.taskId, expectedVersion, current),
      };
    }
    const change = changeOf(task, expiresAt, opts.links ?? false);
    const held = opts.linksVersion !== undefined;
    const linksCondition = !held ? '' : opts.linksVersion ? ' AND #lv = :lv' : ' AND attribute_not_exists(#lv)';
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(task.workspaceId), sk: taskSk(task.taskId) },
          UpdateExpression: change.expression,
          ConditionExpression: `attribute_exists(pk) AND #v = :v${linksCondition}`,
          ExpressionAttributeNames: { ...change.names, '#v': 'version', ...(held ? { '#lv': 'linksVersion' } : {}) },
          ExpressionAttributeValues: {
            ...change.values,
            ':v': expectedVersion,
            ...(opts.linksVersion ? { ':lv': opts.linksVersion } : {}),
          },
        },
      },
      refused: (current) => {
        if (current && current.version === expectedVersion && !current.deletedAt) {
          throw new ConflictRefusal(
            `Conflict: the tasks linked to ${task.number !== undefined ? `#${task.number}` : task.taskId} changed meanwhile, so nothing was changed; read it again and retry.`,
          );
        }
        return taskRefusal(task.taskId, expectedVersion, current);
      },
    };
  }

  async getMany(workspaceId: string, taskIds: readonly string[]): Promise<Map<string, Task>> {
    const found = new Map<string, Task>();
    for (let i = 0; i < taskIds.length; i += 100) {
      const keys = taskIds.slice(i, i + 100).map((id) => ({ pk: wsPk(workspaceId), sk: taskSk(id) }));
      for (const item of await batchGetConsistent(this.db, this.table, keys)) {
        const t = this.task(item);
        found.set(t.taskId, t);
      }
    }
    return found;
  }

  dependentOp(workspaceId: string, blockerId: string, dependentId: string, change: 'add' | 'forget', status?: string): WriteOp {
    const add = change === 'add';
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: taskSk(blockerId) },
          UpdateExpression: `${add ? 'ADD #b :dep, #lv :one' : 'DELETE #b :dep ADD #lv :one'}`,
          // A blocker gone for good (its TTL) has nothing to forget, and must not come back as a stub;
          // one to add to must be live, in the status the link was made against, and below its most
          // dependents (several changes at once may each have read room for one more).
          ConditionExpression: add
            ? `attribute_exists(pk) AND attribute_not_exists(deletedAt)${status ? ' AND #s = :s' : ''} AND ` +
              '(attribute_not_exists(#b) OR size(#b) < :most OR contains(#b, :id))'
            : 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#b': 'blocks', '#lv': 'linksVersion', ...(add && status ? { '#s': 'status' } : {}) },
          ExpressionAttributeValues: {
            ':dep': new Set([dependentId]),
            ':one': 1,
            ...(add ? { ':most': MAX_DEPENDENTS, ':id': dependentId } : {}),
            ...(add && status ? { ':s': status } : {}),
          },
        },
      },
      ...(add
        ? {
            refused: () => {
              throw new ConflictRefusal(
                `Conflict: task ${blockerId}, which is waited on, changed, was deleted or reached its ${MAX_DEPENDENTS} waiting tasks while ` +
                  'the link was being written; nothing was changed, read it and retry.',
              );
            },
          }
        : {}),
    };
  }

  blockerStateOp(workspaceId: string, dependentId: string, blocker: Pick<Task, 'taskId' | 'number'>, change: BlockerChange): WriteOp {
    const me = new Set([blocker.taskId]);
    const link = { '#by': 'blockedBy', '#id': blocker.taskId };
    const [expression, names, values]: [string, Record<string, string>, Record<string, unknown>] =
      change === 'deleted'
        ? ['REMOVE #by.#id DELETE #o :me', { ...link, '#o': 'openBlockers' }, { ':me': me }]
        : change === 'restored-open'
          ? ['SET #by.#id = :n ADD #o :me', { ...link, '#o': 'openBlockers' }, { ':n': blocker.number ?? 0, ':me': me }]
          : change === 'restored-done'
            ? ['SET #by.#id = :n', link, { ':n': blocker.number ?? 0 }]
            : [change === 'opened' ? 'ADD #o :me' : 'DELETE #o :me', { '#o': 'openBlockers' }, { ':me': me }];
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: taskSk(dependentId) },
          UpdateExpression: expression,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
    };
  }

  checkOp(workspaceId: string, taskId: string, version?: number): WriteOp {
    return {
      item: {
        ConditionCheck: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: taskSk(taskId) },
          ConditionExpression: `attribute_exists(pk) AND attribute_not_exists(deletedAt)${version === undefined ? '' : ' AND #v = :v'}`,
          ...(version === undefined ? {} : { ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':v': version } }),
        },
      },
      refused: (current) => taskRefusal(taskId, version ?? (current?.version as number | undefined), current),
    };
  }

  async search(workspaceId: string, filter: TaskFilter, limit: number, after?: TaskPosition): Promise<TaskPage> {
    const found: { task: Task; segment: number; orderKey: string }[] = [];
    const segments = segmentsFor(filter);
    const { expression, names, values } = filterExpression(filter);
    for (let seg = after?.segment ?? 0; seg < segments.length && found.length <= limit; seg++) {
      const s = segments[seg]!;
      let startKey: Record<string, unknown> | undefined =
        after && seg === after.segment
          ? { pk: wsPk(workspaceId), sk: taskSk(after.taskId), gsi1pk: tasksGsiPk(workspaceId), gsi1sk: after.orderKey }
          : undefined;
      do {
        const needed = limit + 1 - found.length;
        const out = await this.db.send(
          new QueryCommand({
            TableName: this.table,
            IndexName: 'gsi1',
            KeyConditionExpression: `gsi1pk = :gpk AND ${s.condition}`,
            ...(expression ? { FilterExpression: expression, ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: { ':gpk': tasksGsiPk(workspaceId), ...s.values, ...values },
            ScanIndexForward: s.forward,
            ExclusiveStartKey: startKey,
            // Unfiltered, exactly what is missing (one more tells whether the list is truncated);
            // filtered, more per round trip, since many items read may not match.
            Limit: expression ? Math.max(needed * 4, 100) : needed,
          }),
        );
        for (const item of out.Items ?? []) {
          found.push({ task: this.task(item), segment: seg, orderKey: item.gsi1sk as string });
          if (found.length > limit) break;
        }
        startKey = out.LastEvaluatedKey;
      } while (startKey && found.length <= limit);
    }
    const page = found.slice(0, limit);
    const last = page.at(-1);
    return {
      tasks: page.map((f) => f.task),
      ...(found.length > limit && last ? { next: { segment: last.segment, taskId: last.task.taskId, orderKey: last.orderKey } } : {}),
    };
  }

  async all(workspaceId: string, filter: TaskFilter): Promise<Task[]> {
    const tasks: Task[] = [];
    let after: TaskPosition | undefined;
    do {
      const page = await this.search(workspaceId, filter, 1000, after);
      tasks.push(...page.tasks);
      after = page.next;
    } while (after);
    return tasks;
  }

  async agendaOf(workspaceId: string, assigneeId: string, fromIso: string, toIso: string): Promise<{ open: Task[]; done: Task[] }> {
    const open: Task[] = [];
    const done: Task[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        IndexName: 'gsi2',
        // `D#<from>` up to the last open key: done since `from` (none can be later than now), then open.
        KeyConditionExpression: 'gsi2pk = :gpk AND gsi2sk BETWEEN :lo AND :hi',
        ExpressionAttributeValues: {
          ':gpk': tasksOfAssigneeGsiPk(workspaceId, assigneeId),
          ':lo': `${AGENDA_DONE_PREFIX}${fromIso}`,
          ':hi': `${OPEN_ORDER_PREFIX}\uffff`,
        },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        const task = this.task(item);
        if (task.status === 'open') open.push(task);
        else if (task.completedAt! < toIso) done.push(task);
      }
    }
    return { open, done };
  }

  async completedBetween(workspaceId: string, fromIso: string, toIso: string, filter: Omit<TaskFilter, 'status'> = {}): Promise<Task[]> {
    const { expression, names, values } = filterExpression({ ...filter, status: 'done' });
    const tasks: Task[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :gpk AND gsi1sk BETWEEN :lo AND :hi',
        ...(expression ? { FilterExpression: expression, ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: {
          ':gpk': tasksGsiPk(workspaceId),
          ':lo': `${DONE_ORDER_PREFIX}${fromIso}`,
          ':hi': `${DONE_ORDER_PREFIX}${toIso}`,
          ...values,
        },
      },
    );
    for await (const page of pages) {
      tasks.push(...(page.Items ?? []).filter((i) => (i.completedAt as string) < toIso).map((i) => this.task(i)));
    }
    return tasks;
  }
}

/** The index ranges a filter reads, in result order: open ascending, then done most recent first. */
const segmentsFor = (f: TaskFilter): Segment[] => {
  const segments: Segment[] = [];
  if (f.status !== 'done') {
    const dated = f.dueOnOrAfter !== undefined || f.dueOnOrBefore !== undefined || f.dueBefore !== undefined;
    if (!dated) {
      segments.push({ condition: 'begins_with(gsi1sk, :open)', values: { ':open': OPEN_ORDER_PREFIX }, forward: true });
    } else {
      // `O#<date>` alone is no key (keys go on with `#…`), so it bounds a date range exactly.
      const lo = `${OPEN_ORDER_PREFIX}${f.dueOnOrAfter ?? ''}`;
      const his = [`${OPEN_ORDER_PREFIX}${UNDATED}`];
      if (f.dueOnOrBefore !== undefined) his.push(`${OPEN_ORDER_PREFIX}${f.dueOnOrBefore}#${UNDATED}`);
      if (f.dueBefore !== undefined) his.push(`${OPEN_ORDER_PREFIX}${f.dueBefore}`);
      const hi = his.sort()[0]!;
      if (lo <= hi) segments.push({ condition: 'gsi1sk BETWEEN :lo AND :hi', values: { ':lo': lo, ':hi': hi }, forward: true });
    }
  }
  if (f.status !== 'open') {
    segments.push({ condition: 'begins_with(gsi1sk, :done)', values: { ':done': DONE_ORDER_PREFIX }, forward: false });
  }
  return segments;
};

const filterExpression = (f: TaskFilter): { expression?: string; names: Record<string, string>; values: Record<string, unknown> } => {
  const parts: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  f.words?.forEach((w, i) => {
    names['#search'] = 'search';
    values[`:w${i}`] = w;
    parts.push(`contains(#search, :w${i})`);
  });
  const equalsOrAbsent = (attr: string, value: string | null | undefined) => {
    if (value === undefined) return;
    names[`#${attr}`] = attr;
    if (value === null) parts.push(`attribute_not_exists(#${attr})`);
    else {
      values[`:${attr}`] = value;
      parts.push(`#${attr} = :${attr}`);
    }
  };
  equalsOrAbsent('assigneeId', f.assigneeId);
  equalsOrAbsent('projectId', f.projectId);
  equalsOrAbsent('priority', f.priority);
  if (f.label !== undefined) {
    names['#labels'] = 'labels';
    values[':label'] = f.label;
    parts.push('contains(#labels, :label)');
  }
  const due = (op: string, key: string, value: string | undefined) => {
    if (value === undefined) return;
    names['#dueDate'] = 'dueDate';
    values[key] = value;
    parts.push(`#dueDate ${op} ${key}`);
  };
  if (f.blocked !== undefined) {
    names['#openBlockers'] = 'openBlockers';
    parts.push(f.blocked ? 'attribute_exists(#openBlockers)' : 'attribute_not_exists(#openBlockers)');
  }
  due('>=', ':dueFrom', f.dueOnOrAfter);
  due('<=', ':dueTo', f.dueOnOrBefore);
  due('<', ':dueBefore', f.dueBefore);
  return parts.length ? { expression: parts.join(' AND '), names, values } : { names, values };
};
