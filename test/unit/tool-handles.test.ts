import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { unlimitedGuard } from '../../lambda/limits/call-guard.js';
import { defineToolFor, type ToolHandle, ToolRegistry } from '../../lambda/mcp/tool-registry.js';
import { principal } from '../helpers/events.js';
import { RecordingObserver } from '../helpers/recording-observer.js';

// The registry's tools as handles (lambda/workspace/surface/catalog.ts): listed without their code,
// which is loaded on a call's first need of it.

const defineTool = defineToolFor<unknown>();
const echo = defineTool({
  name: 'echo',
  title: 'Echo',
  description: 'Echoes its text (a test tool).',
  input: z.strictObject({ text: z.string() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  scope: 'tasks:write',
  run: async ({ text }) => text,
  content: (out) => [{ type: 'text', text: String(out) }],
});

const handle = (load: () => Promise<typeof echo>): ToolHandle<unknown> & { loads: number } => {
  const h = {
    name: 'echo',
    title: 'Echo',
    annotations: echo.annotations,
    scope: echo.scope,
    listed: () => ({ name: 'echo' }),
    loads: 0,
    load: () => {
      h.loads++;
      return load();
    },
  };
  return h;
};

const meta = { era: { version: '2026-07-28', modern: true }, clientCapabilities: {}, clientInfo: undefined } as const;

describe('a tool as a handle', () => {
  test('is loaded on its first call, and a call its scope refuses loads nothing', async () => {
    const observer = new RecordingObserver();
    const h = handle(async () => echo);
    const tools = new ToolRegistry<unknown>([h], unlimitedGuard, observer);

    await assert.rejects(
      tools.call('echo', { text: 'x' }, { principal: principal({ scopes: ['tasks:read'] }), services: {}, now: new Date(), meta }),
    );
    const out = await tools.call('echo', { text: 'hi' }, { principal: principal(), services: {}, now: new Date(), meta });

    assert.equal(h.loads, 1);
    assert.deepEqual((out.result.content as { text: string }[])[0]!.text, 'hi');
    assert.deepEqual(
      observer.toolCalls.map((c) => c.outcome),
      ['denied', 'ok'],
    );
  });

  test('a chunk that cannot be loaded fails the call outright, audited as failed', async () => {
    const observer = new RecordingObserver();
    const tools = new ToolRegistry<unknown>([handle(() => Promise.reject(new Error('chunk missing')))], unlimitedGuard, observer);

    await assert.rejects(
      tools.call('echo', { text: 'x' }, { principal: principal(), services: {}, now: new Date(), meta }),
      /chunk missing/,
    );
    assert.deepEqual(
      observer.toolCalls.map((c) => [c.tool, c.outcome]),
      [['echo', 'failed']],
    );
  });
});
