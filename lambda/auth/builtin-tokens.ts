import { errors, type JWTPayload, jwtVerify } from 'jose';
import { UnauthenticatedError } from '../errors.js';
import { grantKey } from '../platform/item-keys.js';
import type { KeySource } from '../platform/key-ring.js';
import { signingKeysOf } from '../platform/signing-keys.js';
import { memberRefOfAccountId } from '../vocabulary.js';
import { type AccessReader, usedBeforeToday } from './access-reader.js';
import { isJwtShaped, type TokenVerifier } from './credential-gate.js';
import { CLOCK_TOLERANCE_SECONDS, scopesOfClaims } from './jwt.js';

/**
 * Access tokens of doers' own authorization server (lambda/oauth/): ES256 JWTs signed with a key
 * derived from the secret seed this function already holds, so the signature is checked without a
 * network fetch. The grant they were issued under is read in the same BatchGetItem as the member
 * and workspace: a revoked grant (from the account page, the admin CLI, or a refresh token replay)
 * stops its access tokens on the next call, within the principal cache's bound.
 */
/** How a connected app is named without reading its registration: a metadata document's host, else its client id. */
export const appLabel = (clientId: string): string => (/^https:\/\//.test(clientId) ? (URL.parse(clientId)?.host ?? clientId) : clientId);

export const builtinTokenVerifier = (keys: KeySource, reader: AccessReader, publicUrl: string): TokenVerifier => ({
  accepts: isJwtShaped,
  async verify(token, now) {
    const signing = await signingKeysOf(await keys());
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(
        token,
        async (header) => {
          const key = signing.find((k) => k.kid === header.kid);
          if (!key) throw new errors.JWKSNoMatchingKey();
          return key.publicKey;
        },
        {
          issuer: publicUrl,
          audience: `${publicUrl}/mcp`,
          algorithms: ['ES256'],
          // RFC 9068: an ID token or any other JWT of ours never passes as an access token.
          typ: 'at+jwt',
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: now,
          requiredClaims: ['exp', 'sub', 'gid'],
        },
      ));
    } catch (err) {
      throw new UnauthenticatedError(err instanceof errors.JWTExpired ? 'The token has expired' : 'The token is not valid', true);
    }
    const ref = typeof payload.sub === 'string' ? memberRefOfAccountId(payload.sub) : undefined;
    if (!ref || typeof payload.gid !== 'string') throw new UnauthenticatedError('The token is not valid', true);
    const items = await reader.read({
      member: ref,
      grantId: payload.gid,
      ...(typeof payload.client_id === 'string' ? { clientId: payload.client_id } : {}),
    });
    const grant = items.grant;
    if (
      !grant ||
      grant.accountId !== payload.sub ||
      grant.clientId !== payload.client_id ||
      (grant.expiresAt !== undefined && grant.expiresAt * 1000 <= now.getTime())
    ) {
      throw new UnauthenticatedError('The authorization this token was issued under was revoked', true);
    }
    if (usedBeforeToday(grant.lastUsedAt, now)) await reader.markUsed(grantKey(payload.gid), now);
    return {
      credential: 'oauth',
      scopes: scopesOfClaims(payload),
      subject: { kind: 'resolved', items },
      validUntilMs: payload.exp! * 1000,
      ...(grant.issuedAt !== undefined ? { issuedAtMs: grant.issuedAt * 1000, issuedInWholeSeconds: true } : {}),
      label: items.clientName ?? appLabel(grant.clientId),
      ...(typeof payload.tools === 'string' ? { toolGroups: payload.tools } : {}),
    };
  },
});
