import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEMO_PROJECTS } from '../../lambda/local/demo-seed.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { legacyCall, modernCall, startTestServer, urlOf } from '../helpers/local.js';

/**
 * The MCP Apps extension (apps protocol 2026-01-26) on the wire, through the official SDK clients:
 * the capability in both handshakes, the links on the tools, the views as resources, and that a
 * client without the extension gets the very same tool results. What the views do in a browser:
 * test/browser/mcp-apps.test.ts.
 */
const UI = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';
const WITH_UI = { extensions: { [UI]: { mimeTypes: [MIME] } } };
const LINKS = { agenda_get: 'ui://doers/agenda', project_get: 'ui://doers/board', tasks_search: 'ui://doers/board' } as const;

let server: LocalServer;
const open: { close(): Promise<void> }[] = [];

before(async () => {
  server = await startTestServer();
});
after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await server.close();
});

const headers = () => ({ requestInit: { headers: { Authorization: `Bearer ${server.token}` } } });

/** The 2025-11-25 handshake; the v1 client declares no extension. */
const legacyClient = async () => {
  const client = new LegacyClient({ name: 'apps-e2e-v1', version: '1.0.0' });
  await client.connect(new LegacyTransport(new URL(urlOf(server)), headers()));
  open.push(client);
  return client;
};

/** 2026-07-28 (`server/discover`), with or without the extension. */
const modernClient = async (capabilities: Record<string, unknown> = {}) => {
  const client = new ModernClient({ name: 'apps-e2e-v2', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } });
  await client.connect(new ModernTransport(new URL(urlOf(server)), headers()));
  open.push(client);
  return client;
};

describe('MCP Apps extension', () => {
  test('is declared in the initialize result (2025-11-25, v1 client) and in server/discover (2026-07-28, v2 client)', async () => {
    // Act
    const legacy = await legacyClient();
    const modern = await modernClient(WITH_UI);

    // Assert
    assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');
    for (const capabilities of [legacy.getServerCapabilities(), modern.getServerCapabilities()]) {
      assert.deepEqual(capabilities?.extensions?.[UI], { mimeTypes: [MIME] });
      assert.ok(capabilities?.tools && capabilities.resources && capabilities.prompts);
    }
    // Beside it on 2026-07-28 only, the tasks extension (docs/protocol.md, "Long work as tasks").
    assert.deepEqual(Object.keys(legacy.getServerCapabilities()?.extensions ?? {}), [UI]);
    assert.deepEqual(Object.keys(modern.getServerCapabilities()?.extensions ?? {}).sort(), [UI, 'io.modelcontextprotocol/tasks'].sort());
  });

  test('agenda_get links the agenda view, project_get and tasks_search the board, in both keys; no other tool has a view', async () => {
    // Arrange
    const client = await modernClient(WITH_UI);

    // Act
    const { tools } = await client.listTools();

    // Assert
    const linked = Object.fromEntries(tools.filter((t) => t._meta).map((t) => [t.name, t._meta]));
    assert.deepEqual(
      linked,
      Object.fromEntries(Object.entries(LINKS).map(([tool, uri]) => [tool, { ui: { resourceUri: uri }, 'ui/resourceUri': uri }])),
    );
  });

  test('resources/list offers both views with an empty CSP and a border; each reads as self-contained HTML under 300 KB', async () => {
    // Arrange
    const client = await modernClient(WITH_UI);

    // Act
    const { resources } = await client.listResources();
    const reads = await Promise.all(['ui://doers/agenda', 'ui://doers/board'].map((uri) => client.readResource({ uri })));

    // Assert
    const meta = { ui: { csp: {}, prefersBorder: true } };
    assert.deepEqual(
      resources.map((r) => ({ uri: r.uri, mimeType: r.mimeType, _meta: r._meta })),
      [
        { uri: 'ui://doers/agenda', mimeType: MIME, _meta: meta },
        { uri: 'ui://doers/board', mimeType: MIME, _meta: meta },
      ],
    );
    for (const [i, view] of ['agenda', 'board'].entries()) {
      const contents = reads[i]!.contents;
      assert.equal(contents.length, 1);
      const content = contents[0] as { uri: string; mimeType: string; text: string; _meta: unknown };
      assert.equal(content.uri, `ui://doers/${view}`);
      assert.equal(content.mimeType, MIME);
      assert.deepEqual(content._meta, meta);
      assert.match(content.text, /^<!doctype html>\n<html lang="en" data-view="\w+" data-version="[0-9a-f]{12}">/);
      assert.ok(content.text.includes(`data-view="${view}"`));
      assert.ok(Buffer.byteLength(content.text) <= 300 * 1024, `${view} is ${Buffer.byteLength(content.text)} bytes`);
      // Everything inline: nothing for a host to allow, strip or fetch.
      assert.doesNotMatch(content.text, /<script[^>]*\ssrc=|<link\b|<iframe\b|<img\b/i);
      const style = /<style>([\s\S]*?)<\/style>/.exec(content.text)?.[1] ?? '';
      assert.doesNotMatch(style, /url\(|@import/);
    }
  });

  test('a view read carries an hour of ttlMs on 2026-07-28 and no cache hints in the handshake era', async () => {
    // Act
    const modern = await modernCall(server, 'resources/read', { uri: 'ui://doers/board' });
    const legacy = await legacyCall(server, 'resources/read', { uri: 'ui://doers/board' });

    // Assert
    assert.equal(modern.json.result.ttlMs, 3_600_000);
    assert.equal(modern.json.result.cacheScope, 'private');
    assert.deepEqual(Object.keys(legacy.json.result), ['contents']);
    assert.equal(legacy.json.result.contents[0].text, modern.json.result.contents[0].text);
  });

  test('a client without the extension gets the very same tools and tool results as a host with it', async () => {
    // Arrange
    const [host, plain, legacy] = await Promise.all([modernClient(WITH_UI), modernClient(), legacyClient()]);
    const calls = [
      { name: 'agenda_get', arguments: {} },
      { name: 'project_get', arguments: { projectId: DEMO_PROJECTS.website.projectId } },
      { name: 'tasks_search', arguments: { project: DEMO_PROJECTS.acme.projectId } },
    ];
    const shape = (r: Record<string, unknown>) => ({ content: r.content, structuredContent: r.structuredContent, isError: r.isError });

    // Act: one call at a time (the concurrency bound is per user, and all three are Ada)
    const lists = [await host.listTools(), await plain.listTools()];
    const results: Record<string, unknown>[][] = [];
    for (const client of [host, plain, legacy]) {
      const answers: Record<string, unknown>[] = [];
      for (const call of calls) answers.push((await client.callTool(call)) as Record<string, unknown>);
      results.push(answers);
    }

    // Assert
    assert.deepEqual(lists[1], lists[0]);
    const [withUi, withoutUi, handshake] = results.map((r) => r.map(shape));
    assert.deepEqual(withoutUi, withUi);
    assert.deepEqual(handshake, withUi);
    for (const r of results.flat()) {
      assert.equal(r.isError, false);
      const meta = (r._meta ?? {}) as Record<string, unknown>;
      assert.deepEqual(
        Object.keys(meta).filter((k) => k.startsWith('ui')),
        [],
        'a tool result says nothing of views',
      );
    }
  });
});
