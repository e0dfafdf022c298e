import type { KeySource } from '../../platform/key-ring.js';
import type { WorkspaceStores } from '../store/stores.js';

/** What the workspace tools, prompts and resources are given; built once per cold start. */
export interface WorkspaceServices extends WorkspaceStores {
  /** The key ring: list cursors are signed with its 'cursor' key. */
  readonly keys: KeySource;
  /** Whether this deployment sends e-mail (it has a sender: DOERS_EMAIL_FROM). */
  readonly emailOn?: boolean;
  /** Where long work is handed to its worker (lambda/worker-app.ts); without it the long tools are refused. */
  readonly work?: WorkQueue;
}

/** Hands a job to a worker outside the request: resolves once the hand-over is durable (queued, or running here). */
export interface WorkQueue {
  start(job: { readonly workspaceId: string; readonly jobId: string }): Promise<void>;
}
