import { createHash } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { KeyPurpose, KeyRing } from './key-ring.js';

/**
 * Tokens that travel through a client and must come back unaltered and for the same question: list
 * cursors and the `requestState` of multi round-trip requests. An HS256 JWS (jose) signed with one
 * purpose's key, carrying a payload and a fingerprint of what it is bound to (tool, caller,
 * arguments…). Any key of the ring verifies, so a rotation does not void one made just before it.
 */

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` bind the same; undefined members are left out. */
const stable = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, stable(v)]),
    );
  }
  return value;
};

export const fingerprint = (binding: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(stable(binding)))
    .digest('base64url');

export interface SignedTokenOptions {
  readonly purpose: Extract<KeyPurpose, 'cursor' | 'request-state'>;
  readonly audience: string;
  /** What the token answers for; opening it for anything else fails. */
  readonly binding: unknown;
  /** With a lifetime the token carries iat/exp and is refused after it; without, it does not expire. */
  readonly ttlSeconds?: number;
  readonly now?: Date;
}

export const signBound = async (ring: KeyRing, opts: SignedTokenOptions, payload: unknown): Promise<string> => {
  const jwt = new SignJWT({ p: payload ?? null, b: fingerprint(opts.binding) })
    .setProtectedHeader({ alg: 'HS256' })
    .setAudience(opts.audience);
  if (opts.ttlSeconds !== undefined) {
    const iat = Math.floor((opts.now ?? new Date()).getTime() / 1000);
    jwt.setIssuedAt(iat).setExpirationTime(iat + opts.ttlSeconds);
  }
  return jwt.sign(ring.current[opts.purpose]);
};

/** The payload, or undefined when the token is altered, expired, of another key ring or bound to something else. */
export const openBound = async (ring: KeyRing, opts: SignedTokenOptions, token: string): Promise<{ payload: unknown } | undefined> => {
  const expected = fingerprint(opts.binding);
  for (const keys of ring.all) {
    try {
      const { payload } = await jwtVerify(token, keys[opts.purpose], {
        algorithms: ['HS256'],
        audience: opts.audience,
        ...(opts.now ? { currentDate: opts.now } : {}),
      });
      return payload.b === expected ? { payload: payload.p } : undefined;
    } catch {
      // the previous key of the ring, if any, may have signed it
    }
  }
  return undefined;
};
