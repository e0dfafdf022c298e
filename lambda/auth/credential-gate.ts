import { createHash } from 'node:crypto';
import { DependencyUnavailableError, DoersError, UnauthenticatedError, UserNotAllowedError } from '../errors.js';
import { BoundedMap } from '../platform/bounded-map.js';
import { isTransientDynamoError } from '../platform/dynamodb.js';
import type { KeySource } from '../platform/key-ring.js';
import type { MemberRef, Principal } from '../vocabulary.js';
import { normalizeScopes, type Scope, scopesForRole, workspaceKeyOf } from '../vocabulary.js';
import { type AccessItems, type AccessReader, usedBeforeToday } from './access-reader.js';
import { tokenHashes } from './personal-tokens.js';

/**
 * Who a verified token names. A personal token's record names its member, and the verifier reads
 * record, member and workspace together (`resolved`); a JWT names an e-mail address (`email`).
 */
export type TokenSubject = { readonly kind: 'resolved'; readonly items: AccessItems } | { readonly kind: 'email'; readonly email: string };

/** What a verifier learns from a token before the user's status is checked. */
/**
 * Whether a credential issued at `issuedAtMs` predates its member's `credentialsFrom`. A time known
 * only to the second (`iat`) that falls in the reset's own second counts as before it: it cannot be
 * told apart, and refusing it costs the person only a new sign-in.
 */
export const issuedBefore = (issuedAtMs: number, credentialsFrom: string, wholeSeconds: boolean): boolean => {
  const from = Date.parse(credentialsFrom);
  return wholeSeconds ? issuedAtMs < Math.floor(from / 1000) * 1000 + 1000 : issuedAtMs < from;
};

export interface VerifiedIdentity {
  readonly credential: Principal['credential'];
  readonly scopes: readonly string[];
  readonly subject: TokenSubject;
  /** When the token itself stops being valid (epoch ms): a cached principal never outlives it. */
  readonly validUntilMs?: number;
  /**
   * When the authorization behind it was given (epoch ms): a token's creation, a connected app's
   * consent. One from before its member's `credentialsFrom` is dead (removed and added back, enabled again).
   */
  readonly issuedAtMs?: number;
  /** `issuedAtMs` is a whole second (a JWT's `iat`): it cannot say whether it was before or after a reset in that second. */
  readonly issuedInWholeSeconds?: boolean;
  /** What its owner calls it: a token's label, a connected app's name (records name the client by it when the request does not). */
  readonly label?: string;
  /** The tool groups its grant was given for (`resource` /mcp?tools=…): what a request without tools= lists. */
  readonly toolGroups?: string;
}

/**
 * A kind of bearer token. `accepts` decides by shape alone, so each token goes to exactly one
 * verifier; `verify` throws UnauthenticatedError(invalidToken) or DependencyUnavailableError.
 */
export interface TokenVerifier {
  accepts(token: string): boolean;
  verify(token: string, now: Date): Promise<VerifiedIdentity>;
}

/** Three base64url segments (the last empty for `alg: none`): a JWT, which goes to the JWT verifier. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
export const isJwtShaped = (token: string): boolean => JWT_SHAPE.test(token);

const MAX_EMAIL_LENGTH = 254;

/** Per-instance memories hold at most this many entries each (oldest forgotten first). */
const MEMORY_ENTRIES = 10_000;

/**
 * Every token that is not JWT-shaped: minted ones start with `doers_pat_`, but the local
 * DOERS_DEV_TOKEN may be any string, and an unknown one is refused by the lookup anyway.
 *
 * One round trip: the token's record (under every key of the ring), its member and the workspace
 * in one BatchGetItem. That needs the owner before the record is read, so the instance remembers
 * each token's owner, which never changes; only a token this instance has not seen yet costs a
 * second round trip.
 */
export const personalTokenVerifier = (keys: KeySource, reader: AccessReader): TokenVerifier => {
  const owners = new BoundedMap<string, MemberRef>(MEMORY_ENTRIES);
  return {
    accepts: (token) => !isJwtShaped(token),
    async verify(token, now) {
      const hashes = tokenHashes(await keys(), token);
      const known = owners.get(hashes[0]!);
      let items = await reader.read({ tokenHashes: hashes, ...(known ? { member: known } : {}) });
      const record = items.token;
      if (!record) throw new UnauthenticatedError('The access token is not known', true);
      if (record.revokedAt) throw new UnauthenticatedError('The access token was revoked', true);
      if (record.expiresAt !== undefined && record.expiresAt * 1000 <= now.getTime()) {
        throw new UnauthenticatedError('The access token has expired', true);
      }
      const owner = { workspaceId: record.workspaceId, userId: record.userId };
      if (known?.workspaceId !== owner.workspaceId || known.userId !== owner.userId) {
        owners.set(hashes[0]!, owner);
        items = { token: record, ...(items.tokenKey ? { tokenKey: items.tokenKey } : {}), ...(await reader.read({ member: owner })) };
      }
      if (items.tokenKey && usedBeforeToday(record.lastUsedAt, now)) await reader.markUsed(items.tokenKey, now);
      return {
        credential: 'personal_access_token',
        scopes: record.scopes,
        subject: { kind: 'resolved', items },
        ...(record.expiresAt !== undefined ? { validUntilMs: record.expiresAt * 1000 } : {}),
        issuedAtMs: Date.parse(record.createdAt),
        label: `token ${record.label}`,
      };
    },
  };
};

const BEARER = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i;

export interface CredentialGate {
  authenticate(authorization: string | undefined, now?: Date): Promise<Principal>;
}

