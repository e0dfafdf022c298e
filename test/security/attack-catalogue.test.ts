import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, mock, test } from 'node:test';
import { exportSPKI, type JWTHeaderParameters, type JWTPayload, SignJWT } from 'jose';
import { ToolRefusal } from '../../lambda/errors.js';
import { buildHandler } from '../../lambda/http/pipeline.js';
import type { DoersContext, HttpResult } from '../../lambda/http/request-context.js';
import { MAX_BODY_BYTES } from '../../lambda/http/transport.js';
import { createHttpAdapter, REQUEST_TIMEOUT_MS } from '../../lambda/local/http-adapter.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { doorSource } from '../../lambda/workspace/activity/records.js';
import { OPERATOR } from '../../lambda/workspace/membership/rules.js';
import { setWorkspaceKey } from '../../lambda/workspace/membership/workspaces.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { PRODUCT_PROMPTS, PRODUCT_RESOURCE_TEMPLATES, PRODUCT_TOOLS } from '../../lambda/workspace/surface/catalog.js';
import { createWebhookDispatch } from '../../lambda/workspace/webhooks/webhook-dispatch.js';
import { addWebhook, removeWebhook } from '../../lambda/workspace/webhooks/webhook-writer.js';
import { CONFORMANCE_FIXTURES } from '../conformance/fixtures.js';
import { type DynamoProxy, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { httpEvent, lambdaContext } from '../helpers/events.js';
import { type JwksServer, type SigningKey, signingKey, signToken, startJwksServer, unsecuredToken } from '../helpers/jwks.js';
import { legacyCall, MODERN, modernCall, modernMeta, post, type RawResponse, urlOf } from '../helpers/local.js';
import { addToken, caller, createTestWorkspace, type TestWorkspace, writeContextOf } from '../helpers/workspace-fixtures.js';

/*
 * The attack catalogue: every attack on the endpoint we know of, each with its refusal, in one file.
 * The verdict is always two-fold: the request is refused the way docs/protocol.md, auth.md and limits.md say, and the answer names
 * nothing that exists elsewhere (another workspace's titles, names, e-mails, ids; a forged host).
 * Where another file tests an attack in depth, the test here says which one.
 *
 * One local server serves it all, as `npm start` would, but with a public URL that is not its own
 * address (so a reflected Host or forwarded header would show), an external JWT issuer beside the
 * personal tokens, the conformance fixtures (the product has no tool that asks for input yet, and
 * request states need one), limits off, and every DynamoDB request counted by a proxy.
 */

/** The request capabilities of a client that declares the tasks extension (docs/protocol.md, "Long work as tasks"). */
const FOLLOWS_TASKS = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } };

const PUBLIC = 'https://doers.example.test';
const METADATA_URL = `${PUBLIC}/.well-known/oauth-protected-resource/mcp`;
const ISSUER = 'https://login.example.test/realms/doers';
const AUDIENCE = 'doers-mcp';
const jwtDefaults = { issuer: ISSUER, audience: AUDIENCE };
const nowSeconds = () => Math.floor(Date.now() / 1000);

let server: LocalServer;
let proxy: DynamoProxy;
let stopServer: () => Promise<void>;
let rsa: SigningKey;
/** Another authorization server's key, published under the very kid our issuer uses. */
let intruder: SigningKey;
let jwks: JwksServer;
let intruderJwks: JwksServer;

// ---- two workspaces with distinctive contents ---------------------------------------------------

interface Seeded {
  readonly ws: TestWorkspace;
  readonly projectId: string;
  readonly projectName: string;
  readonly taskIds: readonly string[];
  readonly commentIds: readonly string[];
  readonly attachmentIds: readonly string[];
  /** A shared saved view. */
  readonly viewIds: readonly string[];
  readonly userIds: readonly string[];
  /** The activity records of its tasks' creation. */
  readonly activityIds: readonly string[];
  /** Strings only this workspace holds: no answer to anyone else may contain one. */
  readonly secrets: readonly string[];
}

/** A workspace whose every title, name, body and e-mail carries `tag`, so a leak is a substring search away. */
const seedWorkspace = async (tag: string): Promise<Seeded> => {
  const ws = await createTestWorkspace(server);
  const userId = `usr_${tag}_${randomUUID().slice(0, 8)}`;
  const email = `secret-${tag}-${randomUUID().slice(0, 4)}@example.test`;
  await writesOf(server.app.services).directory.createMember({
    workspaceId: ws.workspaceId,
    userId,
    email,
    name: `SECRET-NAME-${tag}`,
    role: 'member',
    timeZone: 'UTC',
    status: 'active',
    createdAt: new Date().toISOString(),
  });
  const as = caller(server, ws.owner.token);
  const project = await as('project_create', { name: `SECRET-PROJECT-${tag}`, description: `SECRET-DESC-${tag}` });
  const projectId: string = project.structuredContent.projectId;
  const taskIds: string[] = [];
  const activityIds: string[] = [];
  for (let i = 1; i <= 3; i++) {
    const task = await as('task_create', {
      title: `SECRET-TITLE-${tag} ${i}`,
      notes: `SECRET-NOTES-${tag}`,
      projectId,
      assignee: userId,
      labels: [`secret-label-${tag}`],
    });
    taskIds.push(task.structuredContent.taskId);
    activityIds.push(task.structuredContent.activityId);
  }
  const commentIds: string[] = [];
  for (let i = 1; i <= 3; i++) {
    const comment = await as('comment_add', { taskId: taskIds[0], body: `SECRET-COMMENT-${tag} ${i}` });
    commentIds.push(comment.structuredContent.commentId);
  }
  const file = await as('attachment_add', { taskId: taskIds[0], name: `secret-file-${tag}.txt`, text: `SECRET-FILE-${tag}` });
  const attachmentIds: string[] = [file.structuredContent.attachmentId];
  const view = await as('view_save', { name: `SECRET-VIEW-${tag}`, query: `label:secret-label-${tag}`, shared: true });
  const viewIds: string[] = [view.structuredContent.viewId];
  const members = [ws.owner, ws.admin, ws.member, ws.viewer];
  return {
    ws,
    projectId,
    projectName: `SECRET-PROJECT-${tag}`,
    taskIds,
    commentIds,
    attachmentIds,
    viewIds,
    userIds: [...members.map((m) => m.userId), userId],
    activityIds,
    secrets: [
      `SECRET-TITLE-${tag}`,
      `SECRET-NOTES-${tag}`,
      `secret-label-${tag}`,
      `SECRET-PROJECT-${tag}`,
      `SECRET-DESC-${tag}`,
      `SECRET-COMMENT-${tag}`,
      `SECRET-FILE-${tag}`,
      `secret-file-${tag}`,
      `SECRET-NAME-${tag}`,
      `SECRET-VIEW-${tag}`,
      email,
      ws.workspaceId,
      ...members.map((m) => m.email),
    ],
  };
};

/**
 * Fails naming whatever of `of` the text contains: its secrets, and its ids apart from those the
 * caller sent (an id echoed back tells the caller nothing it did not know).
 */
const assertRevealsNothing = (text: string, of: Seeded, sent: readonly string[] = []): void => {
  const lower = text.toLowerCase();
  const sentByCaller = (s: string) => sent.some((v) => v.toLowerCase().includes(s.toLowerCase()));
  const found = [
    ...of.secrets,
    of.projectId,
    ...of.taskIds,
    ...of.commentIds,
    ...of.attachmentIds,
    ...of.userIds,
    ...of.activityIds,
  ].filter((s) => !sentByCaller(s) && lower.includes(s.toLowerCase()));
  assert.deepEqual(found, [], `the answer names ${found.join(', ')} of another workspace:\n${text}`);
};

/** What a workspace holds, read through its own owner's token: compared before and after the attacks. */
const snapshot = async (seeded: Seeded) => {
  const as = caller(server, seeded.ws.owner.token);
  const tasks = await as('tasks_search', { status: 'any', limit: 100 });
  const { today: _today, ...taskList } = tasks.structuredContent;
  const read = async (tool: string, args: Record<string, unknown>) => (await as(tool, args)).structuredContent;
  return {
    tasks: taskList,
    details: await Promise.all(seeded.taskIds.map((taskId) => read('task_get', { taskId }))),
    comments: await Promise.all(seeded.taskIds.map((taskId) => read('comments_list', { taskId, limit: 100 }))),
    projects: await read('projects_list', { includeArchived: true, limit: 100 }),
    members: await read('members_list', { limit: 100 }),
  };
};

let ws1: Seeded;
let ws2: Seeded;
let ws2Before: Awaited<ReturnType<typeof snapshot>>;
/** A member of workspace 2 whose user id is that of workspace 1's owner: "the same user" in name only. */
let twin: { token: string };

