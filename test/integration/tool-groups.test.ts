import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { DEFAULT_TOOL_GROUPS, TOOL_GROUPS } from '../../lambda/vocabulary.js';
import { PRODUCT_TOOLS } from '../../lambda/workspace/surface/catalog.js';
import { legacyCall, modernCall, urlOf } from '../helpers/local.js';
import { approve, pkcePair } from '../helpers/oauth.js';
import { startWorkspaceServer } from '../helpers/workspace-fixtures.js';

/**
 * Tool groups (docs/clients.md, "Tool groups"): the bare /mcp lists the groups a person needs every
 * day, ?tools=all every group, ?tools=a,b the named ones; the URL is all a client keeps (claude.ai
 * and ChatGPT take nothing else), and the official clients keep its query on every request.
 */

const DEFAULT_TOOLS = [
  'agenda_get',
  'change_undo',
  'comment_add',
  'comment_delete',
  'comments_list',
  'inbox_list',
  'inbox_mark',
  'me_get',
  'projects_list',
  'task_complete',
  'task_create',
  'task_delete',
  'task_get',
  'task_reopen',
  'task_update',
  'tasks_search',
];
const PROJECT_TOOLS = ['project_archive', 'project_create', 'project_delete', 'project_get', 'project_update'];

let server: LocalServer;
before(async () => {
  server = await startWorkspaceServer();
});
after(() => server.close());

const listed = async (query: string) => (await modernCall(server, 'tools/list', {}, { query })).json.result;
const names = (result: { tools: { name: string }[] }) => result.tools.map((t) => t.name);

