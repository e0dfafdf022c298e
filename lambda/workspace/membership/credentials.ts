import type { GrantRecord } from '../../auth/grants.js';
import { generateTokenSecret, newTokenId, type PersonalTokenRecord } from '../../auth/personal-tokens.js';
import { type Member, type Scope, scopesForRole } from '../../vocabulary.js';
import { grantRevokedRecord, tokenRecord } from '../activity/records.js';
import type { ActivityRecord, ChangeSource } from '../model/activity.js';
import { memberInactive, notFoundCredential, roleTooLow, scopesAboveRole } from '../model/refusals.js';
import { confirmedOr } from '../store/confirmed.js';
import type { WorkspaceStores } from '../store/stores.js';
import { writesOf } from '../store/writes.js';
import { type Actor, checkCredentialRevoke, mayChangeMember } from './rules.js';

/**
 * The one writer of a person's credentials: personal access tokens and connected apps (the
 * built-in authorization server's grants). Every door revokes through it (a tool's undo, the
 * account page, the admin CLI, a member's removal or disabling), each revocation with its record,
 * under one rule: a credential is revoked by its owner, or by an admin who may change that member.
 * A revoked credential stays revoked; making a new one is the way back.
 */

export interface NewToken {
  readonly label: string;
  readonly scopes: readonly Scope[];
  /** Epoch seconds; never, when absent. */
  readonly expiresAt?: number | undefined;
  /** A secret the door chose (the local server's dev token, kept across restarts); else a new one. */
  readonly secret?: string;
}

export interface MintedToken {
  readonly token: PersonalTokenRecord;
  /** Shown once, stored nowhere (only its keyed hash is). */
  readonly secret: string;
}

/**
 * Mints a personal access token of `member`: by the member (the account page) or by an operator or
 * an admin who may change them (the admin CLI, the local server). A token carries only scopes the
 * member's role can use: one above it is refused here, naming the role and what it allows, rather
 * than minted to be cut at every call (a viewer's tasks:write would open nothing yet read as if it
 * did). Written with its record.
 */
export const mintToken = async (
  stores: Pick<WorkspaceStores, 'tokens' | 'activity'>,
  actor: Actor,
  source: ChangeSource,
  member: Member,
  t: NewToken,
): Promise<MintedToken> => {
  if (actor.userId !== member.userId && !mayChangeMember(actor, member))
    throw roleTooLow('making a token for someone else', 'admin', actor.role);
  if (member.status !== 'active') throw memberInactive(member.email);
  const allowed = scopesForRole(member.role);
  const above = t.scopes.filter((s) => !allowed.includes(s));
  if (above.length) throw scopesAboveRole(member.role, above, allowed);
  const secret = t.secret ?? generateTokenSecret();
  const token: PersonalTokenRecord = {
    tokenId: newTokenId(),
    workspaceId: member.workspaceId,
    userId: member.userId,
    scopes: [...new Set(t.scopes)],
    label: t.label,
    createdAt: source.now.toISOString(),
    ...(t.expiresAt === undefined ? {} : { expiresAt: t.expiresAt }),
  };
  const record = tokenRecord(stores.activity, source, 'created', token);
  const made = await confirmedOr(`the account page (or token list) shows whether token ${t.label} was made.`, () =>
    writesOf(stores).tokens.register(secret, token, [writesOf(stores).activity.recordOp(record)]),
  );
  return { token: made, secret };
};

export interface Revoked {
  /** The revocation's record; undefined when it was revoked already (by someone else meanwhile). */
  readonly record?: ActivityRecord;
}

/**
 * Revokes a token of the workspace. `owner` is its member as now (undefined: no longer one).
 * `undoes`: the token's creation this revocation undoes, marked undone in the same write.
 */
export const revokeToken = async (
  stores: Pick<WorkspaceStores, 'tokens' | 'activity'>,
  actor: Actor,
  source: ChangeSource,
  token: PersonalTokenRecord,
  owner: Pick<Member, 'role' | 'userId'> | undefined,
  opts: { readonly undoes?: ActivityRecord } = {},
): Promise<Revoked> => {
  checkCredentialRevoke(actor, owner, `token ${token.label}`);
  const writes = writesOf(stores);
  const record = tokenRecord(stores.activity, source, 'revoked', token, opts.undoes ? { undoOf: opts.undoes.activityId } : {});
  const written = await confirmedOr(`the account page (or token list) shows whether token ${token.label} is revoked.`, () =>
    writes.tokens.revoke(token.workspaceId, token.tokenId, source.now.toISOString(), [
      writes.activity.recordOp(record),
      ...(opts.undoes ? [writes.activity.markUndoneOp(opts.undoes, record.activityId, record.at)] : []),
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
    writesOf(stores).grants.revoke(grant.grantId, [writesOf(stores).activity.recordOp(record)]),
  );
  return written ? { record } : {};
};

/**
 * Deletes a grant that no member's record names any more (its account gone before grants were
 * revoked with it): nothing of it may stay usable, and there is no workspace to record it in.
 * False when there was none.
 */
export const revokeOrphanGrant = (stores: Pick<WorkspaceStores, 'grants'>, grantId: string): Promise<boolean> =>
  writesOf(stores).grants.revoke(grantId);

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