before(async () => {
  [rsa, intruder] = await Promise.all([signingKey('rsa-1', 'RS256'), signingKey('rsa-1', 'RS256')]);
  jwks = await startJwksServer([rsa]);
  intruderJwks = await startJwksServer([intruder]);
  const started = await startProxiedServer(
    {
      DOERS_PUBLIC_URL: PUBLIC,
      DOERS_JWT_ISSUER: ISSUER,
      DOERS_JWKS_URI: jwks.url,
      DOERS_JWT_AUDIENCE: AUDIENCE,
      // Each request's own verdict, not a cached one (the cache has its own tests).
      DOERS_AUTH_CACHE_SECONDS: '0',
      DOERS_RATE_LIMIT_CALLS: '0',
      DOERS_MAX_CONCURRENT_CALLS: '0',
    },
    { fixtures: CONFORMANCE_FIXTURES },
  );
  ({ server, proxy } = started);
  stopServer = started.close;
  [ws1, ws2] = [await seedWorkspace('c41d'), await seedWorkspace('7f3a')];
  const twinId = ws1.ws.owner.userId;
  await writesOf(server.app.services).directory.createMember({
    workspaceId: ws2.ws.workspaceId,
    userId: twinId,
    email: `twin-${randomUUID().slice(0, 8)}@example.test`,
    name: 'Twin',
    role: 'owner',
    timeZone: 'UTC',
    status: 'active',
    createdAt: new Date().toISOString(),
  });
  twin = { token: await addToken(server, ws2.ws.workspaceId, twinId, ['tasks:read', 'tasks:write', 'team:read', 'team:admin']) };
  ws2Before = await snapshot(ws2);
});
after(async () => {
  await stopServer();
  await jwks.close();
  await intruderJwks.close();
});

// ---- raw HTTP, for the headers fetch() will not let a test set ---------------------------------

interface Raw {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

const raw = (url: string, method: string, headers: Record<string, string>, body?: string): Promise<Raw> =>
  new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });

const ME_GET = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'me_get', arguments: {} } });
const port = () => new URL(server.url).port;

/** me_get as workspace 1's owner on the handshake era, with the headers given. */
const meGetWith = (headers: Record<string, string>) =>
  raw(
    urlOf(server),
    'POST',
    {
      host: `127.0.0.1:${port()}`,
      'content-type': 'application/json',
      authorization: `Bearer ${ws1.ws.owner.token}`,
      'mcp-protocol-version': '2025-11-25',
      ...headers,
    },
    ME_GET,
  );

const preflightWith = (headers: Record<string, string>) =>
  raw(urlOf(server), 'OPTIONS', { host: `127.0.0.1:${port()}`, 'access-control-request-method': 'POST', ...headers });

/** 403 -32600, no CORS grant, and not a word of the caller the credential names. */
const assertRebindingRefused = (res: Raw): void => {
  assert.equal(res.status, 403, res.text);
  assert.equal(res.headers['access-control-allow-origin'], undefined);
  assert.equal(JSON.parse(res.text).error.code, -32600);
  for (const s of [ws1.ws.owner.email, ws1.ws.owner.name, ws1.ws.workspaceId]) assert.ok(!res.text.includes(s), res.text);
};

// ---- 1. DNS rebinding -------------------------------------------------------------------------

describe('DNS rebinding: Origins and Hosts (protocol-table.test.ts has the basic rows)', () => {
  const HOSTILE_ORIGINS = [
    'http://evil.example',
    'https://evil.example:443',
    'http://127.0.0.1.evil.example',
    'http://localhost.evil.example',
    'https://claude.ai.evil.example',
    'https://evilclaude.ai',
    // The allow-list is https only: an http page of an allowed site could be anyone's on the network.
    'http://claude.ai',
    'null',
    'http://localhost:1@evil.example',
    'http://127.0.0.1@evil.example',
    'http://evil.example#@localhost',
    // Chrome's "0.0.0.0 day": a public page reaching loopback through the unspecified address.
    'http://0.0.0.0:8787',
    'http://[::]:8787',
    'http://[fe80::1]',
    'http://[2001:db8::1]',
    'http://[::ffff:cb00:7107]',
    'http://[::1].evil.example',
    'file://',
  ];
  for (const origin of HOSTILE_ORIGINS) {
    test(`the Origin ${origin} is refused with 403 on POST and on OPTIONS`, async () => {
      const [posted, preflight] = await Promise.all([meGetWith({ origin }), preflightWith({ origin })]);

      assertRebindingRefused(posted);
      assertRebindingRefused(preflight);
    });
  }

  for (const origin of [
    'https://claude.ai',
    'https://chatgpt.com',
    'http://localhost:6274',
    'http://127.0.0.1:6274',
    'http://[::1]:6274',
  ]) {
    test(`the allowed Origin ${origin} passes, with its CORS grant`, async () => {
      const [posted, preflight] = await Promise.all([meGetWith({ origin }), preflightWith({ origin })]);

      assert.equal(posted.status, 200, posted.text);
      assert.equal(JSON.parse(posted.text).result.structuredContent.email, ws1.ws.owner.email);
      assert.equal(posted.headers['access-control-allow-origin'], origin);
      assert.equal(preflight.status, 204);
    });
  }

  // The local server answers loopback Hosts only. On Lambda, API Gateway routes only the API's own
  // domain names to the function, so there is no Host for a rebound name to arrive with.
  const HOSTILE_HOSTS = [
    'evil.example',
    'evil.example:8787',
    '127.0.0.1.nip.io',
    '127.0.0.1.evil.example',
    '127.0.0.1:80.evil.example',
    'localhost.evil.example',
    'LOCALHOST.evil.example',
    'localhost.',
    '0.0.0.0:8787',
    '[::]:8787',
    '[fe80::1]',
    '[::1].evil.example',
  ];
  for (const host of HOSTILE_HOSTS) {
    test(`the Host ${host} is refused with 403 on POST and on OPTIONS`, async () => {
      const [posted, preflight] = await Promise.all([meGetWith({ host }), preflightWith({ host, origin: 'https://claude.ai' })]);

      assertRebindingRefused(posted);
      assertRebindingRefused(preflight);
    });
  }

  test('loopback Hosts pass: 127.0.0.1, localhost and [::1], any port, any case', async () => {
    const hosts = [`127.0.0.1:${port()}`, `localhost:${port()}`, `[::1]:${port()}`, 'LOCALHOST', '127.0.0.1'];

    const answers = await Promise.all(hosts.map((host) => meGetWith({ host })));

    assert.deepEqual(
      answers.map((a) => a.status),
      hosts.map(() => 200),
    );
  });
});

// ---- 2. Forged forwarding headers -----------------------------------------------------------

describe('forged X-Forwarded-* and Forwarded headers (scopes.test.ts: the metadata document on Lambda)', () => {
  const FORGED = {
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'http',
    'x-forwarded-port': '6666',
    'x-forwarded-for': '203.0.113.7',
    'x-forwarded-server': 'evil.example',
    'x-original-host': 'evil.example',
    'x-host': 'evil.example',
    forwarded: 'for=203.0.113.7;host=evil.example;proto=http',
  };
  /** Anything a caller could have slipped into an URL: the forged values, and the loopback Host it came by. */
  const FORGED_TRACE = /evil\.example|6666|203\.0\.113\.7|localhost/i;

  type Answer = { status: number; headers: Record<string, string>; text: string };
  type Send = (req: { method: string; path: string; headers: Record<string, string>; body?: string }) => Promise<Answer>;

  // Through the local adapter: a loopback Host it accepts, but not the configured public URL either.
  const viaLocal: Send = async ({ method, path, headers, body }) => {
    const res = await raw(`${server.url}${path}`, method, { host: `localhost:${port()}`, ...FORGED, ...headers }, body);
    return { status: res.status, headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)])), text: res.text };
  };
  // Straight into the handler Lambda runs (the same app, without the local Host rule), with a forged
  // Host and API Gateway's domain name forged too.
  let lambdaHandler: ReturnType<typeof buildHandler> | undefined;
  const viaLambda: Send = async ({ method, path, headers, body }) => {
    lambdaHandler ??= buildHandler({ ...server.app, loopbackHostOnly: false });
    const handler = lambdaHandler;
    const event = httpEvent({ method, path, headers: { host: 'evil.example', ...FORGED, ...headers }, ...(body ? { body } : {}) });
    const res: HttpResult = await handler(
      { ...event, requestContext: { ...event.requestContext, domainName: 'evil.example' } },
      lambdaContext(),
    );
    return {
      status: res.statusCode ?? 0,
      headers: Object.fromEntries(Object.entries(res.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)])),
      text: res.body ?? '',
    };
  };

  const challengeUrl = (a: Answer): string | undefined => /resource_metadata="([^"]*)"/.exec(a.headers['www-authenticate'] ?? '')?.[1];
  const legacy = (token?: string) => ({
    'content-type': 'application/json',
    'mcp-protocol-version': '2025-11-25',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  });
  const toolCall = (name: string, args: Record<string, unknown> = {}) =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

  for (const [where, send] of [
    ['the local server', viaLocal],
    ['the Lambda handler', viaLambda],
  ] as const) {
    test(`on ${where}, the metadata document names the configured resource at both of its URLs`, async () => {
      const answers = await Promise.all(
        ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'].map((path) =>
          send({ method: 'GET', path, headers: {} }),
        ),
      );

      for (const a of answers) {
        assert.equal(a.status, 200, a.text);
        assert.equal(JSON.parse(a.text).resource, `${PUBLIC}/mcp`);
        assert.deepEqual(JSON.parse(a.text).authorization_servers, [ISSUER]);
        assert.doesNotMatch(a.text, FORGED_TRACE);
      }
    });

    test(`on ${where}, every challenge (no token, a refused token, a missing scope) points at the configured metadata URL`, async () => {
      const readOnly = await addToken(server, ws1.ws.workspaceId, ws1.ws.owner.userId, ['tasks:read']);

      const [none, refused, forgedJwt, scope] = await Promise.all([
        send({ method: 'POST', path: '/mcp', headers: legacy(), body: toolCall('me_get') }),
        send({ method: 'POST', path: '/mcp', headers: legacy('doers_pat_never_minted'), body: toolCall('me_get') }),
        send({ method: 'POST', path: '/mcp', headers: legacy(unsecuredToken({ email: ws1.ws.owner.email })), body: toolCall('me_get') }),
        send({ method: 'POST', path: '/mcp', headers: legacy(readOnly), body: toolCall('task_create', { title: 'x' }) }),
      ]);

      assert.deepEqual(
        [none, refused, forgedJwt, scope].map((a) => a.status),
        [401, 401, 401, 403],
      );
      for (const a of [none, refused, forgedJwt, scope]) {
        assert.equal(challengeUrl(a), METADATA_URL);
        assert.doesNotMatch(JSON.stringify(a.headers) + a.text, FORGED_TRACE);
      }
    });

    test(`on ${where}, an admitted request's answer carries no forged host either`, async () => {
      const discover = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: modernMeta() } });

      const [me, discovered] = await Promise.all([
        send({ method: 'POST', path: '/mcp', headers: legacy(ws1.ws.owner.token), body: toolCall('me_get') }),
        send({
          method: 'POST',
          path: '/mcp',
          headers: { ...legacy(ws1.ws.owner.token), 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
          body: discover,
        }),
      ]);

      assert.equal(me.status, 200, me.text);
      assert.equal(discovered.status, 200, discovered.text);
      assert.doesNotMatch(JSON.stringify(me.headers) + me.text + JSON.stringify(discovered.headers) + discovered.text, FORGED_TRACE);
    });
  }
  // The URLs the local server prints (`npm start`) come from configuration at start-up, before any request.
});

