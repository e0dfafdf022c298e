import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Fixtures } from '../../lambda/app.js';
import { ToolRefusal } from '../../lambda/errors.js';
import { definePrompt, type PromptMessage } from '../../lambda/mcp/prompt-registry.js';
import type { ResourceTemplateDefinition, StaticResourceDefinition } from '../../lambda/mcp/resource-registry.js';
import { declaresTasks, TASKS_EXTENSION, taskStarted, tasksRequired } from '../../lambda/mcp/tasks.js';
import { defineToolFor, type InputRequired, inputRequired, type ToolContext, type ToolDefinition } from '../../lambda/mcp/tool-registry.js';
import type { ContentBlock } from '../../lambda/mcp/types.js';
import { taskOfJob } from '../../lambda/workspace/surface/long-work.js';
import type { WorkspaceServices } from '../../lambda/workspace/surface/services.js';

/**
 * The tools, resources and prompts `@modelcontextprotocol/conformance` 0.2.0-alpha.12 calls by name
 * (its server scenarios), declared through the product's own registries so the suite exercises the
 * real validation, envelopes and multi round-trip path. Registered by the test harness only:
 * `startTestServer(env, { fixtures: CONFORMANCE_FIXTURES })`; the deployed function never sees them.
 */

/** 1×1 red PNG and a minimal WAV, the values the suite's reference server uses. */
export const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
export const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

type Services = WorkspaceServices;
const defineTool = defineToolFor<Services>();
type Ctx = ToolContext<Services>;

/** The suite's `test_error_handling` wants a tool error: the same channel as a product refusal. */
class FixtureRefusal extends ToolRefusal {
  readonly code = 'ERR_FIXTURE';
  constructor(message: string) {
    super(message, 'conflict');
  }
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const noArgs = z.strictObject({});

/** A fixture answering with fixed content blocks; no output schema, so no structuredContent. */
const contentTool = (name: string, description: string, blocks: ContentBlock[]): ToolDefinition<Services> =>
  defineTool<typeof noArgs, z.ZodType>({
    name,
    title: name,
    description,
    input: noArgs,
    annotations: READ_ONLY,
    scope: null,
    run: async () => undefined,
    content: () => blocks,
  });

const text = (value: string): ContentBlock => ({ type: 'text', text: value });

// ---- input requests (2026-07-28 multi round-trip, SEP-2322) ----------------------------------------

type InputRequest = InputRequired['inputRequests'][string];

const elicit = (message: string, properties: Record<string, unknown>, required: string[] = Object.keys(properties)): InputRequest => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema: { type: 'object', properties, required } },
});
const sample = (prompt: string, maxTokens: number): InputRequest => ({
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens },
});
const listRoots: InputRequest = { method: 'roots/list', params: {} };

/** An answer the client gave to one input request, when it is an accepted elicitation or any other result. */
const answerOf = (ctx: { input?: Ctx['input'] }, key: string): Record<string, any> | undefined => {
  const answer = ctx.input?.responses[key];
  return typeof answer === 'object' && answer !== null ? (answer as Record<string, any>) : undefined;
};
const accepted = (ctx: { input?: Ctx['input'] }, key: string): Record<string, any> | undefined => {
  const answer = answerOf(ctx, key);
  return answer?.action === 'accept' && typeof answer.content === 'object' && answer.content !== null ? answer.content : undefined;
};

/** A fixture that asks until it has what it needs, then answers with text. */
const roundTripTool = (name: string, description: string, step: (ctx: Ctx) => string | InputRequired): ToolDefinition<Services> =>
  defineTool<typeof noArgs, z.ZodType>({
    name,
    title: name,
    description,
    input: noArgs,
    annotations: READ_ONLY,
    scope: null,
    run: async (_args, ctx) => step(ctx),
    content: (out) => [text(String(out))],
  });

const stateOf = (ctx: Ctx): Record<string, unknown> | undefined =>
  typeof ctx.input?.state === 'object' && ctx.input.state !== null ? (ctx.input.state as Record<string, unknown>) : undefined;

// ---- tools ----------------------------------------------------------------------------------------

// ---- long work (the tasks extension, io.modelcontextprotocol/tasks) ----------------------------------

