import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { Logger } from '@aws-lambda-powertools/logger';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { exportSPKI, SignJWT } from 'jose';
import { createJwtVerifier } from '../../lambda/auth/jwt.js';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import { UnauthenticatedError } from '../../lambda/errors.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import type { Member } from '../../lambda/vocabulary.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { type JwksServer, type SigningKey, signingKey, signToken, startJwksServer, unsecuredToken, withPayload } from '../helpers/jwks.js';
import { modernCall, type RawResponse, startTestServer } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';

// JWTs from an external authorization server (docs/auth.md): a real key set on loopback, tokens
// signed with jose, and the endpoint answering through the same handler Lambda runs.
const ISSUER = 'https://login.example.test/realms/doers';
const AUDIENCE = 'doers-mcp';
const defaults = { issuer: ISSUER, audience: AUDIENCE };
const nowSeconds = () => Math.floor(Date.now() / 1000);

let rsa: SigningKey;
let ec: SigningKey;
let ps: SigningKey;
let ed: SigningKey;
let jwks: JwksServer;
let server: LocalServer;
const observer = new RecordingObserver();

const member = (userId: string, email: string, workspaceId = DEMO_WORKSPACE_ID, role: Member['role'] = 'member'): Member => ({
  workspaceId,
  userId,
  email,
  name: userId,
  role,
  timeZone: 'UTC',
  status: 'active',
  createdAt: new Date().toISOString(),
});

before(async () => {
  [rsa, ec, ps, ed] = await Promise.all([
    signingKey('rsa-1', 'RS256'),
    signingKey('ec-1', 'ES256'),
    signingKey('ps-1', 'PS256'),
    signingKey('ed-1', 'EdDSA'),
  ]);
  jwks = await startJwksServer([rsa, ec, ps, ed]);
  // No principal cache: these tests check each request's own verdict (the cache's bound has its own test).
  server = await startTestServer(
    {
      DOERS_JWT_ISSUER: ISSUER,
      DOERS_JWKS_URI: jwks.url,
      DOERS_JWT_AUDIENCE: AUDIENCE,
      DOERS_JWT_SCOPE_PREFIX: 'https://doers.example.test/mcp/',
      DOERS_AUTH_CACHE_SECONDS: '0',
    },
    { observer },
  );
  const { directory } = writesOf(server.app.services);
  await directory.createWorkspace({ workspaceId: 'ws_other', name: 'Other', status: 'active', createdAt: new Date().toISOString() });
  for (const m of [
    member('usr_t_grace', 'grace@jwt.test'),
    member('usr_t_dora', 'dora@jwt.test'),
    member('usr_t_pat', 'pat@jwt.test'),
    member('usr_t_otto', 'otto@jwt.test', 'ws_other'),
    member('usr_t_ada', 'ada@jwt.test', DEMO_WORKSPACE_ID, 'admin'),
  ]) {
    assert.equal(await directory.createMember(m), true);
  }
});
after(async () => {
  await server.close();
  await jwks.close();
});

const meGet = (token: string): Promise<RawResponse> => modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });

