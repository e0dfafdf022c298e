import { type DynamoDBDocumentClient, GetCommand, paginateQuery, TransactGetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent } from '../../platform/dynamodb.js';
import { LINKS_EPOCH_SK, NOTES_ITEM_SK, SUBTASK_PREFIX, TASK_ITEM_SK, taskPk, WATCH_PREFIX, wsPk } from '../../platform/item-keys.js';
import { itemSize } from '../../platform/item-size.js';
import type { WriteOp } from '../../platform/transact.js';
import type { WorkspaceRef } from '../model/caller.js';
import { MAX_DEPENDENTS, MAX_NOTES_BYTES, MAX_SUBTASKS } from '../model/limits.js';
import {
  blockerFull,
  blockerMoved,
  exists,
  hasAttachments,
  linksMoved,
  parentMoved,
  race,
  taskDeleted,
  taskNotFound,
  versionConflict,
} from '../model/refusals.js';
import type { SubtaskEntry, Task } from '../model/types.js';
import { isAttachmentItem, toAttachment } from './attachment-store.js';
import { and, Expression, or, Update } from './expressions.js';
import { LegacyTaskLists } from './legacy-task-lists.js';
import {
  isEntryItem,
  isParentSide,
  itemKeyOf,
  joinSides,
  type ParentHold,
  parentSideOp,
  type Side,
  sideOf,
  entryOps as subtaskEntryOps,
  toEntry,
} from './subtask-items.js';
import { countOps, entryOps } from './task-derived.js';
import {
  EXTRAS,
  isWhole,
  legacyTaskKey,
  notesItemOf,
  notesKey,
  notesStateOf,
  type TaskItemExtras,
  taskItemOf,
  taskKey,
  toTask,
} from './task-items.js';
import { TaskLists } from './task-lists.js';

export type { CountScope, Counts, TaskFilter, TaskPage, TaskPosition, UrgentPage } from './task-queries.js';

import type { CountScope, Counts, TaskFilter, TaskPage, TaskPosition, UrgentPage } from './task-queries.js';

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
  /** When the change is made (what "done in the last days" counts by); now when absent. */
  readonly now?: Date;
  /**
   * Written only if nothing was placed below the task since it was read (its `treeVersion`, 0:
   * never): a task placed deeper must not have gained a subtask meanwhile that would then sit too
   * deep, and a parent deleted with its subtree must take every subtask (workspace/tasks/subtasks.ts).
   */
  readonly tree?: number;
  /** Its subtask count moved with the change (its subtasks deleted in the same write): merged, not written apart. */
  readonly subtaskDelta?: number;
}

export interface TaskStore {
  /** A task that exists and is not deleted. */
  get(workspaceId: string, taskId: string): Promise<Task | undefined>;
  /** Also a deleted one (kept for undo): what "was deleted" answers and undo read. */
  getAny(workspaceId: string, taskId: string): Promise<Task | undefined>;
  /** A parent's entries of its live subtasks, by number (`subtaskEntriesOf` gives them of a task `getAny` read). */
  subtasksOf(workspaceId: string, parentId: string): Promise<SubtaskEntry[]>;
  /** Tasks by id, deleted ones too, in one request per hundred; with `notes` whole (what a writer needs), else without their notes. */
  getMany(workspaceId: string, taskIds: readonly string[], opts?: { readonly notes?: boolean }): Promise<Map<string, Task>>;
  /** The workspace's links epoch and these tasks, as one snapshot: where a cycle check of a new link starts. */
  linkSnapshot(workspaceId: string, taskIds: readonly string[]): Promise<{ epoch: number; tasks: Map<string, Task> }>;
  /** One page in search order: open tasks by due date (undated last), then priority; done tasks most recent first. */
  search(ws: WorkspaceRef, filter: TaskFilter, limit: number, after?: TaskPosition): Promise<TaskPage>;
  /** One page of the day's overdue and due-on-`day` open tasks of a scope (anyone, a person, nobody), most urgent priority first. */
  urgent(ws: WorkspaceRef, who: { readonly assigneeId?: string | null }, day: string, limit: number, after?: string): Promise<UrgentPage>;
  /** A scope's counts on `day` (overdue: due before it), and its tasks done within [fromIso, toIso). */
  counts(ws: WorkspaceRef, scope: CountScope, day: string, fromIso: string, toIso: string): Promise<Counts>;
}

