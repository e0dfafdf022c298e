import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { DoersError, NotFoundRefusal } from '../../lambda/errors.js';
import { unlimitedGuard } from '../../lambda/limits/call-guard.js';
import { createDispatcher, type DispatchHooks } from '../../lambda/mcp/dispatcher.js';
import { definePrompt, PromptRegistry, userText } from '../../lambda/mcp/prompt-registry.js';
import { ResourceRegistry } from '../../lambda/mcp/resource-registry.js';
import { defineToolFor, inputRequired, ToolRegistry } from '../../lambda/mcp/tool-registry.js';

const defineTool = defineToolFor<unknown>();

import { keyRingFromSeeds } from '../../lambda/platform/key-ring.js';
import { principal } from '../helpers/events.js';
import { RecordingObserver } from '../helpers/recording-observer.js';
import { rejection } from '../helpers/rejection.js';

const keys = keyRingFromSeeds('a-seed-of-at-least-thirty-two-characters!');
const observer = new RecordingObserver();

const echo = defineTool({
  name: 'echo',
  title: 'Echo',
  description: 'Echoes text.',
  input: z.strictObject({ text: z.string() }),
  output: z.object({ text: z.string() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scope: 'tasks:read',
  run: async ({ text }) => ({ text }),
  render: (o) => `echo: ${o.text}`,
});

const confirm = defineTool({
  name: 'confirm',
  title: 'Confirm',
  description: 'Asks the user to confirm before answering.',
  input: z.strictObject({ what: z.string() }),
  output: z.object({ confirmed: z.boolean(), what: z.string() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scope: null,
  run: async ({ what }, ctx) => {
    const answer = ctx.input?.responses.ok as { action?: string } | undefined;
    if (!answer) {
      return inputRequired(
        {
          ok: {
            method: 'elicitation/create',
            params: { mode: 'form', message: `Confirm ${what}?`, requestedSchema: { type: 'object', properties: {} } },
          },
        },
        { asked: what },
      );
    }
    return { confirmed: answer.action === 'accept', what: (ctx.input!.state as { asked: string }).asked };
  },
  render: (o) => `${o.what}: ${o.confirmed}`,
});

const broken = defineTool({
  name: 'broken',
  title: 'Broken',
  description: 'Returns output outside its schema.',
  input: z.strictObject({}),
  output: z.object({ n: z.number() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scope: null,
  run: async () => ({ n: 'not a number' }) as unknown as { n: number },
});

const refusing = defineTool({
  name: 'refusing',
  title: 'Refusing',
  description: 'Always refuses.',
  input: z.strictObject({}),
  output: z.object({}),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scope: null,
  run: async () => {
    throw new NotFoundRefusal('Task t1 was not found');
  },
});

const tools = new ToolRegistry<unknown>([echo, confirm, broken, refusing], unlimitedGuard, observer);
const prompts = new PromptRegistry(
  [
    definePrompt({
      name: 'brief',
      title: 'Brief',
      description: 'Briefs on a project.',
      args: z.object({ project: z.string().describe('The project') }),
      tools: ['echo'],
      messages: ({ project }) => userText(`Brief me on ${project}`),
    }),
  ],
  (name) => tools.scopeOf(name),
);
const resources = new ResourceRegistry<unknown>([], [], unlimitedGuard, observer);
const dispatch = createDispatcher({ tools, prompts, resources, services: {}, keys: async () => keys });

const MODERN = '2026-07-28';
const meta = (caps: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': caps,
});
const hooks = (): DispatchHooks & { id?: unknown } => {
  const h: DispatchHooks & { id?: unknown } = {
    onRequestId: (id) => {
      h.id = id;
    },
    onMethod: () => {},
    mapBatchError: (err) => ({ code: (err as DoersError).rpcCode ?? -32603, message: (err as Error).message }),
  };
  return h;
};
const modernHeaders = (method: string, name?: string) => ({ protocolVersion: MODERN, method, name });
const call = (name: string, args: unknown, extra: Record<string, unknown> = {}, caps: Record<string, unknown> = {}) =>
  dispatch(
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, ...extra, _meta: meta(caps) } },
    modernHeaders('tools/call', name),
    principal(),
    hooks(),
  );

describe('tool results', () => {
  test('a result carries the compact text and the structured output', async () => {
    const out = await call('echo', { text: 'hi' });
    assert.deepEqual(out.body, {
      jsonrpc: '2.0',
      id: 1,
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'echo: hi' }],
        structuredContent: { text: 'hi' },
        isError: false,
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'doers', title: 'doers', version: '2.0.0' } },
      },
    });
  });

  test('a refusal is an isError result with its message', async () => {
    const out = (await call('refusing', {})) as { body: { result: { isError: boolean; content: { text: string }[] } } };
    assert.equal(out.body.result.isError, true);
    assert.equal(out.body.result.content[0]!.text, 'Task t1 was not found');
  });

  test('output outside the schema is an unexpected failure, never a result', async () => {
    await assert.rejects(call('broken', {}), (err: Error) => !(err instanceof DoersError) && /outside its schema/.test(err.message));
  });

  test('a token without the scope gets insufficient_scope (403)', async () => {
    const err = await rejection(
      dispatch(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: meta() } },
        modernHeaders('tools/call', 'echo'),
        principal({ scopes: ['team:read'] }),
        hooks(),
      ),
    );
    assert.equal(err.status, 403);
    assert.equal(err.code, 'ERR_INSUFFICIENT_SCOPE');
  });

  test('tools/list shows only what the scopes cover, sorted by name, the same list object per scope set', async () => {
    const p = principal({ scopes: ['team:read'] });
    const first = tools.list(p, '2026-07-28');
    assert.deepEqual(
      first.map((t) => t.name),
      ['broken', 'confirm', 'refusing'],
    );
    assert.equal(tools.list(principal({ scopes: ['team:read'] }), '2026-07-28'), first);
    assert.deepEqual(
      tools.list(principal(), '2026-07-28').map((t) => t.name),
      ['broken', 'confirm', 'echo', 'refusing'],
    );
  });

  test("a tool's title sits beside its name from 2025-06-18 on, and in its annotations on 2025-03-26, never twice", () => {
    // Arrange
    const listedOn = (version: string) => tools.list(principal(), version).find((t) => t.name === 'echo')!;

    // Act
    const [old, current] = [listedOn('2025-03-26'), listedOn('2025-11-25')];

    // Assert
    assert.equal(typeof current.title, 'string');
    assert.equal((current.annotations as { title?: string }).title, undefined);
    assert.equal((old.annotations as { title?: string }).title, current.title);
    assert.equal(old.title, undefined);
  });

  test('every listed tool has a JSON Schema made by zod, without a $schema dialect', () => {
    const listed = tools.list(principal(), '2026-07-28').find((t) => t.name === 'echo')!;
    assert.deepEqual(listed.inputSchema, {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    });
    assert.equal((listed.outputSchema as Record<string, unknown>).$schema, undefined);
  });
});

