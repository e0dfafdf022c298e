import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { legacyCall, MODERN, modernCall, modernMeta, post, startTestServer } from '../helpers/local.js';

// docs/protocol.md, row by row, through the local server: the same handler Lambda runs.
const LEGACY = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
const ALL = [MODERN, ...LEGACY];
/** tools, resources, prompts and the MCP Apps extension (docs/protocol.md), in both handshakes. */
const CAPABILITIES = {
  tools: {},
  resources: {},
  prompts: {},
  extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
};
/** server/discover adds the tasks extension, which exists on 2026-07-28 only (long work: workspace_import, workspace_export). */
const MODERN_CAPABILITIES = {
  ...CAPABILITIES,
  extensions: { ...CAPABILITIES.extensions, 'io.modelcontextprotocol/tasks': {} },
};

let server: LocalServer;
let auth: Record<string, string>;
before(async () => {
  server = await startTestServer();
  auth = { authorization: `Bearer ${server.token}` };
});
after(() => server.close());

const modernHeaders = (method: string, extra: Record<string, string> = {}) => ({
  ...auth,
  'mcp-protocol-version': MODERN,
  'mcp-method': method,
  ...extra,
});

describe('transport', () => {
  for (const path of ['/mcp', '/mcp/']) {
    test(`POST ${path} answers application/json without a session id`, async () => {
      const res = await post(
        `${server.url}${path}`,
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { ...auth, 'mcp-protocol-version': '2025-11-25' },
      );
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('mcp-session-id'), null);
      assert.deepEqual(res.json, { jsonrpc: '2.0', id: 1, result: {} });
    });
  }

  for (const verb of ['GET', 'DELETE', 'PUT', 'PATCH']) {
    test(`${verb} /mcp is 405 with Allow: POST, OPTIONS`, async () => {
      const res = await fetch(server.mcpUrl, { method: verb, headers: auth });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'POST, OPTIONS');
    });
  }

  test('OPTIONS from an allowed Origin is 204 with CORS headers', async () => {
    const res = await fetch(server.mcpUrl, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://claude.ai',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, mcp-protocol-version',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://claude.ai');
    assert.equal(res.headers.get('vary'), 'Origin');
    assert.equal(res.headers.get('access-control-allow-methods'), 'POST, OPTIONS');
    assert.equal(
      res.headers.get('access-control-allow-headers'),
      'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name',
    );
  });

  test('a disallowed Origin is 403, also on OPTIONS', async () => {
    const preflight = await fetch(server.mcpUrl, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    const postRes = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...auth, origin: 'https://evil.example' });
    assert.equal(preflight.status, 403);
    assert.equal(postRes.status, 403);
    assert.equal(postRes.headers.get('access-control-allow-origin'), null);
  });

  test('an allowed Origin sees CORS headers on errors too, with WWW-Authenticate exposed', async () => {
    const res = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'https://chatgpt.com' });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://chatgpt.com');
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/);
  });

  test('a loopback Origin is allowed', async () => {
    const res = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...auth, origin: 'http://localhost:6274', 'mcp-protocol-version': '2025-11-25' },
    );
    assert.equal(res.status, 200);
  });

  test('a non-loopback Host header is 403 (DNS-rebinding protection)', async () => {
    // fetch() may not set Host, so this one goes through node:http.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        server.mcpUrl,
        { method: 'POST', headers: { ...auth, host: 'evil.example.com', 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    });
    assert.equal(status, 403);
  });

  test('a body over 1 MiB is 413', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } });
    const res = await post(server.mcpUrl, big, auth);
    assert.equal(res.status, 413);
  });

  for (const [label, body] of [
    ['trailing data', '{"jsonrpc":"2.0","id":1,"method":"ping"} x'],
    ['single quotes', "{'jsonrpc':'2.0','id':1,'method':'ping'}"],
    ['unquoted names', '{jsonrpc:"2.0",id:1,method:"ping"}'],
    ['two objects', '{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}'],
    ['an empty body', ''],
  ] as const) {
    test(`a body with ${label} is 400 -32700`, async () => {
      const res = await post(server.mcpUrl, body, auth);
      assert.equal(res.status, 400);
      assert.equal(res.json.error.code, -32700);
    });
  }

  for (const [label, body] of [
    ['no jsonrpc member', { id: 1, method: 'ping' }],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'ping' }],
    ['a numeric method', { jsonrpc: '2.0', id: 1, method: 7 }],
    ['a bare string', 'hello'],
  ] as const) {
    test(`${label} is 400 -32600`, async () => {
      const res = await post(server.mcpUrl, JSON.stringify(body), auth);
      assert.equal(res.status, 400);
      assert.equal(res.json.error.code, -32600);
    });
  }
});