/**
 * A fixture's task: a job in the product's own job store, read by the product's tasks/get, cancel
 * and update (lambda/workspace/surface/long-work.ts), and run here, beside the server, by `work`,
 * which returns the tool's result, or undefined when it stopped because the task was cancelled.
 */
const asTask = async (ctx: Ctx, work: (job: JobHandle) => Promise<Record<string, unknown> | undefined>) => {
  const { jobs } = ctx.services;
  const jobId = randomUUID();
  const ws = ctx.principal.workspaceId;
  const job = await jobs.create({
    workspaceId: ws,
    jobId,
    userId: ctx.principal.userId,
    tool: ctx.toolName,
    input: {},
    createdAt: ctx.now.toISOString(),
  });
  const handle: JobHandle = {
    cancelled: async () => (await jobs.get(ws, jobId, new Date()))?.cancel === true,
    ask: async (inputRequests) => {
      await jobs.ask(ws, jobId, inputRequests, 'Waiting for your answer.', new Date());
      for (;;) {
        await sleep(50);
        const now = await jobs.get(ws, jobId, new Date());
        if (!now || now.cancel || now.status !== 'input_required') return now?.inputResponses ?? {};
      }
    },
  };
  setImmediate(() => {
    work(handle)
      .then((result) =>
        jobs.finish(
          ws,
          jobId,
          result ? { status: 'completed', statusMessage: 'Done.', result } : { status: 'cancelled', statusMessage: 'Cancelled.' },
          new Date(),
        ),
      )
      .catch(() =>
        jobs.finish(
          ws,
          jobId,
          { status: 'failed', statusMessage: 'It failed.', error: { code: -32603, message: 'Internal error' } },
          new Date(),
        ),
      );
  });
  return taskStarted(taskOfJob(job, ctx.now));
};