describe('multi round-trip (SEP-2322)', () => {
  test('a handler asking for input answers input_required with a signed requestState', async () => {
    const out = (await call('confirm', { what: 'delete' }, {}, { elicitation: {} })) as { body: { result: Record<string, any> } };
    const r = out.body.result;
    assert.equal(r.resultType, 'input_required');
    assert.equal(r.inputRequests.ok.method, 'elicitation/create');
    assert.match(r.requestState, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  test('the retry with inputResponses and the state completes', async () => {
    const first = (await call('confirm', { what: 'delete' }, {}, { elicitation: {} })) as { body: { result: Record<string, any> } };
    const retry = (await call(
      'confirm',
      { what: 'delete' },
      { inputResponses: { ok: { action: 'accept', content: {} } }, requestState: first.body.result.requestState },
      { elicitation: {} },
    )) as { body: { result: Record<string, any> } };
    assert.equal(retry.body.result.resultType, 'complete');
    assert.deepEqual(retry.body.result.structuredContent, { confirmed: true, what: 'delete' });
  });

  test('a tampered requestState is -32602', async () => {
    const first = (await call('confirm', { what: 'delete' }, {}, { elicitation: {} })) as { body: { result: Record<string, any> } };
    const [h, p, s] = (first.body.result.requestState as string).split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ s: { asked: 'everything' } })).toString('base64url')}.${s}`;
    assert.notEqual(forged, `${h}.${p}.${s}`);
    const err = await rejection(
      call('confirm', { what: 'delete' }, { inputResponses: { ok: { action: 'accept' } }, requestState: forged }, { elicitation: {} }),
    );
    assert.equal(err.rpcCode, -32602);
  });

  test('a requestState replayed with other arguments is -32602', async () => {
    const first = (await call('confirm', { what: 'delete' }, {}, { elicitation: {} })) as { body: { result: Record<string, any> } };
    const err = await rejection(
      call(
        'confirm',
        { what: 'archive' },
        { inputResponses: { ok: { action: 'accept' } }, requestState: first.body.result.requestState },
        { elicitation: {} },
      ),
    );
    assert.equal(err.rpcCode, -32602);
  });

  test('a client without the elicitation capability gets 400 -32021 naming it', async () => {
    const err = await rejection(call('confirm', { what: 'delete' }));
    assert.equal(err.status, 400);
    assert.equal(err.rpcCode, -32021);
    assert.deepEqual(err.data, { requiredCapabilities: { elicitation: {} } });
  });
});

describe('prompts', () => {
  const get = (args: unknown, p = principal()) =>
    dispatch(
      { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'brief', arguments: args, _meta: meta() } },
      modernHeaders('prompts/get', 'brief'),
      p,
      hooks(),
    );

  test('a prompt answers one user message with its arguments', async () => {
    const out = (await get({ project: 'Apollo' })) as { body: { result: Record<string, any> } };
    assert.deepEqual(out.body.result.messages, [{ role: 'user', content: { type: 'text', text: 'Brief me on Apollo' } }]);
  });

  test('a missing required argument is -32602 naming it', async () => {
    const err = await rejection(get({}));
    assert.equal(err.rpcCode, -32602);
    assert.match(err.message, /project/);
  });

  test('an undeclared argument is -32602 naming it', async () => {
    const err = await rejection(get({ project: 'A', colour: 'red' }));
    assert.equal(err.rpcCode, -32602);
    assert.match(err.message, /colour/);
  });

  test('a prompt is listed only where every tool it drives is covered', () => {
    assert.deepEqual(
      prompts.list(principal()).map((p) => p.name),
      ['brief'],
    );
    assert.deepEqual(prompts.list(principal({ scopes: ['team:read'] })), []);
  });
});

describe('envelopes and eras', () => {
  test('the error id is reported as soon as the body is read', async () => {
    const h = hooks();
    await assert.rejects(
      dispatch({ jsonrpc: '2.0', id: 'x-1', method: 'tools/list', params: {} }, modernHeaders('tools/list'), principal(), h),
    );
    assert.equal(h.id, 'x-1');
  });

  test('a JSON-RPC response sent to the server is accepted with 202', async () => {
    const out = await dispatch(
      { jsonrpc: '2.0', id: 3, result: {} },
      { protocolVersion: '2025-11-25', method: undefined, name: undefined },
      principal(),
      hooks(),
    );
    assert.equal(out.status, 202);
  });
});

describe('multi round-trip on the handshake era', () => {
  test('a tool that needs input answers a tool error naming 2026-07-28, not -32021', async () => {
    const out = (await dispatch(
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'confirm', arguments: { what: 'delete' } } },
      { protocolVersion: '2025-11-25', method: undefined, name: undefined },
      principal(),
      hooks(),
    )) as { status: number; body: { result: { isError: boolean; content: { text: string }[] } } };
    assert.equal(out.status, 200);
    assert.equal(out.body.result.isError, true);
    assert.match(out.body.result.content[0]!.text, /2026-07-28/);
  });
});