describe('credentials', () => {
  for (const method of ['initialize', 'ping', 'tools/list', 'server/discover']) {
    test(`${method} without a credential is 401 with a resource_metadata challenge`, async () => {
      const res = await post(server.mcpUrl, { jsonrpc: '2.0', id: 1, method, params: {} });
      assert.equal(res.status, 401);
      const challenge = res.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /^Bearer /);
      assert.match(challenge, new RegExp(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`));
      assert.doesNotMatch(challenge, /error=/);
    });
  }

  test('a refused token is 401 with error="invalid_token"', async () => {
    const res = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { authorization: 'Bearer doers_pat_not-a-real-token' },
    );
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  test('a token in the query string is not a credential', async () => {
    const res = await post(`${server.mcpUrl}?access_token=${server.token}`, { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(res.status, 401);
  });

  test('the metadata document answers without a credential, never cached', async () => {
    const res = await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`);
    const doc = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(doc.resource, `${server.url}/mcp`);
    assert.deepEqual(doc.bearer_methods_supported, ['header']);
    assert.ok(Array.isArray(doc.authorization_servers));
    assert.ok(Array.isArray(doc.scopes_supported));
  });
});

describe('versions and eras', () => {
  for (const version of ['2024-11-05', '2099-01-01', 'garbage']) {
    test(`header MCP-Protocol-Version ${version} is 400 -32022 with supported and requested`, async () => {
      const res = await post(server.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'ping' }, { ...auth, 'mcp-protocol-version': version });
      assert.equal(res.status, 400);
      assert.equal(res.json.error.code, -32022);
      assert.deepEqual(res.json.error.data, { supported: ALL, requested: version });
    });
  }

  for (const requested of LEGACY) {
    test(`initialize asking for ${requested} gets it echoed, with capabilities, serverInfo and instructions`, async () => {
      const res = await post(
        server.mcpUrl,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: requested, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
        auth,
      );
      assert.equal(res.status, 200);
      assert.equal(res.json.result.protocolVersion, requested);
      assert.deepEqual(res.json.result.capabilities, CAPABILITIES);
      assert.deepEqual(res.json.result.serverInfo, { name: 'doers', title: 'doers', version: '2.0.0' });
      assert.equal(typeof res.json.result.instructions, 'string');
      assert.equal(res.json.result.resultType, undefined);
      assert.equal(res.json.result._meta, undefined);
    });
  }

  for (const requested of ['2024-11-05', '2030-01-01']) {
    test(`initialize asking for ${requested} is answered with 2025-11-25`, async () => {
      const res = await post(
        server.mcpUrl,
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: requested, capabilities: {} } },
        auth,
      );
      assert.equal(res.status, 200);
      assert.equal(res.json.result.protocolVersion, '2025-11-25');
    });
  }

  test('a request without a version header speaks 2025-03-26 (invalid tool arguments are -32602)', async () => {
    const res = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'me_get', arguments: { bogus: 1 } } },
      auth,
    );
    assert.equal(res.status, 200);
    assert.equal(res.json.error.code, -32602);
    assert.match(res.json.error.message, /bogus/);
  });

  for (const version of LEGACY) {
    test(`${version}: notifications are 202 with an empty body`, async () => {
      const res = await post(
        server.mcpUrl,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { ...auth, 'mcp-protocol-version': version },
      );
      assert.equal(res.status, 202);
      assert.equal(res.text, '');
    });

    test(`${version}: an unknown method is 200 -32601, server/discover included`, async () => {
      for (const method of ['nope/nothing', 'server/discover', 'logging/setLevel', 'completion/complete']) {
        const res = await legacyCall(server, method, {}, { version });
        assert.equal(res.status, 200, method);
        assert.equal(res.json.error.code, -32601, method);
      }
    });

    test(`${version}: results carry no resultType, ttlMs, cacheScope or _meta`, async () => {
      const res = await legacyCall(server, 'tools/list', {}, { version });
      assert.equal(res.status, 200);
      assert.ok(Array.isArray(res.json.result.tools));
      for (const key of ['resultType', 'ttlMs', 'cacheScope', '_meta']) assert.equal(key in res.json.result, false, key);
    });

    test(`${version}: Mcp-Method is not required, but checked when sent`, async () => {
      const without = await legacyCall(server, 'tools/list', {}, { version });
      const wrong = await legacyCall(server, 'tools/list', {}, { version, headers: { 'mcp-method': 'prompts/list' } });
      assert.equal(without.status, 200);
      assert.equal(wrong.status, 400);
      assert.equal(wrong.json.error.code, -32020);
    });
  }

  for (const version of ['2025-11-25', MODERN]) {
    test(`${version}: invalid tool arguments are an isError result naming the parameter`, async () => {
      const res =
        version === MODERN
          ? await modernCall(server, 'tools/call', { name: 'me_get', arguments: { verbose: true } })
          : await legacyCall(server, 'tools/call', { name: 'me_get', arguments: { verbose: true } }, { version });
      assert.equal(res.status, 200);
      assert.equal(res.json.result.isError, true);
      assert.match(res.json.result.content[0].text, /verbose/);
    });
  }

  test('2025-06-18: invalid tool arguments are -32602', async () => {
    const res = await legacyCall(server, 'tools/call', { name: 'me_get', arguments: { verbose: true } }, { version: '2025-06-18' });
    assert.equal(res.json.error.code, -32602);
  });

  test('an unknown tool is -32602 on every revision', async () => {
    for (const version of ALL) {
      const res =
        version === MODERN
          ? await modernCall(server, 'tools/call', { name: 'no_such_tool', arguments: {} })
          : await legacyCall(server, 'tools/call', { name: 'no_such_tool', arguments: {} }, { version });
      assert.equal(res.json.error.code, -32602, version);
    }
  });

  test('an unknown prompt is -32602 on every revision', async () => {
    for (const version of ALL) {
      const res =
        version === MODERN
          ? await modernCall(server, 'prompts/get', { name: 'no_such_prompt' })
          : await legacyCall(server, 'prompts/get', { name: 'no_such_prompt' }, { version });
      assert.equal(res.status, 200, version);
      assert.equal(res.json.error.code, -32602, version);
    }
  });

  test('2025-11-25: Mcp-Name is not required, but checked when sent', async () => {
    const wrong = await legacyCall(
      server,
      'tools/call',
      { name: 'me_get', arguments: {} },
      { headers: { 'mcp-method': 'tools/call', 'mcp-name': 'task_get' } },
    );
    const right = await legacyCall(
      server,
      'tools/call',
      { name: 'me_get', arguments: {} },
      { headers: { 'mcp-method': 'tools/call', 'mcp-name': 'me_get' } },
    );
    assert.deepEqual([wrong.status, wrong.json.error.code], [400, -32020]);
    assert.equal(right.status, 200);
    assert.equal(right.json.result.isError, false);
  });

  test('an unknown resource is -32602 with data.uri on 2026-07-28 and -32002 before', async () => {
    const uri = 'doers://nothing/here';
    const modern = await modernCall(server, 'resources/read', { uri });
    assert.equal(modern.json.error.code, -32602);
    assert.deepEqual(modern.json.error.data, { uri });
    for (const version of LEGACY) {
      const legacy = await legacyCall(server, 'resources/read', { uri }, { version });
      assert.equal(legacy.json.error.code, -32002, version);
      assert.deepEqual(legacy.json.error.data, { uri }, version);
    }
  });
});

