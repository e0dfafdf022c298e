import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, mock, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { type DynamoProxy, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { type JwksServer, signingKey, signToken, startJwksServer } from '../helpers/jwks.js';
import { modernCall, type RawResponse } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';

// When a credential cannot be checked right now, the answer is 503 with Retry-After and a warning:
// never 500, never the request let through. The server talks to a real DynamoDB API (dynalite)
// through a proxy the test controls, which can pass, throttle, drop connections or be gone.
const ISSUER = 'https://login.example.test';
let proxied: Awaited<ReturnType<typeof startProxiedServer>>;
let proxy: DynamoProxy;
let jwks: JwksServer;
let jwt: string;
let server: LocalServer;

before(async () => {
  const key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
  proxied = await startProxiedServer(
    { DOERS_JWT_ISSUER: ISSUER, DOERS_JWKS_URI: jwks.url, DOERS_JWT_AUDIENCE: 'doers', DOERS_AUTH_CACHE_SECONDS: '0' },
    { observer: new RecordingObserver() },
  );
  ({ server, proxy } = proxied);
  jwt = await signToken(key, { email: 'ada@example.com' }, { issuer: ISSUER, audience: 'doers' });
});
after(async () => {
  await proxied.close();
  await jwks.close();
});
beforeEach(() => {
  proxy.mode = 'pass';
  proxy.operations.length = 0;
});

const meGet = (token = server.token): Promise<RawResponse> =>
  modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });
// Listing is not counted by the limits, so what it reads from DynamoDB is the credential check alone.
const listTools = (token = server.token): Promise<RawResponse> => modernCall(server, 'tools/list', {}, { token });

const assertUnavailable = (res: RawResponse): void => {
  assert.equal(res.status, 503, res.text);
  assert.equal(res.headers.get('retry-after'), '1');
  assert.equal(res.headers.get('www-authenticate'), null);
  assert.equal(res.json.error.code, -32000);
  assert.equal(res.json.error.message, 'The service cannot check this request right now; retry shortly');
  assert.equal(res.json.result, undefined, 'nothing ran');
};

describe('what a credential check costs (principal cache off)', () => {
  test('a personal access token: one BatchGetItem of token, member and workspace once the instance knows its owner', async () => {
    await listTools();
    const first = [...proxy.operations];
    proxy.operations.length = 0;
    await listTools();

    // At most two reads, and the token's first call of the day stamps its last use (one UpdateItem).
    assert.ok(
      first.length <= 3 &&
        first.filter((op) => op === 'BatchGetItem').length <= 2 &&
        first.filter((op) => op === 'UpdateItem').length === 1,
      first.join(' '),
    );
    assert.deepEqual(proxy.operations, ['BatchGetItem'], 'the second request reads the status again, in one request');
  });

  test('a JWT: the e-mail index once per instance, then one BatchGetItem of member and workspace', async () => {
    const res = await listTools(jwt);
    const first = [...proxy.operations];
    proxy.operations.length = 0;
    await listTools(jwt);

    assert.equal(res.status, 200, res.text);
    assert.deepEqual(first, ['GetItem', 'BatchGetItem']);
    assert.deepEqual(proxy.operations, ['BatchGetItem']);
  });
});

describe('DynamoDB cannot answer during the credential check', () => {
  for (const [what, mode] of [
    ['throttling', 'throttle'],
    ['dropping connections', 'reset'],
  ] as const) {
    for (const [kind, token] of [
      ['personal access token', () => server.token],
      ['JWT', () => jwt],
    ] as const) {
      test(`${what}, ${kind}: 503 with Retry-After and a warning, never 500, never let through`, async () => {
        const warn = mock.method(server.app.logger, 'warn', () => {});
        proxy.mode = mode;
        try {
          const res = await meGet(token());

          assertUnavailable(res);
          assert.ok(proxy.operations.length >= 1);
          assert.ok(
            warn.mock.calls.some((c) => /answered 503/.test(String(c.arguments[0]))),
            'a WARN line',
          );
        } finally {
          warn.mock.restore();
        }
      });
    }
  }

  test('DynamoDB gone (connection refused): 503, and the next request after it is back succeeds', async () => {
    const warn = mock.method(server.app.logger, 'warn', () => {});
    try {
      await proxy.stop();
      const down = await meGet();
      await proxy.resume();
      const back = await meGet();

      assertUnavailable(down);
      assert.equal(back.status, 200, back.text);
      assert.equal(warn.mock.callCount(), 1);
    } finally {
      warn.mock.restore();
    }
  });
});