/**
 * The ops a task's change writes: the task writer's alone (store/writes.ts gives them to the writers).
 */
export interface TaskWrites {
  /**
   * What writes `next` as part of an all-or-nothing write: a new task (`before` undefined), or one
   * still at `before.version`. A task with `deletedAt` is stored deleted: out of every index, kept
   * until `expiresAt`. A failed condition becomes the refusal that says why (not found, deleted,
   * another version, its links moved).
   */
  writeOps(before: Task | undefined, next: Task, opts?: WriteOptions): WriteOp[];
  /**
   * A task's side of its subtasks: its count moved by `delta`, or with delta 0 only checked; with
   * `hold`, only while it is live and its own parent is as read (store/subtask-items.ts).
   */
  parentSideOp(workspaceId: string, taskId: string, delta: number, hold: ParentHold | undefined, name: string): WriteOp;
  /** Holds the write unless the task exists, is not deleted, and (if given) is at `version`. */
  checkOp(workspaceId: string, taskId: string, version?: number, name?: string): WriteOp;
  /** Holds the write unless the task is still deleted (a link kept to it is written as gone). */
  checkDeletedOp(workspaceId: string, taskId: string): WriteOp;
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
  /**
   * A claim on where a task came from (an import's source row, `sk` in the workspace's partition),
   * written with the task only where there is none: a second run creates nothing twice. `refused`: what a claim found means.
   */
  sourceClaimOp(workspaceId: string, sk: string, fields: Readonly<Record<string, unknown>>, refused: () => never): WriteOp;
}

export type { WorkspaceRef };

/** Attributes a task item may lack: a change that leaves one out removes it. */
const OPTIONAL = [
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
  'gsi3pk',
  'gsi3sk',
  'expiresAt',
  'blockedBy',
  'openBlockers',
  'goneBlockers',
  'hasNotes',
  'nw',
  'repeat',
  'reminders',
  'fields',
  'parentId',
  'parentNumber',
  'state',
] as const;
/** Kept by other tasks' changes (workspace/tasks/links.ts, subtasks.ts): a task's own change never writes them. */
const MAINTAINED = new Set(['blocks', 'linksVersion', 'subtaskCount', 'treeVersion', 'attachmentCount']);
/** A task's links, written by its own change only when the change is to its links. */
const LINKS = new Set(['blockedBy', 'openBlockers', 'goneBlockers']);

/**
 * A change of an existing task as an update of every attribute it owns, so what other tasks keep
 * on it (`blocks`) survives, and its links too unless `links` says the change is to them.
 */
const changeOf = (x: Expression, task: Task, expiresAt: number | undefined, links: boolean): Update => {
  const item = taskItemOf(task, expiresAt);
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

export { toTask };

/** Subtasks in the order they were made (their numbers). */
const sortEntries = (entries: SubtaskEntry[]): SubtaskEntry[] => entries.sort((a, b) => (a.number ?? 0) - (b.number ?? 0));

/**
 * What an update of another task (a blocker's or a dependent's side of a link) is estimated to cost:
 * its item is not read, so a typical one's size (2 KB, a task with a long title and many links), and
 * its three list entries, which copy every attribute.
 */
const OTHER_TASK_COST = { sizeHint: 2048, indexEntries: 3 } as const;

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
    readonly side?: Side;
  };
}

const isDependentAdd = (op: WriteOp): op is DependentAdd => 'dependentAdd' in op;

/** A dependent's side of its blockers' changes, so that two blockers' changes of one dependent can be one action. */
interface StateChange extends WriteOp {
  readonly stateChange: {
    readonly key: string;
    readonly sets: Readonly<Record<'addOpen' | 'deleteOpen' | 'addGone' | 'deleteGone', readonly string[]>>;
    readonly side?: Side;
  };
}

