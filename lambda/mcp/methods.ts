import { InvalidParamsError, MissingCapabilityError } from '../errors.js';
import type { KeyRing } from '../platform/key-ring.js';
import type { Principal } from '../vocabulary.js';
import type { JsonRpcRequest } from './jsonrpc.js';
import type { PromptRegistry } from './prompt-registry.js';
import {
  HANDSHAKE_DEFAULT_VERSION,
  INSTRUCTIONS,
  isKnownVersion,
  MODERN_CAPABILITIES,
  MODERN_VERSION,
  PROTOCOL_VERSIONS,
  SERVER_CAPABILITIES,
  SERVER_INFO,
  TASKS_EXTENSION,
} from './protocol.js';
import { signRequestState, verifyRequestState } from './request-state.js';
import type { ResourceRegistry } from './resource-registry.js';
import { declaresTasks, MAX_TASK_ID, type TaskSource, tasksRequired, unknownTask } from './tasks.js';
import { type InputRequired, isInputRequired, refusalResult, type ToolRegistry, type ToolSelection } from './tool-registry.js';
import type { RequestMeta } from './types.js';

export interface McpApp<S> {
  readonly tools: ToolRegistry<S>;
  readonly prompts: PromptRegistry;
  readonly resources: ResourceRegistry<S>;
  readonly services: S;
  readonly keys: () => Promise<KeyRing>;
  /** Where the tasks of long work live (the tasks extension); without it tasks/* find none. */
  readonly tasks?: TaskSource<S>;
}

export interface MethodCall {
  readonly req: JsonRpcRequest;
  readonly meta: RequestMeta;
  readonly principal: Principal;
  readonly now: Date;
  /** The tool groups the connection's URL chose (`/mcp?tools=`): what it lists and may call. */
  readonly tools: ToolSelection;
}