// ---- 3. JWTs -----------------------------------------------------------------------------------

describe('JWTs (auth-jwt.test.ts has the verifier in depth)', () => {
  const meGet = (token: string) => modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });
  const owner = () => ({ email: ws1.ws.owner.email, scope: 'tasks:read tasks:write team:read team:admin' });
  /** Signed with `key` under any header a forger likes; issuer, audience and expiry are right. */
  const forge = (key: SigningKey, header: Omit<JWTHeaderParameters, 'alg'>, claims: JWTPayload = owner()) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', ...header })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(key.privateKey);
  const hs256 = async (secret: string) =>
    new SignJWT(owner())
      .setProtectedHeader({ alg: 'HS256', kid: rsa.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(secret));

  /** 401 invalid_token with the configured metadata URL; nothing of the user, nothing the forger made up. */
  const assertInvalidToken = (res: RawResponse, echoes: readonly string[] = []): void => {
    assert.equal(res.status, 401, res.text);
    const challenge = res.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer error="invalid_token"/);
    assert.ok(challenge.endsWith(`resource_metadata="${METADATA_URL}"`), challenge);
    assert.equal(res.json.error.code, -32001);
    for (const s of [ws1.ws.owner.email, ws1.ws.owner.name, ...echoes]) {
      assert.ok(!(res.text + challenge).includes(s), `the refusal repeats ${s}`);
    }
  };

  test('a token of the configured issuer, audience and key is admitted (the control)', async () => {
    const res = await meGet(await signToken(rsa, owner(), jwtDefaults));

    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.result.structuredContent.email, ws1.ws.owner.email);
  });

  const INJECTED_KIDS = [
    '../../etc/passwd',
    "' OR 1=1 --",
    'https://evil.example/jwks.json',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, sent as it is
    '${jndi:ldap://evil.example/a}',
    'rsa-1\u0000',
  ];

  // Minted (and their echoes named) when the test runs, once the key sets are up.
  const refusals: [string, () => Promise<string>, (() => string[])?][] = [
    ['alg none', async () => unsecuredToken({ ...owner(), iss: ISSUER, aud: AUDIENCE, exp: nowSeconds() + 300 })],
    ['alg confusion: HS256 keyed with the RSA public key (PEM)', async () => hs256(await exportSPKI(rsa.publicKey))],
    ['alg confusion: HS256 keyed with the published JWK', async () => hs256(JSON.stringify(rsa.jwk))],
    ...INJECTED_KIDS.map((kid): [string, () => Promise<string>, () => string[]] => [
      `kid injection ${JSON.stringify(kid)}, signed with the real key`,
      () => forge(rsa, { kid }),
      () => [kid],
    ]),
    ['a kid naming our key, signed with the key another key set publishes under that kid', () => forge(intruder, { kid: rsa.kid })],
    [
      "a jku header pointing at the forger's own key set",
      () => forge(intruder, { kid: 'intruder', jku: intruderJwks.url }),
      () => [intruderJwks.url],
    ],
    [
      "an embedded jwk header carrying the forger's public key",
      () => forge(intruder, { kid: rsa.kid, jwk: { kty: intruder.jwk.kty, n: intruder.jwk.n, e: intruder.jwk.e } }),
    ],
    ['a token for another audience', () => signToken(rsa, owner(), jwtDefaults, { audience: 'https://billing.example.test' })],
    [
      "a token of another issuer, signed with our issuer's key",
      () => signToken(rsa, owner(), jwtDefaults, { issuer: 'https://evil.example' }),
    ],
    ['an expired token', () => signToken(rsa, owner(), jwtDefaults, { expiresAt: nowSeconds() - 120 })],
    ['a token not valid yet', () => signToken(rsa, owner(), jwtDefaults, { notBefore: nowSeconds() + 120 })],
    ['a token whose e-mail the issuer has not verified', () => signToken(rsa, { ...owner(), email_verified: false }, jwtDefaults)],
  ];
  for (const [what, mint, echoes] of refusals) {
    test(`${what} is refused with 401 invalid_token and reveals nothing`, async () => {
      const token = await mint();

      const res = await meGet(token);

      assertInvalidToken(res, echoes?.() ?? []);
    });
  }

  test("the forger's key set is never fetched, and made-up kids cost at most one fetch of ours", async () => {
    const fetchesBefore = jwks.fetches;

    for (let i = 0; i < 5; i++) assertInvalidToken(await meGet(await forge(rsa, { kid: `made-up-${randomUUID()}` })));

    assert.equal(intruderJwks.fetches, 0);
    assert.ok(jwks.fetches - fetchesBefore <= 1, `${jwks.fetches - fetchesBefore} fetches`);
  });

  test('a valid token of a user who is in no workspace is 403 -32600 without a challenge', async () => {
    const res = await meGet(await signToken(rsa, { email: 'stranger@evil.example' }, jwtDefaults));

    assert.equal(res.status, 403, res.text);
    assert.equal(res.headers.get('www-authenticate'), null);
    assert.deepEqual(res.json.error, { code: -32600, message: 'The user may not use the MCP endpoint.' });
  });
});

// ---- 4. Replayed cursors and request states -------------------------------------------------

describe('replayed list cursors (workspace-search.test.ts: tampered, other arguments, other tool)', () => {
  type Minted = { tool: string; args: Record<string, unknown>; cursor: string };
  let minted: Minted[];

  before(async () => {
    const as = caller(server, ws1.ws.owner.token);
    const lists: [string, Record<string, unknown>][] = [
      ['tasks_search', { limit: 1 }],
      ['comments_list', { taskId: ws1.taskIds[0], limit: 1 }],
      ['members_list', { limit: 1 }],
    ];
    minted = await Promise.all(
      lists.map(async ([tool, args]) => {
        const page = await as(tool, args);
        assert.equal(page.structuredContent.truncated, true, `${tool} must page for this test`);
        return { tool, args, cursor: page.structuredContent.nextCursor as string };
      }),
    );
  });

  /** A tool error naming `cursor`, carrying nothing of workspace 1. */
  const assertCursorRefused = (res: RawResponse): void => {
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.result.isError, true, res.text);
    assert.match(res.json.result.content[0].text, /^cursor: not valid for this call/);
    assert.equal(res.json.result.structuredContent, undefined);
    assertRevealsNothing(res.text, ws1, [ws1.taskIds[0]!]);
  };
  const call = (token: string, tool: string, args: Record<string, unknown>) =>
    modernCall(server, 'tools/call', { name: tool, arguments: args }, { token });

  test('the cursor continues the list for the user and call it was made for (the control)', async () => {
    for (const { tool, args, cursor } of minted) {
      const res = await call(ws1.ws.owner.token, tool, { ...args, cursor });

      assert.equal(res.json.result.isError, false, res.text);
      assert.ok(res.json.result.structuredContent.returned >= 1);
    }
  });

  test('a cursor of workspace 1 replayed by a user of workspace 2 is refused and reveals nothing', async () => {
    for (const { tool, args, cursor } of minted) {
      // comments_list once on workspace 2's own task (so only the cursor is foreign) and once on workspace 1's.
      const variants = tool === 'comments_list' ? [{ ...args, taskId: ws2.taskIds[0] }, args] : [args];
      for (const v of variants) assertCursorRefused(await call(ws2.ws.owner.token, tool, { ...v, cursor }));
    }
  });

  test('a cursor replayed by a user of workspace 2 who has the same user id is refused: cursors are bound to the workspace', async () => {
    for (const { tool, args, cursor } of minted) {
      assertCursorRefused(
        await call(twin.token, tool, { ...args, ...(tool === 'comments_list' ? { taskId: ws2.taskIds[0] } : {}), cursor }),
      );
    }
  });

  test('a cursor replayed by another user of the same workspace is refused', async () => {
    for (const { tool, args, cursor } of minted) assertCursorRefused(await call(ws1.ws.member.token, tool, { ...args, cursor }));
  });

  test('a cursor replayed on another tool or another filter is refused', async () => {
    const search = minted.find((m) => m.tool === 'tasks_search')!;
    const elsewhere: [string, Record<string, unknown>][] = [
      ['tasks_search', { limit: 1, status: 'any' }],
      ['tasks_search', { limit: 1, project: ws1.projectId }],
      ['projects_list', { limit: 1 }],
      ['members_list', { limit: 1 }],
      ['agenda_get', { assignee: 'anyone' }],
      ['comments_list', { taskId: ws1.taskIds[0], limit: 1 }],
    ];

    for (const [tool, args] of elsewhere) assertCursorRefused(await call(ws1.ws.owner.token, tool, { ...args, cursor: search.cursor }));
  });
});

