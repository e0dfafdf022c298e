import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { importJWK, jwtVerify, SignJWT } from 'jose';
import { keyRingFromSeeds } from '../../lambda/platform/key-ring.js';
import { signingKeysOf } from '../../lambda/platform/signing-keys.js';

describe('the authorization server signing keys derived from the secret seed', () => {
  test('the same seed gives the same ES256 key on every instance; another seed another key', async () => {
    // Arrange + Act
    const [a] = await signingKeysOf(keyRingFromSeeds('seed-one'));
    const [again] = await signingKeysOf(keyRingFromSeeds('seed-one'));
    const [b] = await signingKeysOf(keyRingFromSeeds('seed-two'));
    // Assert
    assert.equal(a!.kid, again!.kid);
    assert.deepEqual(a!.publicJwk, again!.publicJwk);
    assert.notEqual(a!.kid, b!.kid);
    assert.deepEqual({ kty: a!.publicJwk.kty, crv: a!.publicJwk.crv, alg: a!.publicJwk.alg }, { kty: 'EC', crv: 'P-256', alg: 'ES256' });
    assert.equal(a!.publicJwk.d, undefined, 'the public JWK carries no private part');
  });

  test('what the private key signs, the derived public key verifies; after a rotation the previous key still does', async () => {
    // Arrange: a token signed under the old seed, then the secret rotated (old seed now previous).
    const [old] = await signingKeysOf(keyRingFromSeeds('seed-one'));
    const token = await new SignJWT({ sub: 'x' })
      .setProtectedHeader({ alg: 'ES256', kid: old!.kid })
      .sign(await importJWK(old!.privateJwk, 'ES256'));
    const rotated = await signingKeysOf(keyRingFromSeeds('seed-two', 'seed-one'));
    // Act
    const verifyingKey = rotated.find((k) => k.kid === old!.kid)!;
    const { payload } = await jwtVerify(token, verifyingKey.publicKey, { algorithms: ['ES256'] });
    // Assert
    assert.equal(rotated.length, 2);
    assert.notEqual(rotated[0]!.kid, old!.kid, 'the current seed signs');
    assert.equal(payload.sub, 'x');
  });
});
