import {
  DependencyUnavailableError,
  DoersError,
  UnauthenticatedError,
  UserNotAllowedError,
} from '../errors.js';
import { isTransientDynamoError } from '../platform/dynamodb.js';
import type { DirectoryStore } from '../workspace/directory-store.js';
import type { Principal } from './principal.js';
import type { TokenStore } from './personal-tokens.js';
import { normalizeScopes, type Scope } from './scopes.js';

/** What a verifier learns from a token before the user's status is checked. */
export interface VerifiedIdentity {
  readonly credential: Principal['credential'];
  readonly scopes: readonly string[];
  /** Either a member reference (personal tokens) or an e-mail-like claim (JWTs). */
  readonly member: { readonly workspaceId: string; readonly userId: string } | { readonly email: string };
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

/**
 * Every token that is not JWT-shaped: minted ones start with `doers_pat_`, but the local
 * DOERS_DEV_TOKEN may be any string, and an unknown one is refused by the lookup anyway.
 */
export const personalTokenVerifier = (tokens: TokenStore): TokenVerifier => ({
  accepts: (token) => !isJwtShaped(token),
  async verify(token, now) {
    const record = await tokens.find(token);
    if (!record) throw new UnauthenticatedError('The access token is not known', true);
    if (record.revokedAt) throw new UnauthenticatedError('The access token was revoked', true);
    if (record.expiresAt !== undefined && record.expiresAt * 1000 <= now.getTime()) {
      throw new UnauthenticatedError('The access token has expired', true);
    }
    return { credential: 'personal_access_token', scopes: record.scopes, member: { workspaceId: record.workspaceId, userId: record.userId } };
  },
});

const BEARER = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i;

export interface CredentialGate {
  authenticate(authorization: string | undefined, now?: Date): Promise<Principal>;
}

/**
 * The gate every MCP request passes: a bearer token from the Authorization header only, verified
 * by the one verifier that accepts its shape, then the user's and workspace's status, read fresh on
 * every request so a disabled user is refused from the next request on.
 */
export const createCredentialGate = (verifiers: readonly TokenVerifier[], directory: DirectoryStore): CredentialGate => ({
  async authenticate(authorization, now = new Date()) {
    if (!authorization) throw new UnauthenticatedError('This endpoint needs a bearer token', false);
    const token = BEARER.exec(authorization)?.[1];
    if (!token) throw new UnauthenticatedError('The Authorization header is not a bearer token', true);
    const verifier = verifiers.find((v) => v.accepts(token));
    if (!verifier) throw new UnauthenticatedError('The access token is not valid', true);

    try {
      const identity = await verifier.verify(token, now);
      // A personal token names its member; a JWT's e-mail is resolved to one first. Member and
      // workspace are then read together: one round trip for both.
      const ref = 'email' in identity.member ? await directory.findMemberRefByEmail(identity.member.email) : identity.member;
      if (!ref) throw new UnauthenticatedError('The token names no user of this workspace', true);
      const [member, workspace] = await Promise.all([directory.getMember(ref.workspaceId, ref.userId), directory.getWorkspace(ref.workspaceId)]);
      if (!member) throw new UnauthenticatedError('The token names no user of this workspace', true);
      if (!workspace || workspace.status !== 'active' || member.status !== 'active') throw new UserNotAllowedError();
      const scopes: Scope[] = normalizeScopes(identity.scopes);
      return {
        userId: member.userId,
        workspaceId: member.workspaceId,
        workspaceName: workspace.name,
        email: member.email,
        name: member.name,
        role: member.role,
        timeZone: member.timeZone,
        scopes,
        credential: identity.credential,
        scopeKey: scopes.join(' '),
      };
    } catch (err) {
      if (err instanceof DoersError) throw err;
      if (isTransientDynamoError(err)) throw new DependencyUnavailableError('dynamodb', 1, err);
      throw err;
    }
  },
});
