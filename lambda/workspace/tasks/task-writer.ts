import { ToolRefusal } from '../../errors.js';
import { takeWriteUnits } from '../../platform/call-budget.js';
import { type ItemKey, isTransientDynamoError } from '../../platform/dynamodb.js';
import {
  MAX_TRANSACTION_ACTIONS,
  MAX_TRANSACTION_BYTES,
  opBytes,
  opKey,
  opWriteUnits,
  WriteNotConfirmed,
  type WriteOp,
} from '../../platform/transact.js';
import { taskRecord } from '../activity/records.js';
import { type ActivityRecord, bulkItemId, newActivityId } from '../model/activity.js';
import {
  callCeiling,
  linksTooManyWrites,
  numbersBusy,
  race,
  refusalOfStorage,
  treeTooBig,
  unconfirmed,
  versionConflict,
  waitsOnNotCreated,
} from '../model/refusals.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Task } from '../model/types.js';
import type { WriteContext } from '../store/stores.js';
import { NumberTaken, RESERVED_ATTEMPTS, withNewNumbers } from '../store/task-numbers.js';
import { DanglingLink } from '../store/task-store.js';
import { writesOf } from '../store/writes.js';
import { blockerChangeOf, blockerSideOps, changesState, transitionOps, withBlockerChange } from './links.js';
import { type NewTask, type PlannedTask, type PlanOptions, planChange, planCreate, type TaskPatch } from './planner.js';
import { parentSideOps } from './subtasks.js';
import { LEAST_ROOT_ACTIONS, LEAST_SUBTASK_ACTIONS } from './trees.js';
import { watchOps } from './watching.js';

/**
 * The one writer of tasks. Every change of a task, through every door (task_create, tasks_create,
 * task_update, tasks_update, task_complete, task_reopen, task_delete, change_undo, the import), is
 * planned by planner.ts and written here: the task held to the version it was read at (and, for a
 * change of state or of links, to the links it was read with), the other sides of its links, its
 * number and its claim, its activity record, and for a delete or a restore its comments' expiry,
 * all in one write. A link that names a task gone for good is dropped on the way (DanglingLink).
 */

export interface ChangeOptions {
  /** Refused as a conflict unless the task is still at this version (what the caller read or gave). */
  readonly expectVersion?: number;
  /** The change this one undoes: its record gets `undoOf`, and the original is marked undone in the same write. */
  readonly undoes?: ActivityRecord;
  /**
   * The task is as a record left it, not as read now (an undo): if its links moved since, it is
   * read again and the change planned once more, instead of being refused.
   */
  readonly fromRecord?: boolean;
  /** The record's id (a bulk call's item: `act_….07`). */
  readonly recordId?: string;
  /** The task's comments' keys, when the caller read them already (a delete asks about them first). */
  readonly comments?: readonly ItemKey[];
  readonly plan?: PlanOptions;
  /** The caller watches the task (true) or stops (false): written with the change, or alone when nothing else changes. */
  readonly watch?: boolean;
}

export interface WrittenTask {
  readonly before: Task | undefined;
  readonly task: Task;
  readonly record: ActivityRecord;
  /** Write units the change was estimated at (what the call's ceiling counts). */
  readonly writeUnits: number;
  /** Custom fields whose values stayed behind in a move to another project. */
  readonly fieldsLeft?: readonly string[];
}

/** The task item, its record, and as many of its comments as fit: one all-or-nothing write. */
const ROOM_FOR_COMMENTS = MAX_TRANSACTION_ACTIONS;

const nameOf = (ctx: WriteContext, t: Pick<Task, 'number' | 'taskId'>): string => taskNameOf(ctx.caller.workspaceKey, t);

/** What heals a write that met a link to a task gone for good: names to leave out, and `blocks` entries to drop. */
interface Healing {
  readonly gone: Set<string>;
}

/** What a task's write leaves to others in the same write: the tasks waiting on it that take its change into their own. */
interface Together {
  readonly dependents?: ReadonlySet<string>;
  /** Its subtree as read (the root of a tree's delete): held, so a subtask placed below meanwhile refuses the write. */
  readonly tree?: number;
  /** Its own links' derived sets changed (a blocker of it in the same write): written with the change. */
  readonly ownLinks?: boolean;
  /** The caller's watch choice, written with the change. */
  readonly watch?: boolean;
}