const isStateChange = (op: WriteOp): op is StateChange => 'stateChange' in op;

/**
 * Tasks, layout 2: each in its own partition (`WS#<ws>#T#<id>`: the task and its notes), in three
 * lists by priority (gsi1 the workspace's, gsi2 its assignee's, gsi3 its project's), found by its
 * words and labels and counted by its scopes' count items, all written in one transaction with the
 * change (task-items.ts, task-derived.ts). Lists are read by task-lists.ts; a workspace not yet
 * migrated is read by legacy-task-lists.ts. Writes are conditional on `version`.
 */
export class DynamoTaskStore implements TaskStore, TaskWrites {
  private readonly lists: TaskLists;
  private readonly legacy: LegacyTaskLists;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** Told of every task read (the instance remembers numbers by it). */
    private readonly seen: (task: Task) => void = () => {},
  ) {
    this.lists = new TaskLists(db, table, seen);
    this.legacy = new LegacyTaskLists(db, table, seen);
  }

  private task(item: Record<string, unknown>, notes?: Record<string, unknown>): Task {
    const t = toTask(item, notes);
    this.seen(t);
    return t;
  }

  async get(workspaceId: string, taskId: string): Promise<Task | undefined> {
    const task = await this.getAny(workspaceId, taskId);
    return task?.deletedAt ? undefined : task;
  }

  async getAny(workspaceId: string, taskId: string): Promise<Task | undefined> {
    // The task, its notes and its subtasks' entries: one partition, one read. A task of a workspace
    // not yet migrated is where layout 1 kept it.
    const items = await this.partition(workspaceId, taskId);
    const item = items.find((i) => i.sk === TASK_ITEM_SK);
    if (item) {
      const task = this.task(
        item,
        items.find((i) => i.sk === NOTES_ITEM_SK),
      );
      const extras = (task as Task & TaskItemExtras)[EXTRAS];
      if (extras) {
        extras.subtasks = sortEntries(items.filter(isEntryItem).map(toEntry));
        // Attachment ids start with the task's id and a random part: oldest first by when they were added.
        extras.attachments = items
          .filter(isAttachmentItem)
          .map(toAttachment)
          .sort((a, b) => a.addedAt.localeCompare(b.addedAt));
        extras.watches = items
          .filter((i) => String(i.sk).startsWith(WATCH_PREFIX))
          .map((i) => ({ userId: String(i.userId), on: i.on === true }));
      }
      return task;
    }
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: legacyTaskKey(workspaceId, taskId), ConsistentRead: true }),
    );
    return out.Item ? this.task(out.Item) : undefined;
  }

  /** Every item of a task's partition (or with `prefix`, those whose sort key starts so), consistent. */
  private async partition(workspaceId: string, taskId: string, prefix?: string): Promise<Record<string, unknown>[]> {
    const x = new Expression();
    const items: Record<string, unknown>[] = [];
    for await (const page of paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        KeyConditionExpression: and(x.eq('pk', taskPk(workspaceId, taskId)), prefix ? x.beginsWith('sk', prefix) : undefined),
        ConsistentRead: true,
        ...x.input(),
      },
    ))
      items.push(...(page.Items ?? []));
    return items;
  }

  async subtasksOf(workspaceId: string, parentId: string): Promise<SubtaskEntry[]> {
    return sortEntries((await this.partition(workspaceId, parentId, SUBTASK_PREFIX)).map(toEntry));
  }

  async getMany(workspaceId: string, taskIds: readonly string[], opts: { readonly notes?: boolean } = {}): Promise<Map<string, Task>> {
    const found = new Map<string, Task>();
    const ids = [...new Set(taskIds)];
    const items = await batchGetConsistent(
      this.db,
      this.table,
      ids.map((id) => taskKey(workspaceId, id)),
    );
    const byId = new Map(items.map((i) => [String(i.taskId), i]));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length) {
      for (const i of await batchGetConsistent(
        this.db,
        this.table,
        missing.map((id) => legacyTaskKey(workspaceId, id)),
      ))
        byId.set(String(i.taskId), i);
    }
    const withNotes = opts.notes ? [...byId.values()].filter((i) => i.hasNotes === true) : [];
    const notes = withNotes.length
      ? new Map(
          (
            await batchGetConsistent(
              this.db,
              this.table,
              withNotes.map((i) => notesKey(workspaceId, String(i.taskId))),
            )
          ).map((n) => [String(n.pk), n]),
        )
      : new Map<string, Record<string, unknown>>();
    for (const [id, item] of byId) found.set(id, this.task(item, notes.get(String(item.pk))));
    return found;
  }

  writeOps(before: Task | undefined, next: Task, opts: WriteOptions = {}): WriteOp[] {
    const name = opts.name ?? next.taskId;
    const nowMs = (opts.now ?? new Date()).getTime();
    const derived = [
      ...this.notesOps(before, next, opts.expiresAt),
      ...entryOps(this.table, before, next),
      ...countOps(this.table, before, next, nowMs),
      ...subtaskEntryOps(this.table, before, next),
    ];
    if (before === undefined) return [this.newTaskOp(next, opts.expiresAt, name), ...derived];
    return [this.changeOp(before, next, opts, name), ...derived];
  }

  /** An existing task's update, held to its version (and to its links and its subtask count, where asked). */
  private changeOp(before: Task, next: Task, opts: WriteOptions, name: string): WriteOp {
    const x = new Expression();
    const change = changeOf(x, next, opts.expiresAt, opts.links ?? false);
    if (opts.forgetDependents?.length) change.delete('blocks', new Set(opts.forgetDependents)).add('linksVersion', 1);
    if (opts.subtaskDelta) change.add('subtaskCount', opts.subtaskDelta);
    const held = opts.linksVersion !== undefined;
    const condition = and(
      x.exists('pk'),
      x.eq('version', before.version),
      held ? (opts.linksVersion ? x.eq('linksVersion', opts.linksVersion) : x.absent('linksVersion')) : undefined,
      opts.tree === undefined ? undefined : opts.tree ? x.eq('treeVersion', opts.tree) : x.absent('treeVersion'),
      // A delete holds the task to having no files: one attached meanwhile would outlive it (workspace/attachments/).
      next.deletedAt && !before.deletedAt ? or(x.absent('attachmentCount'), x.eq('attachmentCount', 0)) : undefined,
    );
    const key = itemKeyOf(this.table, next.workspaceId, next.taskId);
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: taskKey(next.workspaceId, next.taskId),
          UpdateExpression: change.toString(),
          ConditionExpression: condition,
          ...x.input(),
        },
      },
      sizeHint: itemSize(taskItemOf(next, opts.expiresAt)),
      // Its three list entries, and the ones it leaves when it is deleted.
      indexEntries: 3,
      refused: (current) => {
        if (next.deletedAt && !before.deletedAt && Number(current?.attachmentCount ?? 0) > 0)
          throw hasAttachments(name, Number(current!.attachmentCount));
        // The version held but the links or the subtask count did not (a delete or a restore
        // included: a restore meets its own task deleted, as it was read).
        if (current && current.version === before.version && !!current.deletedAt === !!before.deletedAt) throw linksMoved(name);
        return taskRefusal(name, before.version, current);
      },
      // Its subtasks deleted with it, each taking itself off its count: one update with the task's own.
      merge: (other) => {
        if (!isParentSide(other) || other.parentSide.key !== key || other.parentSide.hold) return undefined;
        return this.changeOp(before, next, { ...opts, subtaskDelta: (opts.subtaskDelta ?? 0) + other.parentSide.delta }, name);
      },
    };
  }

  /**
   * The notes item as the change leaves it: written when the notes change, and kept until the task's
   * own expiry when it is deleted (and again for good when it is restored). A delete or a restore
   * of a task read without its notes moves only that expiry, so no notes are read to delete a tree.
   */
  private notesOps(before: Task | undefined, next: Task, expiresAt: number | undefined): WriteOp[] {
    const deletion = !!before?.deletedAt !== !!next.deletedAt;
    if (before && !isWhole(before)) {
      if (next.notes !== undefined || notesStateOf(next).hasNotes !== notesStateOf(before).hasNotes)
        throw new Error(`task ${before.taskId} was read without its notes; a change of them needs them`);
      if (!deletion || !notesStateOf(before).hasNotes) return [];
      return [this.notesExpiryOp(next, next.deletedAt ? expiresAt : undefined)];
    }
    const moved = before === undefined || before.notes !== next.notes || deletion;
    if (!moved) return [];
    if (next.notes) {
      const item = notesItemOf(next, next.deletedAt ? expiresAt : undefined);
      return [{ item: { Put: { TableName: this.table, Item: item } }, sizeHint: itemSize(item) }];
    }
    return before?.notes ? [{ item: { Delete: { TableName: this.table, Key: notesKey(next.workspaceId, next.taskId) } } }] : [];
  }

  /** The notes item kept until `expiresAt` (a delete), or for good (undefined: a restore), its text untouched. */
  private notesExpiryOp(task: Task, expiresAt: number | undefined): WriteOp {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: notesKey(task.workspaceId, task.taskId),
          ...(expiresAt === undefined
            ? { UpdateExpression: 'REMOVE expiresAt' }
            : { UpdateExpression: 'SET expiresAt = :e', ExpressionAttributeValues: { ':e': expiresAt } }),
        },
      },
      // Billed by the item's size, which was not read: notes of the longest kind.
      sizeHint: MAX_NOTES_BYTES,
    };
  }

  /**
   * A new task's Put. A link to it made in the same transaction (a later item of the same call) and
   * a subtask of it made there become part of it: the Put then holds them already.
   */
  private newTaskOp(
    next: Task,
    expiresAt: number | undefined,
    name: string,
    extra: { readonly dependents?: readonly string[]; readonly subtasks?: number } = {},
  ): WriteOp {
    const dependents = extra.dependents ?? [];
    const blocks = [...new Set([...(next.blocks ?? []), ...dependents])].sort();
    const subtaskCount = (next.subtaskCount ?? 0) + (extra.subtasks ?? 0);
    const task: Task = {
      ...next,
      ...(dependents.length ? { blocks, linksVersion: (next.linksVersion ?? 0) + 1 } : {}),
      ...(subtaskCount ? { subtaskCount } : {}),
      ...(extra.subtasks !== undefined ? { treeVersion: (next.treeVersion ?? 0) + 1 } : {}),
    };
    const key = itemKeyOf(this.table, next.workspaceId, next.taskId);
    const item = taskItemOf(task, expiresAt);
    return {
      item: { Put: { TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
      sizeHint: itemSize(item),
      indexEntries: 3,
      refused: (current) => taskRefusal(name, undefined, current),
      merge: (other) => {
        if (isParentSide(other)) {
          const { key: k, delta, hold } = other.parentSide;
          if (k !== key || task.deletedAt) return undefined;
          // Held to the place the new task is made in: it is as written here, or it is another change.
          if (hold && hold.parentOf !== (task.parentId ?? null)) return undefined;
          if (subtaskCount + delta > MAX_SUBTASKS || subtaskCount + delta < 0) return undefined;
          return this.newTaskOp(task, expiresAt, name, { subtasks: delta });
        }
        if (!isDependentAdd(other) || other.dependentAdd.key !== key) return undefined;
        if (other.dependentAdd.status !== undefined && other.dependentAdd.status !== task.status) return undefined;
        if (blocks.length + other.dependentAdd.dependents.length > MAX_DEPENDENTS) return undefined;
        return this.newTaskOp(task, expiresAt, name, { dependents: other.dependentAdd.dependents });
      },
    };
  }

  search(ws: WorkspaceRef, filter: TaskFilter, limit: number, after?: TaskPosition): Promise<TaskPage> {
    return ws.layout === 2
      ? this.lists.search(ws.workspaceId, filter, limit, after)
      : this.legacy.search(ws.workspaceId, filter, limit, after);
  }

  async urgent(
    ws: WorkspaceRef,
    who: { readonly assigneeId?: string | null },
    day: string,
    limit: number,
    after?: string,
  ): Promise<UrgentPage> {
    if (ws.layout === 2) return this.lists.urgent(ws.workspaceId, who, day, limit, after);
    const { urgent } = await this.legacy.agenda(ws.workspaceId, who, day, '9999', '9999');
    const key = (t: Task) => `${t.priority}#${t.dueDate ?? '~'}#${t.taskId}`;
    const sorted = urgent.sort((a, b) => (key(a) < key(b) ? -1 : 1)).filter((t) => !after || key(t) > after);
    const page = sorted.slice(0, limit);
    return { tasks: page, ...(sorted.length > limit ? { next: key(page.at(-1)!) } : {}) };
  }

  async counts(ws: WorkspaceRef, scope: CountScope, day: string, fromIso: string, toIso: string): Promise<Counts> {
    if (ws.layout === 2) return this.lists.counts(ws.workspaceId, scope, day, fromIso, toIso);
    if (scope.projectId !== undefined) {
      const all = await this.legacy.all(ws.workspaceId, { status: 'any', projectId: scope.projectId });
      const open = all.filter((t) => t.status === 'open');
      return {
        open: open.length,
        overdue: open.filter((t) => t.dueDate !== undefined && t.dueDate < day).length,
        dueToday: open.filter((t) => t.dueDate === day).length,
        done: all.length - open.length,
        doneBetween: all.filter((t) => t.completedAt !== undefined && t.completedAt >= fromIso && t.completedAt < toIso).length,
      };
    }
    const { counts } = await this.legacy.agenda(ws.workspaceId, scope, day, fromIso, toIso);
    return { ...counts, done: 0 };
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
          ...ids.map((id) => ({ Get: { TableName: this.table, Key: taskKey(workspaceId, id) } })),
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

  sourceClaimOp(workspaceId: string, sk: string, fields: Readonly<Record<string, unknown>>, refused: () => never): WriteOp {
    return {
      item: {
        Put: { TableName: this.table, Item: { pk: wsPk(workspaceId), sk, ...fields }, ConditionExpression: 'attribute_not_exists(pk)' },
      },
      refused,
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
            Key: taskKey(workspaceId, blockerId),
            UpdateExpression: new Update(x)
              .delete('blocks', new Set([dependentId]))
              .add('linksVersion', 1)
              .toString(),
            // A blocker gone for good (its TTL) has nothing to forget, and must not come back as a stub.
            ConditionExpression: x.exists('pk'),
            ...x.input(),
          },
        },
        ...OTHER_TASK_COST,
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
    /** The blocker's side of a subtask of it in the same write (it waits on its parent, or the parent on it). */
    side?: Side,
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
    const key = `${this.table}|${taskPk(workspaceId, blockerId)}|${TASK_ITEM_SK}`;
    const update = new Update(x).add('blocks', new Set(dependents)).add('linksVersion', 1);
    const sideCondition = sideOf(x, update, side);
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: taskKey(workspaceId, blockerId),
          UpdateExpression: update.toString(),
          ConditionExpression: and(x.exists('pk'), x.absent('deletedAt'), status ? x.eq('status', status) : undefined, room, sideCondition),
          ...x.input(),
        },
      },
      ...OTHER_TASK_COST,
      dependentAdd: { key, dependents, kept, ...(status ? { status } : {}), ...(side ? { side } : {}) },
      refused: (current) => {
        // What the failed condition found says which: full (its limit, for the one item that pushed it over), or moved.
        const held = current?.blocks instanceof Set ? current.blocks.size : Array.isArray(current?.blocks) ? current.blocks.length : 0;
        if (current && !current.deletedAt && held + dependents.length - kept.length > MAX_DEPENDENTS)
          throw blockerFull(name, MAX_DEPENDENTS);
        throw blockerMoved(name);
      },
      merge: (other) => {
        if (isParentSide(other) && other.parentSide.key === key) {
          const joined = joinSides(side, other.parentSide);
          return joined && this.dependentAdd(workspaceId, blockerId, dependents, kept, status, name, joined);
        }
        if (!isDependentAdd(other) || other.dependentAdd.key !== key || other.dependentAdd.status !== status) return undefined;
        const joined = other.dependentAdd.side ? joinSides(side, other.dependentAdd.side) : side;
        if (other.dependentAdd.side && !joined) return undefined;
        return this.dependentAdd(
          workspaceId,
          blockerId,
          [...new Set([...dependents, ...other.dependentAdd.dependents])],
          [...new Set([...kept, ...other.dependentAdd.kept])],
          status,
          name,
          joined,
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
  private stateChange(workspaceId: string, dependentId: string, sets: StateChange['stateChange']['sets'], side?: Side): StateChange {
    const x = new Expression();
    const update = new Update(x);
    const sideCondition = sideOf(x, update, side);
    if (sets.addOpen.length) update.add('openBlockers', new Set(sets.addOpen));
    if (sets.deleteOpen.length) update.delete('openBlockers', new Set(sets.deleteOpen));
    if (sets.addGone.length) update.add('goneBlockers', new Set(sets.addGone));
    if (sets.deleteGone.length) update.delete('goneBlockers', new Set(sets.deleteGone));
    const key = `${this.table}|${taskPk(workspaceId, dependentId)}|${TASK_ITEM_SK}`;
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: taskKey(workspaceId, dependentId),
          UpdateExpression: update.toString(),
          ConditionExpression: and(x.exists('pk'), sideCondition),
          ...x.input(),
        },
      },
      ...OTHER_TASK_COST,
      refused: (current) => {
        if (!current) throw new DanglingLink(dependentId);
        if (side?.hold) throw parentMoved(dependentId);
        throw race();
      },
      stateChange: { key, sets, ...(side ? { side } : {}) },
      merge: (other) => {
        if (isParentSide(other) && other.parentSide.key === key) {
          const joined = joinSides(side, other.parentSide);
          return joined && this.stateChange(workspaceId, dependentId, sets, joined);
        }
        if (!isStateChange(other) || other.stateChange.key !== key) return undefined;
        const joined = other.stateChange.side ? joinSides(side, other.stateChange.side) : side;
        if (other.stateChange.side && !joined) return undefined;
        const o = other.stateChange.sets;
        // One attribute cannot be both added to and deleted from in one update.
        const both = (a: readonly string[], b: readonly string[]) => a.length > 0 && b.length > 0;
        if (both([...sets.addOpen, ...o.addOpen], [...sets.deleteOpen, ...o.deleteOpen])) return undefined;
        if (both([...sets.addGone, ...o.addGone], [...sets.deleteGone, ...o.deleteGone])) return undefined;
        return this.stateChange(
          workspaceId,
          dependentId,
          {
            addOpen: [...sets.addOpen, ...o.addOpen],
            deleteOpen: [...sets.deleteOpen, ...o.deleteOpen],
            addGone: [...sets.addGone, ...o.addGone],
            deleteGone: [...sets.deleteGone, ...o.deleteGone],
          },
          joined,
        );
      },
    };
  }

  parentSideOp(workspaceId: string, taskId: string, delta: number, hold: ParentHold | undefined, name: string): WriteOp {
    return parentSideOp(this.table, workspaceId, taskId, delta, hold, name);
  }

  checkOp(workspaceId: string, taskId: string, version?: number, name = taskId): WriteOp {
    const x = new Expression();
    return {
      item: {
        ConditionCheck: {
          TableName: this.table,
          Key: taskKey(workspaceId, taskId),
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
          Key: taskKey(workspaceId, taskId),
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
}