interface JobHandle {
  cancelled(): Promise<boolean>;
  /** Parks the task on input_required until every key is answered (tasks/update); the answers by key. */
  ask(inputRequests: Record<string, InputRequest>): Promise<Readonly<Record<string, unknown>>>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const textResult = (value: string, isError = false) => ({ content: [text(value)], isError });
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

/** A task-supporting fixture: a task for a client that declares the extension, else `sync` (or -32021 without one). */
const taskTool = <I extends z.ZodType>(
  name: string,
  description: string,
  input: I,
  task: (args: z.output<I>, job: JobHandle, ctx: Ctx) => Promise<Record<string, unknown> | undefined>,
  sync?: (args: z.output<I>) => Promise<string>,
): ToolDefinition<Services> =>
  defineTool<I, z.ZodType>({
    name,
    title: name,
    description,
    input,
    annotations: WRITE,
    scope: null,
    run: async (args, ctx) => {
      if (declaresTasks(ctx.meta)) return asTask(ctx, (job) => task(args, job, ctx));
      if (!sync) throw tasksRequired(`${name} runs only as a task of the ${TASKS_EXTENSION} extension`);
      return sync(args);
    },
    content: (out) => [text(String(out))],
  });

const taskTools: ToolDefinition<Services>[] = [
  defineTool<z.ZodObject<{ name: z.ZodString }>, z.ZodType>({
    name: 'greet',
    title: 'greet',
    description: 'Greets by name, at once: never a task (conformance fixture).',
    input: z.strictObject({ name: z.string() }),
    annotations: READ_ONLY,
    scope: null,
    run: async ({ name }) => `Hello, ${name}!`,
    content: (out) => [text(String(out))],
  }),
  taskTool(
    'slow_compute',
    'Sleeps `seconds`, then answers; a task, cancelled between its steps (conformance fixture).',
    z.strictObject({ seconds: z.number().min(0).max(120), label: z.string().optional() }),
    async ({ seconds, label }, job) => {
      for (const end = Date.now() + seconds * 1000; Date.now() < end; ) {
        if (await job.cancelled()) return undefined;
        await sleep(Math.min(100, end - Date.now()));
      }
      return textResult(`Computed ${label ?? 'it'} after ${seconds} s`);
    },
    async ({ seconds, label }) => {
      await sleep(seconds * 1000);
      return `Computed ${label ?? 'it'} after ${seconds} s`;
    },
  ),
  taskTool('failing_job', 'A task that ends in a tool error; only as a task (conformance fixture).', noArgs, async () => {
    await sleep(200);
    return textResult('The job failed, as it always does.', true);
  }),
  taskTool('protocol_error_job', 'A task that fails with a protocol error (conformance fixture).', noArgs, async () => {
    await sleep(100);
    throw new Error('protocol_error_job always fails');
  }),
  taskTool(
    'confirm_delete',
    'A task that asks for a confirmation, then answers (conformance fixture).',
    z.strictObject({}).passthrough(),
    async (_args, job) => {
      const answers = await job.ask({ confirm: elicit('Delete it?', { confirm: { type: 'boolean' } }) });
      return textResult(`Confirmation: ${JSON.stringify(answers.confirm ?? null)}`);
    },
  ),
  taskTool(
    'multi_input',
    'A task that asks two questions at once (conformance fixture).',
    z.strictObject({}).passthrough(),
    async (_args, job) => {
      const answers = await job.ask({
        first: elicit('First?', { value: { type: 'string' } }),
        second: elicit('Second?', { value: { type: 'string' } }),
      });
      return textResult(`Answers: ${JSON.stringify(answers)}`);
    },
  ),
  // Multi round-trip first (the name), then a task with what it was told.
  defineTool<typeof noArgs, z.ZodType>({
    name: 'test_tool_with_task',
    title: 'test_tool_with_task',
    description: 'Asks for a name through an input request, then greets in a task (conformance fixture).',
    input: noArgs,
    annotations: WRITE,
    scope: null,
    run: async (_args, ctx) => {
      if (!declaresTasks(ctx.meta)) throw tasksRequired(`test_tool_with_task runs only as a task of the ${TASKS_EXTENSION} extension`);
      const name = accepted(ctx, 'user_name')?.name;
      if (typeof name !== 'string')
        return inputRequired({ user_name: elicit('What is your name?', { name: { type: 'string' } }) }, undefined);
      return asTask(ctx, async () => textResult(`Hello, ${name}!`));
    },
  }),
];

const tools: ToolDefinition<Services>[] = [
  ...taskTools,
  contentTool('test_simple_text', 'Answers with one text block (conformance fixture).', [
    text('This is a simple text response for testing.'),
  ]),
  contentTool('test_image_content', 'Answers with one PNG image block (conformance fixture).', [
    { type: 'image', data: PNG, mimeType: 'image/png' },
  ]),
  contentTool('test_audio_content', 'Answers with one WAV audio block (conformance fixture).', [
    { type: 'audio', data: WAV, mimeType: 'audio/wav' },
  ]),
  contentTool('test_embedded_resource', 'Answers with one embedded text resource (conformance fixture).', [
    {
      type: 'resource',
      resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
    },
  ]),
  contentTool('test_multiple_content_types', 'Answers with text, image and embedded resource blocks (conformance fixture).', [
    text('Multiple content types test:'),
    { type: 'image', data: PNG, mimeType: 'image/png' },
    {
      type: 'resource',
      resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
    },
  ]),
  defineTool<typeof noArgs, z.ZodType>({
    name: 'test_error_handling',
    title: 'Tool error',
    description: 'Always fails with a tool error (isError result), never a protocol error (conformance fixture).',
    input: noArgs,
    annotations: READ_ONLY,
    scope: null,
    run: async () => {
      throw new FixtureRefusal('This tool intentionally returns an error for testing');
    },
  }),
  // The suite expects progress and log notifications streamed during these calls; this server
  // answers JSON only, so they run and answer but cannot stream (baselined, see the YAML files).
  contentTool(
    'test_tool_with_progress',
    'Would report progress while running; answers JSON only, so no progress is streamed (conformance fixture).',
    [text('Progress is not streamed: this server answers JSON only.')],
  ),
  contentTool(
    'test_tool_with_logging',
    'Would log while running; answers JSON only, so no log message is streamed (conformance fixture).',
    [text('Tool with logging executed (no log notifications: JSON only).')],
  ),
  // 2026-07-28 `server-stateless` diagnostics.
  contentTool('test_logging_tool', 'Runs without emitting log notifications when the request names no log level (conformance fixture).', [
    text('logging tool ok'),
  ]),
  roundTripTool(
    'test_streaming_elicitation',
    'Asks for a name through an input request, never a request on the response stream (conformance fixture).',
    (ctx) => {
      const name = accepted(ctx, 'name')?.name;
      return typeof name === 'string'
        ? `Hello, ${name}!`
        : inputRequired({ name: elicit('What is your name?', { name: { type: 'string' } }) }, undefined);
    },
  ),
  roundTripTool(
    'test_missing_capability',
    'Needs the sampling capability; a client without it gets -32021 (conformance fixture).',
    (ctx) => {
      const reply = answerOf(ctx, 'sample');
      return reply ? `Sampling said: ${JSON.stringify(reply.content)}` : inputRequired({ sample: sample('Say hello', 20) }, undefined);
    },
  ),
  // Legacy-era scenarios that need a server-to-client request in the middle of the call: on
  // 2026-07-28 the same question goes through an input request.
  defineTool<z.ZodObject<{ prompt: z.ZodString }>, z.ZodType>({
    name: 'test_sampling',
    title: 'test_sampling',
    description: 'Asks the client to sample an answer to the prompt (conformance fixture).',
    input: z.strictObject({ prompt: z.string().describe('What to ask the model') }),
    annotations: READ_ONLY,
    scope: null,
    run: async ({ prompt }, ctx) => {
      const reply = answerOf(ctx, 'sample');
      return reply ? `LLM response: ${JSON.stringify(reply.content)}` : inputRequired({ sample: sample(prompt, 100) }, undefined);
    },
    content: (out) => [text(String(out))],
  }),
  defineTool<z.ZodObject<{ message: z.ZodString }>, z.ZodType>({
    name: 'test_elicitation',
    title: 'test_elicitation',
    description: 'Asks the user for a username and e-mail address (conformance fixture).',
    input: z.strictObject({ message: z.string().describe('What to tell the user') }),
    annotations: READ_ONLY,
    scope: null,
    run: async ({ message }, ctx) => {
      const content = accepted(ctx, 'user');
      return content
        ? `User provided: ${JSON.stringify(content)}`
        : inputRequired(
            {
              user: elicit(message, {
                username: { type: 'string', description: "User's response" },
                email: { type: 'string', description: "User's email address" },
              }),
            },
            undefined,
          );
    },
    content: (out) => [text(String(out))],
  }),
  roundTripTool(
    'test_elicitation_sep1034_defaults',
    'Asks for values with defaults of every primitive type (conformance fixture).',
    (ctx) => {
      const reply = answerOf(ctx, 'defaults');
      return reply
        ? `Elicitation completed: action=${reply.action}, content=${JSON.stringify(reply.content ?? {})}`
        : inputRequired(
            {
              defaults: elicit(
                'Please review and update the form fields with defaults',
                {
                  name: { type: 'string', description: 'User name', default: 'John Doe' },
                  age: { type: 'integer', description: 'User age', default: 30 },
                  score: { type: 'number', description: 'User score', default: 95.5 },
                  status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
                  verified: { type: 'boolean', description: 'Verification status', default: true },
                },
                [],
              ),
            },
            undefined,
          );
    },
  ),
  roundTripTool('test_elicitation_sep1330_enums', 'Asks for values with every enum schema variant (conformance fixture).', (ctx) => {
    const reply = answerOf(ctx, 'enums');
    return reply
      ? `Elicitation completed: action=${reply.action}, content=${JSON.stringify(reply.content ?? {})}`
      : inputRequired(
          {
            enums: elicit(
              'Please select options from the enum fields',
              {
                untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
                titledSingle: {
                  type: 'string',
                  oneOf: [
                    { const: 'value1', title: 'First Option' },
                    { const: 'value2', title: 'Second Option' },
                    { const: 'value3', title: 'Third Option' },
                  ],
                },
                legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
                untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
                titledMulti: {
                  type: 'array',
                  items: {
                    anyOf: [
                      { const: 'value1', title: 'First Choice' },
                      { const: 'value2', title: 'Second Choice' },
                      { const: 'value3', title: 'Third Choice' },
                    ],
                  },
                },
              },
              [],
            ),
          },
          undefined,
        );
  }),
  // 2026-07-28 multi round-trip scenarios (input-required-result-*).
  roundTripTool('test_input_required_result_elicitation', "Asks for the user's name, then greets them (conformance fixture).", (ctx) => {
    const name = accepted(ctx, 'user_name')?.name;
    return typeof name === 'string'
      ? `Hello, ${name}!`
      : inputRequired({ user_name: elicit('What is your name?', { name: { type: 'string' } }) }, undefined);
  }),
  roundTripTool(
    'test_input_required_result_sampling',
    'Asks the client to sample an answer, then reports it (conformance fixture).',
    (ctx) => {
      const reply = answerOf(ctx, 'capital_question');
      return reply
        ? `Sampling said: ${JSON.stringify(reply.content)}`
        : inputRequired({ capital_question: sample('What is the capital of France?', 100) }, undefined);
    },
  ),
  roundTripTool('test_input_required_result_list_roots', "Asks for the client's roots, then lists them (conformance fixture).", (ctx) => {
    const roots = answerOf(ctx, 'client_roots')?.roots;
    return Array.isArray(roots)
      ? `Roots: ${roots.map((r: { uri?: unknown }) => String(r?.uri)).join(', ')}`
      : inputRequired({ client_roots: listRoots }, undefined);
  }),
  roundTripTool(
    'test_input_required_result_request_state',
    'Asks for a confirmation and carries state across the round trip (conformance fixture).',
    (ctx) => {
      const ok = accepted(ctx, 'confirm')?.ok;
      if (ok !== undefined && stateOf(ctx)?.step === 'confirm') return `state-ok: confirmed=${String(ok)}`;
      return inputRequired({ confirm: elicit('Please confirm', { ok: { type: 'boolean' } }) }, { step: 'confirm' });
    },
  ),
  roundTripTool(
    'test_input_required_result_multiple_inputs',
    'Asks for a name, a sampled greeting and the roots at once (conformance fixture).',
    (ctx) => {
      const name = accepted(ctx, 'user_name')?.name;
      const greeting = answerOf(ctx, 'greeting');
      const roots = answerOf(ctx, 'client_roots')?.roots;
      if (typeof name === 'string' && greeting && Array.isArray(roots) && stateOf(ctx)?.step === 'all') {
        return `all inputs received: ${name}, ${JSON.stringify(greeting.content)}, ${roots.length} root(s)`;
      }
      return inputRequired(
        {
          user_name: elicit('What is your name?', { name: { type: 'string' } }),
          greeting: sample('Generate a greeting', 50),
          client_roots: listRoots,
        },
        { step: 'all' },
      );
    },
  ),
  roundTripTool(
    'test_input_required_result_multi_round',
    'Asks for a name, then a colour, across two rounds (conformance fixture).',
    (ctx) => {
      const state = stateOf(ctx);
      const color = accepted(ctx, 'step2')?.color;
      if (state?.round === 2 && typeof color === 'string') return `${String(state.name)} likes ${color}`;
      const name = accepted(ctx, 'step1')?.name;
      if (state?.round === 1 && typeof name === 'string') {
        return inputRequired({ step2: elicit('Step 2: What is your favorite color?', { color: { type: 'string' } }) }, { round: 2, name });
      }
      return inputRequired({ step1: elicit('Step 1: What is your name?', { name: { type: 'string' } }) }, { round: 1 });
    },
  ),
  roundTripTool(
    'test_input_required_result_tampered_state',
    'Carries signed state; a tampered state is refused (conformance fixture).',
    (ctx) => {
      if (stateOf(ctx)?.step === 'confirm' && accepted(ctx, 'confirm')) return 'state verified';
      return inputRequired({ confirm: elicit('Please confirm', { ok: { type: 'boolean' } }) }, { step: 'confirm' });
    },
  ),
  roundTripTool(
    'test_input_required_result_capabilities',
    'Asks only for what the client declared it can answer (conformance fixture).',
    (ctx) => {
      if (ctx.input && Object.keys(ctx.input.responses).length > 0) return `answers: ${Object.keys(ctx.input.responses).join(', ')}`;
      const caps = ctx.meta.clientCapabilities;
      const requests: Record<string, InputRequest> = {
        ...(caps.sampling ? { greeting: sample('Generate a greeting', 50) } : {}),
        ...(caps.elicitation ? { user_name: elicit('What is your name?', { name: { type: 'string' } }) } : {}),
        ...(caps.roots ? { client_roots: listRoots } : {}),
      };
      return Object.keys(requests).length > 0 ? inputRequired(requests, undefined) : 'the client declared no capability to ask through';
    },
  ),
];

// ---- resources ------------------------------------------------------------------------------------

const staticResource = (
  uri: string,
  name: string,
  description: string,
  mimeType: string,
  body: { text: string } | { blob: string },
): StaticResourceDefinition<Services> => ({
  uri,
  name,
  title: name,
  description,
  mimeType,
  scope: null,
  read: async () => [{ uri, mimeType, ...body }],
});

const resources: StaticResourceDefinition<Services>[] = [
  staticResource('test://static-text', 'static-text', 'A static text resource (conformance fixture).', 'text/plain', {
    text: 'This is the content of the static text resource.',
  }),
  staticResource('test://static-binary', 'static-binary', 'A static binary resource: a PNG image (conformance fixture).', 'image/png', {
    blob: PNG,
  }),
  staticResource(
    'test://watched-resource',
    'watched-resource',
    'A resource a client may subscribe to (conformance fixture).',
    'text/plain',
    {
      text: 'Watched resource content',
    },
  ),
];

const templates: ResourceTemplateDefinition<Services>[] = [
  {
    uriTemplate: 'test://template/{id}/data',
    name: 'template',
    title: 'Template data',
    description: 'Data for one id, addressed by a URI template (conformance fixture).',
    mimeType: 'application/json',
    scope: null,
    read: async ({ id }, uri) => [
      { uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) },
    ],
  },
];

