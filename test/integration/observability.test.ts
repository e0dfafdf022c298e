import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import { NotFoundRefusal } from '../../lambda/errors.js';
import type { LocalServer } from '../../lambda/local/server.js';
import type { ResourceTemplateDefinition } from '../../lambda/mcp/resource-registry.js';
import { createLogger } from '../../lambda/observability/logger.js';
import { createPowertoolsObserver } from '../../lambda/observability/powertools-observer.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { defineTool } from '../../lambda/workspace/surface/define-tool.js';
import type { WorkspaceServices } from '../../lambda/workspace/surface/services.js';
import { modernCall, post, startTestServer, urlOf } from '../helpers/local.js';

// The audit line and the four meters as operators will see them: real Powertools output on stdout.
const note = defineTool({
  name: 'note_save',
  title: 'Save a note',
  description: 'Saves a note (test fixture).',
  input: z.strictObject({ text: z.string() }),
  output: z.object({ saved: z.boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  scope: 'tasks:write',
  run: async ({ text }) => {
    if (text === 'refuse') throw new NotFoundRefusal('No such note');
    if (text === 'crash') throw new Error('database exploded at 10.1.2.3');
    return { saved: true };
  },
  render: () => 'saved',
});
const notes: ResourceTemplateDefinition<WorkspaceServices> = {
  uriTemplate: 'fixture://notes/{id}',
  name: 'note',
  title: 'Note',
  description: 'A note (test fixture).',
  mimeType: 'text/markdown',
  scope: 'tasks:read',
  read: async ({ id }, uri) => (id === 'n1' ? [{ uri, mimeType: 'text/markdown', text: '# Note' }] : undefined),
};

const SECRET = 'the-launch-code-is-0000';
const ALLOWED = {
  Method: new Set([
    'initialize',
    'ping',
    'tools/list',
    'tools/call',
    'prompts/list',
    'prompts/get',
    'resources/list',
    'resources/templates/list',
    'resources/read',
    'server/discover',
    'metadata',
    'notification',
    'batch',
    'preflight',
    'other',
  ]),
  Tool: new Set(['me_get', 'note_save']),
  Provider: new Set(['fixture://notes/', 'other']),
  Outcome: new Set(['ok', 'error', 'denied', 'invalid', 'ratelimited', 'busy', 'failed', 'input_required', 'notfound', 'toolarge']),
  Reason: new Set(['unauthenticated', 'forbidden', 'insufficient_scope', 'ratelimited', 'busy', 'origin', 'bad_request']),
  Status: new Set(['200', '202', '204', '400', '401', '403', '404', '405', '413', '429', '500', '503']),
  service: new Set(['doers']),
};

let server: LocalServer;
let readOnlyToken: string;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON log lines
let lines: any[] = [];
const realWrite = process.stdout.write.bind(process.stdout);

before(async () => {
  // Only the server's JSON lines are taken; the test runner's own protocol passes untouched.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && chunk.startsWith('{') && chunk.includes('"service":"doers"')) {
      for (const line of chunk.split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      return true;
    }
    return (realWrite as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  server = await startTestServer(
    {},
    { fixtures: { tools: [note], templates: [notes] }, observer: createPowertoolsObserver(createLogger()) },
  );
  readOnlyToken = generateTokenSecret();
  await writesOf(server.app.services).tokens.register(readOnlyToken, {
    workspaceId: 'ws_demo',
    userId: 'usr_ada',
    scopes: ['tasks:read'],
    label: 'read only',
    createdAt: new Date().toISOString(),
  });
});
after(async () => {
  process.stdout.write = realWrite;
  await server.close();
});

const audits = (kind: string) => lines.filter((l) => l.audit === kind);
const emf = (metric: string) => lines.filter((l) => l._aws && metric in l);
const fresh = () => {
  lines = [];
};

describe('audit line', () => {
  test('a tool call writes exactly one audit line with argument names and no values', async () => {
    fresh();
    await modernCall(server, 'tools/call', { name: 'note_save', arguments: { text: SECRET } });
    const found = audits('tool_call');
    assert.equal(found.length, 1);
    const line = found[0]!;
    assert.equal(line.message, 'MCP tool call');
    assert.equal(line.level, 'INFO');
    assert.equal(line.tool, 'note_save');
    assert.deepEqual(line.args, ['text']);
    assert.equal(line.outcome, 'ok');
    assert.equal(line.client, 'doers-tests');
    assert.equal(line.userId, 'usr_ada');
    assert.equal(typeof line.durationMs, 'number');
    assert.equal(JSON.stringify(lines).includes(SECRET), false);
  });

  for (const [label, args, token, outcome] of [
    ['a refused operation', { text: 'refuse' }, undefined, 'error'],
    ['invalid arguments', { text: 1, extra: SECRET }, undefined, 'invalid'],
    ['a missing scope', { text: SECRET }, 'read-only', 'denied'],
    ['an unexpected failure', { text: 'crash' }, undefined, 'failed'],
  ] as const) {
    test(`${label} is audited once as ${outcome}`, async () => {
      fresh();
      await modernCall(server, 'tools/call', { name: 'note_save', arguments: args }, token ? { token: readOnlyToken } : {});
      const found = audits('tool_call');
      assert.equal(found.length, 1);
      assert.equal(found[0].outcome, outcome);
      assert.equal(JSON.stringify(lines).includes(SECRET), false);
    });
  }

  test('a resource read names the provider prefix, never the id', async () => {
    fresh();
    await modernCall(server, 'resources/read', { uri: 'fixture://notes/n1' });
    await modernCall(server, 'resources/read', { uri: 'fixture://notes/secret-id-42' });
    const found = audits('resource_read');
    assert.deepEqual(
      found.map((l) => [l.resource, l.outcome]),
      [
        ['fixture://notes/', 'ok'],
        ['fixture://notes/', 'notfound'],
      ],
    );
    assert.equal(JSON.stringify(lines).includes('secret-id-42'), false);
  });
});

describe('meters', () => {
  test('a tool call emits ToolCalls (Tool, Outcome; milliseconds) and Requests (Method, Status)', async () => {
    fresh();
    await modernCall(server, 'tools/call', { name: 'note_save', arguments: { text: 'hello' } });
    const [tool] = emf('ToolCalls');
    const [request] = emf('Requests');
    assert.deepEqual(tool._aws.CloudWatchMetrics[0].Dimensions, [['service', 'Tool', 'Outcome']]);
    assert.deepEqual(tool._aws.CloudWatchMetrics[0].Metrics, [{ Name: 'ToolCalls', Unit: 'Milliseconds' }]);
    assert.deepEqual([tool.Tool, tool.Outcome], ['note_save', 'ok']);
    assert.deepEqual([request.Method, request.Status], ['tools/call', '200']);
  });

  test('refusals are counted by reason, with the request status', async () => {
    fresh();
    await post(urlOf(server), { jsonrpc: '2.0', id: 1, method: 'ping' });
    await modernCall(server, 'tools/call', { name: 'note_save', arguments: { text: 'x' } }, { token: readOnlyToken });
    await post(urlOf(server), { jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'https://evil.example' });
    assert.deepEqual(
      emf('Refusals').map((l) => l.Reason),
      ['unauthenticated', 'insufficient_scope', 'origin'],
    );
    assert.deepEqual(
      emf('Requests').map((l) => l.Status),
      ['401', '403', '403'],
    );
  });

  test('an unexpected failure is counted as failed and answered 500 without internals', async () => {
    fresh();
    const res = await modernCall(server, 'tools/call', { name: 'note_save', arguments: { text: 'crash' } });
    assert.equal(res.status, 500);
    assert.doesNotMatch(res.text, /exploded|10\.1\.2\.3/);
    assert.equal(emf('ToolCalls')[0].Outcome, 'failed');
    assert.equal(emf('Requests')[0].Status, '500');
  });

  test('nothing a client sends becomes a dimension value', async () => {
    fresh();
    await modernCall(server, 'tools/call', { name: 'made_up_tool_name', arguments: {} });
    await modernCall(server, 'made/up-method');
    await modernCall(server, 'resources/read', { uri: 'evil://made-up/uri' });
    await post(urlOf(server), { jsonrpc: '2.0', id: 1, method: 'x-custom' }, { authorization: `Bearer ${server.token}` });
    const records = lines.filter((l) => l._aws);
    assert.ok(records.length >= 4);
    for (const record of records) {
      for (const dims of record._aws.CloudWatchMetrics[0].Dimensions as string[][]) {
        for (const dim of dims) {
          assert.ok(ALLOWED[dim as keyof typeof ALLOWED]?.has(String(record[dim])), `${dim}=${record[dim]}`);
        }
      }
    }
  });
});
