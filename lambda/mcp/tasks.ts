import { InvalidParamsError, MissingCapabilityError } from '../errors.js';
import type { Principal } from '../vocabulary.js';
import { TASKS_EXTENSION } from './protocol.js';
import type { RequestMeta } from './types.js';

/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, protocol 2026-07-28): a tools/call the
 * server decides to run as long work answers a task's handle (`resultType: "task"`), and the client
 * follows it with `tasks/get`, `tasks/update` and `tasks/cancel`. docs/protocol.md, "Long work as
 * tasks", says what doers does with each. Only a client that declares the extension in the request's
 * own capabilities is ever answered a task, and only it may call the three methods.
 */
export { TASKS_EXTENSION };

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task as the extension shapes it (its `Task`). */
export interface McpTask {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number | null;
  readonly pollIntervalMs?: number;
}

/** What tasks/get answers: the task, with its result once completed or its JSON-RPC error once failed. */
export interface DetailedTask extends McpTask {
  /** While `input_required`: what the task waits for, by key (answered with tasks/update). */
  readonly inputRequests?: Readonly<Record<string, unknown>>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** What a tool's run returns to answer its call with a task's handle. */
export interface TaskStarted {
  readonly kind: 'task';
  readonly task: McpTask;
}

export const taskStarted = (task: McpTask): TaskStarted => ({ kind: 'task', task });

export const isTaskStarted = (value: unknown): value is TaskStarted =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'task';

/**
 * Whether this request's client declared the extension (on its own capabilities: a declaration is
 * per request). Only on 2026-07-28: on the handshake revisions no client could follow a task.
 */
export const declaresTasks = (meta: RequestMeta): boolean => {
  if (!meta.era.modern) return false;
  const extensions = (meta.clientCapabilities as { extensions?: unknown }).extensions;
  return typeof extensions === 'object' && extensions !== null && Object.hasOwn(extensions, TASKS_EXTENSION);
};

/** -32021 naming the extension, as the extension asks; `message` says what the client may do instead. */
export const tasksRequired = (message: string): MissingCapabilityError =>
  new MissingCapabilityError({ extensions: { [TASKS_EXTENSION]: {} } }, { status: 400, message });

/**
 * Where the tasks of the calls live (the workspace's long work). Each answers only the principal's
 * own tasks: another user's or workspace's task is answered as unknown.
 */
export interface TaskSource<S> {
  get(services: S, principal: Principal, taskId: string, now: Date): Promise<DetailedTask | undefined>;
  /** Asks the task to stop; false when there is no such task of the principal's. */
  cancel(services: S, principal: Principal, taskId: string, now: Date): Promise<boolean>;
  /** Answers what the task asked (tasks/update); false when there is no such task of the principal's. */
  update(services: S, principal: Principal, taskId: string, responses: Readonly<Record<string, unknown>>, now: Date): Promise<boolean>;
}

/** The -32602 an unknown (or expired, or someone else's) task is answered with. */
export const unknownTask = (taskId: string): InvalidParamsError =>
  new InvalidParamsError(
    `params.taskId: no task ${taskId.length > MAX_TASK_ID ? `${taskId.slice(0, MAX_TASK_ID)}…` : taskId} of yours (tasks are kept a day after they start)`,
  );

/** Longer than any task id this server makes: answered as unknown without a read. */
export const MAX_TASK_ID = 100;