// ---- prompts --------------------------------------------------------------------------------------

const user = (content: PromptMessage['content']): PromptMessage => ({ role: 'user', content });

const prompts = [
  definePrompt({
    name: 'test_simple_prompt',
    title: 'Simple prompt',
    description: 'A prompt without arguments (conformance fixture).',
    args: z.object({}),
    tools: [],
    messages: () => [user({ type: 'text', text: 'This is a simple prompt for testing.' })],
  }),
  definePrompt({
    name: 'test_prompt_with_arguments',
    title: 'Prompt with arguments',
    description: 'A prompt with two required arguments (conformance fixture).',
    args: z.object({ arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') }),
    tools: [],
    messages: ({ arg1, arg2 }) => [user({ type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` })],
  }),
  definePrompt({
    name: 'test_prompt_with_embedded_resource',
    title: 'Prompt with an embedded resource',
    description: 'A prompt that embeds the resource it is given (conformance fixture).',
    args: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    tools: [],
    messages: ({ resourceUri }) => [
      user({ type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } }),
      user({ type: 'text', text: 'Please process the embedded resource above.' }),
    ],
  }),
  definePrompt({
    name: 'test_prompt_with_image',
    title: 'Prompt with an image',
    description: 'A prompt with an image (conformance fixture).',
    args: z.object({}),
    tools: [],
    messages: () => [
      user({ type: 'image', data: PNG, mimeType: 'image/png' }),
      user({ type: 'text', text: 'Please analyze the image above.' }),
    ],
  }),
  definePrompt({
    name: 'test_input_required_result_prompt',
    title: 'Prompt that asks for context',
    description: 'Asks the user for context through an input request, then builds the prompt (conformance fixture).',
    args: z.object({}),
    tools: [],
    messages: (_args, ctx) => {
      const context = accepted(ctx, 'user_context')?.context;
      return typeof context === 'string'
        ? [user({ type: 'text', text: `Use this context: ${context}` })]
        : inputRequired({ user_context: elicit('What context should the prompt use?', { context: { type: 'string' } }) }, undefined);
    },
  }),
];

export const CONFORMANCE_FIXTURES: Fixtures = { tools, prompts, resources, templates };
