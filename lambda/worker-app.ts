import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createServices } from './app.js';
import type { FileParts } from './files/file-store.js';
import type { Config } from './platform/config.js';
import { type QueuedJob, queuedJobOf } from './platform/work-queue.js';
import { type JobDeps, runJob } from './workspace/surface/long-work-runner.js';

export type { JobDeps };

import type { WorkQueue } from './workspace/surface/services.js';

/**
 * The worker of long work (workspace_import, workspace_export; docs/protocol.md, "Long work as
 * tasks"): the workspace's services as the MCP function builds them, and the job runner. In AWS its
 * own function reads the queue the MCP function writes (lib/worker.ts, lambda/worker-handler.ts);
 * locally the server runs it beside itself (lambda/local/server.ts).
 */

const noKeys = async (): Promise<never> => {
  throw new Error('long work signs nothing: the worker has no key ring');
};

export const createJobDeps = (config: Config, db: DynamoDBDocumentClient, files: FileParts | undefined): JobDeps => {
  const services = createServices({ config, db, keys: noKeys, ...(files ? { files } : {}) });
  return {
    services,
    target: { db, table: config.tables.workspace, keys: noKeys, activityDays: config.activityDays, directory: services.directory },
  };
};

/**
 * One batch of the queue: each job run to its end. A job's own failure ends the job (as failed),
 * not the message; only what could not even be recorded (the table out of reach) is handed back to
 * the queue, which tries it again and at last keeps it in its dead-letter queue.
 */
export const runQueueBatch = async (
  deps: JobDeps,
  event: SQSEvent,
  onError: (messageId: string, error: unknown) => void,
): Promise<SQSBatchResponse> => {
  const failures: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    const job = queuedJobOf(record.body);
    if (!job) {
      onError(record.messageId, new Error('not a job'));
      continue;
    }
    try {
      await runJob(deps, job.workspaceId, job.jobId, (err) => onError(record.messageId, err));
    } catch (err) {
      onError(record.messageId, err);
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
};

/**
 * Locally: a queue that runs each job beside the server at once, or (`held`, tests only) when the
 * test drains it, so a test can act between a call's answer and its work. `drain` runs what is held
 * and waits for every job handed over so far.
 */
export interface LocalWork extends WorkQueue {
  drain(): Promise<void>;
}

export const localWork = (deps: () => JobDeps, onError: (error: unknown) => void, held = false): LocalWork => {
  const running = new Set<Promise<void>>();
  const waiting: QueuedJob[] = [];
  const run = (job: QueuedJob) => {
    const p: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => runJob(deps(), job.workspaceId, job.jobId, onError))
      .catch(onError)
      .finally(() => running.delete(p));
    running.add(p);
  };
  return {
    start: async (job: QueuedJob) => {
      if (held) waiting.push(job);
      else run(job);
    },
    drain: async () => {
      for (const job of waiting.splice(0)) run(job);
      while (running.size) await Promise.all([...running]);
    },
  };
};
