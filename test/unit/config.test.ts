import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../lambda/platform/config.js';

describe('configuration contract', () => {
  test('defaults match the contract', () => {
    const c = loadConfig({});
    assert.equal(c.port, 8787);
    assert.equal(c.dataDir, '.data');
    assert.equal(c.publicUrl, 'http://127.0.0.1:8787');
    assert.deepEqual(c.rateLimit, { calls: 120, windowSeconds: 60 });
    assert.equal(c.maxConcurrentCalls, 4);
    assert.equal(c.jwt, undefined);
    assert.ok(c.allowedOrigins.has('https://claude.ai'));
    assert.equal(c.localLog, 'calls');
  });

  for (const [name, value, pattern] of [
    ['DOERS_RATE_LIMIT_CALLS', 'many', /DOERS_RATE_LIMIT_CALLS: must be a whole number/],
    ['DOERS_PUBLIC_URL', 'not a url', /DOERS_PUBLIC_URL/],
    ['DOERS_ALLOWED_ORIGINS', 'https://a.example/path', /DOERS_ALLOWED_ORIGINS/],
    ['DOERS_DEV_TOKEN', 'short', /DOERS_DEV_TOKEN: must be at least 16 characters/],
    ['DOERS_LOCAL_LOG', 'verbose', /DOERS_LOCAL_LOG: must be calls or json/],
  ] as const) {
    test(`a bad ${name} stops start-up naming it`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: Error) => err instanceof ConfigError && pattern.test(err.message),
      );
    });
  }

  test('an issuer needs a JWKS URI and an audience', () => {
    assert.throws(() => loadConfig({ DOERS_JWT_ISSUER: 'https://as.example' }), /go together/);
    assert.throws(
      () => loadConfig({ DOERS_JWT_ISSUER: 'https://as.example', DOERS_JWKS_URI: 'https://as.example/jwks' }),
      /DOERS_JWT_AUDIENCE is required/,
    );
    const c = loadConfig({
      DOERS_JWT_ISSUER: 'https://as.example',
      DOERS_JWKS_URI: 'https://as.example/jwks',
      DOERS_JWT_AUDIENCE: 'doers',
    });
    assert.deepEqual(c.jwt, { issuer: 'https://as.example', jwksUri: 'https://as.example/jwks', audience: 'doers', userClaim: 'email' });
  });

  test('the built-in authorization server is on unless an external issuer is configured', () => {
    assert.equal(loadConfig({}).builtinAuthorizationServer, true);
    assert.equal(
      loadConfig({ DOERS_JWT_ISSUER: 'https://as.example', DOERS_JWKS_URI: 'https://as.example/jwks', DOERS_JWT_AUDIENCE: 'doers' })
        .builtinAuthorizationServer,
      false,
    );
  });

  test('an upstream sign-in needs a client id; without an issuer sign-in is the development one', () => {
    assert.equal(loadConfig({}).signIn, undefined);
    assert.throws(() => loadConfig({ DOERS_SIGNIN_ISSUER: 'https://id.example' }), /DOERS_SIGNIN_CLIENT_ID is required/);
    assert.throws(() => loadConfig({ DOERS_SIGNIN_ISSUER: 'not a url', DOERS_SIGNIN_CLIENT_ID: 'doers' }), /DOERS_SIGNIN_ISSUER/);
    assert.deepEqual(
      loadConfig({
        DOERS_SIGNIN_ISSUER: 'https://id.example',
        DOERS_SIGNIN_CLIENT_ID: 'doers',
        DOERS_SIGNIN_CLIENT_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:s-AbCdEf',
      }).signIn,
      {
        issuer: 'https://id.example',
        clientId: 'doers',
        clientSecretArn: 'arn:aws:secretsmanager:eu-west-1:1:secret:s-AbCdEf',
      },
    );
  });

  test('a trailing slash on the public URL is dropped, so advertised URLs have no double slash', () => {
    assert.equal(loadConfig({ DOERS_PUBLIC_URL: 'https://mcp.example.com/' }).publicUrl, 'https://mcp.example.com');
  });
});
