import { type Status, WORKSPACE_KEY, type Workspace, workspaceKeyOf } from '../../vocabulary.js';
import { workspaceRecord } from '../activity/records.js';
import type { ChangeSource } from '../model/activity.js';
import { workspaceKeyNotLetters, workspaceKeyUnfit, workspaceNotFound } from '../model/refusals.js';
import { confirmedOr } from '../store/confirmed.js';
import type { WorkspaceStores } from '../store/stores.js';
import { writesOf } from '../store/writes.js';

/**
 * The one writer of the workspace item itself: made (the admin CLI's first user, the local demo,
 * the tests), switched off and on, its task key changed. Only the operator's doors reach it; each
 * change is one write with its record. What a migration sets on it (its layout, the numbers of tasks
 * from before keys) is the migration's own (workspace/admin/).
 */

type Stores = Pick<WorkspaceStores, 'directory' | 'activity'>;

export interface NewWorkspace {
  readonly workspaceId: string;
  readonly name: string;
  /** What its task keys start with; derived from the name when absent. */
  readonly key?: string;
}

/** Makes the workspace, active, unless it exists: false then (nothing written). */
export const createWorkspace = async (stores: Stores, source: ChangeSource, ws: NewWorkspace): Promise<boolean> => {
  if (ws.key !== undefined && !WORKSPACE_KEY.test(ws.key)) throw workspaceKeyUnfit(ws.key);
  const workspace: Workspace = {
    workspaceId: ws.workspaceId,
    name: ws.name,
    ...(ws.key ? { key: ws.key } : {}),
    status: 'active',
    createdAt: source.now.toISOString(),
  };
  const record = workspaceRecord(stores.activity, source, 'created', undefined, workspace);
  return confirmedOr(`The workspace list (npm run admin -- workspace list) shows whether ${ws.workspaceId} was made.`, () =>
    writesOf(stores).directory.createWorkspace(workspace, [writesOf(stores).activity.recordOp(record)]),
  );
};

/** Switches a whole workspace off (every member refused) or on again. */
export const setWorkspaceStatus = async (stores: Stores, source: ChangeSource, workspaceId: string, status: Status): Promise<Workspace> => {
  const before = await stores.directory.getWorkspace(workspaceId);
  if (!before) throw workspaceNotFound(workspaceId);
  const after: Workspace = { ...before, status };
  const record = workspaceRecord(stores.activity, source, status === 'disabled' ? 'disabled' : 'enabled', before, after);
  const written = await writesOf(stores).directory.setWorkspaceStatus(workspaceId, status, [writesOf(stores).activity.recordOp(record)]);
  if (!written) throw workspaceNotFound(workspaceId);
  return after;
};

/** Changes the workspace's task key (DEMO in DEMO-42); the old one keeps naming its tasks. */
export const setWorkspaceKey = async (stores: Stores, source: ChangeSource, workspaceId: string, key: string): Promise<Workspace> => {
  const next = key.toUpperCase();
  if (!WORKSPACE_KEY.test(next)) throw workspaceKeyNotLetters(key);
  const before = await stores.directory.getWorkspace(workspaceId);
  if (!before) throw workspaceNotFound(workspaceId);
  const current = workspaceKeyOf(before);
  const pastKeys = [...new Set([...(before.pastKeys ?? []), current])].filter((k) => k !== next);
  const after: Workspace = { ...before, key: next, pastKeys };
  const record = workspaceRecord(stores.activity, source, 'changed', before, after);
  if (!(await writesOf(stores).directory.setWorkspaceKey(workspaceId, next, pastKeys, [writesOf(stores).activity.recordOp(record)])))
    throw workspaceNotFound(workspaceId);
  return after;
};
