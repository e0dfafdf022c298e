import type { GrantRecord } from '../../auth/grants.js';
import type { PersonalTokenRecord } from '../../auth/personal-tokens.js';
import type { WriteOp } from '../../platform/transact.js';
import type { Member } from '../../vocabulary.js';
import { grantRevokedRecord, tokenRecord } from '../activity/records.js';
import type { ActivityRecord, ChangeSource } from '../model/activity.js';
import { notFoundCredential } from '../model/refusals.js';
import { confirmedOr } from '../store/confirmed.js';
import type { WorkspaceStores } from '../store/stores.js';
import { type Actor, checkCredentialRevoke } from './rules.js';

/**
 * The one writer of a person's credentials: personal access tokens and connected apps (the
 * built-in authorization server's grants). Every door revokes through it (a tool's undo, the
 * account page, the admin CLI, a member's removal or disabling), each revocation with its record,
 * under one rule: a credential is revoked by its owner, or by an admin who may change that member.
 * A revoked credential stays revoked; making a new one is the way back.
 */

export interface Revoked {
  /** The revocation's record; undefined when it was revoked already (by someone else meanwhile). */
  readonly record?: ActivityRecord;
}

/**
 * Revokes a token of the workspace. `owner` is its member as now (undefined: no longer one).
 * `extra(record)` rides in the revocation's own write (an undo's mark on the change it undoes).
 */
export const revokeToken = async (
  stores: Pick<WorkspaceStores, 'tokens' | 'activity'>,
  actor: Actor,
  source: ChangeSource,
  token: PersonalTokenRecord,
  owner: Pick<Member, 'role' | 'userId'> | undefined,
  opts: { readonly undoOf?: string; readonly extra?: (record: ActivityRecord) => readonly WriteOp[] } = {},
): Promise<Revoked> => {
  checkCredentialRevoke(actor, owner, `token ${token.label}`);
  const record = tokenRecord(stores.activity, source, 'revoked', token, opts.undoOf ? { undoOf: opts.undoOf } : {});
  const written = await confirmedOr(`the account page (or token list) shows whether token ${token.label} is revoked.`, () =>
    stores.tokens.revoke(token.workspaceId, token.tokenId, source.now.toISOString(), [
      stores.activity.recordOp(record),
      ...(opts.extra?.(record) ?? []),
    ]),
  );
  if (written === 'missing') throw notFoundCredential(`token ${token.tokenId}`);
  return written === 'revoked' ? { record } : {};
};

/** Disconnects a connected app; `appName` is how the person knows it. */
export const revokeGrant = async (
  stores: Pick<WorkspaceStores, 'grants' | 'activity'>,
  actor: Actor,
  source: ChangeSource,
  grant: GrantRecord,
  appName: string,
  owner: Pick<Member, 'role' | 'userId'> | undefined,
): Promise<Revoked> => {
  checkCredentialRevoke(actor, owner, `connected app ${appName}`);
  const record = grantRevokedRecord(stores.activity, source, grant, appName);
  const written = await confirmedOr(`the account page shows whether ${appName} is disconnected.`, () =>
    stores.grants.revoke(grant.grantId, [stores.activity.recordOp(record)]),
  );
  return written ? { record } : {};
};

/**
 * Every way in a member has, revoked: their tokens and their connected apps, each with its record.
 * Run after the member's removal or disabling (whose own write already stops them at the gate:
 * `credentialsFrom` and the member's status are what every request checks); this makes the lists
 * say so too. Returns how many of each were live.
 */
export const revokeAllOf = async (
  stores: Pick<WorkspaceStores, 'tokens' | 'grants' | 'activity'>,
  actor: Actor,
  source: ChangeSource,
  member: Pick<Member, 'workspaceId' | 'userId' | 'role'>,
): Promise<{ readonly tokens: number; readonly apps: number }> => {
  const [tokens, grants] = await Promise.all([
    stores.tokens.list(member.workspaceId),
    stores.grants.list(member.workspaceId, member.userId),
  ]);
  const live = tokens.filter((t) => t.userId === member.userId && !t.revokedAt);
  const results = await Promise.all([
    ...live.map((t) => revokeToken(stores, actor, source, t, member)),
    ...grants.map((g) => revokeGrant(stores, actor, source, g, g.clientId, member)),
  ]);
  return {
    tokens: results.slice(0, live.length).filter((r) => r.record).length,
    apps: results.slice(live.length).filter((r) => r.record).length,
  };
};
