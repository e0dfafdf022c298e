import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  paginateQuery,
  QueryCommand,
  TransactGetCommand,
} from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent, fromItem } from '../../platform/dynamodb.js';
import {
  AGENDA_DONE_PREFIX,
  agendaOrderKey,
  DONE_ORDER_PREFIX,
  LINKS_EPOCH_SK,
  OPEN_ORDER_PREFIX,
  taskOrderKey,
  taskSk,
  tasksGsiPk,
  tasksOfAssigneeGsiPk,
  UNDATED,
  wsPk,
} from '../../platform/item-keys.js';
import { itemSize } from '../../platform/item-size.js';
import type { WriteOp } from '../../platform/transact.js';
import { MAX_DEPENDENTS, MAX_READ_UNITS_PER_CALL } from '../model/limits.js';
import { blockerMoved, exists, linksMoved, race, taskDeleted, taskNotFound, versionConflict } from '../model/refusals.js';
import type { Priority, Task } from '../model/types.js';
import { and, Expression, or, Update } from './expressions.js';
import { conditionally } from './item-support.js';

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
  /** Present when more matches may follow. */
  readonly next?: TaskPosition;
  /** The page ended short because the read units one call may spend on it were spent. */
  readonly cut?: boolean;
}

/**
 * A link that names a task no longer there (deleted and its undo window over, removed by TTL): the
 * writer that meets it drops the name from the task it writes and writes again (tasks/links.ts).
 */
export class DanglingLink extends Error {
  override name = 'DanglingLink';
  constructor(readonly taskId: string) {
    super(`a link names task ${taskId}, which is gone`);
  }
}

/** What happened to a blocker, as the tasks waiting on it record it. */
export type BlockerChange = 'closed' | 'opened' | 'deleted' | 'restored-open' | 'restored-done';

export interface WriteOptions {
  /** The change is to the task's own links (`blockedBy`, `openBlockers`, `goneBlockers`), which it then writes. */
  readonly links?: boolean;
  /**
   * Written only if `blocks` is still as read (this `linksVersion`, 0: never linked): a change of the
   * task's state updates its dependents, which must be all of them.
   */
  readonly linksVersion?: number;
  /** A deleted task is kept until then (epoch seconds), with its record. */
  readonly expiresAt?: number;
  /** How the task is named in a refusal (its key). */
  readonly name?: string;
  /** Dependents gone for good that `blocks` still names: the write drops them (tasks/links.ts, DanglingLink). */
  readonly forgetDependents?: readonly string[];
}

export interface TaskStore {
  /** A task that exists and is not deleted. */
  get(workspaceId: string, taskId: string): Promise<Task | undefined>;
  /** Also a deleted one (kept for undo): what "was deleted" answers and undo read. */
  getAny(workspaceId: string, taskId: string): Promise<Task | undefined>;
  /** Tasks by id, deleted ones too, in one request per hundred. */
  getMany(workspaceId: string, taskIds: readonly string[]): Promise<Map<string, Task>>;
  /** Creates the task outside any other write (the demo seed); false when its id is taken. */
  create(task: Task): Promise<boolean>;
  /**
   * What writes `next` as part of an all-or-nothing write: a new task (`before` undefined), or one
   * still at `before.version`. A task with `deletedAt` is stored deleted: out of every index, kept
   * until `expiresAt`. A failed condition becomes the refusal that says why (not found, deleted,
   * another version, its links moved).
   */
  writeOps(before: Task | undefined, next: Task, opts?: WriteOptions): WriteOp[];
  /** Holds the write unless the task exists, is not deleted, and (if given) is at `version`. */
  checkOp(workspaceId: string, taskId: string, version?: number, name?: string): WriteOp;
  /** Holds the write unless the task is still deleted (a link kept to it is written as gone). */
  checkDeletedOp(workspaceId: string, taskId: string): WriteOp;
  /** The workspace's links epoch and these tasks, as one snapshot: where a cycle check of a new link starts. */
  linkSnapshot(workspaceId: string, taskIds: readonly string[]): Promise<{ epoch: number; tasks: Map<string, Task> }>;
  /** Moves the links epoch on, held to the one read (links-moved if a link was made since). */
  linksEpochOp(workspaceId: string, epoch: number, name: string): WriteOp;
  /**
   * A blocker's side of a link: `add` records the dependent (the blocker live, in `status` if
   * given, and below its most dependents), `forget` drops it. Either raises the blocker's
   * `linksVersion`. Two adds to one blocker combine into one action in a transaction.
   */
  dependentOp(
    workspaceId: string,
    blockerId: string,
    dependentId: string,
    change: 'add' | 'forget',
    status?: string,
    name?: string,
    /** The blocker recorded this dependent already when it was read (a link kept): it needs no room. */
    kept?: boolean,
  ): WriteOp;
  /** A dependent's side of its blocker's change of state (workspace/tasks/links.ts). */
  blockerStateOp(workspaceId: string, dependentId: string, blocker: Pick<Task, 'taskId'>, change: BlockerChange): WriteOp;
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
  readonly condition: (x: Expression) => string;
  readonly forward: boolean;
}