/** Everything one task's write puts down besides its record. */
const opsOf = (ctx: WriteContext, planned: PlannedTask, heal: Healing, expiresAt?: number, together: Together = {}): WriteOp[] => {
  const { stores, caller } = ctx;
  const { before, next, blockers, placement } = planned;
  const stateMoves = before !== undefined && changesState(before, next);
  const dependents = (before?.blocks ?? []).filter((id) => !heal.gone.has(id) && !together.dependents?.has(id));
  const forget = (before?.blocks ?? []).filter((id) => heal.gone.has(id));
  const side = blockers
    ? {
        ...blockers,
        tasks: new Map([...blockers.tasks].filter(([id]) => !heal.gone.has(id))),
        dropped: blockers.dropped.filter((id) => !heal.gone.has(id)),
      }
    : undefined;
  return [
    // Held to the `blocks` read: for a change of state, so every dependent is updated; for a change
    // of links, so two changes that each looked acyclic cannot close a cycle between them (one
    // linking this task to its blocker raises its `linksVersion` first: the other is then a conflict).
    ...writesOf(stores).tasks.writeOps(before, next, {
      ...(blockers || together.ownLinks ? { links: true } : {}),
      ...(before && (stateMoves || blockers || forget.length) ? { linksVersion: before.linksVersion ?? 0 } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(forget.length ? { forgetDependents: forget } : {}),
      ...(before && placement?.tree !== undefined ? { tree: placement.tree } : together.tree !== undefined ? { tree: together.tree } : {}),
      name: nameOf(ctx, next),
      now: ctx.source.now,
    }),
    ...(side ? blockerSideOps(stores, caller, next, side) : []),
    ...parentSideOps(stores, caller, before, next, placement),
    ...(before && stateMoves ? transitionOps(stores, before, next, dependents) : []),
    // Its reminders' entries in the minutes they are due, and who watches it now.
    ...writesOf(stores).inbox.reminderOps(before, next),
    ...watchOps(ctx, before, next, together.watch),
  ];
};

/** Refuses before writing a change that one transaction cannot hold (its links and the tasks waiting on it). */
const fitsOneWrite = (ops: readonly WriteOp[]): void => {
  if (ops.length + 1 > MAX_TRANSACTION_ACTIONS) {
    throw linksTooManyWrites(ops.length);
  }
};

const recordFor = (ctx: WriteContext, planned: PlannedTask, opts: ChangeOptions, commentCount?: number): ActivityRecord =>
  taskRecord(
    ctx.stores.activity,
    ctx.source,
    planned.before,
    planned.next,
    {
      ...(opts.undoes ? { undoOf: opts.undoes.activityId } : {}),
      ...(commentCount ? { commentCount } : {}),
      ...(planned.occurrence ? { occurrence: planned.occurrence } : {}),
    },
    opts.recordId,
  );

const bookkeeping = (ctx: WriteContext, record: ActivityRecord, opts: ChangeOptions): WriteOp[] => [
  writesOf(ctx.stores).activity.recordOp(record),
  ...(opts.undoes ? [writesOf(ctx.stores).activity.markUndoneOp(opts.undoes, record.activityId, record.at)] : []),
];

/** A write DynamoDB did not confirm, in words: what it would have done, and how to check. */
const notConfirmed = (ctx: WriteContext, next: Task): ToolRefusal =>
  unconfirmed(`It would have changed ${nameOf(ctx, next)} to version ${next.version}; task_get ${nameOf(ctx, next)} shows whether it did.`);

/**
 * Changes one task (any field, its status, a delete or a restore). `before` is the task as read,
 * or as a record left it (`fromRecord`). Undefined when the change changes nothing.
 */
export const changeTask = async (
  ctx: WriteContext,
  before: Task,
  patch: TaskPatch,
  opts: ChangeOptions = {},
): Promise<WrittenTask | undefined> => {
  const { stores, caller } = ctx;
  if (opts.expectVersion !== undefined && opts.expectVersion !== before.version) {
    throw versionConflict(`task ${nameOf(ctx, before)}`, before.version, opts.expectVersion, 'task_get');
  }
  let base = before;
  let planned = await planChange(ctx, base, patch, opts.plan);
  if (!planned) {
    // Only the caller's watch choice changes: the task stays as it is.
    if (opts.watch !== undefined) await writesOf(stores).commit(watchOps(ctx, before, before, opts.watch));
    return undefined;
  }
  const heal: Healing = { gone: new Set() };
  const deleting = !!planned.next.deletedAt && !base.deletedAt;
  const restoring = !planned.next.deletedAt && !!base.deletedAt;
  const comments = deleting || restoring ? (opts.comments ?? (await stores.comments.keysOfTask(caller.workspaceId, base.taskId))) : [];
  for (let attempt = 1; ; attempt++) {
    const record = recordFor(ctx, planned, opts, deleting ? comments.length : undefined);
    const expiresAt = deleting ? record.expiresAt : undefined;
    const ops = opsOf(ctx, planned, heal, expiresAt, opts.watch !== undefined ? { watch: opts.watch } : {});
    fitsOneWrite(ops);
    const bookOps = bookkeeping(ctx, record, opts);
    const room = ROOM_FOR_COMMENTS - ops.length - bookOps.length;
    const inWrite = comments.slice(0, Math.max(0, room));
    const later = comments.slice(inWrite.length);
    try {
      // Comments past what one write holds: a restore keeps them again first (still invisible, their
      // task being deleted), so a fault half way never leaves a visible comment that would expire.
      if (restoring && attempt === 1) await markCommentsExpiring(ctx, later, undefined);
      // Two actions on one task (a parent it leaves and one it joins below it; a parent waiting on it) become one.
      const all = combine([...ops, ...inWrite.map((key) => writesOf(stores).comments.expiryOp(key, expiresAt)), ...bookOps]);
      await writesOf(stores).commit(all);
      // The task is invisible now, and its comments with it; the rest only learn when they expire.
      if (deleting) await markCommentsExpiring(ctx, later, expiresAt).catch(() => undefined);
      return {
        before: base,
        task: planned.next,
        record,
        writeUnits: all.reduce((sum, op) => sum + opWriteUnits(op), 0),
        ...(planned.fieldsLeft ? { fieldsLeft: planned.fieldsLeft } : {}),
      };
    } catch (err) {
      if (err instanceof WriteNotConfirmed) throw notConfirmed(ctx, planned.next);
      if (attempt >= 4) throw err;
      if (err instanceof DanglingLink) {
        heal.gone.add(err.taskId);
        continue;
      }
      // Links moved while this was planned (a record's picture lacks links made since, a link was
      // made elsewhere meanwhile): read the task again and plan on it, so every rule is checked anew.
      if (err instanceof ToolRefusal && err.reason === 'links-moved') {
        const fresh = await stores.tasks.getAny(caller.workspaceId, base.taskId);
        if (!fresh || fresh.version !== base.version) throw err;
        base = fresh;
        const again = await planChange(ctx, base, patch, opts.plan);
        if (!again) return undefined;
        planned = again;
        continue;
      }
      throw err;
    }
  }
};

/**
 * Sets (or with `undefined` clears) the `expiresAt` of comments past what a task's own delete or
 * restore write holds, a transaction's worth at a time (docs/workspace.md, "Deletes keep what undo needs").
 */
const markCommentsExpiring = async (ctx: WriteContext, keys: readonly ItemKey[], expiresAt: number | undefined): Promise<void> => {
  for (let i = 0; i < keys.length; i += MAX_TRANSACTION_ACTIONS) {
    await writesOf(ctx.stores).commit(
      keys.slice(i, i + MAX_TRANSACTION_ACTIONS).map((key) => writesOf(ctx.stores).comments.expiryOp(key, expiresAt)),
    );
  }
};

// ---- a tree at once ------------------------------------------------------------------------------

export interface WrittenTree {
  readonly written: readonly WrittenTask[];
  /** The id change_undo takes to undo them all, when more than the task itself changed. */
  readonly callId?: string;
}

/**
 * Changes a task and `others` of its subtree the same way (deleted, completed), all in one write or
 * none: each with its record (`act_….01` the task, then its subtasks; the call's id undoes them all),
 * a deleted one's comments expiring with it. Tasks of the tree waiting on one another take each
 * other's change into their own write. What one transaction cannot hold is refused before anything
 * is written, naming how many tasks it would change.
 */
export const changeTree = async (
  ctx: WriteContext,
  root: Task,
  others: readonly Task[],
  patch: TaskPatch,
  opts: { readonly expectVersion?: number; readonly comments?: readonly ItemKey[]; readonly param?: string } = {},
): Promise<WrittenTree | undefined> => {
  const { stores, caller } = ctx;
  if (!others.length) {
    const one = await changeTask(ctx, root, patch, {
      ...(opts.expectVersion !== undefined ? { expectVersion: opts.expectVersion } : {}),
      ...(opts.comments ? { comments: opts.comments } : {}),
    });
    return one ? { written: [one] } : undefined;
  }
  if (opts.expectVersion !== undefined && opts.expectVersion !== root.version) {
    throw versionConflict(`task ${nameOf(ctx, root)}`, root.version, opts.expectVersion, 'task_get');
  }
  const deleting = patch.deleted === true;
  const tasks = [root, ...others];
  // A task's comments go with it in the same write: more than the write holds need not be read to be refused.
  const room = MAX_TRANSACTION_ACTIONS - LEAST_ROOT_ACTIONS - others.length * LEAST_SUBTASK_ACTIONS;
  const [plans, comments] = await Promise.all([
    Promise.all(tasks.map((t) => planChange(ctx, t, patch, { subtree: true }))),
    deleting
      ? Promise.all(
          tasks.map((t, i) =>
            i === 0 && opts.comments ? opts.comments : stores.comments.keysOfTask(caller.workspaceId, t.taskId, Math.max(1, room + 1)),
          ),
        )
      : tasks.map(() => []),
  ]);
  const changed = plans.flatMap((p, i) => (p ? [{ p, comments: comments[i]! }] : []));
  if (!changed.length) return undefined;
  // A task waiting on another of the same write takes that one's change into its own state.
  const byId = new Map(changed.map((c) => [c.p.next.taskId, c]));
  const ownLinks = new Set<string>();
  for (const { p } of changed) {
    const change = p.before && blockerChangeOf(p.before, p.next);
    if (!change) continue;
    for (const dep of p.before!.blocks ?? []) {
      const d = byId.get(dep);
      if (!d) continue;
      d.p = { ...d.p, next: withBlockerChange(d.p.next, p.next.taskId, change) };
      ownLinks.add(dep);
    }
  }
  const callId = newActivityId(ctx.source.now);
  const inWrite = new Set(byId.keys());
  const parts = changed.map(({ p, comments: keys }, i) => {
    const record = recordFor(ctx, p, { recordId: bulkItemId(callId, i) }, deleting ? keys.length : undefined);
    const expiresAt = deleting ? record.expiresAt : undefined;
    const ops = [
      ...opsOf(ctx, p, { gone: new Set() }, expiresAt, {
        dependents: inWrite,
        ownLinks: ownLinks.has(p.next.taskId),
        // The root of a delete takes every subtask there is: one placed below it meanwhile refuses the write.
        ...(deleting && i === 0 && p.next.taskId === root.taskId ? { tree: root.treeVersion ?? 0 } : {}),
      }),
      ...keys.map((key) => writesOf(stores).comments.expiryOp(key, expiresAt)),
      writesOf(stores).activity.recordOp(record),
    ];
    return { p, record, ops };
  });
  const all = combine(parts.flatMap((x) => x.ops));
  if (all.length > MAX_TRANSACTION_ACTIONS)
    throw treeTooBig(
      nameOf(ctx, root),
      deleting ? 'delete' : 'complete',
      changed.length - 1,
      all.length,
      MAX_TRANSACTION_ACTIONS,
      opts.param ?? 'taskId',
    );
  try {
    await writesOf(stores).commit(all);
  } catch (err) {
    if (err instanceof WriteNotConfirmed) throw notConfirmed(ctx, root);
    throw err;
  }
  return {
    written: parts.map((x) => ({
      before: x.p.before,
      task: x.p.next,
      record: x.record,
      writeUnits: x.ops.reduce((s, op) => s + opWriteUnits(op), 0),
    })),
    callId,
  };
};

// ---- many at once ------------------------------------------------------------------------------

/** One item of a bulk call: what it made or changed, or why not. */
export type ItemOutcome =
  | { readonly ok: true; readonly written: WrittenTask }
  | { readonly ok: true; readonly unchanged: Task }
  | { readonly ok: false; readonly error: Error };

/** A refusal as an item's reason; anything else is the call's failure (a 5xx, no internals). */
const asItemError = (err: unknown, ctx: WriteContext, next?: Task): Error => {
  if (err instanceof ToolRefusal) return err;
  const refused = refusalOfStorage(err);
  if (refused) return refused;
  if (err instanceof WriteNotConfirmed) return next ? notConfirmed(ctx, next) : unconfirmed('task_get shows whether it was written.');
  if (isTransientDynamoError(err)) return unconfirmed('Read it before retrying.');
  throw err;
};

const ceilingRefusal = () => callCeiling('tasks');

/**
 * Changes many tasks, each on its own (all or nothing per task): the writes go in as few
 * transactions as fit, two links to one blocker as one action, and a failed condition refuses only
 * its own task. Entries past the call's write units are refused without being written.
 */
export const changeTasks = async (
  ctx: WriteContext,
  entries: readonly { readonly before: Task; readonly patch: TaskPatch; readonly opts?: ChangeOptions }[],
): Promise<ItemOutcome[]> => {
  const outcomes: ItemOutcome[] = new Array(entries.length);
  const planned: { i: number; p: PlannedTask; record: ActivityRecord; ops: WriteOp[]; heal: Healing; opts: ChangeOptions }[] = [];
  await Promise.all(
    entries.map(async ({ before, patch, opts = {} }, i) => {
      try {
        if (opts.expectVersion !== undefined && opts.expectVersion !== before.version) {
          throw versionConflict(nameOf(ctx, before), before.version, opts.expectVersion, 'task_get', 'version');
        }
        const p = await planChange(ctx, before, patch, opts.plan);
        if (!p) {
          if (opts.watch !== undefined) await writesOf(ctx.stores).commit(watchOps(ctx, before, before, opts.watch));
          outcomes[i] = { ok: true, unchanged: before };
          return;
        }
        const heal: Healing = { gone: new Set() };
        const ops = opsOf(ctx, p, heal, undefined, opts.watch !== undefined ? { watch: opts.watch } : {});
        fitsOneWrite(ops);
        const record = recordFor(ctx, p, opts);
        planned.push({ i, p, record, ops: combine([...ops, ...bookkeeping(ctx, record, opts)]), heal, opts });
      } catch (err) {
        outcomes[i] = { ok: false, error: asItemError(err, ctx) };
      }
    }),
  );
  planned.sort((a, b) => a.i - b.i);
  // The call's write units, in input order: the first entry past them and every one after is not written.
  const within = planned.filter((g) => {
    if (takeWriteUnits(g.ops.reduce((sum, op) => sum + opWriteUnits(op), 0))) return true;
    outcomes[g.i] = { ok: false, error: ceilingRefusal() };
    return false;
  });
  let pending = within;
  for (let round = 1; pending.length && round <= 3; round++) {
    const results = await writesOf(ctx.stores).commitEach(pending.map((g) => g.ops));
    const again: typeof pending = [];
    for (const [j, g] of pending.entries()) {
      const err = results[j];
      if (!err) {
        outcomes[g.i] = {
          ok: true,
          written: {
            before: g.p.before,
            task: g.p.next,
            record: g.record,
            writeUnits: g.ops.reduce((s, op) => s + opWriteUnits(op), 0),
            ...(g.p.fieldsLeft ? { fieldsLeft: g.p.fieldsLeft } : {}),
          },
        };
      } else if (err instanceof DanglingLink && round < 3) {
        g.heal.gone.add(err.taskId);
        again.push({
          ...g,
          ops: combine([
            ...opsOf(ctx, g.p, g.heal, undefined, g.opts.watch !== undefined ? { watch: g.opts.watch } : {}),
            ...bookkeeping(ctx, g.record, g.opts),
          ]),
        });
      } else outcomes[g.i] = { ok: false, error: asItemError(err, ctx, g.p.next) };
    }
    pending = again;
  }
  // Entries whose links moved while the call was planned (another entry of it, or another call, made
  // a link first): planned again one by one, in order, each seeing what the ones before it wrote, so
  // entries that each looked acyclic alone cannot close a cycle together.
  for (const g of within) {
    const o = outcomes[g.i];
    if (!o || o.ok || !(o.error instanceof ToolRefusal) || o.error.reason !== 'links-moved' || !g.p.before) continue;
    try {
      const fresh = await ctx.stores.tasks.getAny(ctx.caller.workspaceId, g.p.before.taskId);
      if (!fresh || fresh.version !== g.p.before.version) continue;
      const entry = entries[g.i]!;
      const written = await changeTask(ctx, fresh, entry.patch, { ...(entry.opts ?? {}), recordId: g.record.activityId });
      outcomes[g.i] = written ? { ok: true, written } : { ok: true, unchanged: fresh };
    } catch (err) {
      outcomes[g.i] = { ok: false, error: asItemError(err, ctx, g.p.next) };
    }
  }
  return outcomes;
};

/** A task a bulk create is to make: its fields, checked, and the item's record id. */
export interface CreateItem {
  readonly fields: NewTask;
  readonly recordId?: string;
  readonly plan?: PlanOptions;
  /** Positions (in this call, from 0) of earlier items whose tasks it links to: if one is not created, neither is this. */
  readonly after?: readonly number[];
  /** Written with the task, all or nothing (an import's claim on its source row: a re-run creates nothing twice). */
  readonly also?: (task: Task) => readonly WriteOp[];
}

/**
 * Creates tasks with consecutive numbers in input order, each all or nothing with its record, its
 * number's claim and its links' other sides, packed into as few transactions as fit (100 actions,
 * 4 MB; the counter moves once per transaction). A link to a task an earlier item of the call
 * creates is part of that task's own write when both land in one transaction. If a transaction fails
 * for something else than the counter (a blocker changed meanwhile), each of its items is tried on
 * its own, so only the one at fault is refused.
 */
export const createTasks = async (ctx: WriteContext, items: readonly CreateItem[]): Promise<ItemOutcome[]> => {
  const outcomes: ItemOutcome[] = new Array(items.length);
  const planned: { i: number; p: PlannedTask; item: CreateItem }[] = [];
  await Promise.all(
    items.map(async (item, i) => {
      try {
        planned.push({ i, p: await planCreate(ctx, item.fields, item.plan), item });
      } catch (err) {
        outcomes[i] = { ok: false, error: asItemError(err, ctx) };
      }
    }),
  );
  planned.sort((a, b) => a.i - b.i);
  const created = new Map<string, number>();
  const failedEarlier = (item: CreateItem) => (item.after ?? []).find((j) => j < 0 || (outcomes[j] !== undefined && !outcomes[j]!.ok));
  let queue = [...planned];
  // A call that needs more than one transaction takes its numbers first, in one update: its
  // transactions then meet no other create on the counter (under contention each would go round).
  // Each item keeps the number it was given whatever happens to its transaction: an item written
  // again on its own claims that number, and one refused leaves it unused, below the counter.
  const reserved = planned.length > 1 && takeChunk(ctx, queue).length < planned.length ? new Map<number, number>() : undefined;
  if (reserved) await reserveNumbers(ctx, planned, reserved);
  while (queue.length) {
    // An item whose linked earlier item was refused is refused too.
    queue = queue.filter((x) => {
      const j = failedEarlier(x.item);
      if (j === undefined) return true;
      outcomes[x.i] = { ok: false, error: waitsOnNotCreated() };
      return false;
    });
    if (!queue.length) break;
    const chunk = takeChunk(ctx, queue);
    if (!chunk.length) break;
    // The call's write units: the first chunk past them and every one after is not written.
    if (!takeWriteUnits(chunk.reduce((sum, x) => sum + estimateCreate(ctx, x.p, x.item), 0))) {
      for (const x of chunk) outcomes[x.i] = { ok: false, error: ceilingRefusal() };
      queue = queue.filter((x) => !chunk.includes(x));
      continue;
    }
    try {
      for (const w of await writeCreates(ctx, chunk, created, reserved)) outcomes[w.i] = { ok: true, written: w.written };
    } catch (err) {
      if (err instanceof UnconfirmedCreates) {
        // What the call would have made: said, not written again (the same call again meets its claim, if it landed).
        for (const w of err.written) outcomes[w.i] = { ok: false, error: notConfirmedCreate(ctx, w.written.task) };
        queue = queue.filter((x) => !chunk.includes(x));
        continue;
      }
      if (chunk.length === 1) outcomes[chunk[0]!.i] = { ok: false, error: asItemError(err, ctx, chunk[0]!.p.next) };
      else {
        // Each on its own, in order: only the one at fault is refused.
        for (const x of chunk) {
          const j = failedEarlier(x.item);
          if (j !== undefined) {
            outcomes[x.i] = { ok: false, error: waitsOnNotCreated() };
            continue;
          }
          try {
            const [w] = await writeCreates(ctx, [x], created, reserved);
            outcomes[x.i] = { ok: true, written: w!.written };
          } catch (e) {
            outcomes[x.i] = { ok: false, error: asItemError(e, ctx, x.p.next) };
          }
        }
      }
    }
    queue = queue.filter((x) => !chunk.includes(x));
  }
  return outcomes;
};

/** Reserves numbers for `items` (consecutive, in their order) and notes each item's. */
const reserveNumbers = async (
  ctx: WriteContext,
  items: readonly { readonly i: number }[],
  reserved: Map<number, number>,
): Promise<void> => {
  const first = await writesOf(ctx.stores).numbers.reserve(ctx.caller.workspaceId, items.length);
  for (const [k, x] of items.entries()) reserved.set(x.i, first + k);
};

/** A create's ops as sized before its number is known: the task's, its record's, and what it writes besides. */
const createOps = (ctx: WriteContext, p: PlannedTask, item?: CreateItem): WriteOp[] => [
  ...opsOf(ctx, p, { gone: new Set() }),
  writesOf(ctx.stores).activity.recordOp(taskRecord(ctx.stores.activity, ctx.source, undefined, p.next)),
  ...(item?.also?.(p.next) ?? []),
];

/** Estimated write units of a create: its ops and its record, as transact.ts counts them. */
const estimateCreate = (ctx: WriteContext, p: PlannedTask, item?: CreateItem): number =>
  createOps(ctx, p, item).reduce((sum, op) => sum + opWriteUnits(op), 0) + 4; // the number's claim and the counter

/** The items of the next transaction: as many as fit in input order (actions and bytes, links to each other combined). */
const takeChunk = <T extends { i: number; p: PlannedTask; item?: CreateItem }>(ctx: WriteContext, queue: readonly T[]): T[] => {
  const chunk: T[] = [];
  let actions = 1; // the counter
  let bytes = 0;
  for (const x of queue) {
    const ops = createOps(ctx, x.p, x.item);
    // The task, its record, its claim, and its blockers' side (where those combine with another item's, counted once more than needed).
    const a = ops.length + 1;
    const b = ops.reduce((sum, op) => sum + opBytes(op), 0) + 128;
    if (chunk.length && (actions + a > MAX_TRANSACTION_ACTIONS || bytes + b > MAX_TRANSACTION_BYTES - 64 * 1024)) break;
    chunk.push(x);
    actions += a;
    bytes += b;
  }
  return chunk;
};

/**
 * One transaction of creates: numbers first … first + k - 1 and every item, or none. Ops on one item
 * (a new task and a later item's link to it; two items' links to one blocker) are combined into one.
 */
const writeCreates = async (
  ctx: WriteContext,
  chunk: readonly { i: number; p: PlannedTask; item: CreateItem }[],
  /** Tasks of this call written already: id → number (this transaction's are added once it is written). */
  created: Map<string, number>,
  /** The numbers the call took up front, by item: the transaction claims them, the counter is not in it. */
  reserved?: Map<number, number>,
) => {
  const { stores, caller } = ctx;
  type Write<T> = (taken: readonly number[], counterAndClaims: (taskIds: readonly string[]) => WriteOp[]) => Promise<T>;
  const allocate = async <T>(write: Write<T>): Promise<T> => {
    if (!reserved) return withNewNumbers(writesOf(stores).numbers, caller, chunk.length, write);
    for (let attempt = 1; ; attempt++) {
      const taken = chunk.map((x) => reserved.get(x.i)!);
      try {
        return await write(taken, (taskIds) => taskIds.map((id, k) => writesOf(stores).numbers.claimOp(caller.workspaceId, taken[k]!, id)));
      } catch (err) {
        // A claim left above the counter by an earlier version: the counter moves past it, and these items take new numbers.
        if (!(err instanceof NumberTaken)) throw err;
        if (attempt >= RESERVED_ATTEMPTS) throw numbersBusy();
        await writesOf(stores).numbers.movePast(caller.workspaceId, err.number);
        await reserveNumbers(ctx, chunk, reserved);
      }
    }
  };
  return allocate(async (taken, counterAndClaims) => {
    // A link to a task the same call creates names its number, known only now (or when its transaction was written).
    const numbers = new Map([...created, ...chunk.map((x, j) => [x.p.next.taskId, taken[j]!] as const)]);
    const numbered = chunk.map((x, j) => {
      const links = x.p.next.blockedBy;
      const blockedBy = links && Object.fromEntries(Object.entries(links).map(([id, n]) => [id, n || (numbers.get(id) ?? 0)]));
      const parent = x.p.next.parentId;
      const parentNumber = parent && x.p.next.parentNumber === undefined ? numbers.get(parent) : undefined;
      const placement = x.p.placement && parentNumber !== undefined ? { ...x.p.placement, parentNumber } : x.p.placement;
      return {
        ...x,
        p: {
          ...x.p,
          next: {
            ...x.p.next,
            number: taken[j]!,
            ...(blockedBy ? { blockedBy } : {}),
            ...(parentNumber !== undefined ? { parentNumber } : {}),
          },
          ...(placement ? { placement } : {}),
        },
      };
    });
    const records = numbered.map((x) => recordFor(ctx, x.p, { ...(x.item.recordId ? { recordId: x.item.recordId } : {}) }));
    // The call's claim, first (a retry of the same call is refused by it before anything else).
    const callId = records[0]!.activityId;
    const claim = ctx.claim?.op(callId);
    const ops = combine([
      ...(claim ? [claim] : []),
      ...counterAndClaims(numbered.map((x) => x.p.next.taskId)),
      ...numbered.flatMap((x, j) => [
        ...opsOf(ctx, x.p, { gone: new Set() }),
        writesOf(stores).activity.recordOp(records[j]!),
        ...(x.item.also?.(x.p.next) ?? []),
      ]),
    ]);
    const written = numbered.map((x, j) => ({
      i: x.i,
      written: {
        before: undefined,
        task: x.p.next,
        record: records[j]!,
        writeUnits: estimateCreate(ctx, x.p, x.item),
      } satisfies WrittenTask,
    }));
    try {
      await writesOf(stores).commit(ops);
    } catch (err) {
      // Not confirmed: the call's claim, where it carried one, says whether it landed.
      if (!(err instanceof WriteNotConfirmed) || !claim || !(await ctx.claim!.confirm(callId))) {
        if (err instanceof WriteNotConfirmed) throw new UnconfirmedCreates(written);
        throw err;
      }
    }
    if (claim) ctx.claim!.landed(callId);
    for (const x of numbered) {
      stores.numbers.remember(x.p.next.workspaceId, x.p.next.number, x.p.next.taskId);
      created.set(x.p.next.taskId, x.p.next.number!);
    }
    return written;
  });
};

/** A transaction of creates DynamoDB did not confirm: what it would have made. */
class UnconfirmedCreates extends Error {
  override name = 'UnconfirmedCreates';
  constructor(readonly written: readonly { readonly i: number; readonly written: WrittenTask }[]) {
    super('a transaction of creates was not confirmed');
  }
}

const notConfirmedCreate = (ctx: WriteContext, task: Task): ToolRefusal =>
  unconfirmed(
    `It would have created ${nameOf(ctx, task)} '${task.title}'; task_get ${nameOf(ctx, task)} shows whether it did.`,
    !!ctx.claim,
  );

/** Ops on one item combined into one action where they can be (transact.ts, WriteOp.merge); the rest stay in order. */
const combine = (ops: readonly WriteOp[]): WriteOp[] => {
  const out: WriteOp[] = [];
  const at = new Map<string, number>();
  for (const op of ops) {
    const key = opKey(op);
    const i = at.get(key);
    if (i === undefined) {
      at.set(key, out.length);
      out.push(op);
      continue;
    }
    const merged = out[i]!.merge?.(op) ?? op.merge?.(out[i]!);
    // Two changes of one item that do not combine: the transaction is tried item by item instead.
    if (!merged) throw race();
    out[i] = merged;
  }
  return out;
};