describe('replayed request states of multi round-trip requests (round-trip-and-error-ids.test.ts: tampered, other target)', () => {
  // No product tool asks for input yet; the conformance fixture that carries state across a round
  // trip goes through the same signing and checks a product tool would.
  const TOOL = 'test_input_required_result_request_state';
  const ANSWER = { confirm: { action: 'accept', content: { ok: true } } };

  const roundTrip = (token: string, name: string, extra: Record<string, unknown> = {}) =>
    post(
      urlOf(server),
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: {}, ...extra, _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } }) },
      },
      { authorization: `Bearer ${token}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
    );
  const mint = async (token = ws1.ws.owner.token): Promise<string> => {
    const res = await roundTrip(token, TOOL);
    assert.equal(res.json.result?.resultType, 'input_required', res.text);
    return res.json.result.requestState as string;
  };
  const assertStateRefused = (res: RawResponse): void => {
    assert.equal(res.json.error?.code, -32602, res.text);
    assert.match(res.json.error.message, /requestState/);
    assert.doesNotMatch(res.text, /state-ok/);
    assertRevealsNothing(res.text, ws1);
  };

  test('the state completes the call for the user it was made for (the control)', async () => {
    const res = await roundTrip(ws1.ws.owner.token, TOOL, { inputResponses: ANSWER, requestState: await mint() });

    assert.equal(res.json.result.content[0].text, 'state-ok: confirmed=true', res.text);
  });

  test('a state replayed by another user of the same workspace is refused with -32602', async () => {
    assertStateRefused(await roundTrip(ws1.ws.member.token, TOOL, { inputResponses: ANSWER, requestState: await mint() }));
  });

  test('a state replayed by a user of workspace 2 is refused with -32602', async () => {
    assertStateRefused(await roundTrip(ws2.ws.owner.token, TOOL, { inputResponses: ANSWER, requestState: await mint() }));
  });

  test('a state replayed by a user of workspace 2 who has the same user id is refused: states are bound to the workspace', async () => {
    assertStateRefused(await roundTrip(twin.token, TOOL, { inputResponses: ANSWER, requestState: await mint() }));
  });

  test('a state with one character flipped is refused with -32602', async () => {
    const [h, p, s] = (await mint()).split('.');
    // A character well inside the payload: the last one may carry bits base64url decoding drops.
    const flipped = `${h}.${p!.slice(0, 10)}${p![10] === 'A' ? 'B' : 'A'}${p!.slice(11)}.${s}`;

    assertStateRefused(await roundTrip(ws1.ws.owner.token, TOOL, { inputResponses: ANSWER, requestState: flipped }));
  });

  test('a state replayed on another tool is refused with -32602', async () => {
    assertStateRefused(
      await roundTrip(ws1.ws.owner.token, 'test_input_required_result_tampered_state', {
        inputResponses: ANSWER,
        requestState: await mint(),
      }),
    );
  });

  test('a state older than its 15 minutes is refused with -32602', async () => {
    // Only Date is moved back, for the call that mints the state; nothing else in the run is timed by it.
    mock.timers.enable({ apis: ['Date'], now: Date.now() - 16 * 60_000 });
    let stale: string;
    try {
      stale = await mint();
    } finally {
      mock.timers.reset();
    }

    assertStateRefused(await roundTrip(ws1.ws.owner.token, TOOL, { inputResponses: ANSWER, requestState: stale }));
  });
});

// ---- 5. Ids of another workspace in every tool, prompt and resource -------------------------

describe('ids of workspace 2 in every tool, prompt and resource template, used by the owner of workspace 1', () => {
  type Kind = 'task' | 'project' | 'comment' | 'attachment' | 'user' | 'activity' | 'view';
  type JsonSchema = {
    type?: string;
    enum?: unknown[];
    const?: unknown;
    minimum?: number;
    format?: string;
    pattern?: string;
    description?: string;
    anyOf?: JsonSchema[];
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  const KINDS: readonly Kind[] = ['task', 'project', 'comment', 'attachment', 'user', 'activity', 'view'];
  /** Tools whose id arguments filter a history rather than name something that must exist. */
  const HISTORY_FILTERS = new Set(['activity_list']);

  /**
   * Which kind of id an argument takes, read from its declaration: a name ending in Id, or a
   * description that asks for one ("a userId", "A projectId, or none"). A new tool is covered
   * without a change here; an id of a kind this file does not know fails the test until it does.
   */
  const idKindOf = (name: string, schema: JsonSchema): Kind | undefined => {
    const descriptions = [schema.description, ...(schema.anyOf ?? []).map((s) => s.description)].join(' ');
    const named = /^(\w+)Id$/.exec(name)?.[1] ?? /\b([a-z]+)Id\b/.exec(descriptions)?.[1];
    if (named === undefined) return undefined;
    assert.ok(
      (KINDS as readonly string[]).includes(named),
      `argument ${name} takes a ${named} id, which this catalogue does not know yet: add it`,
    );
    return named as Kind;
  };

  /** A valid value for an argument that is not an id: enough to get past validation to the lookup. */
  const plainValue = (schema: JsonSchema): unknown => {
    const s = schema.anyOf?.find((b) => b.type !== 'null') ?? schema;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum.at(-1);
    if (s.type === 'integer' || s.type === 'number') return s.minimum ?? 1;
    if (s.type === 'boolean') return false;
    if (s.type === 'array') return [];
    return 'catalogue probe';
  };

  /** Free text (a title, a name, notes): always valid, and it gives a tool that insists on a change one to make. */
  // Days, repeat rules and reminders are strings too (ISO or words such as "friday", "every monday",
  // "1 hour before"), but not free text: the probe is no date, no rule and no reminder.
  const DAY_ARGS = new Set(['dueDate', 'dueBefore', 'dueAfter', 'date', 'since', 'until', 'repeat', 'remind']);
  const isFreeText = (schema: JsonSchema, name?: string): boolean => {
    if (name !== undefined && DAY_ARGS.has(name)) return false;
    const s = schema.anyOf?.find((b) => b.type !== 'null') ?? schema;
    return s.type === 'string' && !s.enum && s.const === undefined && !s.format && !s.pattern;
  };

  const foreign = (): Record<Kind, string> => ({
    task: ws2.taskIds[1]!,
    project: ws2.projectId,
    comment: ws2.commentIds[0]!,
    attachment: ws2.attachmentIds[0]!,
    user: ws2.userIds.at(-1)!,
    activity: ws2.activityIds[0]!,
    view: ws2.viewIds[0]!,
  });
  // Workspace 1's own, untouched since seeding (so version 1 is their version): with them in the
  // other arguments, the foreign id is the one thing the call can be refused for.
  const own = (): Record<Kind, string> => ({
    task: ws1.taskIds[2]!,
    project: ws1.projectId,
    comment: ws1.commentIds[0]!,
    attachment: ws1.attachmentIds[0]!,
    user: ws1.ws.member.userId,
    activity: ws1.activityIds[2]!,
    view: ws1.viewIds[0]!,
  });
  const nowhere = (kind: Kind): string =>
    kind === 'user'
      ? `usr_member_${randomUUID().slice(0, 8)}`
      : kind === 'activity'
        ? `act_${randomUUID()
            .replaceAll(/[^0-9a-h]/g, '')
            .slice(0, 16)
            .padEnd(16, '0')}`
        : kind === 'attachment'
          ? `${randomUUID()}.${randomUUID()
              .replaceAll(/[^a-z]/g, '')
              .padEnd(10, 'q')
              .slice(0, 10)}`
          : kind === 'view'
            ? `view_${randomUUID().replaceAll('-', '').slice(0, 16)}`
            : randomUUID();

  /** The answer with the request id and the probed ids blanked: what must not differ between an id of workspace 2 and one of nowhere. */
  const shape = (res: RawResponse, ids: readonly string[]): string => {
    let text = JSON.stringify(res.json.error ?? res.json.result);
    for (const [i, id] of ids.entries()) text = text.replaceAll(id, `<id${i}>`);
    return `${res.status} ${text}`;
  };

  let ws1Before: Awaited<ReturnType<typeof snapshot>>;
  before(async () => {
    ws1Before = await snapshot(ws1);
  });

  test("every product tool with an id argument refuses each of workspace 2's ids exactly as it refuses an id that exists nowhere", async () => {
    const listed = await modernCall(server, 'tools/list', {}, { token: ws1.ws.owner.token });
    type Listed = { name: string; inputSchema: JsonSchema; annotations: { readOnlyHint: boolean } };
    const tools = (listed.json.result.tools as Listed[]).filter((t) => PRODUCT_TOOLS.some((p) => p.name === t.name));
    assert.deepEqual(tools.map((t) => t.name).sort(), PRODUCT_TOOLS.map((t) => t.name).sort(), 'the owner sees every product tool');
    const probed: string[] = [];

    for (const tool of tools) {
      const props = Object.entries(tool.inputSchema.properties ?? {});
      const idProps = props.flatMap(([name, schema]) => {
        const kind = idKindOf(name, schema);
        return kind ? [{ name, kind }] : [];
      });
      if (idProps.length === 0) continue;
      const required = new Set(tool.inputSchema.required ?? []);
      const base: Record<string, unknown> = {};
      for (const [name, schema] of props) {
        const kind = idKindOf(name, schema);
        if (required.has(name)) base[name] = kind ? own()[kind] : plainValue(schema);
        // Not on a read: a text filter would make any list come back empty, foreign id or not.
        else if (!kind && !tool.annotations.readOnlyHint && name !== 'cursor' && isFreeText(schema, name)) base[name] = 'catalogue probe';
      }
      // Each id argument foreign on its own, then (with several) all of them foreign together.
      const cases = idProps.map((p) => [p]);
      if (idProps.length > 1) cases.push(idProps);

      for (const probe of cases) {
        const ids = probe.map((p) => foreign()[p.kind]);
        const strangers = probe.map((p) => nowhere(p.kind));
        const withIds = (values: string[]) => ({ ...base, ...Object.fromEntries(probe.map((p, i) => [p.name, values[i]])) });
        const label = `${tool.name}(${probe.map((p) => p.name).join(', ')})`;

        // A client that follows tasks, so the long tools (workspace_import, workspace_export) reach their ids too.
        const asClient = { token: ws1.ws.owner.token, meta: FOLLOWS_TASKS };
        const res = await modernCall(server, 'tools/call', { name: tool.name, arguments: withIds(ids) }, asClient);
        const control = await modernCall(server, 'tools/call', { name: tool.name, arguments: withIds(strangers) }, asClient);

        const refused = res.json.error?.code === -32602 || res.json.result?.isError === true;
        // The history's filters name what may no longer exist (a deleted project's changes stay
        // listable), so there an id of workspace 2 filters to nothing instead, like one of nowhere.
        const filteredOut = HISTORY_FILTERS.has(tool.name) && res.json.result?.structuredContent?.returned === 0;
        assert.ok(refused || filteredOut, `${label} accepted an id of workspace 2: ${res.text}`);
        // Refused for the id, not for some other fault of the call (which would leave the id untested).
        assert.ok(filteredOut || ids.some((id) => res.text.includes(id)), `${label} was refused without naming the id: ${res.text}`);
        assert.equal(
          shape(res, ids),
          shape(control, strangers),
          `${label} answers an id of workspace 2 differently from one that exists nowhere`,
        );
        assertRevealsNothing(res.text, ws2, ids);
        probed.push(label);
      }
    }

    // The probe found what it must: ids of every kind, in the tools that take them.
    for (const expected of [
      'task_get(taskId)',
      'comment_delete(commentId)',
      'member_remove(userId)',
      'task_update(assignee)',
      'task_create(projectId)',
      'agenda_get(assignee)',
      'change_undo(activityId)',
      'activity_list(actor)',
    ]) {
      assert.ok(probed.includes(expected), `${expected} was not probed; probed: ${probed.join(' ')}`);
    }
  });

  test('inviting an e-mail address of workspace 2 is refused without naming workspace 2 or its member', async () => {
    const member = ws2.ws.member;

    const res = await modernCall(
      server,
      'tools/call',
      { name: 'member_invite', arguments: { email: member.email, name: 'Anyone' } },
      { token: ws1.ws.owner.token },
    );

    assert.equal(res.json.result.isError, true, res.text);
    assertRevealsNothing(res.text, ws2, [member.email]);
    assert.ok(!res.text.includes(member.name), res.text);
  });

  test('every prompt with an id argument answers an id (or name) of workspace 2 exactly as one that exists nowhere', async () => {
    const listed = await modernCall(server, 'prompts/list', {}, { token: ws1.ws.owner.token });
    type Listed = { name: string; arguments: { name: string; description?: string; required: boolean }[] };
    const prompts = (listed.json.result.prompts as Listed[]).filter((p) => PRODUCT_PROMPTS.some((d) => d.name === p.name));
    assert.deepEqual(prompts.map((p) => p.name).sort(), PRODUCT_PROMPTS.map((p) => p.name).sort());
    let probes = 0;

    for (const prompt of prompts) {
      for (const arg of prompt.arguments) {
        const kind = idKindOf(arg.name, { ...(arg.description ? { description: arg.description } : {}) });
        if (!kind) continue;
        // A prompt that takes "the project name or projectId" is tried with the name as well.
        const values = kind === 'project' ? [ws2.projectId, ws2.projectName] : [foreign()[kind]];
        for (const value of values) {
          const stranger: string = value === ws2.projectName ? `Nowhere ${randomUUID().slice(0, 8)}` : nowhere(kind);
          const get = (v: string): Promise<RawResponse> =>
            modernCall(server, 'prompts/get', { name: prompt.name, arguments: { [arg.name]: v } }, { token: ws1.ws.owner.token });

          const res = await get(value);
          const control = await get(stranger);

          assert.equal(
            shape(res, [value]),
            shape(control, [stranger]),
            `${prompt.name}(${arg.name}) tells a value of workspace 2 from one of nowhere`,
          );
          assertRevealsNothing(res.text, ws2, [value]);
          probes++;
        }
      }
    }
    assert.ok(probes > 0, 'catch_up_on takes a project');
  });

  for (const era of [MODERN, '2025-11-25'] as const) {
    test(`every resource template answers a uri with an id of workspace 2 as an unknown resource (${era})`, async () => {
      const listed = await modernCall(server, 'resources/templates/list', {}, { token: ws1.ws.owner.token });
      const templates = (listed.json.result.resourceTemplates as { uriTemplate: string }[]).filter((t) =>
        PRODUCT_RESOURCE_TEMPLATES.some((d) => d.uriTemplate === t.uriTemplate),
      );
      assert.equal(templates.length, PRODUCT_RESOURCE_TEMPLATES.length);
      const read = (uri: string) =>
        era === MODERN
          ? modernCall(server, 'resources/read', { uri }, { token: ws1.ws.owner.token })
          : legacyCall(server, 'resources/read', { uri }, { token: ws1.ws.owner.token, version: era });

      for (const { uriTemplate } of templates) {
        const variable = /\{(\w+)\}/.exec(uriTemplate)![1]!;
        const kind = idKindOf(variable, {});
        assert.ok(kind, `${uriTemplate} names no id kind`);
        const [id, stranger] = [foreign()[kind], nowhere(kind)];
        const uri = uriTemplate.replace(`{${variable}}`, id);

        const [res, control] = [await read(uri), await read(uriTemplate.replace(`{${variable}}`, stranger))];

        assert.equal(res.json.error?.code, era === MODERN ? -32602 : -32002, res.text);
        assert.deepEqual(res.json.error.data, { uri });
        assert.equal(shape(res, [id]), shape(control, [stranger]));
        assertRevealsNothing(res.text, ws2, [id]);
      }
    });
  }

  test('afterwards both workspaces read back exactly as before, each through its own owner', async () => {
    assert.deepEqual(await snapshot(ws2), ws2Before, 'workspace 2 changed');
    assert.deepEqual(await snapshot(ws1), ws1Before, 'a refused call changed workspace 1');
  });
});

// ---- 6. Oversized and slow bodies -----------------------------------------------------------

describe('oversized and slow bodies', () => {
  /** A ping of exactly `size` bytes. */
  const pingOfSize = (size: number): string => {
    const head = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"';
    const tail = '"}}';
    return `${head}${'x'.repeat(size - head.length - tail.length)}${tail}`;
  };

  test('a body of 1 MiB + 1 byte is 413 before any credential is looked at: no DynamoDB request, no key-set fetch (protocol-table.test.ts: 413)', async () => {
    const body = pingOfSize(MAX_BODY_BYTES + 1);
    const jwt = await signToken(rsa, { email: ws1.ws.owner.email }, jwtDefaults);
    const [operationsBefore, fetchesBefore] = [proxy.operations.length, jwks.fetches];

    const answers = await Promise.all(
      [undefined, ws1.ws.owner.token, jwt, 'doers_pat_never_minted'].map((token) =>
        post(urlOf(server), body, { 'mcp-protocol-version': '2025-11-25', ...(token ? { authorization: `Bearer ${token}` } : {}) }),
      ),
    );

    for (const res of answers) {
      assert.equal(res.status, 413, res.text);
      assert.equal(res.json.error.code, -32600);
      assert.equal(res.headers.get('www-authenticate'), null);
    }
    assert.deepEqual(proxy.operations.slice(operationsBefore), []);
    assert.equal(jwks.fetches, fetchesBefore);
  });

  test('a body of exactly 1 MiB is read (the control)', async () => {
    const res = await post(urlOf(server), pingOfSize(MAX_BODY_BYTES), {
      authorization: `Bearer ${ws1.ws.owner.token}`,
      'mcp-protocol-version': '2025-11-25',
    });

    assert.equal(res.status, 200, res.text.slice(0, 200));
  });

  // On Lambda, API Gateway receives and buffers the whole request before the function runs, so a
  // client trickling its bytes never reaches the handler. The local adapter faces the client
  // itself: it bounds how long one request may take to arrive (REQUEST_TIMEOUT_MS). Here the same
  // adapter, with a bound short enough for a test, sits in front of the very app under test.
  describe('through the local HTTP adapter', () => {
    const BOUND_MS = 1_500;
    let adapter: Server;
    let adapterPort: number;
    let invocations = 0;

    before(async () => {
      const handler = buildHandler(server.app);
      adapter = createHttpAdapter(
        async (event, context) => {
          invocations++;
          // Stands in for a tool call that takes its time.
          const delayMs = Number(event.headers['x-catalogue-delay'] ?? 0);
          if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
          return handler(event, context as DoersContext);
        },
        30_000,
        { requestTimeoutMs: BOUND_MS },
      );
      await new Promise<void>((resolve) => adapter.listen(0, '127.0.0.1', () => resolve()));
      adapterPort = (adapter.address() as AddressInfo).port;
    });
    after(
      () =>
        new Promise<void>((resolve) => {
          adapter.closeAllConnections();
          adapter.close(() => resolve());
        }),
    );

    /** Sends `head`, then `drip` every `everyMs` until the server closes the connection (or a safety limit). */
    const trickle = (head: string, drip: string, everyMs: number) =>
      new Promise<{ answer: string; closedAfterMs: number }>((resolve) => {
        const started = Date.now();
        const socket = connect(adapterPort, '127.0.0.1');
        let answer = '';
        const timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
        const safety = setTimeout(() => socket.destroy(), BOUND_MS + 10_000);
        socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
        socket.on('error', () => {});
        socket.on('close', () => {
          clearInterval(timer);
          clearTimeout(safety);
          resolve({ answer, closedAfterMs: Date.now() - started });
        });
        socket.write(head);
      });
    const pingWithToken = (headers: Record<string, string> = {}) =>
      post(
        `http://127.0.0.1:${adapterPort}/mcp`,
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { authorization: `Bearer ${ws1.ws.owner.token}`, 'mcp-protocol-version': '2025-11-25', ...headers },
      );

    test('the local server has a bound, well under the five minutes Node would allow', () => {
      const probe = createHttpAdapter(async () => ({ statusCode: 204 }), 30_000);

      assert.equal(probe.requestTimeout, REQUEST_TIMEOUT_MS);
      assert.ok(REQUEST_TIMEOUT_MS <= 60_000);
      assert.ok(probe.headersTimeout <= probe.requestTimeout);
      probe.close(() => {});
    });

    test('a body that trickles in is cut off with 408 once the bound passes, never reaching the handler, while other clients are served', async () => {
      const invocationsBefore = invocations;
      const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${adapterPort}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${ws1.ws.owner.token}\r\nContent-Length: 1000\r\n\r\n{`;

      const slow = trickle(head, ' ', 50);
      await new Promise((r) => setTimeout(r, BOUND_MS / 4));
      const startedOther = Date.now();
      const other = await pingWithToken();
      const otherMs = Date.now() - startedOther;
      const { answer, closedAfterMs } = await slow;

      assert.equal(other.status, 200);
      assert.ok(otherMs < BOUND_MS, `another client waited ${otherMs} ms`);
      assert.match(answer, /^HTTP\/1\.1 408 /);
      assert.ok(closedAfterMs >= BOUND_MS - 50 && closedAfterMs < BOUND_MS + 2_000, `closed after ${closedAfterMs} ms`);
      assert.equal(invocations - invocationsBefore, 1, 'only the other client reached the handler');
    });

    test('headers that trickle in (slowloris) are cut off the same way', async () => {
      const invocationsBefore = invocations;

      const { answer, closedAfterMs } = await trickle(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${adapterPort}\r\n`, 'X-Drip: 1\r\n', 50);

      assert.match(answer, /^HTTP\/1\.1 408 /);
      assert.ok(closedAfterMs < BOUND_MS + 2_000, `closed after ${closedAfterMs} ms`);
      assert.equal(invocations, invocationsBefore);
    });

    test('the bound is on receiving a request, not on answering it: an idle keep-alive connection and a long call are not cut', async () => {
      const first = await pingWithToken();
      await new Promise((r) => setTimeout(r, BOUND_MS + 300));
      const second = await pingWithToken();
      const long = await pingWithToken({ 'x-catalogue-delay': String(BOUND_MS + 400) });

      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      assert.equal(long.status, 200);
    });
  });
});

