import { ToolRefusal } from '../../errors.js';
import { settleWriteUnits, takeWriteUnits } from '../../platform/call-budget.js';
import { itemSize, writeUnitsOf } from '../../platform/item-size.js';
import type { ActivityRecord } from '../model/activity.js';
import { alreadyUndone, callCeiling, changeExpired } from '../model/refusals.js';
import { type UndoContext, undoChange } from './undo.js';

/** One change of a bulk call, undone or not and why. */
export interface CallItemUndo {
  readonly activityId: string;
  readonly undid: boolean;
  readonly undoId?: string;
  readonly reason?: string;
}

export interface CallUndo {
  readonly items: readonly CallItemUndo[];
  /** The call's write units ran out: the changes left are undone by another call of the same id. */
  readonly cut: boolean;
}

/**
 * What undoing a record is estimated to write before it is tried: its target, the undo's record and
 * the mark, each about the record's size. After it, what the writer counted replaces the estimate.
 */
const undoUnits = (r: ActivityRecord): number => 2 * (3 * writeUnitsOf(itemSize(r as unknown as Record<string, unknown>)) + 1);

/**
 * Undoes the changes of one bulk call that still can, each on its own through its kind's writer
 * (undo.ts), last change first as a stack unwinds (a subtask made after its parent goes before it),
 * but a call that deleted is restored in its own order (a parent before its subtasks). Within what
 * one call may write (platform/call-budget.ts): the first change past it, and every one after, is
 * left for the next call. Each item says what happened to it, by id, in id order.
 */
export const undoCallItems = async (ctx: UndoContext, items: readonly ActivityRecord[], retentionDays: number): Promise<CallUndo> => {
  const nowSeconds = Math.floor(ctx.source.now.getTime() / 1000);
  const results: CallItemUndo[] = [];
  let cut = false;
  const order = items.every((r) => r.action === 'deleted') ? items : [...items].reverse();
  for (const r of order) {
    if (r.undoneBy) {
      results.push({ activityId: r.activityId, undid: false, reason: alreadyUndone(r.activityId, r.undoneBy).message });
      continue;
    }
    if (r.expiresAt <= nowSeconds) {
      results.push({ activityId: r.activityId, undid: false, reason: changeExpired(r.activityId, retentionDays).message });
      continue;
    }
    const units = undoUnits(r);
    if (!takeWriteUnits(units)) {
      cut = true;
      results.push({ activityId: r.activityId, undid: false, reason: callCeiling('activityId').message });
      continue;
    }
    try {
      const { undo, writeUnits } = await undoChange(ctx, r);
      settleWriteUnits(units, writeUnits ?? units);
      results.push({ activityId: r.activityId, undid: true, undoId: undo.activityId });
    } catch (err) {
      if (!(err instanceof ToolRefusal)) throw err;
      results.push({ activityId: r.activityId, undid: false, reason: err.message });
    }
  }
  results.sort((a, b) => (a.activityId < b.activityId ? -1 : 1));
  return { items: results, cut };
};
