import { after, before, beforeEach, describe, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { modernCall, type RawResponse, startTestServer } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';
import { signToken, signingKey, startJwksServer, type JwksServer } from '../helpers/jwks.js';

// When a credential cannot be checked right now, the answer is 503 with Retry-After and a warning:
// never 500, never the request let through. The server talks to a real DynamoDB API (dynalite)
// through a proxy the test controls, which can pass, throttle, drop connections or be gone.
type Mode = 'pass' | 'throttle' | 'reset';

interface DynamoProxy {
  readonly endpoint: string;
  mode: Mode;
  /** Operations seen (X-Amz-Target without the API prefix), in order. */
  readonly operations: string[];
  stop(): Promise<void>;
  resume(): Promise<void>;
}

const startDynamoProxy = async (target: string): Promise<DynamoProxy> => {
  const proxy = { mode: 'pass' as Mode, operations: [] as string[] };
  let port = 0;
  let server: Server;
  const listen = async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      proxy.operations.push(String(req.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, ''));
      if (proxy.mode === 'reset') return void req.socket.destroy();
      if (proxy.mode === 'throttle') {
        return void res
          .writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'throttled' })
          .end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' }));
      }
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
      const upstream = await fetch(target, { method: 'POST', headers, body: Buffer.concat(chunks) });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/x-amz-json-1.0' }).end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  };
  await listen();
  return Object.assign(proxy, {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    resume: listen,
  });
};

const ISSUER = 'https://login.example.test';
let dynamo: EmbeddedDynamo;
let proxy: DynamoProxy;
let jwks: JwksServer;
let jwt: string;
let server: LocalServer;

before(async () => {
  dynamo = await startEmbeddedDynamo(':memory:');
  proxy = await startDynamoProxy(dynamo.endpoint);
  const key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
  server = await startTestServer(
    { DOERS_DYNAMODB_ENDPOINT: proxy.endpoint, DOERS_JWT_ISSUER: ISSUER, DOERS_JWKS_URI: jwks.url, DOERS_JWT_AUDIENCE: 'doers' },
    { observer: new RecordingObserver() },
  );
  jwt = await signToken(key, { email: 'ada@example.com' }, { issuer: ISSUER, audience: 'doers' });
});
after(async () => {
  await server.close();
  await proxy.stop();
  await dynamo.close();
  await jwks.close();
});
beforeEach(() => {
  proxy.mode = 'pass';
  proxy.operations.length = 0;
});

const meGet = (token = server.token): Promise<RawResponse> => modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });
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

describe('what a credential check costs', () => {
  test('a personal access token: three GetItems (token, then member and workspace together), no cache', async () => {
    await listTools();
    const first = [...proxy.operations];
    proxy.operations.length = 0;
    await listTools();

    assert.deepEqual(first, ['GetItem', 'GetItem', 'GetItem']);
    assert.deepEqual(proxy.operations, ['GetItem', 'GetItem', 'GetItem'], 'the second request reads the status again');
  });

  test('a JWT: three GetItems (e-mail index, member, workspace)', async () => {
    const res = await listTools(jwt);

    assert.equal(res.status, 200, res.text);
    assert.deepEqual(proxy.operations, ['GetItem', 'GetItem', 'GetItem']);
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
          assert.ok(warn.mock.calls.some((c) => /answered 503/.test(String(c.arguments[0]))), 'a WARN line');
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
