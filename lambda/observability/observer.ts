import type { ClientInfo, Principal } from '../vocabulary.js';

export type ToolOutcome = 'ok' | 'error' | 'denied' | 'invalid' | 'ratelimited' | 'busy' | 'failed' | 'input_required';
export type ReadOutcome = 'ok' | 'notfound' | 'toolarge' | 'failed' | 'denied' | 'invalid' | 'ratelimited' | 'busy';
export type RefusalReason = 'unauthenticated' | 'forbidden' | 'insufficient_scope' | 'ratelimited' | 'busy' | 'origin' | 'bad_request';

export interface ToolCallEvent {
  readonly tool: string;
  readonly argNames: readonly string[];
  readonly outcome: ToolOutcome;
  readonly durationMs: number;
  readonly principal: Principal;
  readonly clientInfo: ClientInfo | undefined;
  /** A bulk tool's items (tasks_create, tasks_update): one call, many changes. */
  readonly items?: number;
}

export interface ResourceReadEvent {
  /** The provider's prefix (`doers://tasks/`), never the rest of the URI. */
  readonly provider: string;
  readonly outcome: ReadOutcome;
  readonly durationMs: number;
  readonly principal: Principal;
  readonly clientInfo: ClientInfo | undefined;
}

export interface RequestEvent {
  /** A known method name or `other`; never a value a client made up. */
  readonly method: string;
  readonly status: number;
}

/** The audit line and the four meters (docs/deploy-and-operations.md, "Observability"), behind one seam. */
export interface Observer {
  toolCall(e: ToolCallEvent): void;
  resourceRead(e: ResourceReadEvent): void;
  request(e: RequestEvent): void;
  refusal(reason: RefusalReason): void;
}