// ---- 8. The activity record and undo across workspaces and users ---------------------------------

describe('activity and undo across workspaces and users (workspace-activity.test.ts has undo in depth)', () => {
  test("workspace 2's task, project and people filter workspace 1's history to nothing, and reveal nothing", async () => {
    const as = caller(server, ws1.ws.owner.token);

    const answers = await Promise.all([
      as('activity_list', { task: ws2.taskIds[0] }),
      as('activity_list', { project: ws2.projectId }),
      as('activity_list', { client: 'doers-tests', limit: 100 }),
    ]);

    assert.equal(answers[0]!.structuredContent.returned, 0);
    assert.equal(answers[1]!.structuredContent.returned, 0);
    for (const a of answers) assertRevealsNothing(JSON.stringify(a), ws2, [ws2.taskIds[0]!, ws2.projectId]);
  });

  test('a viewer cannot undo, and a member cannot undo a role change an owner made', async () => {
    const role = (await caller(server, ws1.ws.owner.token)('member_role_set', { userId: ws1.ws.viewer.userId, role: 'member' }))
      .structuredContent;
    await caller(server, ws1.ws.owner.token)('member_role_set', { userId: ws1.ws.viewer.userId, role: 'viewer' });
    const ownTask = ws1.activityIds[1]!;

    // The viewer's token acts as a viewer's (no tasks:write, whatever it was made with): refused before the tool.
    const byViewer = await modernCall(
      server,
      'tools/call',
      { name: 'change_undo', arguments: { activityId: ownTask } },
      { token: ws1.ws.viewer.token },
    );
    const byMember = await caller(server, ws1.ws.member.token)('change_undo', { activityId: role.activityId });

    assert.equal(byViewer.status, 403);
    assert.match(byViewer.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    assert.match(byMember.content[0]!.text, /role too low|team:admin|has changed since/);
    assert.ok(byMember.isError);
  });

  test("a confirmation's state replayed against another task, or after the task changed, deletes nothing", async () => {
    // Arrange: the question for task A, as a client that can show forms gets it.
    const [a, b] = [ws1.taskIds[1]!, ws1.taskIds[2]!];
    const ask = (taskId: string, extra: Record<string, unknown> = {}) =>
      post(
        urlOf(server),
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'task_delete',
            arguments: { taskId },
            ...extra,
            _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } }),
          },
        },
        {
          authorization: `Bearer ${ws1.ws.owner.token}`,
          'mcp-protocol-version': MODERN,
          'mcp-method': 'tools/call',
          'mcp-name': 'task_delete',
        },
      );
    const question = await ask(a);
    assert.equal(question.json.result?.resultType, 'input_required', question.text);
    const yes = {
      inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
      requestState: question.json.result.requestState,
    };

    // Act
    const otherTarget = await ask(b, yes);
    await caller(server, ws1.ws.owner.token)('task_update', {
      taskId: a,
      version: (await caller(server, ws1.ws.owner.token)('task_get', { taskId: a })).structuredContent.version,
      priority: 'P2',
    });
    const afterChange = await ask(a, yes);

    // Assert
    assert.equal(otherTarget.json.error?.code, -32602, otherTarget.text);
    assert.equal(afterChange.json.result?.isError, true, afterChange.text);
    assert.match(afterChange.json.result.content[0].text, /changed between the question and the answer/);
    for (const id of [a, b]) assert.equal((await caller(server, ws1.ws.owner.token)('task_get', { taskId: id })).isError, false);
  });
});

