import type { Scope } from './scopes.js';

export type Role = 'owner' | 'admin' | 'member' | 'viewer';

/** Who is calling, resolved once per request by the credential gate. */
export interface Principal {
  readonly userId: string;
  readonly workspaceId: string;
  readonly workspaceName: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly timeZone: string;
  readonly scopes: readonly Scope[];
  readonly credential: 'personal_access_token' | 'jwt' | 'oauth';
  /**
   * The workspace's directory version as read with this principal: a per-instance snapshot of
   * members and projects at least this new needs no read (workspace/names.ts).
   */
  readonly directoryVersion: number;
  /** Stable per-scope-set key: tool lists are cached by it. */
  readonly scopeKey: string;
}
