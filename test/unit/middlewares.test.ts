import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import middy from '@middy/core';
import type { CredentialGate } from '../../lambda/auth/credential-gate.js';
import { DependencyUnavailableError, InsufficientScopeError, UnauthenticatedError, UserNotAllowedError } from '../../lambda/errors.js';
import { authMiddleware } from '../../lambda/http/auth.js';
import { errorHandlerMiddleware, requestMeterPlugin } from '../../lambda/http/error-handler.js';
import { createErrorMapper } from '../../lambda/http/error-mapper.js';
import { originMiddleware } from '../../lambda/http/origin.js';
import { type DoersContext, type HttpEvent, type HttpResult, stateOf } from '../../lambda/http/request-context.js';
import { MAX_ATTACHMENT_BODY_BYTES, transportMiddleware } from '../../lambda/http/transport.js';
import { httpEvent, lambdaContext, principal } from '../helpers/events.js';
import { RecordingObserver } from '../helpers/recording-observer.js';

const PUBLIC = 'https://mcp.example.com';
const ok = async (): Promise<HttpResult> => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' });

const chain = (opts: { gate?: CredentialGate; handler?: () => Promise<HttpResult>; loopbackHostOnly?: boolean } = {}) => {
  const observer = new RecordingObserver();
  const logged: unknown[] = [];
  const handler = middy<HttpEvent, HttpResult, Error, DoersContext>(opts.handler ?? ok, requestMeterPlugin(observer))
    .use(
      errorHandlerMiddleware({
        mapError: createErrorMapper({ publicUrl: PUBLIC, scopesSupported: ['tasks:read', 'tasks:write'] }),
        observer,
        log: (mapped, e) => {
          if (mapped.unexpected || mapped.status === 503) logged.push(e);
        },
      }),
    )
    .use(originMiddleware({ allowedOrigins: new Set(['https://claude.ai']), loopbackHostOnly: opts.loopbackHostOnly ?? false }))
    .use(transportMiddleware())
    .use(authMiddleware(opts.gate ?? { authenticate: async () => principal() }));
  return { handler, observer, logged };
};

const run = (c: ReturnType<typeof chain>, event: HttpEvent) => c.handler(event, lambdaContext());

describe('error handler', () => {
  test('an unexpected error is 500 -32603 "Internal error" without its message, and is logged', async () => {
    const c = chain({
      handler: async () => {
        throw new Error('secret table name doers-prod');
      },
    });
    const res = await run(c, httpEvent({ body: '{}' }));
    assert.equal(res.statusCode, 500);
    assert.deepEqual(JSON.parse(res.body!), { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } });
    assert.doesNotMatch(res.body!, /doers-prod/);
    assert.equal(c.logged.length, 1);
  });

  test('a dependency that cannot answer is 503 with Retry-After and a fixed text', async () => {
    const c = chain({
      gate: {
        authenticate: async () => {
          throw new DependencyUnavailableError('dynamodb', 1, new Error('ECONNREFUSED 10.0.0.1'));
        },
      },
    });
    const res = await run(c, httpEvent({ body: '{}' }));
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers?.['retry-after'], '1');
    assert.doesNotMatch(res.body!, /ECONNREFUSED/);
  });

  test('every request is counted once with the status the client got', async () => {
    const c = chain();
    await run(c, httpEvent({ body: '{}' }));
    await run(c, httpEvent({ method: 'GET' }));
    await run(c, httpEvent({ method: 'OPTIONS', headers: { origin: 'https://claude.ai' } }));
    assert.deepEqual(
      c.observer.requests.map((r) => [r.method, r.status]),
      [
        ['other', 200],
        ['other', 405],
        ['preflight', 204],
      ],
    );
    assert.deepEqual(c.observer.refusals, ['bad_request']);
  });
});

describe('origin', () => {
  test('no Origin (a native client) passes without CORS headers', async () => {
    const res = await run(chain(), httpEvent({ body: '{}' }));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers?.['access-control-allow-origin'], undefined);
  });

  test('an allowed Origin is echoed with Vary and exposed headers', async () => {
    const res = await run(chain(), httpEvent({ body: '{}', headers: { origin: 'https://claude.ai' } }));
    assert.equal(res.headers?.['access-control-allow-origin'], 'https://claude.ai');
    assert.equal(res.headers?.vary, 'Origin');
    assert.equal(res.headers?.['access-control-expose-headers'], 'WWW-Authenticate, Retry-After');
  });

  test('a loopback Origin on any port is allowed', async () => {
    const res = await run(chain(), httpEvent({ body: '{}', headers: { origin: 'http://127.0.0.1:6274' } }));
    assert.equal(res.statusCode, 200);
  });

  test('an Origin that only contains an allowed name is refused with 403', async () => {
    const c = chain();
    const res = await run(c, httpEvent({ body: '{}', headers: { origin: 'https://claude.ai.evil.example' } }));
    assert.equal(res.statusCode, 403);
    assert.deepEqual(c.observer.refusals, ['origin']);
  });

  test('a preflight never reaches auth', async () => {
    let called = false;
    const c = chain({
      gate: {
        authenticate: async () => {
          called = true;
          return principal();
        },
      },
    });
    const res = await run(c, httpEvent({ method: 'OPTIONS', headers: { origin: 'https://claude.ai' } }));
    assert.equal(res.statusCode, 204);
    assert.equal(called, false);
  });

  test('with loopbackHostOnly a foreign Host is 403 and a loopback Host passes', async () => {
    const c = chain({ loopbackHostOnly: true });
    const foreign = await run(c, httpEvent({ body: '{}', headers: { host: 'attacker.example:8787' } }));
    const local = await run(c, httpEvent({ body: '{}', headers: { host: 'localhost:8787' } }));
    assert.equal(foreign.statusCode, 403);
    assert.equal(local.statusCode, 200);
  });
});

