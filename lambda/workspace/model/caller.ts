import { type Principal, type Workspace, workspaceKeyOf } from '../../vocabulary.js';

/**
 * Who changes or reads the workspace, as the domain needs them: the member (their role now, as
 * read with the credential, or the operator's) and what the workspace was read as. A principal is
 * one; the admin CLI makes one for the operator.
 */
export type Caller = Pick<
  Principal,
  | 'workspaceId'
  | 'workspaceKey'
  | 'pastKeys'
  | 'taskCounter'
  | 'directoryVersion'
  | 'userId'
  | 'name'
  | 'role'
  | 'timeZone'
  | 'layout'
  | 'migrating'
  | 'activityIndexed'
>;

/** The workspace as a read needs it: which layout its tasks and records are in, and whether they are being moved. */
export type WorkspaceRef = Pick<Caller, 'workspaceId' | 'layout' | 'migrating' | 'activityIndexed'>;

/**
 * The caller a door other than a tool call acts as (the local server's demo seed, the admin CLI's
 * import, a test's fixture): a member, or the operator, of the workspace as read.
 */
export const callerOf = (
  workspace: Workspace,
  who: Pick<Principal, 'userId' | 'name' | 'role'> & { readonly timeZone?: string | undefined },
): Caller => ({
  workspaceId: workspace.workspaceId,
  workspaceKey: workspaceKeyOf(workspace),
  pastKeys: workspace.pastKeys ?? [],
  taskCounter: workspace.taskCounter ?? 0,
  directoryVersion: workspace.directoryVersion ?? 0,
  userId: who.userId,
  name: who.name,
  role: who.role,
  timeZone: who.timeZone ?? 'UTC',
  layout: workspace.layout ?? 1,
  ...(workspace.migrating ? { migrating: true } : {}),
  ...(workspace.activityIndexed ? { activityIndexed: true } : {}),
});
