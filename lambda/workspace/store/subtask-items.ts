import { SUBTASK_PREFIX, subtaskSk, TASK_ITEM_SK, taskPk } from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import { MAX_SUBTASKS } from '../model/limits.js';
import { parentMoved, race } from '../model/refusals.js';
import type { SubtaskEntry, Task } from '../model/types.js';
import { and, Expression, or, Update } from './expressions.js';

/**
 * A parent's side of its subtasks, in the parent's own partition: its count of live subtasks
 * (`subtaskCount` on the task item) and one entry per live subtask (`SUB#<id>`: key, title, status,
 * due date), which task_get reads in the same request as the task. Both are written by the
 * subtask's own changes, in their transaction (workspace/tasks/subtasks.ts says when).
 */

/** Where a subtask's place in the tree was read: the write lands only if that task's own parent is still this (null: none). */
export interface ParentHold {
  readonly parentOf: string | null;
}

/** A change of a task's subtask count, held to its place in the tree when `hold` is given (a check alone with delta 0). */
export interface ParentSide extends WriteOp {
  readonly parentSide: { readonly key: string; readonly delta: number; readonly hold?: ParentHold };
}

export const isParentSide = (op: WriteOp): op is ParentSide => 'parentSide' in op;

/** What an update of another task's count costs (its item is not read): a typical task item and its three list entries. */
const OTHER_TASK_COST = { sizeHint: 2048, indexEntries: 3 } as const;

export const itemKeyOf = (table: string, workspaceId: string, taskId: string): string =>
  `${table}|${taskPk(workspaceId, taskId)}|${TASK_ITEM_SK}`;

/**
 * A task's count moved by `delta` (its subtasks attached or detached). Held (`hold`, a placement
 * below it or below one of its subtasks): the task is live, its own parent is as read, a new subtask
 * finds room below the most, and its `treeVersion` moves on, so a change that read the tree below it
 * (a move of it, a delete of it with its subtree) and holds that version is refused if this lands
 * first. Two on one task in a transaction combine into one action (several subtasks of one parent in
 * one call, a subtask leaving a parent for its sibling); holds that disagree do not (the transaction
 * is then tried item by item).
 */
export const parentSideOp = (
  table: string,
  workspaceId: string,
  taskId: string,
  delta: number,
  hold: ParentHold | undefined,
  name: string,
): ParentSide => {
  const x = new Expression();
  const key = { pk: taskPk(workspaceId, taskId), sk: TASK_ITEM_SK };
  const update = new Update(x);
  const condition = and(x.exists('pk'), sideOf(x, update, { delta, ...(hold ? { hold } : {}) }));
  const item = update.empty
    ? { ConditionCheck: { TableName: table, Key: key, ConditionExpression: condition, ...x.input() } }
    : { Update: { TableName: table, Key: key, UpdateExpression: update.toString(), ConditionExpression: condition, ...x.input() } };
  const id = itemKeyOf(table, workspaceId, taskId);
  return {
    item,
    ...(update.empty ? {} : OTHER_TASK_COST),
    parentSide: { key: id, delta, ...(hold ? { hold } : {}) },
    refused: (current) => {
      if (!current || !hold) throw race();
      throw parentMoved(name);
    },
    merge: (other) => {
      if (!isParentSide(other) || other.parentSide.key !== id) return undefined;
      const o = other.parentSide;
      if (hold && o.hold && hold.parentOf !== o.hold.parentOf) return undefined;
      return parentSideOp(table, workspaceId, taskId, delta + o.delta, hold ?? o.hold, name);
    },
  };
};

/** A parent side's change, as another update of the same task takes it in (a blocker's state, a new dependent). */
export interface Side {
  readonly delta: number;
  readonly hold?: ParentHold;
}

/** Adds a parent side's actions to `update` and returns its conditions (or undefined: none). */
export const sideOf = (x: Expression, update: Update, side: Side | undefined): string | undefined => {
  if (!side) return undefined;
  const { delta, hold } = side;
  if (delta) update.add('subtaskCount', delta);
  if (hold) update.add('treeVersion', 1);
  return (
    and(
      hold ? x.absent('deletedAt') : undefined,
      hold ? (hold.parentOf ? x.eq('parentId', hold.parentOf) : x.absent('parentId')) : undefined,
      delta > 0 ? or(x.absent('subtaskCount'), x.le('subtaskCount', MAX_SUBTASKS - delta)) : undefined,
    ) || undefined
  );
};

/** Two sides of one task in one action: their deltas add up; their holds must agree. */
export const joinSides = (a: Side | undefined, b: Side): Side | undefined => {
  if (!a) return b;
  if (a.hold && b.hold && a.hold.parentOf !== b.hold.parentOf) return undefined;
  const hold = a.hold ?? b.hold;
  return { delta: a.delta + b.delta, ...(hold ? { hold } : {}) };
};

/** What a parent's entry shows of a subtask. */
export const entryOf = (t: Task): SubtaskEntry => ({
  taskId: t.taskId,
  ...(t.number !== undefined ? { number: t.number } : {}),
  title: t.title,
  status: t.status,
  ...(t.state ? { state: t.state } : {}),
  ...(t.dueDate ? { dueDate: t.dueDate } : {}),
  ...(t.projectId ? { projectId: t.projectId } : {}),
  createdBy: t.createdBy,
});

/** The parent a task is a live subtask of: none while it is deleted. */
export const liveParentOf = (t: Task | undefined): string | undefined => (t && !t.deletedAt ? t.parentId : undefined);

const sameEntry = (a: Task, b: Task): boolean => JSON.stringify(entryOf(a)) === JSON.stringify(entryOf(b));

/**
 * The entries a change writes: put in its parent's partition when it becomes a live subtask there or
 * what the entry shows changes (a status change costs what a due-date change does: one entry), and
 * taken out of the partition it leaves (a new parent, none, or its delete).
 */
export const entryOps = (table: string, before: Task | undefined, next: Task): WriteOp[] => {
  const was = liveParentOf(before);
  const now = liveParentOf(next);
  const ops: WriteOp[] = [];
  if (was && was !== now)
    ops.push({ item: { Delete: { TableName: table, Key: { pk: taskPk(next.workspaceId, was), sk: subtaskSk(next.taskId) } } } });
  if (now && (was !== now || !sameEntry(before!, next))) {
    const Item = { pk: taskPk(next.workspaceId, now), sk: subtaskSk(next.taskId), ...entryOf(next) };
    ops.push({ item: { Put: { TableName: table, Item } } });
  }
  return ops;
};

/** An entry item as a parent's read finds it. */
export const toEntry = (item: Record<string, unknown>): SubtaskEntry => ({
  taskId: String(item.taskId),
  ...(item.number !== undefined ? { number: Number(item.number) } : {}),
  title: String(item.title),
  status: item.status as SubtaskEntry['status'],
  ...(item.state ? { state: String(item.state) } : {}),
  ...(item.dueDate ? { dueDate: String(item.dueDate) } : {}),
  ...(item.projectId ? { projectId: String(item.projectId) } : {}),
  ...(item.createdBy ? { createdBy: String(item.createdBy) } : {}),
});

export const isEntryItem = (item: Record<string, unknown>): boolean => String(item.sk).startsWith(SUBTASK_PREFIX);
