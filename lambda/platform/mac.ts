import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KeyPurpose, KeyRing } from './key-ring.js';

/** HMAC-SHA256 of `value`, base64url: the form's CSRF tokens and the signed cookies are these. */
export const mac = (key: Uint8Array, value: string): string => createHmac('sha256', key).update(value).digest('base64url');

/**
 * Whether `token` is the MAC of `value` under the purpose's key of any seed in the ring (so a
 * rotation does not void a form or cookie made just before it), compared in constant time.
 */
export const macValid = (ring: KeyRing, purpose: KeyPurpose, value: string, token: string | null | undefined): boolean => {
  if (typeof token !== 'string') return false;
  const given = Buffer.from(token);
  return ring.all.some((keys) => {
    const expected = Buffer.from(mac(keys[purpose], value));
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
};