describe('transport', () => {
  test('/mcp and /mcp/ are one route; anything else is 404', async () => {
    const c = chain();
    assert.equal((await run(c, httpEvent({ path: '/mcp/', body: '{}' }))).statusCode, 200);
    assert.equal((await run(c, httpEvent({ path: '/other', body: '{}' }))).statusCode, 404);
  });

  test('the metadata path takes GET only', async () => {
    const c = chain();
    const path = '/.well-known/oauth-protected-resource/mcp';
    assert.equal((await run(c, httpEvent({ path, method: 'GET' }))).statusCode, 200);
    const post = await run(c, httpEvent({ path, method: 'POST' }));
    assert.equal(post.statusCode, 405);
    assert.equal(post.headers?.allow, 'GET, OPTIONS');
  });

  test('a preflight names the verbs of its path; an unknown path is 404 even on OPTIONS', async () => {
    const c = chain();
    const preflight = (path: string) => run(c, httpEvent({ path, method: 'OPTIONS', headers: { origin: 'https://claude.ai' } }));

    const [mcp, metadata, root, other] = await Promise.all([
      preflight('/mcp'),
      preflight('/.well-known/oauth-protected-resource/mcp'),
      preflight('/.well-known/oauth-protected-resource'),
      preflight('/elsewhere'),
    ]);

    assert.deepEqual(
      [mcp.statusCode, mcp.headers?.allow, mcp.headers?.['access-control-allow-methods']],
      [204, 'POST, OPTIONS', 'POST, OPTIONS'],
    );
    assert.deepEqual(
      [metadata.statusCode, metadata.headers?.allow, metadata.headers?.['access-control-allow-methods']],
      [204, 'GET, OPTIONS', 'GET, OPTIONS'],
    );
    assert.equal(root.headers?.allow, 'GET, OPTIONS');
    assert.equal(other.statusCode, 404);
  });

  test('the metadata is also served at the bare well-known path, GET only', async () => {
    const c = chain();
    const path = '/.well-known/oauth-protected-resource';
    assert.equal((await run(c, httpEvent({ path, method: 'GET' }))).statusCode, 200);
    assert.equal((await run(c, httpEvent({ path, method: 'POST' }))).statusCode, 405);
  });

  test('a body of exactly 1 MiB passes and one byte more is 413 (base64 counted decoded)', async () => {
    const c = chain();
    const exact = 'x'.repeat(1024 * 1024);
    assert.equal((await run(c, httpEvent({ body: exact }))).statusCode, 200);
    assert.equal((await run(c, httpEvent({ body: `${exact}x` }))).statusCode, 413);
    const b64 = Buffer.from(exact).toString('base64');
    assert.equal((await run(c, httpEvent({ body: b64, isBase64Encoded: true }))).statusCode, 200);
  });

  test('a body over 1 MiB passes the transport only when it names attachment_add, and never past the attachment limit', async () => {
    // Arrange: a 4 MB file as base64, in an attachment_add call and in another tool's call
    const c = chain();
    const content = Buffer.alloc(4 * 1024 * 1024, 1).toString('base64');
    const call = (name: string, extra = '') =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: { taskId: 'X-1', name: 'f', content: content + extra } },
      });

    // Act and Assert
    assert.equal((await run(c, httpEvent({ body: call('attachment_add') }))).statusCode, 200);
    assert.equal((await run(c, httpEvent({ body: call('comment_add') }))).statusCode, 413);
    assert.equal((await run(c, httpEvent({ body: call('attachment_add', 'A'.repeat(MAX_ATTACHMENT_BODY_BYTES)) }))).statusCode, 413);
    // A body that only names attachment_add somewhere is parsed after the credential, then held to
    // being one such call (test/integration/workspace-attachments.test.ts: a batch of them is 413).
  });
});

