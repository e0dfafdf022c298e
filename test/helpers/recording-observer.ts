import type { Observer, RefusalReason, RequestEvent, ResourceReadEvent, ToolCallEvent } from '../../lambda/observability/observer.js';

/** Keeps what the server reported instead of printing it, so test output stays readable. */
export class RecordingObserver implements Observer {
  readonly toolCalls: ToolCallEvent[] = [];
  readonly reads: ResourceReadEvent[] = [];
  readonly requests: RequestEvent[] = [];
  readonly refusals: RefusalReason[] = [];
  toolCall(e: ToolCallEvent): void {
    this.toolCalls.push(e);
  }
  resourceRead(e: ResourceReadEvent): void {
    this.reads.push(e);
  }
  request(e: RequestEvent): void {
    this.requests.push(e);
  }
  refusal(reason: RefusalReason): void {
    this.refusals.push(reason);
  }
}