export interface MethodResult {
  readonly result: Record<string, unknown>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Already shaped with its own resultType (an InputRequiredResult, a task's handle): no `complete` envelope. */
  readonly shaped?: boolean;
  /** 2026-07-28: this answer's own `ttlMs`, in place of the method's (protocol.ts `CACHE_HINTS`). */
  readonly ttlMs?: number | undefined;
}

type Method<S> = (app: McpApp<S>, call: MethodCall) => Promise<MethodResult> | MethodResult;

const stringParam = (params: Record<string, unknown>, name: string): string => {
  const v = params[name];
  if (typeof v !== 'string' || v === '') throw new InvalidParamsError(`params.${name} must be a non-empty string`);
  return v;
};

/** Which client capability answers each kind of input request. */
const CAPABILITY_OF: Readonly<Record<string, string>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** What a retried multi round-trip request carries back, checked before any handler sees it. */
type RoundTripInput = { responses: Record<string, unknown>; state: unknown };

/** The state is bound to the workspace, the user, the tool or prompt (`prompt:<name>`) and its arguments. */
const bindingOf = (call: MethodCall, target: string, args: unknown) => ({
  workspaceId: call.principal.workspaceId,
  userId: call.principal.userId,
  target,
  args,
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `inputResponses` (of a retry, or of tasks/update): an object of result objects, else -32602 naming the one at fault. */
const checkedResponses = (value: unknown): Record<string, unknown> => {
  if (!isObject(value)) throw new InvalidParamsError('params.inputResponses must be an object');
  for (const [key, answer] of Object.entries(value)) {
    if (!isObject(answer)) throw new InvalidParamsError(`params.inputResponses.${key} must be a result object`);
  }
  return value;
};

/**
 * `inputResponses` / `requestState` of a retry (2026-07-28, SEP-2322): malformed answers are -32602,
 * a state that fails verification too. Undefined when the request is not a retry.
 */
const roundTripInput = async <S>(app: McpApp<S>, call: MethodCall, target: string, args: unknown): Promise<RoundTripInput | undefined> => {
  const { requestState, inputResponses } = call.req.params;
  if (!call.meta.era.modern || (requestState === undefined && inputResponses === undefined)) return undefined;
  if (requestState !== undefined && typeof requestState !== 'string') throw new InvalidParamsError('params.requestState must be a string');
  if (inputResponses !== undefined) checkedResponses(inputResponses);
  const state =
    requestState === undefined
      ? undefined
      : await verifyRequestState(await app.keys(), bindingOf(call, target, args), requestState, call.now);
  return { responses: (inputResponses ?? {}) as Record<string, unknown>, state };
};

const toInputRequiredResult = async <S>(
  app: McpApp<S>,
  call: MethodCall,
  target: string,
  args: unknown,
  out: InputRequired,
): Promise<MethodResult> => {
  if (!call.meta.era.modern) {
    // The handshake era could only ask mid-call over a stream, which this server never opens; -32021
    // does not exist there. A tool says so as a tool error the model can relay; a prompt as -32602.
    const message = `${target.replace(/^prompt:/, 'The prompt ')} needs input from the user, which this server can only ask for on protocol 2026-07-28 (multi round-trip requests)`;
    if (target.startsWith('prompt:')) throw new InvalidParamsError(message);
    return { result: refusalResult(message, { reason: 'needs-input', code: 'ERR_NEEDS_INPUT', data: {} }) };
  }
  const missing: Record<string, object> = {};
  for (const request of Object.values(out.inputRequests)) {
    const capability = CAPABILITY_OF[request.method] ?? request.method;
    if (call.meta.clientCapabilities[capability] === undefined) missing[capability] = {};
  }
  if (Object.keys(missing).length > 0) throw new MissingCapabilityError(missing, { status: 400 });
  const requestState = await signRequestState(await app.keys(), bindingOf(call, target, args), out.state, call.now);
  return { result: { resultType: 'input_required', inputRequests: out.inputRequests, requestState }, shaped: true };
};

const list = (key: string, items: readonly unknown[]): MethodResult => ({ result: { [key]: items } });

/** Methods of both eras; the dispatcher adds `initialize`/`ping` or `server/discover` by era. */
export const COMMON_METHODS: Readonly<Record<string, Method<unknown>>> = {
  'tools/list': (app, c) => list('tools', app.tools.list(c.principal, c.meta.era.version, c.tools)),
  'prompts/list': (app, c) => list('prompts', app.prompts.list(c.principal, c.tools)),
  'resources/list': (app, c) => list('resources', app.resources.listResources(c.principal)),
  'resources/templates/list': (app, c) => list('resourceTemplates', app.resources.listTemplates(c.principal)),
  'prompts/get': async (app, c) => {
    const name = stringParam(c.req.params, 'name');
    const args = c.req.params.arguments;
    const input = await roundTripInput(app, c, `prompt:${name}`, args);
    const out = app.prompts.get(name, args, c.principal, { meta: c.meta, ...(input ? { input } : {}) });
    return isInputRequired(out) ? toInputRequiredResult(app, c, `prompt:${name}`, args, out) : { result: out };
  },
  'resources/read': async (app, c) => {
    const uri = stringParam(c.req.params, 'uri');
    return {
      result: await app.resources.read(uri, { principal: c.principal, services: app.services, now: c.now, meta: c.meta }),
      ttlMs: app.resources.ttlOf(uri),
    };
  },
  'tools/call': async (app, c) => {
    const name = stringParam(c.req.params, 'name');
    const args = c.req.params.arguments;
    const input = await roundTripInput(app, c, name, args);
    const out = await app.tools.call(
      name,
      args,
      {
        principal: c.principal,
        services: app.services,
        now: c.now,
        meta: c.meta,
        ...(input ? { input } : {}),
      },
      c.tools,
    );
    if (out.inputRequired) return toInputRequiredResult(app, c, name, args, out.inputRequired);
    // A tool answers a task only to a client that declared the extension on this request (it checks).
    if (out.task) return { result: { resultType: 'task', ...out.task }, shaped: true };
    return { result: out.result, ...(out.headers ? { headers: out.headers } : {}) };
  },
};

export const HANDSHAKE_METHODS: Readonly<Record<string, Method<unknown>>> = {
  initialize: (_app, c) => {
    const requested = c.req.params.protocolVersion;
    return {
      result: {
        protocolVersion: isKnownVersion(requested) && requested !== MODERN_VERSION ? requested : HANDSHAKE_DEFAULT_VERSION,
        capabilities: SERVER_CAPABILITIES,
        serverInfo: SERVER_INFO,
        instructions: INSTRUCTIONS,
      },
    };
  },
  ping: () => ({ result: {} }),
};

/** The task a tasks/* request names, of a client that declared the extension (else -32021, as the extension asks). */
const taskIdOf = (c: MethodCall): string => {
  if (!declaresTasks(c.meta))
    throw tasksRequired(
      `${c.req.method} is a method of the ${TASKS_EXTENSION} extension, which this request's capabilities do not declare`,
    );
  const taskId = stringParam(c.req.params, 'taskId');
  if (taskId.length > MAX_TASK_ID) throw unknownTask(taskId);
  return taskId;
};

export const MODERN_METHODS: Readonly<Record<string, Method<unknown>>> = {
  'server/discover': () => ({
    result: { supportedVersions: PROTOCOL_VERSIONS, capabilities: MODERN_CAPABILITIES, instructions: INSTRUCTIONS },
  }),
  'tasks/get': async (app, c) => {
    const taskId = taskIdOf(c);
    const task = await app.tasks?.get(app.services, c.principal, taskId, c.now);
    if (!task) throw unknownTask(taskId);
    return { result: { ...task } };
  },
  'tasks/cancel': async (app, c) => {
    const taskId = taskIdOf(c);
    if (!(await app.tasks?.cancel(app.services, c.principal, taskId, c.now))) throw unknownTask(taskId);
    return { result: {} };
  },
  // Answers to what a task asks; answers to nothing outstanding are ignored, as the extension asks.
  'tasks/update': async (app, c) => {
    const taskId = taskIdOf(c);
    const responses = checkedResponses(c.req.params.inputResponses);
    if (!(await app.tasks?.update(app.services, c.principal, taskId, responses, c.now))) throw unknownTask(taskId);
    return { result: {} };
  },
};