const assertInvalidToken = (res: RawResponse, description: RegExp): void => {
  assert.equal(res.status, 401, res.text);
  const challenge = res.headers.get('www-authenticate') ?? '';
  assert.match(challenge, /^Bearer error="invalid_token"/);
  assert.match(challenge, description);
  assert.ok(challenge.endsWith(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`), challenge);
  assert.equal(res.json.jsonrpc, '2.0');
  assert.equal(res.json.error.code, -32001);
};

const assertUserNotAllowed = (res: RawResponse): void => {
  assert.equal(res.status, 403, res.text);
  assert.equal(res.headers.get('www-authenticate'), null);
  assert.deepEqual(res.json.error, { code: -32600, message: 'The user may not use the MCP endpoint.' });
};

describe('valid JWTs', () => {
  for (const alg of ['RS256', 'ES256', 'PS256', 'EdDSA'] as const) {
    test(`a ${alg} token of the configured issuer and audience calls tools as its user`, async () => {
      const key = { RS256: rsa, ES256: ec, PS256: ps, EdDSA: ed }[alg];
      const token = await signToken(key, { email: 'grace@jwt.test', scope: 'tasks:read team:read' }, defaults);

      const res = await meGet(token);

      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.result.structuredContent.email, 'grace@jwt.test');
      assert.deepEqual(res.json.result.structuredContent.scopes, ['tasks:read', 'team:read']);
    });
  }

  test('scopes also come from an `scp` array, unknown scopes are ignored', async () => {
    const token = await signToken(rsa, { email: 'ada@jwt.test', scp: ['team:admin', 'openid', 'tasks:write'] }, defaults);

    const res = await meGet(token);

    assert.deepEqual(res.json.result.structuredContent.scopes, ['tasks:write', 'team:admin']);
  });

  test("a token's scopes are cut to what its member's role allows: a member's team:admin opens nothing", async () => {
    const token = await signToken(rsa, { email: 'grace@jwt.test', scp: ['team:admin', 'tasks:write'] }, defaults);

    const res = await meGet(token);

    assert.deepEqual(res.json.result.structuredContent.scopes, ['tasks:write']);
  });

  test('a Cognito access token (client_id instead of aud, prefixed scopes) is accepted', async () => {
    const token = await signToken(
      rsa,
      {
        email: 'ada@jwt.test',
        token_use: 'access',
        client_id: AUDIENCE,
        scope: 'https://doers.example.test/mcp/tasks:read https://doers.example.test/mcp/team:admin openid',
      },
      defaults,
      { audience: null },
    );

    const res = await meGet(token);

    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.result.structuredContent.scopes, ['tasks:read', 'team:admin']);
  });

  test("another resource server's scope with one of our names opens nothing", async () => {
    const token = await signToken(rsa, { email: 'grace@jwt.test', scope: 'https://billing.example.test/tasks:write tasks:read' }, defaults);

    const res = await meGet(token);

    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.result.structuredContent.scopes, ['tasks:read']);
  });

  test('the e-mail claim is matched case-insensitively', async () => {
    const token = await signToken(rsa, { email: 'Grace@JWT.TEST' }, defaults);

    const res = await meGet(token);

    assert.equal(res.json.result.structuredContent.userId, 'usr_t_grace');
  });

  test('expiry and not-before tolerate a small clock skew', async () => {
    const token = await signToken(rsa, { email: 'grace@jwt.test' }, defaults, {
      expiresAt: nowSeconds() - 10,
      notBefore: nowSeconds() + 10,
    });

    const res = await meGet(token);

    assert.equal(res.status, 200, res.text);
  });

  test('personal access tokens keep working beside JWTs', async () => {
    const res = await meGet(server.token);

    assert.equal(res.status, 200);
    assert.equal(res.json.result.structuredContent.email, 'ada@example.com');
  });
});

describe('refused JWTs: 401 invalid_token', () => {
  const refusals: [string, () => Promise<string>, RegExp][] = [
    [
      'another issuer',
      () => signToken(rsa, { email: 'grace@jwt.test' }, defaults, { issuer: 'https://evil.example.test' }),
      /another authorization server/,
    ],
    ['another audience', () => signToken(rsa, { email: 'grace@jwt.test' }, defaults, { audience: 'mobile-app' }), /another audience/],
    ['no audience at all', () => signToken(rsa, { email: 'grace@jwt.test' }, defaults, { audience: null }), /another audience/],
    [
      'a Cognito access token of another app client',
      () => signToken(rsa, { email: 'grace@jwt.test', token_use: 'access', client_id: 'mobile-app' }, defaults, { audience: null }),
      /another audience/,
    ],
    ['a Cognito ID token', () => signToken(rsa, { email: 'grace@jwt.test', token_use: 'id' }, defaults), /ID token/],
    ['an expired token', () => signToken(rsa, { email: 'grace@jwt.test' }, defaults, { expiresAt: nowSeconds() - 120 }), /expired/],
    [
      'a token not valid yet',
      () => signToken(rsa, { email: 'grace@jwt.test' }, defaults, { notBefore: nowSeconds() + 120 }),
      /not valid yet/,
    ],
    [
      'a token without expiry',
      () =>
        new SignJWT({ email: 'grace@jwt.test' })
          .setProtectedHeader({ alg: 'RS256', kid: rsa.kid })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .sign(rsa.privateKey),
      /lacks the exp claim/,
    ],
    [
      'alg none',
      async () => unsecuredToken({ email: 'grace@jwt.test', iss: ISSUER, aud: AUDIENCE, exp: nowSeconds() + 300 }),
      /accepted algorithm/,
    ],
    [
      'HS256 signed with the public key',
      async () =>
        new SignJWT({ email: 'grace@jwt.test' })
          .setProtectedHeader({ alg: 'HS256', kid: rsa.kid })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setExpirationTime('5m')
          .sign(new TextEncoder().encode(await exportSPKI(rsa.publicKey))),
      /accepted algorithm/,
    ],
    ['an unknown kid', () => signToken(rsa, { email: 'grace@jwt.test' }, defaults, { kid: 'not-published' }), /does not publish/],
    [
      'a tampered payload',
      async () =>
        withPayload(await signToken(rsa, { email: 'grace@jwt.test', scope: 'tasks:read' }, defaults), {
          email: 'ada@example.com',
          scope: 'tasks:read tasks:write team:read team:admin',
          iss: ISSUER,
          aud: AUDIENCE,
          exp: nowSeconds() + 300,
        }),
      /signature/,
    ],
    [
      'a token without the user claim',
      () => signToken(rsa, { sub: 'grace', scope: 'tasks:read' }, defaults),
      /no email claim naming a user/,
    ],
    [
      'an e-mail the issuer says is unverified',
      () => signToken(rsa, { email: 'grace@jwt.test', email_verified: false }, defaults),
      /not verified/,
    ],
  ];
  for (const [what, mint, description] of refusals) {
    test(`${what} is refused`, async () => {
      const token = await mint();

      const res = await meGet(token);

      assertInvalidToken(res, description);
    });
  }

  test('a valid token whose user is not in the workspace is 403 -32600 without a challenge, so the client keeps it instead of looping through sign-in', async () => {
    const res = await meGet(await signToken(rsa, { email: 'nobody@jwt.test' }, defaults));

    assertUserNotAllowed(res);
  });

  test('a refusal is counted as unauthenticated', async () => {
    const before = observer.refusals.filter((r) => r === 'unauthenticated').length;

    await meGet(await signToken(rsa, { email: 'grace@jwt.test' }, defaults, { audience: 'mobile-app' }));

    assert.equal(observer.refusals.filter((r) => r === 'unauthenticated').length, before + 1);
  });
});

describe('personal access tokens', () => {
  const register = (overrides: { expiresAt?: number } = {}) => {
    const secret = generateTokenSecret();
    return writesOf(server.app.services)
      .tokens.register(secret, {
        workspaceId: DEMO_WORKSPACE_ID,
        userId: 'usr_t_pat',
        scopes: ['tasks:read'],
        label: 'test',
        createdAt: new Date().toISOString(),
        ...overrides,
      })
      .then((record) => ({ secret, record }));
  };

  test('with the principal cache off, a revoked token is refused from the next request on', async () => {
    const { secret, record } = await register();
    assert.equal((await meGet(secret)).status, 200);

    await writesOf(server.app.services).tokens.revoke(DEMO_WORKSPACE_ID, record.tokenId, new Date().toISOString());
    const res = await meGet(secret);

    assertInvalidToken(res, /revoked/);
  });

  test('the table holds no secret of a token: every item read back, neither the token nor its random part appears', async () => {
    // Arrange: a token in use, so its record and the instance's memories exist
    const { secret } = await register();
    assert.equal((await meGet(secret)).status, 200);
    const db = createDocumentClient({ endpoint: server.dynamodbEndpoint });

    // Act
    const items: unknown[] = [];
    for await (const page of paginateScan({ client: db }, { TableName: server.app.config.tables.workspace }))
      items.push(...(page.Items ?? []));
    db.destroy();

    // Assert
    const dump = JSON.stringify(items);
    assert.ok(items.length > 0);
    assert.ok(!dump.includes(secret), 'the token itself is stored');
    assert.ok(!dump.includes(secret.slice(-20)), 'a part of the token is stored');
  });

  test('an expired token is refused', async () => {
    const { secret } = await register({ expiresAt: nowSeconds() - 1 });

    const res = await meGet(secret);

    assertInvalidToken(res, /expired/);
  });

  test('a token that was never minted is refused', async () => {
    assertInvalidToken(await meGet(generateTokenSecret()), /not known/);
  });
});

describe('user and workspace status, read on every request the cache does not answer', () => {
  test('with the principal cache off, a disabled user is refused with 403 for JWTs and for tokens minted before, and admitted again once enabled', async () => {
    const { directory, tokens } = writesOf(server.app.services);
    const secret = generateTokenSecret();
    await tokens.register(secret, {
      workspaceId: DEMO_WORKSPACE_ID,
      userId: 'usr_t_dora',
      scopes: ['tasks:read'],
      label: 't',
      createdAt: new Date().toISOString(),
    });
    const jwt = await signToken(ec, { email: 'dora@jwt.test' }, defaults);
    assert.equal((await meGet(secret)).status, 200);
    assert.equal((await meGet(jwt)).status, 200);

    await directory.setMemberStatus(DEMO_WORKSPACE_ID, 'usr_t_dora', 'disabled');
    const [patRes, jwtRes] = [await meGet(secret), await meGet(jwt)];
    await directory.setMemberStatus(DEMO_WORKSPACE_ID, 'usr_t_dora', 'active');
    const enabledRes = await meGet(jwt);

    assertUserNotAllowed(patRes);
    assertUserNotAllowed(jwtRes);
    assert.equal(enabledRes.status, 200);
  });

  test('a disabled workspace refuses its users with 403, also on initialize', async () => {
    const jwt = await signToken(rsa, { email: 'otto@jwt.test' }, defaults);
    assert.equal((await meGet(jwt)).status, 200);

    await writesOf(server.app.services).directory.setWorkspaceStatus('ws_other', 'disabled');
    const res = await meGet(jwt);
    const init = await modernCall(server, 'server/discover', {}, { token: jwt });
    await writesOf(server.app.services).directory.setWorkspaceStatus('ws_other', 'active');

    assertUserNotAllowed(res);
    assertUserNotAllowed(init);
    assert.ok(observer.refusals.includes('forbidden'));
  });
});

describe('the key set', () => {
  const silent = new Logger({ serviceName: 'test', logLevel: 'SILENT' });
  const jwtConfig = (jwksUri: string) => ({ issuer: ISSUER, jwksUri, audience: AUDIENCE, userClaim: 'email' });

  test('an unknown kid makes exactly one refresh, so a rotated key is picked up without a restart', async () => {
    const keys = await startJwksServer([rsa]);
    const verifier = createJwtVerifier(jwtConfig(keys.url), silent, { cooldownMs: 0 });
    const rotated = await signingKey('rsa-2', 'RS256');
    const rotatedToken = await signToken(rotated, { email: 'grace@jwt.test' }, defaults);
    try {
      await verifier.verify(await signToken(rsa, { email: 'grace@jwt.test' }, defaults), new Date());
      assert.equal(keys.fetches, 1);

      await assert.rejects(verifier.verify(rotatedToken, new Date()), UnauthenticatedError);
      assert.equal(keys.fetches, 2, 'one refresh for the unknown kid');

      keys.publish([rsa, rotated]);
      const identity = await verifier.verify(rotatedToken, new Date());

      assert.equal(keys.fetches, 3);
      assert.deepEqual(identity.subject, { kind: 'email', email: 'grace@jwt.test' });
    } finally {
      await keys.close();
    }
  });

  test('within the cooldown an unknown kid causes no fetch at all', async () => {
    const keys = await startJwksServer([rsa]);
    const verifier = createJwtVerifier(jwtConfig(keys.url), silent);
    try {
      await verifier.verify(await signToken(rsa, { email: 'grace@jwt.test' }, defaults), new Date());

      for (let i = 0; i < 5; i++) {
        await assert.rejects(
          verifier.verify(await signToken(rsa, { email: 'g@example.com' }, defaults, { kid: `made-up-${i}` }), new Date()),
          UnauthenticatedError,
        );
      }

      assert.equal(keys.fetches, 1);
    } finally {
      await keys.close();
    }
  });

  test('a key set that is down, answers garbage or fails is 503 with Retry-After and a warning; it recovers by itself', async () => {
    const keys = await startJwksServer([rsa]);
    const flaky = await startTestServer(
      { DOERS_JWT_ISSUER: ISSUER, DOERS_JWKS_URI: keys.url, DOERS_JWT_AUDIENCE: AUDIENCE },
      { observer: new RecordingObserver() },
    );
    const warn = mock.method(flaky.app.logger, 'warn', () => {});
    const token = await signToken(rsa, { email: 'ada@example.com' }, defaults);
    const call = () => modernCall(flaky, 'tools/call', { name: 'me_get', arguments: {} }, { token });
    try {
      await keys.stop();
      const down = await call();
      await keys.resume();
      keys.mode = 'garbage';
      const garbage = await call();
      keys.mode = 'error';
      const failing = await call();
      keys.mode = 'ok';
      const recovered = await call();

      for (const res of [down, garbage, failing]) {
        assert.equal(res.status, 503, res.text);
        assert.equal(res.headers.get('retry-after'), '5');
        assert.equal(res.headers.get('www-authenticate'), null);
        assert.equal(res.json.error.code, -32000);
        assert.doesNotMatch(res.text, /127\.0\.0\.1|jwks|ECONNREFUSED/i, 'no internals in a 5xx');
      }
      const messages = warn.mock.calls.map((c) => String(c.arguments[0]));
      assert.equal(messages.filter((m) => /key set could not be loaded/.test(m)).length, 3);
      assert.equal(recovered.status, 200, recovered.text);
    } finally {
      warn.mock.restore();
      await flaky.close();
      await keys.close();
    }
  });

  test('a JWT-shaped token at a server without an authorization server is refused as invalid', async () => {
    const plain = await startTestServer({}, { observer: new RecordingObserver() });
    try {
      const token = await signToken(rsa, { email: 'ada@example.com' }, defaults);

      const res = await modernCall(plain, 'tools/call', { name: 'me_get', arguments: {} }, { token });

      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    } finally {
      await plain.close();
    }
  });
});