const searchText = (t: Task): string => [t.title, t.notes ?? '', ...t.labels].join('\n').toLowerCase();

/** Sets as DynamoDB keeps them (no empty set exists: an empty one is no attribute). */
const asSet = (values: readonly string[] | undefined): Set<string> | undefined => (values?.length ? new Set(values) : undefined);

const SET_ATTRIBUTES = ['openBlockers', 'goneBlockers', 'blocks'] as const;

const toItem = (t: Task, expiresAt?: number): Record<string, unknown> => {
  const { openBlockers, goneBlockers, blocks, ...rest } = t;
  const sets = {
    ...(openBlockers?.length ? { openBlockers: asSet(openBlockers) } : {}),
    ...(goneBlockers?.length ? { goneBlockers: asSet(goneBlockers) } : {}),
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
  'goneBlockers',
] as const;
/** Kept by other tasks' changes (workspace/tasks/links.ts): a task's own change never writes them. */
const MAINTAINED = new Set(['blocks', 'linksVersion']);
/** A task's links, written by its own change only when the change is to its links. */
const LINKS = new Set(['blockedBy', 'openBlockers', 'goneBlockers']);

/**
 * A change of an existing task as an update of every attribute it owns, so what other tasks keep
 * on it (`blocks`) survives, and its links too unless `links` says the change is to them.
 */
const changeOf = (x: Expression, task: Task, expiresAt: number | undefined, links: boolean): Update => {
  const item = toItem(task, expiresAt);
  const update = new Update(x);
  for (const [attr, value] of Object.entries(item)) {
    if (attr === 'pk' || attr === 'sk' || MAINTAINED.has(attr) || (!links && LINKS.has(attr))) continue;
    update.set(attr, value);
  }
  for (const attr of OPTIONAL) {
    if (attr in item || (!links && LINKS.has(attr))) continue;
    update.remove(attr);
  }
  return update;
};

/** A task item as stored, read elsewhere (with a comment, say), as the store hands tasks out. */
export const toTask = (item: Record<string, unknown>): Task => {
  const { expiresAt: _e, ...rest } = fromItem<Record<string, unknown>>(item);
  const out: Record<string, unknown> = { ...rest };
  for (const attr of SET_ATTRIBUTES) {
    if (out[attr] !== undefined) out[attr] = [...(out[attr] as Iterable<string>)].sort();
  }
  return out as unknown as Task;
};

/** What a refused write on a task means, from the task as the failed condition saw it. */
const taskRefusal = (name: string, expectedVersion: number | undefined, current: Record<string, unknown> | undefined): never => {
  if (!current) throw taskNotFound(name);
  if (current.deletedAt) throw taskDeleted(name, String(current.deletedAt));
  if (expectedVersion === undefined) throw exists(`task ${name}`);
  throw versionConflict(`task ${name}`, Number(current.version), expectedVersion, 'task_get');
};

/** A dependent that one blocker's add records, so that two adds to one blocker can become one action. */
interface DependentAdd extends WriteOp {
  readonly dependentAdd: {
    readonly key: string;
    readonly dependents: readonly string[];
    /** Of them, those the blocker recorded already when it was read (a link kept): they need no room. */
    readonly kept: readonly string[];
    readonly status?: string;
  };
}

const isDependentAdd = (op: WriteOp): op is DependentAdd => 'dependentAdd' in op;

/** A dependent's side of its blockers' changes, so that two blockers' changes of one dependent can be one action. */
interface StateChange extends WriteOp {
  readonly stateChange: {
    readonly key: string;
    readonly sets: Readonly<Record<'addOpen' | 'deleteOpen' | 'addGone' | 'deleteGone', readonly string[]>>;
  };
}

const isStateChange = (op: WriteOp): op is StateChange => 'stateChange' in op;

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

  writeOps(before: Task | undefined, next: Task, opts: WriteOptions = {}): WriteOp[] {
    const name = opts.name ?? next.taskId;
    if (before === undefined) return [this.newTaskOp(next, opts.expiresAt, name)];
    const x = new Expression();
    const change = changeOf(x, next, opts.expiresAt, opts.links ?? false);
    if (opts.forgetDependents?.length) change.delete('blocks', new Set(opts.forgetDependents)).add('linksVersion', 1);
    const held = opts.linksVersion !== undefined;
    const condition = and(
      x.exists('pk'),
      x.eq('version', before.version),
      held ? (opts.linksVersion ? x.eq('linksVersion', opts.linksVersion) : x.absent('linksVersion')) : undefined,
    );
    return [
      {
        item: {
          Update: {
            TableName: this.table,
            Key: { pk: wsPk(next.workspaceId), sk: taskSk(next.taskId) },
            UpdateExpression: change.toString(),
            ConditionExpression: condition,
            ...x.input(),
          },
        },
        sizeHint: itemSize(toItem(next, opts.expiresAt)),
        refused: (current) => {
          // The version held but the links did not (a delete or a restore included: a restore meets
          // its own task deleted, as it was read).
          if (current && current.version === before.version && !!current.deletedAt === !!before.deletedAt) throw linksMoved(name);
          return taskRefusal(name, before.version, current);
        },
      },
    ];
  }

  /** A new task's Put; a link to it made in the same transaction (a later item of the same call) becomes part of it. */
  private newTaskOp(next: Task, expiresAt: number | undefined, name: string, dependents: readonly string[] = []): WriteOp {
    const blocks = [...new Set([...(next.blocks ?? []), ...dependents])].sort();
    const task: Task = dependents.length ? { ...next, blocks, linksVersion: (next.linksVersion ?? 0) + 1 } : next;
    const key = `${this.table}|${wsPk(next.workspaceId)}|${taskSk(next.taskId)}`;
    return {
      item: { Put: { TableName: this.table, Item: toItem(task, expiresAt), ConditionExpression: 'attribute_not_exists(pk)' } },
      refused: (current) => taskRefusal(name, undefined, current),
      merge: (other) => {
        if (!isDependentAdd(other) || other.dependentAdd.key !== key) return undefined;
        if (other.dependentAdd.status !== undefined && other.dependentAdd.status !== task.status) return undefined;
        if (blocks.length + other.dependentAdd.dependents.length > MAX_DEPENDENTS) return undefined;
        return this.newTaskOp(task, expiresAt, name, other.dependentAdd.dependents);
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

  /**
   * The workspace's links epoch and these tasks, as one snapshot (TransactGetItems): a cycle looked
   * for from here sees every link made before the epoch was read, and a write held to the epoch
   * lands only if no link was made since.
   */
  async linkSnapshot(workspaceId: string, taskIds: readonly string[]): Promise<{ epoch: number; tasks: Map<string, Task> }> {
    const ids = [...new Set(taskIds)];
    const out = await this.db.send(
      new TransactGetCommand({
        TransactItems: [
          { Get: { TableName: this.table, Key: { pk: wsPk(workspaceId), sk: LINKS_EPOCH_SK } } },
          ...ids.map((id) => ({ Get: { TableName: this.table, Key: { pk: wsPk(workspaceId), sk: taskSk(id) } } })),
        ],
      }),
    );
    const [epochItem, ...items] = out.Responses ?? [];
    const tasks = new Map<string, Task>();
    for (const r of items) if (r?.Item) tasks.set(String(r.Item.taskId), this.task(r.Item));
    return { epoch: Number(epochItem?.Item?.epoch ?? 0), tasks };
  }

  /** Moves the links epoch on, held to the one read: a link made meanwhile refuses this write (links-moved). */
  linksEpochOp(workspaceId: string, epoch: number, name: string): WriteOp {
    const x = new Expression();
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: LINKS_EPOCH_SK },
          UpdateExpression: new Update(x).add('epoch', 1).toString(),
          ConditionExpression: epoch ? x.eq('epoch', epoch) : x.absent('epoch'),
          ...x.input(),
        },
      },
      refused: () => {
        throw linksMoved(name);
      },
    };
  }

  dependentOp(
    workspaceId: string,
    blockerId: string,
    dependentId: string,
    change: 'add' | 'forget',
    status?: string,
    name?: string,
    kept = false,
  ): WriteOp {
    if (change === 'forget') {
      const x = new Expression();
      return {
        item: {
          Update: {
            TableName: this.table,
            Key: { pk: wsPk(workspaceId), sk: taskSk(blockerId) },
            UpdateExpression: new Update(x)
              .delete('blocks', new Set([dependentId]))
              .add('linksVersion', 1)
              .toString(),
            // A blocker gone for good (its TTL) has nothing to forget, and must not come back as a stub.
            ConditionExpression: x.exists('pk'),
            ...x.input(),
          },
        },
        refused: (current) => {
          if (!current) throw new DanglingLink(blockerId);
          throw race();
        },
      };
    }
    return this.dependentAdd(workspaceId, blockerId, [dependentId], kept ? [dependentId] : [], status, name ?? blockerId);
  }

  /**
   * Records dependents on a blocker: it must be live, in the status the links were made against, and
   * have room for them below its most dependents (several changes at once may each have read room
   * for one more). A dependent recorded already (a link kept) needs no room.
   */
  private dependentAdd(
    workspaceId: string,
    blockerId: string,
    dependents: readonly string[],
    kept: readonly string[],
    status: string | undefined,
    name: string,
  ): DependentAdd {
    const x = new Expression();
    const added = dependents.filter((d) => !kept.includes(d));
    // One dependent: room for it, or it is there already. Several: room for the new ones, and the
    // kept ones still there (else re-adding them could pass the most); the exact one-by-one check
    // is what a failed combined action falls back to (transact.ts).
    const room =
      dependents.length === 1
        ? or(x.absent('blocks'), `size(${x.name('blocks')}) < ${x.value(MAX_DEPENDENTS)}`, x.contains('blocks', dependents[0]))
        : and(
            added.length ? or(x.absent('blocks'), x.sizeAtMost('blocks', MAX_DEPENDENTS - added.length)) : undefined,
            ...kept.map((d) => x.contains('blocks', d)),
          );
    const key = `${this.table}|${wsPk(workspaceId)}|${taskSk(blockerId)}`;
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: taskSk(blockerId) },
          UpdateExpression: new Update(x).add('blocks', new Set(dependents)).add('linksVersion', 1).toString(),
          ConditionExpression: and(x.exists('pk'), x.absent('deletedAt'), status ? x.eq('status', status) : undefined, room),
          ...x.input(),
        },
      },
      dependentAdd: { key, dependents, kept, ...(status ? { status } : {}) },
      refused: () => {
        throw blockerMoved(name);
      },
      merge: (other) => {
        if (!isDependentAdd(other) || other.dependentAdd.key !== key || other.dependentAdd.status !== status) return undefined;
        return this.dependentAdd(
          workspaceId,
          blockerId,
          [...new Set([...dependents, ...other.dependentAdd.dependents])],
          [...new Set([...kept, ...other.dependentAdd.kept])],
          status,
          name,
        );
      },
    };
  }

  blockerStateOp(workspaceId: string, dependentId: string, blocker: Pick<Task, 'taskId'>, change: BlockerChange): WriteOp {
    const me = [blocker.taskId];
    const none: string[] = [];
    const sets =
      change === 'closed'
        ? { addOpen: none, deleteOpen: me, addGone: none, deleteGone: none }
        : change === 'opened'
          ? { addOpen: me, deleteOpen: none, addGone: none, deleteGone: none }
          : change === 'deleted'
            ? { addOpen: none, deleteOpen: me, addGone: me, deleteGone: none }
            : change === 'restored-open'
              ? { addOpen: me, deleteOpen: none, addGone: none, deleteGone: me }
              : { addOpen: none, deleteOpen: none, addGone: none, deleteGone: me };
    return this.stateChange(workspaceId, dependentId, sets);
  }

  /** A dependent's sets as its blockers' changes move them: one action however many blockers change in a transaction. */
  private stateChange(workspaceId: string, dependentId: string, sets: StateChange['stateChange']['sets']): StateChange {
    const x = new Expression();
    const update = new Update(x);
    if (sets.addOpen.length) update.add('openBlockers', new Set(sets.addOpen));
    if (sets.deleteOpen.length) update.delete('openBlockers', new Set(sets.deleteOpen));
    if (sets.addGone.length) update.add('goneBlockers', new Set(sets.addGone));
    if (sets.deleteGone.length) update.delete('goneBlockers', new Set(sets.deleteGone));
    const key = `${this.table}|${wsPk(workspaceId)}|${taskSk(dependentId)}`;
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: taskSk(dependentId) },
          UpdateExpression: update.toString(),
          ConditionExpression: x.exists('pk'),
          ...x.input(),
        },
      },
      refused: (current) => {
        if (!current) throw new DanglingLink(dependentId);
        throw race();
      },
      stateChange: { key, sets },
      merge: (other) => {
        if (!isStateChange(other) || other.stateChange.key !== key) return undefined;
        const o = other.stateChange.sets;
        // One attribute cannot be both added to and deleted from in one update.
        const both = (a: readonly string[], b: readonly string[]) => a.length > 0 && b.length > 0;
        if (both([...sets.addOpen, ...o.addOpen], [...sets.deleteOpen, ...o.deleteOpen])) return undefined;
        if (both([...sets.addGone, ...o.addGone], [...sets.deleteGone, ...o.deleteGone])) return undefined;
        return this.stateChange(workspaceId, dependentId, {
          addOpen: [...sets.addOpen, ...o.addOpen],
          deleteOpen: [...sets.deleteOpen, ...o.deleteOpen],
          addGone: [...sets.addGone, ...o.addGone],
          deleteGone: [...sets.deleteGone, ...o.deleteGone],
        });
      },
    };
  }

  checkOp(workspaceId: string, taskId: string, version?: number, name = taskId): WriteOp {
    const x = new Expression();
    return {
      item: {
        ConditionCheck: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: taskSk(taskId) },
          ConditionExpression: and(x.exists('pk'), x.absent('deletedAt'), version === undefined ? undefined : x.eq('version', version)),
          ...x.input(),
        },
      },
      refused: (current) => {
        if (current && !current.deletedAt && version === undefined) throw race();
        return taskRefusal(name, version ?? (current?.version as number | undefined), current);
      },
    };
  }

  checkDeletedOp(workspaceId: string, taskId: string): WriteOp {
    const x = new Expression();
    return {
      item: {
        ConditionCheck: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: taskSk(taskId) },
          ConditionExpression: and(x.exists('pk'), x.exists('deletedAt')),
          ...x.input(),
        },
      },
      refused: (current) => {
        if (!current) throw new DanglingLink(taskId);
        throw linksMoved(taskId);
      },
    };
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
            Limit: filterExpression ? Math.max(needed * 4, 100) : needed,
          }),
        );
        spent += out.ConsumedCapacity?.CapacityUnits ?? (out.ScannedCount ?? 0) * 0.5;
        for (const item of out.Items ?? []) {
          found.push({ task: this.task(item), segment: seg, orderKey: item.gsi1sk as string });
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
    return tasks;
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
    f.label !== undefined ? x.contains('labels', f.label) : undefined,
    f.blocked === undefined ? undefined : f.blocked ? x.exists('openBlockers') : x.absent('openBlockers'),
    f.dueOnOrAfter !== undefined ? x.ge('dueDate', f.dueOnOrAfter) : undefined,
    f.dueOnOrBefore !== undefined ? x.le('dueDate', f.dueOnOrBefore) : undefined,
    f.dueBefore !== undefined ? x.lt('dueDate', f.dueBefore) : undefined,
  );
  return clause || undefined;
};
