import { createECDH, createPublicKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { KeyRing } from './key-ring.js';

/**
 * The built-in authorization server's token-signing keys, derived from the same secret seed as every
 * other key (no second secret to generate, store or rotate). A P-256 private key is just a 32-byte
 * scalar, so HKDF output is one; the authorization server signs with the current seed's key and both
 * functions accept the previous seed's key too, so a rotation does not end anyone's session.
 */
export interface SigningKey {
  readonly kid: string;
  /** Private JWK (the authorization server's signing key). */
  readonly privateJwk: JWK;
  readonly publicJwk: JWK;
  readonly publicKey: KeyObject;
}

const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

const signingKeyOf = async (scalar: Uint8Array): Promise<SigningKey> => {
  const d = BigInt(`0x${Buffer.from(scalar).toString('hex')}`);
  // Probability ~2^-32; a seed that lands here must be replaced rather than used with a biased key.
  if (d === 0n || d >= P256_ORDER) throw new Error('The secret seed does not give a valid P-256 key; rotate the secret');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(scalar);
  const point = ecdh.getPublicKey();
  const publicJwk: JWK = {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33).toString('base64url'),
  };
  const kid = await calculateJwkThumbprint(publicJwk);
  const meta = { kid, alg: 'ES256', use: 'sig' };
  return {
    kid,
    privateJwk: { ...publicJwk, d: Buffer.from(scalar).toString('base64url'), ...meta },
    publicJwk: { ...publicJwk, ...meta },
    publicKey: createPublicKey({ key: publicJwk as import('node:crypto').JsonWebKey, format: 'jwk' }),
  };
};

const cache = new WeakMap<KeyRing, Promise<readonly SigningKey[]>>();

/** The ring's signing keys, current first; computed once per ring. */
export const signingKeysOf = (ring: KeyRing): Promise<readonly SigningKey[]> => {
  let keys = cache.get(ring);
  if (!keys) {
    keys = Promise.all(ring.all.map((k) => signingKeyOf(k['oauth-signing'])));
    cache.set(ring, keys);
  }
  return keys;
};
