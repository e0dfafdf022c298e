import type { Logger } from '@aws-lambda-powertools/logger';
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { DependencyUnavailableError, UnauthenticatedError } from '../errors.js';
import type { JwtConfig } from '../platform/config.js';
import { isScope, type Scope } from '../vocabulary.js';
import { isJwtShaped, type TokenVerifier, type VerifiedIdentity } from './credential-gate.js';

/** Asymmetric signatures only: `none` and HMAC (whose key would be the public key) never verify. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

/** Seconds of clock skew tolerated on `exp` and `nbf` between us and the authorization server. */
export const CLOCK_TOLERANCE_SECONDS = 30;

/** Retry-After (seconds) when the key set cannot be loaded. */
const JWKS_RETRY_AFTER_SECONDS = 5;

export interface JwtVerifierOptions {
  /** How long one JWKS fetch may take; short, so a dead authorization server costs a 503, not the function timeout. */
  readonly timeoutMs?: number;
  /**
   * After a fetch, a token with an unknown `kid` triggers no new fetch for this long: a flood of
   * made-up key ids cannot turn into a flood of requests to the authorization server.
   */
  readonly cooldownMs?: number;
  /** Keys are re-fetched after this long even when every `kid` is known (rotation, revoked keys). */
  readonly cacheMaxAgeMs?: number;
}

export const JWT_VERIFIER_DEFAULTS = { timeoutMs: 2_000, cooldownMs: 10_000, cacheMaxAgeMs: 600_000 } as const;

/**
 * Scopes from `scope` (space-separated, RFC 8693 / RFC 9068) or `scp` (array, or a string at some
 * servers). A scope counts when it is one of ours exactly, or exactly one of ours behind the
 * configured prefix (`DOERS_JWT_SCOPE_PREFIX`; Cognito names custom scopes
 * `<resource server id>/tasks:read`). Another resource server's `…/tasks:write` opens nothing here.
 */
export const scopesOfClaims = (payload: JWTPayload, prefix = ''): Scope[] => {
  const raw = [payload.scope, payload.scp].flatMap((v) =>
    typeof v === 'string' ? v.split(/\s+/) : Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [],
  );
  const out = new Set<Scope>();
  for (const value of raw) {
    const name = prefix && value.startsWith(prefix) ? value.slice(prefix.length) : value;
    if (isScope(name)) out.add(name);
  }
  return [...out];
};

/**
 * The audience check. `aud` naming the configured audience passes; so does a Cognito access token,
 * which names its app client in `client_id` (and has no `aud`, or the resource URL as `aud` when the
 * client sent a `resource` parameter).
 */
const audienceMatches = (payload: JWTPayload, audience: string): boolean => {
  const aud = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
  if (aud.includes(audience)) return true;
  return payload.token_use === 'access' && payload.client_id === audience;
};

const invalid = (message: string): UnauthenticatedError => new UnauthenticatedError(message, true);

/** A JOSE failure that is the token's fault (as opposed to the key set's) becomes 401 invalid_token. */
const describeTokenError = (err: unknown): string | undefined => {
  if (err instanceof errors.JWTExpired) return 'The token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return 'The token is not valid yet';
    if (err.claim === 'iss') return 'The token was issued by another authorization server';
    return err.reason === 'missing' ? `The token lacks the ${err.claim} claim` : `The token's ${err.claim} claim is not acceptable`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
    return 'The token is not signed with an accepted algorithm';
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return 'The token is signed with a key the authorization server does not publish';
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'The token signature is not valid';
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'The token is malformed';
  return undefined;
};

/**
 * JWTs from the configured external authorization server, verified with jose against its JWKS.
 * Built once per cold start: the key set and its cache live as long as the instance.
 */
export const createJwtVerifier = (jwt: JwtConfig, logger: Logger, opts: JwtVerifierOptions = {}): TokenVerifier => {
  const o = { ...JWT_VERIFIER_DEFAULTS, ...opts };
  const jwks = createRemoteJWKSet(new URL(jwt.jwksUri), {
    timeoutDuration: o.timeoutMs,
    cooldownDuration: o.cooldownMs,
    cacheMaxAge: o.cacheMaxAgeMs,
  });

  // Anything but "this key id is unknown" while loading keys means the key set cannot be read now:
  // the token is not at fault, so the caller gets 503 rather than a 401 that makes it drop the token.
  const keyFor: JWTVerifyGetKey = async (header, token) => {
    try {
      return await jwks(header, token);
    } catch (err) {
      if (describeTokenError(err) !== undefined) throw err;
      logger.warn('The authorization server key set could not be loaded; answering 503', {
        jwksUri: jwt.jwksUri,
        error:
          err instanceof Error ? `${err.name}: ${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ''}` : String(err),
      });
      throw new DependencyUnavailableError('jwks', JWKS_RETRY_AFTER_SECONDS, err);
    }
  };

  return {
    accepts: isJwtShaped,
    async verify(token, now): Promise<VerifiedIdentity> {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keyFor, {
          issuer: jwt.issuer,
          algorithms: [...JWT_ALGORITHMS],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: now,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        if (err instanceof DependencyUnavailableError) throw err;
        throw invalid(describeTokenError(err) ?? 'The token is not valid');
      }

      if (!audienceMatches(payload, jwt.audience)) {
        throw invalid('The token was issued for another audience');
      }
      // An ID token proves a sign-in to a client; it is not an access token for this resource.
      if (payload.token_use === 'id' || payload.typ === 'ID') throw invalid('An ID token is not an access token');

      const user = payload[jwt.userClaim];
      if (typeof user !== 'string' || user.trim() === '') throw invalid(`The token has no ${jwt.userClaim} claim naming a user`);
      // An address the authorization server says it has not verified could be anyone's.
      if (jwt.userClaim === 'email' && payload.email_verified === false) throw invalid("The token's e-mail address is not verified");

      return {
        credential: 'jwt',
        scopes: scopesOfClaims(payload, jwt.scopePrefix),
        subject: { kind: 'email', email: user.trim() },
        // exp is required above; the clock tolerance is not extended to a cached principal.
        validUntilMs: payload.exp! * 1000,
        ...(typeof payload.iat === 'number' ? { issuedAtMs: payload.iat * 1000, issuedInWholeSeconds: true } : {}),
        ...(typeof payload.client_id === 'string' ? { label: payload.client_id } : {}),
      };
    },
  };
};