describe('which tools a connection lists', () => {
  test('the bare /mcp lists the default groups, on every revision, with all four prompts', async () => {
    const modern = await listed('');
    const legacy = await legacyCall(server, 'tools/list', {}, { query: '' });
    const prompts = await modernCall(server, 'prompts/list', {}, { query: '' });

    assert.deepEqual(names(modern), DEFAULT_TOOLS);
    assert.deepEqual(names(legacy.json.result), DEFAULT_TOOLS);
    assert.deepEqual(
      prompts.json.result.prompts.map((p: { name: string }) => p.name),
      ['catch_up_on', 'daily_briefing', 'triage_inbox', 'weekly_review'],
    );
  });

  test('the groups the tools are in are the ones the vocabulary names, which the authorization server reads', () => {
    assert.deepEqual([...new Set(PRODUCT_TOOLS.map((t) => t.group))].sort(), [...TOOL_GROUPS].sort());
    for (const g of DEFAULT_TOOL_GROUPS) assert.ok(TOOL_GROUPS.includes(g));
  });

  test('an unknown group beside all is refused too', async () => {
    const res = await modernCall(server, 'tools/list', {}, { query: 'tools=all,bogus' });

    assert.equal(res.json.error.code, -32602);
    assert.match(res.json.error.message, /no tool group 'bogus'/);
  });

  test('?tools= names groups: exactly those, "default" standing for the defaults, "all" for every one', async () => {
    const projects = await listed('tools=projects');
    const more = await listed('tools=default,projects');
    const all = await listed('tools=all');
    const prompts = await modernCall(server, 'prompts/list', {}, { query: 'tools=projects' });

    assert.deepEqual(names(projects), PROJECT_TOOLS);
    assert.deepEqual(names(more), [...DEFAULT_TOOLS, ...PROJECT_TOOLS].sort());
    assert.equal(names(all).length, 36);
    assert.deepEqual(prompts.json.result.prompts, [], 'no prompt can run on the project tools alone');
  });

  test('the order is by name and stays the same from one listing to the next, each with its cache hint', async () => {
    for (const query of ['', 'tools=all', 'tools=files,people']) {
      const first = await listed(query);
      const again = await listed(query);

      assert.deepEqual(names(first), [...names(first)].sort(), query);
      assert.deepEqual(again.tools, first.tools, query);
      assert.equal(first.ttlMs, 300_000);
      assert.equal(first.cacheScope, 'private', 'a listing depends on the token and the URL: no shared cache may keep it');
    }
  });

  test('a group that does not exist is -32602 naming it and every group there is, on any request', async () => {
    const list = await modernCall(server, 'tools/list', {}, { query: 'tools=projects,reports' });
    const init = await legacyCall(
      server,
      'initialize',
      { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      { query: 'tools=reports' },
    );

    for (const res of [list, init]) {
      assert.equal(res.json.error.code, -32602);
      assert.match(
        res.json.error.message,
        /^tools=[a-z,]+: no tool group 'reports'; the groups are tasks, inbox, bulk, views, projects, people, files, history, transfer \(or all; the URL without tools= lists tasks, inbox\)/,
      );
    }
  });

  test('a tool outside the chosen groups is refused naming its group and the URL to use, and changes nothing', async () => {
    const before = (await modernCall(server, 'tools/call', { name: 'projects_list', arguments: {} }, { query: '' })).json.result;

    const res = await modernCall(server, 'tools/call', { name: 'project_create', arguments: { name: 'Not made' } }, { query: '' });
    const afterwards = (await modernCall(server, 'tools/call', { name: 'projects_list', arguments: {} }, { query: '' })).json.result;

    assert.equal(res.json.error.code, -32602);
    assert.match(
      res.json.error.message,
      /^Tool project_create is in the tool group 'projects', which this connection's URL does not list; connect with \/mcp\?tools=tasks,inbox,projects/,
    );
    assert.deepEqual(afterwards.structuredContent.projects, before.structuredContent.projects);
  });
});

describe('the official clients keep the URL', () => {
  const bearer = () => ({ Authorization: `Bearer ${server.token}` });

  test('v1 (2025-11-25) lists and calls the groups its URL names', async () => {
    const client = new LegacyClient({ name: 'groups-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(urlOf(server, 'tools=projects')), { requestInit: { headers: bearer() } }));

    const { tools } = await client.listTools();
    const got = await client.callTool({ name: 'project_get', arguments: { projectId: 'nowhere' } });
    await client.close();

    assert.deepEqual(
      tools.map((t) => t.name),
      PROJECT_TOOLS,
    );
    assert.equal(got.isError, true, 'called, and refused for the id it names');
  });

  test('v2 (2026-07-28) on the bare URL lists the defaults and is told which URL a project tool needs', async () => {
    const client = new ModernClient({ name: 'groups-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernTransport(new URL(urlOf(server, '')), { requestInit: { headers: bearer() } }));

    const { tools } = await client.listTools();
    const refused = await client.callTool({ name: 'project_create', arguments: { name: 'x' } }).catch((e: Error) => e);
    await client.close();

    assert.deepEqual(
      tools.map((t) => t.name),
      DEFAULT_TOOLS,
    );
    assert.ok(refused instanceof Error);
    assert.match(refused.message, /tools=tasks,inbox,projects/);
  });
});

describe('a connected app keeps its groups in its grant', () => {
  const REDIRECT = 'http://127.0.0.1:5555/cb';
  const form = async (path: string, body: Record<string, string>) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };
  const register = async (): Promise<string> => {
    const res = await fetch(`${server.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Groups app' }),
    });
    return ((await res.json()) as { client_id: string }).client_id;
  };
  const authorize = async (clientId: string, resource: string) => {
    const pkce = pkcePair();
    const url = new URL(`${server.url}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'tasks:read tasks:write',
      resource,
      state: 'groups',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    return { back: await approve(url, { email: DEMO_OWNER.email }), pkce };
  };

  test('an app that asked for /mcp?tools=projects lists those on the bare /mcp, also after a refresh', async () => {
    // Arrange: a client that takes its resource from the URL it was given, query and all
    const clientId = await register();
    const resource = `${server.mcpUrl}?tools=projects`;
    const { back, pkce } = await authorize(clientId, resource);
    const code = back.searchParams.get('code')!;

    // Act
    const tokens = await form('/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: pkce.verifier,
      resource,
    });
    const refreshed = await form('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token!,
      client_id: clientId,
    });
    const listing = await modernCall(server, 'tools/list', {}, { token: tokens.body.access_token!, query: '' });
    const afterRefresh = await modernCall(server, 'tools/list', {}, { token: refreshed.body.access_token!, query: '' });
    const urlWins = await modernCall(server, 'tools/list', {}, { token: tokens.body.access_token!, query: 'tools=views' });

    // Assert
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const claims = JSON.parse(Buffer.from(tokens.body.access_token!.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.aud, server.mcpUrl, 'the audience is the endpoint: one resource');
    assert.equal(claims.tools, 'projects');
    assert.deepEqual(names(listing.json.result), ['project_archive', 'project_create', 'project_delete', 'project_get', 'project_update']);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.deepEqual(names(afterRefresh.json.result), names(listing.json.result));
    assert.deepEqual(names(urlWins.json.result), ['view_delete', 'view_save', 'views_list'], "a URL's own tools= comes first");
  });

  test('a resource with anything else in its query, or another path, is refused (invalid_target) on doers own page', async () => {
    const clientId = await register();

    const withUser = server.mcpUrl.replace('http://', 'http://user:pw@');
    for (const resource of [
      `${server.mcpUrl}?tools=projects&x=1`,
      `${server.mcpUrl}?debug=1`,
      `${server.url}/other`,
      `${server.mcpUrl}?tools=nosuchgroup`,
      `${withUser}?tools=tasks`,
      `${server.url}/x/../mcp?tools=tasks`,
      `${server.mcpUrl}?tools=Tasks`,
    ]) {
      const url = new URL(`${server.url}/oauth/authorize`);
      for (const [k, v] of Object.entries({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'tasks:read',
        resource,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }))
        url.searchParams.set(k, v);

      const res = await fetch(url, { redirect: 'manual' });

      // Refused on doers' own page, before anyone signs in: never a redirect to the client.
      assert.equal(res.status, 400, resource);
      assert.match(
        await res.text(),
        /<p id="error">the only resource here is http:\/\/127\.0\.0\.1:\d+\/mcp \(with \?tools=a,b naming tool groups, if any\)/,
        resource,
      );
    }
  });
});
