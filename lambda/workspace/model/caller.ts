import type { Principal } from '../../vocabulary.js';

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
>;

/** The workspace as a read needs it: which layout its tasks and records are in, and whether they are being moved. */
export type WorkspaceRef = Pick<Caller, 'workspaceId' | 'layout' | 'migrating'>;