describe('2026-07-28', () => {
  test('server/discover answers all four versions, capabilities and instructions, with cache hints and serverInfo', async () => {
    const res = await modernCall(server, 'server/discover');
    assert.equal(res.status, 200);
    const r = res.json.result;
    assert.deepEqual(r.supportedVersions, ALL);
    assert.deepEqual(r.capabilities, MODERN_CAPABILITIES);
    assert.equal(typeof r.instructions, 'string');
    assert.equal(r.resultType, 'complete');
    assert.equal(r.cacheScope, 'private');
    assert.ok(Number.isInteger(r.ttlMs) && r.ttlMs >= 0);
    assert.deepEqual(r._meta['io.modelcontextprotocol/serverInfo'], { name: 'doers', title: 'doers', version: '2.0.0' });
  });

  for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) {
    test(`${method} carries resultType, ttlMs and cacheScope`, async () => {
      const res = await modernCall(server, method);
      assert.equal(res.status, 200);
      assert.equal(res.json.result.resultType, 'complete');
      assert.equal(res.json.result.cacheScope, 'private');
      assert.ok(Number.isInteger(res.json.result.ttlMs));
    });
  }

  test('resources/read carries resultType, ttlMs 0 and cacheScope private', async () => {
    const res = await modernCall(server, 'resources/read', { uri: 'doers://tasks/0ebb429f-7c2d-4e8a-9b1f-3a6d2c5e8f01' });
    assert.equal(res.status, 200);
    assert.equal(res.json.result.resultType, 'complete');
    assert.equal(res.json.result.ttlMs, 0);
    assert.equal(res.json.result.cacheScope, 'private');
    assert.match(res.json.result.contents[0].text, /Send the Acme renewal quote/);
  });

  test('tools/call results carry resultType and serverInfo but no cache hints', async () => {
    const res = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} });
    assert.equal(res.json.result.resultType, 'complete');
    assert.equal(res.json.result.ttlMs, undefined);
    assert.equal(res.json.result._meta['io.modelcontextprotocol/serverInfo'].name, 'doers');
  });

  test('missing _meta is 400 -32602 with the id echoed', async () => {
    const res = await post(server.mcpUrl, { jsonrpc: '2.0', id: 'abc', method: 'tools/list', params: {} }, modernHeaders('tools/list'));
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, -32602);
    assert.equal(res.json.id, 'abc');
  });

  test('_meta without clientCapabilities is 400 -32602', async () => {
    const res = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } },
      modernHeaders('tools/list'),
    );
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, -32602);
  });

  test('a body that says 2026-07-28 without the version header is 400 -32020', async () => {
    const res = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: modernMeta() } },
      { ...auth, 'mcp-method': 'tools/list' },
    );
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, -32020);
  });

  test('a header/body version mismatch is 400 -32020', async () => {
    const res = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: modernMeta() } },
      { ...auth, 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/list' },
    );
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, -32020);
  });

  test('Mcp-Method is required and must match the body', async () => {
    const body = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: modernMeta() } };
    const missing = await post(server.mcpUrl, body, { ...auth, 'mcp-protocol-version': MODERN });
    const wrong = await post(server.mcpUrl, body, modernHeaders('prompts/list'));
    assert.deepEqual([missing.status, missing.json.error.code], [400, -32020]);
    assert.deepEqual([wrong.status, wrong.json.error.code], [400, -32020]);
  });

  test('Mcp-Name is required on tools/call and must match the tool name (base64 form decoded)', async () => {
    const body = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'me_get', arguments: {}, _meta: modernMeta() } };
    const missing = await post(server.mcpUrl, body, modernHeaders('tools/call'));
    const wrong = await post(server.mcpUrl, body, modernHeaders('tools/call', { 'mcp-name': 'task_get' }));
    const encoded = await post(
      server.mcpUrl,
      body,
      modernHeaders('tools/call', { 'mcp-name': `=?base64?${Buffer.from('me_get').toString('base64')}?=` }),
    );
    assert.deepEqual([missing.status, missing.json.error.code], [400, -32020]);
    assert.deepEqual([wrong.status, wrong.json.error.code], [400, -32020]);
    assert.equal(encoded.status, 200);
  });

  test('Mcp-Name must match the uri on resources/read and the name on prompts/get', async () => {
    const read = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'doers://tasks/x', _meta: modernMeta() } },
      modernHeaders('resources/read', { 'mcp-name': 'doers://tasks/y' }),
    );
    const prompt = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'daily_briefing', _meta: modernMeta() } },
      modernHeaders('prompts/get'),
    );
    assert.deepEqual([read.status, read.json.error.code], [400, -32020]);
    assert.deepEqual([prompt.status, prompt.json.error.code], [400, -32020]);
  });

  for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'completion/complete', 'nope/nothing']) {
    test(`${method} is 404 -32601 with the id echoed`, async () => {
      const res = await post(server.mcpUrl, { jsonrpc: '2.0', id: 77, method, params: { _meta: modernMeta() } }, modernHeaders(method));
      assert.equal(res.status, 404);
      assert.equal(res.json.error.code, -32601);
      assert.equal(res.json.id, 77);
    });
  }

  test('a notification is 202 with an empty body', async () => {
    const res = await post(
      server.mcpUrl,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: modernMeta() } },
      modernHeaders('notifications/cancelled'),
    );
    assert.equal(res.status, 202);
    assert.equal(res.text, '');
  });
});