describe('auth', () => {
  test('the principal lands on the request state for the dispatcher', async () => {
    let seen: string | undefined;
    const c = chain({
      handler: async () => ({ statusCode: 200, body: '' }),
    });
    c.handler.before((request) => {
      seen = stateOf(request).principal?.userId;
    });
    await run(c, httpEvent({ body: '{}' }));
    assert.equal(seen, 'usr_1');
  });

  test('the metadata document needs no credential', async () => {
    const c = chain({
      gate: {
        authenticate: async () => {
          throw new UnauthenticatedError('no', false);
        },
      },
    });
    const res = await run(c, httpEvent({ path: '/.well-known/oauth-protected-resource/mcp', method: 'GET' }));
    assert.equal(res.statusCode, 200);
  });

  test('no token: 401 with a challenge naming the metadata URL and scopes, no error attribute', async () => {
    const c = chain({
      gate: {
        authenticate: async () => {
          throw new UnauthenticatedError('needs a token', false);
        },
      },
    });
    const res = await run(c, httpEvent({ body: '{}' }));
    assert.equal(res.statusCode, 401);
    assert.equal(
      res.headers?.['www-authenticate'],
      `Bearer scope="tasks:read tasks:write", resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  test('a refused token: 401 with error="invalid_token"', async () => {
    const c = chain({
      gate: {
        authenticate: async () => {
          throw new UnauthenticatedError('expired', true);
        },
      },
    });
    const res = await run(c, httpEvent({ body: '{}' }));
    assert.match(
      String(res.headers?.['www-authenticate'] ?? ''),
      /^Bearer error="invalid_token", error_description="expired", scope="tasks:read tasks:write", resource_metadata=/,
    );
  });

  test('a disabled user: 403 -32600 without a challenge', async () => {
    const c = chain({
      gate: {
        authenticate: async () => {
          throw new UserNotAllowedError();
        },
      },
    });
    const res = await run(c, httpEvent({ body: '{}' }));
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers?.['www-authenticate'], undefined);
    assert.deepEqual(JSON.parse(res.body!).error, { code: -32600, message: 'The user may not use the MCP endpoint.' });
  });

  test('insufficient scope: 403 with error="insufficient_scope" and the granted scopes plus the one needed', async () => {
    const c = chain({
      handler: async () => {
        throw new InsufficientScopeError('tasks:write', 'The tool task_create', ['tasks:read', 'team:read']);
      },
    });
    const res = await run(c, httpEvent({ body: '{}' }));
    assert.equal(res.statusCode, 403);
    assert.equal(
      res.headers?.['www-authenticate'],
      `Bearer error="insufficient_scope", scope="tasks:read team:read tasks:write", resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp"`,
    );
  });
});

describe('the id of a request refused before dispatch', () => {
  const request = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
  const refusals: [string, () => Error][] = [
    ['401', () => new UnauthenticatedError('expired', true)],
    ['403', () => new UserNotAllowedError()],
    ['503', () => new DependencyUnavailableError('dynamodb', 1)],
  ];
  for (const [status, error] of refusals) {
    test(`a ${status} echoes the id of a readable request`, async () => {
      const c = chain({
        gate: {
          authenticate: async () => {
            throw error();
          },
        },
      });
      const [text, number] = await Promise.all([run(c, httpEvent({ body: request('req-7') })), run(c, httpEvent({ body: request(7) }))]);
      assert.equal(String(text.statusCode), status);
      assert.equal(JSON.parse(text.body!).id, 'req-7');
      assert.equal(JSON.parse(number.body!).id, 7);
    });
  }

  test('an Origin refusal echoes it too', async () => {
    const res = await run(chain(), httpEvent({ body: request(3), headers: { origin: 'https://evil.example' } }));
    assert.equal(res.statusCode, 403);
    assert.equal(JSON.parse(res.body!).id, 3);
  });

  test('id stays null where there is no readable id: a batch, an object id, invalid JSON, a body over the limit', async () => {
    const c = chain({
      gate: {
        authenticate: async () => {
          throw new UnauthenticatedError('expired', true);
        },
      },
    });
    for (const body of [`[${request(1)}]`, request({ a: 1 }), '{"id": 1,', `{"id":1,"pad":"${'x'.repeat(1024 * 1024)}"}`]) {
      const res = await run(c, httpEvent({ body }));
      assert.equal(JSON.parse(res.body!).id, null, body.slice(0, 40));
    }
  });
});

describe('error mapping of DynamoDB faults', () => {
  test('DynamoDB throttling inside a tool is 503 with Retry-After, not 500', async () => {
    const throttled = Object.assign(new Error('Rate of requests exceeds the allowed throughput'), {
      name: 'ProvisionedThroughputExceededException',
      $metadata: { httpStatusCode: 400 },
    });
    const c = chain({
      handler: async () => {
        throw throttled;
      },
    });
    const res = await run(c, httpEvent({ body: '{}' }));
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers?.['retry-after'], '1');
    assert.doesNotMatch(res.body!, /throughput/);
    assert.equal(c.logged.length, 1);
  });
});
