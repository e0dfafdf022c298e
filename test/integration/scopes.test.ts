import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp } from '../../lambda/app.js';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import { buildHandler } from '../../lambda/http/pipeline.js';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { createLogger } from '../../lambda/observability/logger.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { dataDirKeySource } from '../../lambda/platform/key-ring.js';
import type { Scope } from '../../lambda/vocabulary.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { PRODUCT_PROMPTS, PRODUCT_RESOURCE_TEMPLATES, PRODUCT_TOOLS } from '../../lambda/workspace/surface/catalog.js';
import { httpEvent, lambdaContext } from '../helpers/events.js';
import { modernCall, type RawResponse, startTestServer, urlOf } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';

// Scopes decide visibility and access (docs/auth.md), on the product's own tools, prompts and
// resource templates. What each needs is read from its declaration; the registries' filtering and
// refusals are what is under test.
const ALL_SCOPES = ['tasks:read', 'tasks:write', 'team:read', 'team:admin'];
const coveredBy = (scopes: readonly string[]) => (scope: Scope | null) => scope === null || scopes.includes(scope);
const toolsFor = (scopes: readonly string[]) =>
  PRODUCT_TOOLS.filter((t) => coveredBy(scopes)(t.scope))
    .map((t) => t.name)
    .sort();
const promptsFor = (scopes: readonly string[]) =>
  PRODUCT_PROMPTS.filter((p) => p.tools.every((name) => coveredBy(scopes)(PRODUCT_TOOLS.find((t) => t.name === name)!.scope)))
    .map((p) => p.name)
    .sort();

let server: LocalServer;
const tokenWith = async (scopes: Scope[]): Promise<string> => {
  const secret = generateTokenSecret();
  await writesOf(server.app.services).tokens.register(secret, {
    workspaceId: DEMO_WORKSPACE_ID,
    userId: DEMO_OWNER.userId,
    scopes,
    label: scopes.join(' ') || 'no scopes',
    createdAt: new Date().toISOString(),
  });
  return secret;
};
let readOnly: string;

before(async () => {
  server = await startTestServer({}, { observer: new RecordingObserver() });
  readOnly = await tokenWith(['tasks:read']);
});
after(() => server.close());

const names = (res: RawResponse, key: 'tools' | 'prompts' | 'resourceTemplates'): string[] =>
  (res.json.result[key] as { name: string }[]).map((x) => x.name);

/** The message names the scope the call needs; the challenge asks for it on top of what the token holds. */
const assertInsufficientScope = (res: RawResponse, required: string, challenge: string): void => {
  assert.equal(res.status, 403, res.text);
  assert.equal(
    res.headers.get('www-authenticate'),
    `Bearer error="insufficient_scope", scope="${challenge}", resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`,
  );
  assert.equal(res.json.error.code, -32003);
  assert.match(res.json.error.message, new RegExp(`needs the scope ${required}`));
};

describe('what a token sees', () => {
  test('a tasks:read token lists only me_get, the read tools and the caller’s own inbox and settings, and the prompts and templates it covers', async () => {
    const [tools, prompts, templates] = await Promise.all([
      modernCall(server, 'tools/list', {}, { token: readOnly }),
      modernCall(server, 'prompts/list', {}, { token: readOnly }),
      modernCall(server, 'resources/templates/list', {}, { token: readOnly }),
    ]);
    const listed = tools.json.result.tools as { name: string; annotations: { readOnlyHint: boolean } }[];

    assert.deepEqual(names(tools, 'tools').sort(), toolsFor(['tasks:read']));
    // What changes only the caller's own state (their inbox's marks, their settings) reads the workspace and writes nothing of it.
    const OWN_STATE = ['inbox_mark', 'me_update'];
    assert.ok(
      listed.every((t) => t.annotations.readOnlyHint || OWN_STATE.includes(t.name)),
      'read tools only, besides the caller’s own state',
    );
    assert.ok(names(tools, 'tools').includes('tasks_search'));
    assert.ok(!names(tools, 'tools').includes('task_create'));
    assert.deepEqual(names(prompts, 'prompts').sort(), promptsFor(['tasks:read']));
    assert.ok(!names(prompts, 'prompts').includes('triage_inbox'), 'triage_inbox drives task_update');
    assert.deepEqual(
      names(templates, 'resourceTemplates').sort(),
      PRODUCT_RESOURCE_TEMPLATES.filter((t) => coveredBy(['tasks:read'])(t.scope))
        .map((t) => t.name)
        .sort(),
    );
    assert.ok(names(templates, 'resourceTemplates').length > 0);
  });

  test('a token without scopes sees me_get only, no prompt, no template, and may call me_get', async () => {
    const none = await tokenWith([]);

    const [tools, prompts, templates, me] = await Promise.all([
      modernCall(server, 'tools/list', {}, { token: none }),
      modernCall(server, 'prompts/list', {}, { token: none }),
      modernCall(server, 'resources/templates/list', {}, { token: none }),
      modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token: none }),
    ]);

    assert.deepEqual(names(tools, 'tools'), ['me_get']);
    assert.deepEqual(names(prompts, 'prompts'), []);
    assert.deepEqual(names(templates, 'resourceTemplates'), []);
    assert.equal(me.status, 200);
    assert.deepEqual(me.json.result.structuredContent.scopes, []);
  });

  test('team scopes open the member tools only', async () => {
    const team = await tokenWith(['team:read', 'team:admin']);

    const tools = await modernCall(server, 'tools/list', {}, { token: team });

    assert.deepEqual(names(tools, 'tools').sort(), toolsFor(['team:read', 'team:admin']));
    assert.ok(names(tools, 'tools').includes('member_invite'));
    assert.ok(!names(tools, 'tools').includes('tasks_search'));
  });

  test('a token with every scope sees every tool and prompt', async () => {
    const [tools, prompts] = await Promise.all([modernCall(server, 'tools/list'), modernCall(server, 'prompts/list')]);

    assert.deepEqual(names(tools, 'tools').sort(), PRODUCT_TOOLS.map((t) => t.name).sort());
    assert.deepEqual(names(prompts, 'prompts').sort(), PRODUCT_PROMPTS.map((p) => p.name).sort());
  });
});