export interface CredentialGateOptions {
  /**
   * How long this instance reuses a verified principal (DOERS_AUTH_CACHE_SECONDS). It bounds how
   * long a disable, revocation, scope or role change takes to reach every instance; 0: never.
   */
  readonly cacheSeconds: number;
}

/**
 * The gate every MCP request passes: a bearer token from the Authorization header only, verified
 * by the one verifier that accepts its shape, then the user's and workspace's status, read
 * strongly consistent in the same round trip as the token (personal tokens) or in one round trip
 * after the signature check (JWTs). A verified principal is reused for at most `cacheSeconds`.
 */
export const createCredentialGate = (
  verifiers: readonly TokenVerifier[],
  /** Which member an e-mail address names (a JWT names its user by e-mail); the directory's index. */
  memberOfEmail: (email: string) => Promise<MemberRef | undefined>,
  reader: AccessReader,
  opts: CredentialGateOptions,
): CredentialGate => {
  const cacheMs = opts.cacheSeconds * 1000;
  // Keyed by a digest: the memory holds no bearer token longer than its request.
  const principals = new BoundedMap<string, { readonly principal: Principal; readonly untilMs: number }>(MEMORY_ENTRIES);
  // What an e-mail address's member is never changes while the member exists (removal frees it).
  const emailOwners = new BoundedMap<string, MemberRef>(MEMORY_ENTRIES);

  const itemsOfEmail = async (email: string): Promise<AccessItems> => {
    const address = email.toLowerCase();
    // Longer than any address (RFC 5321: 254), so nobody's; and as a key DynamoDB would refuse it (a 500).
    if (address.length > MAX_EMAIL_LENGTH) return {};
    const known = emailOwners.get(address);
    if (known) {
      const items = await reader.read({ member: known });
      if (items.member?.email.toLowerCase() === address) return items;
      emailOwners.delete(address);
    }
    const ref = await memberOfEmail(address);
    if (!ref) return {};
    emailOwners.set(address, ref);
    return reader.read({ member: ref });
  };

  const itemsOf = (subject: TokenSubject): Promise<AccessItems> | AccessItems =>
    subject.kind === 'resolved' ? subject.items : itemsOfEmail(subject.email);

  return {
    async authenticate(authorization, now = new Date()) {
      if (!authorization) throw new UnauthenticatedError('This endpoint needs a bearer token', false);
      const token = BEARER.exec(authorization)?.[1];
      if (!token) throw new UnauthenticatedError('The Authorization header is not a bearer token', true);
      const cacheKey = cacheMs > 0 ? createHash('sha256').update(token).digest('base64url') : '';
      const cached = cacheMs > 0 ? principals.get(cacheKey) : undefined;
      if (cached && cached.untilMs > now.getTime()) return cached.principal;
      if (cached) principals.delete(cacheKey);
      const verifier = verifiers.find((v) => v.accepts(token));
      if (!verifier) throw new UnauthenticatedError('The access token is not valid', true);

      try {
        const identity = await verifier.verify(token, now);
        const { member, workspace } = await itemsOf(identity.subject);
        // The token is good; its user is not one of ours, or is disabled. 403 without a challenge: with
        // a 401 an OAuth client would drop the token, refresh, be refused again and loop back to sign-in.
        if (!member || !workspace || workspace.status !== 'active' || member.status !== 'active') throw new UserNotAllowedError();
        // A credential from before the member's access started afresh (added back, enabled again) stays dead.
        if (
          member.credentialsFrom &&
          identity.issuedAtMs !== undefined &&
          issuedBefore(identity.issuedAtMs, member.credentialsFrom, identity.issuedInWholeSeconds ?? false)
        ) {
          throw new UnauthenticatedError(
            "The access token was issued before this member's access was reset; sign in again or make a new token",
            true,
          );
        }
        // What the token was given, cut to what the member's role allows now: a demoted admin's old
        // team:admin token acts as the role they have.
        const allowed = scopesForRole(member.role);
        const carried = normalizeScopes(identity.scopes);
        const scopes: Scope[] = carried.filter((s) => allowed.includes(s));
        const above = carried.filter((s) => !allowed.includes(s));
        const principal: Principal = {
          userId: member.userId,
          workspaceId: member.workspaceId,
          workspaceName: workspace.name,
          email: member.email,
          name: member.name,
          role: member.role,
          timeZone: member.timeZone,
          ...(member.notify ? { notify: member.notify } : {}),
          scopes,
          ...(above.length ? { scopesAboveRole: above } : {}),
          credential: identity.credential,
          directoryVersion: workspace.directoryVersion ?? 0,
          scopeKey: scopes.join(' '),
          workspaceKey: workspaceKeyOf(workspace),
          pastKeys: workspace.pastKeys ?? [],
          taskCounter: workspace.taskCounter ?? 0,
          layout: workspace.layout ?? 1,
          ...(workspace.migrating ? { migrating: true } : {}),
          ...(workspace.activityIndexed ? { activityIndexed: true } : {}),
          ...(identity.label ? { credentialLabel: identity.label } : {}),
          ...(identity.toolGroups ? { toolGroups: identity.toolGroups } : {}),
        };
        if (cacheMs > 0)
          principals.set(cacheKey, { principal, untilMs: Math.min(now.getTime() + cacheMs, identity.validUntilMs ?? Infinity) });
        return principal;
      } catch (err) {
        if (err instanceof DoersError) throw err;
        if (isTransientDynamoError(err)) throw new DependencyUnavailableError('dynamodb', 1, err);
        throw err;
      }
    },
  };
};