describe('batches', () => {
  const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

  for (const headers of [{}, { 'mcp-protocol-version': '2025-03-26' }] as Record<string, string>[]) {
    test(`2025-03-26 (${Object.keys(headers).length ? 'header' : 'no header'}): a batch gets an array answer`, async () => {
      const res = await post(
        server.mcpUrl,
        [ping(1), { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 2, method: 'nope' }],
        { ...auth, ...headers },
      );
      assert.equal(res.status, 200);
      assert.deepEqual(res.json[0], { jsonrpc: '2.0', id: 1, result: {} });
      assert.equal(res.json[1].id, 2);
      assert.equal(res.json[1].error.code, -32601);
      assert.equal(res.json.length, 2);
    });
  }

  test('2025-03-26: a batch of notifications only is 202', async () => {
    const res = await post(server.mcpUrl, [{ jsonrpc: '2.0', method: 'notifications/initialized' }], auth);
    assert.equal(res.status, 202);
    assert.equal(res.text, '');
  });

  test('2025-03-26: an empty batch is 400 -32600', async () => {
    const res = await post(server.mcpUrl, [], auth);
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, -32600);
  });

  test('2025-03-26: an invalid element gets its own -32600 entry', async () => {
    const res = await post(server.mcpUrl, [ping(1), { id: 5, method: 'ping' }], auth);
    assert.equal(res.status, 200);
    assert.equal(res.json[1].id, 5);
    assert.equal(res.json[1].error.code, -32600);
  });

  for (const version of ['2025-06-18', '2025-11-25', MODERN]) {
    test(`${version}: a batch is 400 -32600`, async () => {
      const res = await post(server.mcpUrl, [ping(1)], { ...auth, 'mcp-protocol-version': version });
      assert.equal(res.status, 400);
      assert.equal(res.json.error.code, -32600);
    });
  }
});
