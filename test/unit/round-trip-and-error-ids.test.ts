import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
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

// Behaviour the conformance suite (2026-07-28) found missing: the id on an early -32022, malformed
// inputResponses, and the multi round-trip on prompts/get.

const observer = new RecordingObserver();
const keys = keyRingFromSeeds('another-seed-of-at-least-thirty-two-characters');

const elicitName = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Which topic?', requestedSchema: { type: 'object', properties: { topic: { type: 'string' } } } },
};

const ask = defineTool({
  name: 'ask',
  title: 'Ask',
  description: 'Asks for a topic.',
  input: z.strictObject({}),
  output: z.object({ topic: z.string() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scope: null,
  run: async (_args, ctx) => {
    const answer = ctx.input?.responses.topic as { content?: { topic?: string } } | undefined;
    return answer?.content?.topic ? { topic: answer.content.topic } : inputRequired({ topic: elicitName }, { asked: 'tool' });
  },
  render: (o) => o.topic,
});

const tools = new ToolRegistry<unknown>([ask], unlimitedGuard, observer);
const prompts = new PromptRegistry(
  [
    definePrompt({
      name: 'topical',
      title: 'Topical',
      description: 'Asks which topic, then briefs on it.',
      args: z.object({}),
      tools: [],
      messages: (_args, ctx) => {
        const answer = ctx.input?.responses.topic as { action?: string; content?: { topic?: string } } | undefined;
        const state = ctx.input?.state as { asked?: string } | undefined;
        return answer?.action === 'accept' && state?.asked === 'prompt'
          ? userText(`Brief me on ${answer.content?.topic}`)
          : inputRequired({ topic: elicitName }, { asked: 'prompt' });
      },
    }),
  ],
  (name) => tools.scopeOf(name),
);
const dispatch = createDispatcher({
  tools,
  prompts,
  resources: new ResourceRegistry<unknown>([], [], unlimitedGuard, observer),
  services: {},
  keys: async () => keys,
});

const MODERN = '2026-07-28';
const meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
const hooks = (): DispatchHooks & { id?: unknown } => {
  const h: DispatchHooks & { id?: unknown } = {
    onRequestId: (id) => {
      h.id = id;
    },
    onMethod: () => {},
    mapBatchError: () => ({ code: -32603, message: 'Internal error' }),
  };
  return h;
};
const send = (method: string, params: Record<string, unknown>, name?: string, h = hooks()) =>
  dispatch(
    { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: meta } },
    { protocolVersion: MODERN, method, name },
    principal(),
    h,
  ) as Promise<{
    status: number;
    body: { result: Record<string, any> };
  }>;

describe('error ids', () => {
  test('an unsupported MCP-Protocol-Version header is -32022 and the request id is still reported', async () => {
    const h = hooks();

    const err = await rejection(
      dispatch(
        { jsonrpc: '2.0', id: 301, method: 'server/discover', params: {} },
        { protocolVersion: 'v999.0.0', method: 'server/discover', name: undefined },
        principal(),
        h,
      ),
    );

    assert.equal(err.rpcCode, -32022);
    assert.equal(h.id, 301);
  });
});

describe('inputResponses are checked before a handler sees them', () => {
  for (const [label, inputResponses] of [
    ['a number', { topic: 12345 }],
    ['null', { topic: null }],
    ['an array', { topic: [] }],
  ] as const) {
    test(`an answer that is ${label} is -32602 naming it`, async () => {
      const err = await rejection(send('tools/call', { name: 'ask', arguments: {}, inputResponses }, 'ask'));

      assert.equal(err.rpcCode, -32602);
      assert.match(err.message, /params\.inputResponses\.topic/);
    });
  }

  test('inputResponses: null is -32602', async () => {
    const err = await rejection(send('tools/call', { name: 'ask', arguments: {}, inputResponses: null }, 'ask'));

    assert.equal(err.rpcCode, -32602);
    assert.match(err.message, /params\.inputResponses/);
  });
});

describe('multi round-trip on prompts/get', () => {
  test('a prompt asking for input answers input_required with a signed requestState', async () => {
    const out = await send('prompts/get', { name: 'topical' }, 'topical');

    assert.equal(out.status, 200);
    assert.equal(out.body.result.resultType, 'input_required');
    assert.deepEqual(out.body.result.inputRequests, { topic: elicitName });
    assert.match(out.body.result.requestState, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  test('the retry with the answer and the state completes with the messages', async () => {
    const first = await send('prompts/get', { name: 'topical' }, 'topical');

    const retry = await send(
      'prompts/get',
      {
        name: 'topical',
        inputResponses: { topic: { action: 'accept', content: { topic: 'billing' } } },
        requestState: first.body.result.requestState,
      },
      'topical',
    );

    assert.equal(retry.body.result.resultType, 'complete');
    assert.deepEqual(retry.body.result.messages, [{ role: 'user', content: { type: 'text', text: 'Brief me on billing' } }]);
  });

  test('a requestState issued by a tool call is refused on prompts/get (-32602)', async () => {
    const fromTool = await send('tools/call', { name: 'ask', arguments: {} }, 'ask');

    const err = await rejection(
      send(
        'prompts/get',
        {
          name: 'topical',
          inputResponses: { topic: { action: 'accept', content: { topic: 'x' } } },
          requestState: fromTool.body.result.requestState,
        },
        'topical',
      ),
    );

    assert.equal(err.rpcCode, -32602);
    assert.match(err.message, /requestState/);
  });
});