describe('task keys and links across workspaces (workspace-keys-links.test.ts has keys and links in depth)', () => {
  /** Workspace 3 (key SCRT, tasks SCRT-1 … SCRT-6) and workspace 4 (key TEST, no task yet): numbers only 3 has. */
  let ws3: Seeded;
  let ws3Before: Awaited<ReturnType<typeof snapshot>>;
  let ws4: TestWorkspace;
  before(async () => {
    const seeded = await seedWorkspace('5e8c');
    const as3 = caller(server, seeded.ws.owner.token);
    const more: string[] = [];
    for (let i = 4; i <= 6; i++) more.push((await as3('task_create', { title: `SECRET-TITLE-5e8c ${i}` })).structuredContent.taskId);
    ws3 = { ...seeded, taskIds: [...seeded.taskIds, ...more] };
    await setWorkspaceKey(server.app.services, doorSource('admin CLI', OPERATOR, 'workspace key', new Date()), ws3.ws.workspaceId, 'SCRT');
    ws3Before = await snapshot(ws3);
    ws4 = await createTestWorkspace(server);
  });

  /** The answer with the probed values blanked: an id of workspace 3 must read exactly as one of nowhere. */
  const shape = (r: unknown, values: readonly string[]): string => {
    let text = JSON.stringify(r);
    for (const [i, v] of values.entries()) text = text.replaceAll(v, `<v${i}>`);
    return text;
  };

  test("workspace 3's keys and numbers, in every spelling, are refused in workspace 4 as ones nobody has, revealing nothing", async () => {
    const as4 = caller(server, ws4.owner.token);
    const cases: [string, string][] = [
      ['SCRT-5', 'QQQQ-5'],
      ['scrt-5', 'qqqq-5'],
      ['TEST-5', 'TEST-99999'],
      ['#5', '#99999'],
      ['5', '99999'],
    ];

    for (const [theirs, nobodys] of cases) {
      const [res, control] = [await as4('task_get', { taskId: theirs }), await as4('task_get', { taskId: nobodys })];

      assert.equal(res.isError, true, `${theirs}: ${JSON.stringify(res)}`);
      assert.ok(res.content[0]!.text.includes(theirs.replace(/^#/, '')), `${theirs} is named: ${res.content[0]!.text}`);
      assert.equal(shape(res, [theirs, '5']), shape(control, [nobodys, '99999']), `${theirs} reads differently from ${nobodys}`);
      assertRevealsNothing(JSON.stringify(res), ws3, [theirs]);
    }
    const resource = await modernCall(server, 'resources/read', { uri: 'doers://tasks/SCRT-5' }, { token: ws4.owner.token });
    assert.equal(resource.json.error?.code, -32602, resource.text);
    assertRevealsNothing(resource.text, ws3, ['SCRT-5']);
  });

  test("workspace 3's tasks cannot be linked, made parents, bulk-changed or bulk-linked from workspace 4, and are refused as ids of nowhere", async () => {
    // Arrange
    const as4 = caller(server, ws4.owner.token);
    const own = (await as4('task_create', { title: 'Mine' })).structuredContent;
    const [theirs, nobodys] = [ws3.taskIds[4]!, randomUUID()];
    const probes = (id: string): [string, Record<string, unknown>][] => [
      ['task_create', { title: 'Waits', blockedBy: [id] }],
      ['task_update', { taskId: own.key, version: own.version, blockedBy: [id] }],
      ['tasks_create', { tasks: [{ title: 'Waits too', blockedBy: [id] }] }],
      ['tasks_update', { tasks: [{ taskId: id, title: 'Taken over' }] }],
      ['tasks_update', { tasks: [{ taskId: own.key, blockedBy: [id] }] }],
      ['task_create', { title: 'Sub', parent: id }],
      ['task_update', { taskId: own.key, version: own.version, parent: id }],
      ['tasks_create', { tasks: [{ title: 'Sub too', parent: id }] }],
      ['tasks_update', { tasks: [{ taskId: own.key, parent: id }] }],
    ];

    for (const [i, [tool, args]] of probes(theirs).entries()) {
      // Act
      const res = await as4(tool, args);
      const control = await as4(tool, probes(nobodys)[i]![1]);

      // Assert: refused (per item on the bulk tools), for the id, as one that exists nowhere.
      const refused = tool.startsWith('tasks_') ? res.structuredContent.items[0].status === 'refused' : res.isError;
      assert.equal(refused, true, `${tool} accepted a task of workspace 3: ${JSON.stringify(res)}`);
      assert.ok(JSON.stringify(res).includes(theirs), `${tool} was refused without naming the id: ${JSON.stringify(res)}`);
      assert.equal(shape(res.content, [theirs]), shape(control.content, [nobodys]), `${tool} tells a task of workspace 3 from none`);
      assertRevealsNothing(JSON.stringify(res), ws3, [theirs]);
    }
    // Nothing was written on either side: workspace 3 reads back as before, and no task of it gained a dependent.
    assert.deepEqual(await snapshot(ws3), ws3Before, 'workspace 3 changed');
    for (const id of ws3.taskIds) {
      const t = await server.app.services.tasks.get(ws3.ws.workspaceId, id);
      assert.equal(t?.blocks, undefined, id);
      assert.equal(t?.subtaskCount, undefined, id);
    }
    // Their subtasks cannot be listed from here either: a parent of nowhere has none.
    const subs = await as4('tasks_search', { parent: theirs });
    assert.equal(subs.structuredContent.returned, 0, JSON.stringify(subs));
    const mine = await as4('tasks_search', { status: 'any', limit: 100 });
    assert.deepEqual(
      mine.structuredContent.tasks.map((t: { title: string; blockedBy?: unknown }) => [t.title, t.blockedBy]),
      [['Mine', undefined]],
      'workspace 4 holds only its own task, unlinked',
    );
  });
});

describe("status names of another workspace's project (workspace-project-statuses.test.ts has project statuses in depth)", () => {
  test("a status only workspace 5's project has is, in workspace 6, no status: refused as one of nowhere, naming only workspace 6's statuses", async () => {
    // Arrange: workspace 5's project gets a status of its own with a distinctive name
    const ws5 = await seedWorkspace('7b1d');
    const as5 = caller(server, ws5.ws.owner.token);
    const secret = 'Secret-Status-7b1d';
    const version = (await as5('project_get', { projectId: ws5.projectId })).structuredContent.project.version;
    const set = await as5('project_update', {
      projectId: ws5.projectId,
      version,
      statuses: [
        { name: 'Todo', category: 'unstarted' },
        { name: secret, category: 'started' },
        { name: 'Done', category: 'done' },
      ],
    });
    assert.equal(set.isError, false, JSON.stringify(set));
    const mark = (await as5('task_create', { title: 'SECRET-TITLE-7b1d marked', projectId: ws5.projectId, status: secret }))
      .structuredContent;
    const ws5Before = await snapshot(ws5);
    const ws6 = await createTestWorkspace(server);
    const as6 = caller(server, ws6.owner.token);
    const own = (await as6('task_create', { title: 'Mine' })).structuredContent;
    const nobodys = 'Nobodys-Status-0000';
    const probes = (status: string): [string, Record<string, unknown>][] => [
      ['task_create', { title: 'Takes it', status }],
      ['task_update', { taskId: own.key, version: own.version, status }],
      ['tasks_create', { tasks: [{ title: 'Takes it too', status }] }],
      ['tasks_update', { tasks: [{ taskId: own.key, status }] }],
      ['tasks_search', { status }],
    ];

    for (const [i, [tool, args]] of probes(secret).entries()) {
      // Act
      const res = await as6(tool, args);
      const control = await as6(tool, probes(nobodys)[i]![1]);

      // Assert: refused (per item on the bulk tools), naming workspace 6's own statuses, as a name of nowhere.
      const refused =
        tool === 'tasks_create' || tool === 'tasks_update' ? res.structuredContent.items[0].status === 'refused' : res.isError;
      assert.equal(refused, true, `${tool} took a status of workspace 5: ${JSON.stringify(res)}`);
      assert.match(JSON.stringify(res.content), /Backlog, Todo, In progress, In review, Done, Canceled/);
      assert.equal(
        JSON.stringify(res.content).replaceAll(secret, '<s>'),
        JSON.stringify(control.content).replaceAll(nobodys, '<s>'),
        `${tool} tells workspace 5's status from none`,
      );
      assertRevealsNothing(JSON.stringify(res), ws5, [secret]);
    }
    // Nothing was written on either side.
    assert.deepEqual(await snapshot(ws5), ws5Before, 'workspace 5 changed');
    assert.equal((await as5('task_get', { taskId: mark.taskId })).structuredContent.status, secret);
    const mine = await as6('tasks_search', { status: 'any', limit: 100 });
    assert.deepEqual(
      mine.structuredContent.tasks.map((t: { title: string; status: string }) => [t.title, t.status]),
      [['Mine', 'Todo']],
    );
  });
});

describe('subtask trees raced (workspace-subtasks.test.ts has placing, levels and cycles in depth)', () => {
  test('two moves at the same moment that would together make a task its own ancestor: never both land', async () => {
    const own = await createTestWorkspace(server);
    const as = caller(server, own.owner.token);
    for (let round = 0; round < 8; round++) {
      // Arrange: two top-level tasks, each about to go below the other.
      const a = (await as('task_create', { title: `Race A ${round}` })).structuredContent;
      const b = (await as('task_create', { title: `Race B ${round}` })).structuredContent;

      // Act
      const [ab, ba] = await Promise.all([
        as('task_update', { taskId: a.key, version: a.version, parent: b.key }),
        as('task_update', { taskId: b.key, version: b.version, parent: a.key }),
      ]);

      // Assert: at most one landed, and the tree reads acyclic.
      assert.ok(ab.isError || ba.isError, `both landed in round ${round}`);
      const [ga, gb] = [
        (await as('task_get', { taskId: a.key })).structuredContent,
        (await as('task_get', { taskId: b.key })).structuredContent,
      ];
      assert.ok(!(ga.parent === b.key && gb.parent === a.key), `a cycle in round ${round}`);
    }
  });
});

describe('webhooks to addresses inside (address-guard.test.ts and webhooks.test.ts have the guard and delivery in depth)', () => {
  /** Every class of address a webhook may not reach, each in the forms an attacker would try. */
  const INSIDE: readonly (readonly [string, string])[] = [
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.0.1', 'private'],
    ['fd00::1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.0.0.53', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.64.0.1', 'cgnat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['0.0.0.1', 'this-network'],
    ['224.0.0.251', 'multicast'],
    ['ff02::fb', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['64:ff9b::a9fe:a9fe', 'reserved'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:100.64.0.1', 'cgnat'],
  ];
  /** Each inside address behind a name of its own: DNS is not reachable here, and the attack is the name. */
  const nameOf = (i: number) => `inside-${i}.attacker.example`;
  const resolving =
    (table: Readonly<Record<string, string>>) =>
    async (host: string): Promise<{ address: string; family: 4 | 6 }[]> => {
      const address = table[host];
      if (!address) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return [{ address, family: address.includes(':') ? 6 : 4 }];
    };
  const insideNames = Object.fromEntries(INSIDE.map(([address], i) => [nameOf(i), address]));

  let hooks: Server;
  let hookOrigin: string;
  /**
   * What the loopback receiver was sent (path, webhook-id), and what each path answers. The local
   * server's own notifier delivers the workspace's changes too, so a test counts its own notice's.
   */
  const hits: { path: string; id: string }[] = [];
  const answers = new Map<string, { status: number; location?: string }>();
  before(async () => {
    hooks = createServer((req, res) => {
      hits.push({ path: req.url ?? '', id: String(req.headers['webhook-id']) });
      req.resume();
      const answer = answers.get(req.url ?? '') ?? { status: 200 };
      res.writeHead(answer.status, answer.location ? { location: answer.location } : {});
      res.end();
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    hookOrigin = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => hooks.close(() => resolve())));

  const db = () => createDocumentClient({ endpoint: server.dynamodbEndpoint });
  const ownerCtx = () => writeContextOf(server, ws1.ws.workspaceId, { ...ws1.ws.owner });
  const refusedUrl = async (url: string, resolve = resolving(insideNames), allowLoopback = false) => {
    try {
      await addWebhook(await ownerCtx(), { url }, { allowLoopback, resolve });
    } catch (err) {
      assert.ok(err instanceof ToolRefusal, String(err));
      return err;
    }
    assert.fail(`${url} was added`);
  };

  test('every inside address is refused at add time, as a literal and behind a name, naming its class and not the address', async () => {
    for (const [i, [address, cls]] of INSIDE.entries()) {
      for (const url of [`https://${address.includes(':') ? `[${address}]` : address}/hook`, `https://${nameOf(i)}/hook`]) {
        const refusal = await refusedUrl(url);
        assert.equal(refusal.reason, 'invalid-argument', url);
        const { problem: _problem, ...typed } = refusal.data;
        assert.deepEqual(typed, { param: 'url', cause: 'forbidden-address', addressClass: cls }, url);
        if (url.includes(nameOf(i))) assert.ok(!refusal.message.includes(address), `${url}: the answer names what the name resolves to`);
      }
    }
    assert.deepEqual(await server.app.services.webhooks.list(ws1.ws.workspaceId), [], 'nothing was written');
  });

  test('plain http, other schemes, credentials in the URL and loopback without allowLoopback are refused at add time', async () => {
    const resolve = resolving({ 'hooks.example.com': '93.184.216.34' });
    const cases: readonly (readonly [string, string])[] = [
      ['http://hooks.example.com/x', 'not-https'],
      ['ftp://hooks.example.com/x', 'not-https'],
      ['file:///etc/passwd', 'not-https'],
      ['https://admin:pw@hooks.example.com/x', 'credentials-in-url'],
      [`${hookOrigin}/x`, 'forbidden-address'],
      ['https://2130706433/', 'forbidden-address'],
      ['https://0xa9fea9fe/latest/meta-data/', 'forbidden-address'],
    ];
    for (const [url, cause] of cases) assert.equal((await refusedUrl(url, resolve)).data.cause, cause, url);
    assert.deepEqual(await server.app.services.webhooks.list(ws1.ws.workspaceId), []);
  });

  test('a name that resolves inside only after it was added (DNS rebinding) is refused at delivery; nothing is sent', async () => {
    const port = (hooks.address() as AddressInfo).port;
    const url = `https://rebind.attacker.example:${port}/rebound`;
    const { webhook } = await addWebhook(
      await ownerCtx(),
      { url },
      { allowLoopback: false, resolve: resolving({ 'rebind.attacker.example': '93.184.216.34' }) },
    );
    const client = db();
    try {
      for (const address of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '::ffff:127.0.0.1']) {
        const dispatch = createWebhookDispatch({
          db: client,
          table: server.app.config.tables.workspace,
          allowLoopback: false,
          resolve: resolving({ 'rebind.attacker.example': address }),
        });
        const outcome = await dispatch.test(ws1.ws.workspaceId, webhook.webhookId, new Date());
        assert.equal(outcome.ok, false, address);
        assert.equal(!outcome.ok && outcome.cause, 'forbidden-address', address);
      }
      assert.deepEqual(
        hits.filter((h) => h.path === '/rebound'),
        [],
        'the receiver inside got nothing',
      );
    } finally {
      await removeWebhook(await ownerCtx(), webhook.webhookId);
      client.destroy();
    }
  });

  test('a redirect to an inside address is not followed: a failed delivery naming the class, never retried', async () => {
    // The local server's dispatcher (loopback allowed), so the first hop reaches the receiver on 127.0.0.1.
    const { webhook } = await addWebhook(await ownerCtx(), { url: `${hookOrigin}/redirects` }, { allowLoopback: true });
    const client = db();
    const dispatch = createWebhookDispatch({
      db: client,
      table: server.app.config.tables.workspace,
      allowLoopback: true,
      resolve: resolving(insideNames),
    });
    try {
      for (const [i, [address, cls]] of INSIDE.entries()) {
        if (cls === 'loopback') continue; // loopback is this dispatcher's own: a redirect there is a plain redirect (below)
        for (const location of [`https://${nameOf(i)}/steal`, `http://${address.includes(':') ? `[${address}]` : address}/steal`]) {
          answers.set('/redirects', { status: 302, location });
          const outcome = await dispatch.test(ws1.ws.workspaceId, webhook.webhookId, new Date());
          assert.deepEqual(
            outcome,
            { ok: false, retryable: false, cause: 'redirect-to-forbidden-address', status: 302, addressClass: cls },
            location,
          );
        }
      }
      answers.set('/redirects', { status: 307, location: `${hookOrigin}/elsewhere` });
      assert.deepEqual(await dispatch.test(ws1.ws.workspaceId, webhook.webhookId, new Date()), {
        ok: false,
        retryable: false,
        cause: 'redirect',
        status: 307,
      });
      assert.deepEqual(
        hits.filter((h) => h.path === '/elsewhere'),
        [],
        'no redirect was followed',
      );

      // Through the dispatcher proper: kept as failed at once, not tried again.
      answers.set('/redirects', { status: 301, location: 'https://169.254.169.254/latest/meta-data/' });
      const now = new Date();
      const notice = {
        id: `act_redirect_${randomUUID().slice(0, 8)}:assigned`,
        kind: 'assigned' as const,
        workspaceKey: 'SCRT',
        taskKey: 'SCRT-1',
        taskId: ws1.taskIds[0]!,
        taskTitle: 'a task',
        actorName: 'Ada',
        client: 'test',
        at: now.toISOString(),
        summary: 'Ada assigned SCRT-1',
      };
      await dispatch.dispatch(ws1.ws.workspaceId, [notice], now);
      await dispatch.retryDue(new Date(now.getTime() + 2 * 60_000));
      assert.equal(hits.filter((h) => h.id === notice.id).length, 1, 'one try, no retry');
      const [kept] = await server.app.services.webhooks.list(ws1.ws.workspaceId);
      assert.equal(kept!.lastFailure?.cause, 'redirect-to-forbidden-address');
      // At least this one (the local server's notifier may have sent the workspace's own changes there too).
      assert.ok((kept!.failedDeliveries ?? 0) >= 1);
    } finally {
      answers.delete('/redirects');
      await removeWebhook(await ownerCtx(), webhook.webhookId);
      client.destroy();
    }
  });
});