describe('what a token may do', () => {
  test('calling a tool outside the scopes is 403 insufficient_scope asking for the granted scopes plus the one needed (step-up)', async () => {
    const res = await modernCall(server, 'tools/call', { name: 'task_create', arguments: { title: 'Ship it' } }, { token: readOnly });

    assertInsufficientScope(res, 'tasks:write', 'tasks:read tasks:write');
  });

  test('the same on the handshake era', async () => {
    const res = await fetch(urlOf(server), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${readOnly}`, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'member_invite', arguments: {} } }),
    });
    const text = await res.text();

    assertInsufficientScope(
      { status: res.status, headers: res.headers, text, json: JSON.parse(text) },
      'team:admin',
      'tasks:read team:admin',
    );
  });

  test('reading a resource and getting a prompt outside the scopes are refused the same way', async () => {
    const teamOnly = await tokenWith(['team:read']);
    const [read, got] = await Promise.all([
      modernCall(server, 'resources/read', { uri: 'doers://tasks/tsk_anything' }, { token: teamOnly }),
      modernCall(server, 'prompts/get', { name: 'triage_inbox', arguments: {} }, { token: readOnly }),
    ]);

    assertInsufficientScope(read, 'tasks:read', 'team:read tasks:read');
    // A prompt asks for every scope it needs at once.
    assertInsufficientScope(got, 'tasks:write', 'tasks:read tasks:write');
  });

  test('a covered tool runs', async () => {
    const res = await modernCall(server, 'tools/call', { name: 'projects_list', arguments: {} }, { token: readOnly });

    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.result.isError, false, res.text);
  });

  test('the official SDK client sees the same: read tools listed, a write call refused with 403', async () => {
    const client = new Client({ name: 'scope-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(urlOf(server)), { requestInit: { headers: { authorization: `Bearer ${readOnly}` } } }),
    );
    try {
      const { tools } = await client.listTools();
      const refused = await client.callTool({ name: 'task_create', arguments: { title: 'Ship it' } }).then(
        () => undefined,
        (err: unknown) => err as { code?: number; message: string },
      );

      assert.deepEqual(tools.map((t) => t.name).sort(), toolsFor(['tasks:read']));
      assert.equal(refused?.code, 403);
      assert.match(refused?.message ?? '', /needs the scope tasks:write/);
    } finally {
      await client.close();
    }
  });
});

describe('advertised scopes', () => {
  test('the metadata document and the 401 challenge name the scopes the registered tools need', async () => {
    const [meta, unauth] = await Promise.all([
      fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`).then((r) => r.json() as Promise<Record<string, unknown>>),
      fetch(urlOf(server), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      }),
    ]);
    const challengeScope = /scope="([^"]*)"/.exec(unauth.headers.get('www-authenticate') ?? '')?.[1] ?? '';

    assert.deepEqual([...(meta.scopes_supported as string[])].sort(), [...ALL_SCOPES].sort());
    assert.deepEqual(challengeScope.split(' ').sort(), [...ALL_SCOPES].sort());
    assert.deepEqual(meta.bearer_methods_supported, ['header']);
  });
});

describe('the public URL comes from configuration only', () => {
  const PUBLIC = 'https://mcp.example.com';
  const app = createApp({
    config: loadConfig({
      DOERS_PUBLIC_URL: PUBLIC,
      DOERS_DATA_DIR: ':memory:',
      DOERS_JWT_ISSUER: 'https://login.example.com/realms/doers',
      DOERS_JWT_AUDIENCE: 'doers-mcp',
      DOERS_JWKS_URI: 'https://login.example.com/realms/doers/protocol/openid-connect/certs',
    }),
    // Neither request below reaches DynamoDB: the metadata needs no credential, the 401 no lookup.
    db: createDocumentClient({ endpoint: 'http://127.0.0.1:9' }),
    keys: dataDirKeySource(':memory:'),
    logger: createLogger(),
    observer: new RecordingObserver(),
  });
  const handler = buildHandler(app);
  const forged = {
    host: 'evil.example',
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'http',
    forwarded: 'host=evil.example;proto=http',
  };

  test('forged Host and X-Forwarded-* headers do not change the metadata document', async () => {
    const res = await handler(
      httpEvent({ method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', headers: forged }),
      lambdaContext(),
    );
    const doc = JSON.parse(res.body ?? '{}') as Record<string, unknown>;

    assert.equal(res.statusCode, 200);
    assert.equal(doc.resource, `${PUBLIC}/mcp`);
    assert.deepEqual(doc.authorization_servers, ['https://login.example.com/realms/doers']);
    assert.deepEqual(doc.bearer_methods_supported, ['header']);
    assert.doesNotMatch(res.body ?? '', /evil/);
  });

  test('nor the resource_metadata of a challenge', async () => {
    const res = await handler(httpEvent({ headers: forged, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' }), lambdaContext());

    assert.equal(res.statusCode, 401);
    assert.match(
      String(res.headers?.['www-authenticate']),
      new RegExp(`resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp"$`),
    );
    assert.doesNotMatch(String(res.headers?.['www-authenticate']), /evil/);
  });
});
