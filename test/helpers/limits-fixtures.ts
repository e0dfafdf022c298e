import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Fixtures } from '../../lambda/app.js';
import type { StaticResourceDefinition } from '../../lambda/mcp/resource-registry.js';
import { afterAdmission } from '../../lambda/platform/admission-gate.js';
import { defineTool } from '../../lambda/workspace/surface/define-tool.js';
import type { WorkspaceServices } from '../../lambda/workspace/surface/services.js';

/** Wall-clock milliseconds with sub-ms precision, comparable across processes on one machine. */
const wallNow = (): number => performance.timeOrigin + performance.now();

const intervalSchema = z.object({ startedAt: z.number(), endedAt: z.number(), pid: z.number() });

/**
 * Runs for `sleepMs` once its call is admitted and reports when it ran: between the lease being taken
 * and given back, so the intervals of admitted calls bound from below what the limiter let overlap.
 * (A call starts beside its admission; its work that must not outnumber the bound waits for it, as
 * every write does: lambda/platform/admission-gate.ts.)
 */
const probe = defineTool({
  name: 'limits_probe',
  title: 'Limits probe',
  description: 'Test fixture: sleeps for sleepMs and reports when it ran.',
  input: z.strictObject({ sleepMs: z.number().int().min(0).max(60_000) }),
  output: intervalSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scope: null,
  run: async ({ sleepMs }) => {
    await afterAdmission();
    const startedAt = wallNow();
    if (sleepMs > 0) await sleep(sleepMs);
    return { startedAt, endedAt: wallNow(), pid: process.pid };
  },
  render: (o) => `ran ${Math.round(o.endedAt - o.startedAt)} ms`,
});

/** Needs a scope and an argument: the order tests call it without either. */
const scopedEcho = defineTool({
  name: 'limits_scoped_echo',
  title: 'Scoped echo',
  description: 'Test fixture needing tasks:write and a text argument.',
  input: z.strictObject({ text: z.string().min(1) }),
  output: z.object({ text: z.string() }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  scope: 'tasks:write',
  run: async ({ text }) => ({ text }),
  render: (o) => o.text,
});

export const PROBE_RESOURCE_URI = 'fixture://limits/probe';

const probeResource: StaticResourceDefinition<WorkspaceServices> = {
  uri: PROBE_RESOURCE_URI,
  name: 'limits-probe',
  mimeType: 'text/plain',
  scope: null,
  read: async (uri) => [{ uri, mimeType: 'text/plain', text: 'probe' }],
};

export const LIMITS_FIXTURES: Fixtures = { tools: [probe, scopedEcho], resources: [probeResource] };
