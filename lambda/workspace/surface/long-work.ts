import type { DetailedTask, McpTask, TaskSource } from '../../mcp/tasks.js';
import type { Principal } from '../../vocabulary.js';
import { JOB_TTL_MS, type Job } from '../store/job-store.js';
import type { WorkspaceServices } from './services.js';

/**
 * Long work as tasks of the tasks extension (docs/protocol.md, "Long work as tasks"): the tool call
 * writes a job (store/job-store.ts) and hands it to the work queue; a worker runs it outside the
 * request (long-work-runner.ts; lambda/worker-app.ts: in AWS a queue's own function, locally beside
 * the server) and writes its progress and its end on the job, which tasks/get reads through the task
 * source here. Apart from the runner so that the MCP function's start loads none of the import's code.
 */

/**
 * One job of a tool at a time in a workspace: the lock names the job and holds for a worker's
 * longest run and a minute; the worker takes it again when it starts and at every step
 * (long-work-runner.ts), so a job that waited in the queue still holds it while it runs.
 */
export const LOCK_MS = 16 * 60_000;

/** How often a client is asked to look. */
export const POLL_INTERVAL_MS = 1000;
/**
 * A job still working this long after its last word has lost its worker (a worker runs at most 15
 * minutes, and says something after every fifty rows): it is answered as failed.
 */
const STALE_MS = 20 * 60_000;

/** A job a worker took up and then fell silent: its worker is gone (one waiting in the queue is not). */
const isStale = (job: Job, now: Date): boolean =>
  job.status === 'working' && job.startedAt !== undefined && now.getTime() - Date.parse(job.lastUpdatedAt) > STALE_MS;

/** The job as the extension's task. */
export const taskOfJob = (job: Job, now: Date): DetailedTask => {
  const base: McpTask = {
    taskId: job.jobId,
    status: job.status,
    ...(job.statusMessage ? { statusMessage: job.statusMessage } : {}),
    createdAt: job.createdAt,
    lastUpdatedAt: job.lastUpdatedAt,
    ttlMs: JOB_TTL_MS,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  if (job.status === 'completed' && job.result) return { ...base, result: JSON.parse(job.result) as Record<string, unknown> };
  if (job.status === 'input_required') return { ...base, inputRequests: job.inputRequests ?? {} };
  if (job.status === 'failed') return { ...base, error: job.error ?? { code: -32603, message: 'Internal error' } };
  if (isStale(job, now))
    return {
      ...base,
      status: 'failed',
      statusMessage: 'Its worker stopped without finishing.',
      error: {
        code: -32603,
        message:
          'The work stopped without finishing (its worker ended). What it wrote stays, each step whole; run it again: rows imported before are not imported twice.',
      },
    };
  return base;
};

/** Tasks of the caller's own, in the caller's workspace: anyone else's is unknown. */
export const jobTasks: TaskSource<WorkspaceServices> = {
  get: async (services: WorkspaceServices, principal: Principal, taskId: string, now: Date) => {
    const job = await services.jobs.get(principal.workspaceId, taskId, now);
    if (!job || job.userId !== principal.userId) return undefined;
    const task = taskOfJob(job, now);
    // Failed once answered so: its end is written, so a worker that comes back can change nothing.
    if (isStale(job, now) && task.error)
      await services.jobs.finish(
        job.workspaceId,
        job.jobId,
        { status: 'failed', statusMessage: task.statusMessage ?? '', error: task.error },
        now,
      );
    return task;
  },
  cancel: async (services: WorkspaceServices, principal: Principal, taskId: string, now: Date) => {
    const job = await services.jobs.get(principal.workspaceId, taskId, now);
    if (!job || job.userId !== principal.userId) return false;
    await services.jobs.requestCancel(principal.workspaceId, taskId, now);
    return true;
  },
  update: async (services: WorkspaceServices, principal: Principal, taskId: string, responses, now: Date) => {
    const job = await services.jobs.get(principal.workspaceId, taskId, now);
    if (!job || job.userId !== principal.userId) return false;
    await services.jobs.answer(job, responses, now);
    return true;
  },
};
