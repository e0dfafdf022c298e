import { viewRecord } from '../activity/records.js';
import { requireOwnOrAdmin, requireRole } from '../membership/rules.js';
import type { ActivityRecord } from '../model/activity.js';
import { checkQuery } from '../model/query.js';
import { viewNotYours, viewsFull, viewUnshareNotYours } from '../model/refusals.js';
import { MAX_VIEWS, newViewId, queryOfView, type View, type ViewGroup } from '../model/views.js';
import { writeClaimed } from '../store/confirmed.js';
import type { WriteContext } from '../store/stores.js';
import { writesOf } from '../store/writes.js';

/**
 * The one writer of saved views, for every door (the tools, change_undo, the demo seed). A view is
 * its owner's; sharing one with the workspace takes a member (the tools ask for tasks:write, which a
 * viewer's role does not give, so through them every view is a member's). A view is changed or
 * deleted by its owner, or a shared one by an admin. Each change is one write with its record; a
 * deleted view lives on in its record (undo puts it back under its name, if the name is still free).
 */

export interface ViewFields {
  readonly name: string;
  readonly query: string;
  readonly sort?: string | undefined;
  readonly group: ViewGroup;
  readonly shared: boolean;
}

export interface WrittenView {
  readonly view: View;
  readonly record: ActivityRecord;
}

const check = 'views_list shows whether it was written.';

/** A view's query must read (its names are read when it runs: a member renamed meanwhile is found then). */
// Custom field names are the tool's to check against the workspace's projects (surface/tools/views.ts): here any is read.
const readable = (v: ViewFields): void => void checkQuery(queryOfView(v), 'any');

/**
 * Room for one more view on its side (the member's own, or the shared ones); a refusal names `param`,
 * the argument that adds it. Counted before the write: two calls at once at 49 may both land.
 */
const roomFor = async (ctx: WriteContext, shared: boolean, param: 'name' | 'shared' | 'activityId'): Promise<void> => {
  const seen = await ctx.stores.views.visible(ctx.caller.workspaceId, ctx.caller.userId);
  if (seen.filter((v) => v.shared === shared).length >= MAX_VIEWS) throw viewsFull(MAX_VIEWS, shared, param);
};

export const saveView = async (ctx: WriteContext, fields: ViewFields): Promise<WrittenView> => {
  const { stores, caller, source } = ctx;
  if (fields.shared) requireRole(caller, 'member', 'sharing a view');
  readable(fields);
  await roomFor(ctx, fields.shared, 'name');
  const at = source.now.toISOString();
  const view: View = {
    workspaceId: caller.workspaceId,
    viewId: newViewId(),
    name: fields.name,
    query: fields.query,
    ...(fields.sort ? { sort: fields.sort } : {}),
    group: fields.group,
    shared: fields.shared,
    ownerId: caller.userId,
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  const record = viewRecord(stores.activity, source, 'created', undefined, view);
  const w = writesOf(stores);
  await writeClaimed(ctx, record.activityId, check, (claim) =>
    w.commit([...claim, ...w.views.createOps(view), w.activity.recordOp(record)]),
  );
  return { view, record };
};

/** A private view is its owner's alone; a shared one its owner's (a member) or an admin's. */
const mayChange = (ctx: WriteContext, view: View, action: string): void => {
  if (view.shared) requireOwnOrAdmin(ctx.caller, view.ownerId, action);
  else if (view.ownerId !== ctx.caller.userId) throw viewNotYours(view.name);
};

/** Changes a view; `undoes` when an undo puts back what it was. */
export const changeView = async (ctx: WriteContext, was: View, fields: ViewFields, undoes?: ActivityRecord): Promise<WrittenView> => {
  const { stores, caller, source } = ctx;
  mayChange(ctx, was, 'change views');
  if (fields.shared && !was.shared) requireRole(caller, 'member', 'sharing a view');
  if (was.shared && !fields.shared && was.ownerId !== caller.userId) throw viewUnshareNotYours(was.name);
  readable(fields);
  if (fields.shared !== was.shared) await roomFor(ctx, fields.shared, undoes ? 'activityId' : 'shared');
  const { sort: _sort, ...rest } = was;
  const now: View = {
    ...rest,
    name: fields.name,
    query: fields.query,
    ...(fields.sort ? { sort: fields.sort } : {}),
    group: fields.group,
    shared: fields.shared,
    updatedAt: source.now.toISOString(),
    version: was.version + 1,
  };
  const record = viewRecord(stores.activity, source, 'changed', was, now, undoes ? { undoOf: undoes.activityId } : {});
  const w = writesOf(stores);
  await writeClaimed(ctx, record.activityId, check, (claim) =>
    w.commit([
      ...claim,
      ...w.views.changeOps(was, now),
      w.activity.recordOp(record),
      ...(undoes ? [w.activity.markUndoneOp(undoes, record.activityId, record.at)] : []),
    ]),
  );
  return { view: now, record };
};

export const deleteView = async (ctx: WriteContext, view: View, undoes?: ActivityRecord): Promise<WrittenView> => {
  const { stores, source } = ctx;
  mayChange(ctx, view, 'delete views');
  const record = viewRecord(stores.activity, source, 'deleted', view, view, undoes ? { undoOf: undoes.activityId } : {});
  const w = writesOf(stores);
  await writeClaimed(ctx, record.activityId, check, (claim) =>
    w.commit([
      ...claim,
      w.views.removeOp(view),
      w.activity.recordOp(record),
      ...(undoes ? [w.activity.markUndoneOp(undoes, record.activityId, record.at)] : []),
    ]),
  );
  return { view, record };
};

/** Puts a deleted view back under its name (an undo of its delete): the rights its delete needed. */
export const restoreView = async (ctx: WriteContext, view: View, undoes: ActivityRecord): Promise<WrittenView> => {
  const { stores, source } = ctx;
  mayChange(ctx, view, 'restore views');
  await roomFor(ctx, view.shared, 'activityId');
  const back: View = { ...view, updatedAt: source.now.toISOString(), version: view.version + 1 };
  const record = viewRecord(stores.activity, source, 'restored', view, back, { undoOf: undoes.activityId });
  const w = writesOf(stores);
  await w.commit([...w.views.createOps(back), w.activity.recordOp(record), w.activity.markUndoneOp(undoes, record.activityId, record.at)]);
  return { view: back, record };
};
