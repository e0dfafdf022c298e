import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { declaresTasks, taskStarted, tasksRequired } from '../../../mcp/tasks.js';
import { requireRole } from '../../membership/rules.js';
import { attachmentDeleted, attachmentNotFound, longWorkRunning, needsTasks, needsTasksMessage } from '../../model/refusals.js';
import type { Job, JobTool } from '../../store/job-store.js';
import { taskOrRefuse } from '../../store/lookups.js';
import { ROW_FORMATS } from '../../transfer/import-formats.js';
import { defineTool, type WorkspaceToolContext } from '../define-tool.js';
import { LOCK_MS, taskOfJob } from '../long-work.js';
import { idArg, taskRefArg } from '../schemas.js';
import { sourceOf } from '../sources.js';
import { CREATE, UPDATE } from './annotations.js';

/**
 * Long work as tasks of the tasks extension (lambda/workspace/surface/long-work.ts runs them): the
 * call checks what it can at once (the client follows tasks, the caller's role, the file or task it
 * names), writes its job, hands it to the work queue and answers the task's handle; tasks/get says
 * how far it is and, at the end, what the call would have answered.
 */

/** The client follows tasks, else the refusal its revision has: -32021 on 2026-07-28, a tool error naming the admin CLI before. */
const requireTasks = (ctx: WorkspaceToolContext): void => {
  if (declaresTasks(ctx.meta)) return;
  if (ctx.meta.era.modern) throw tasksRequired(needsTasksMessage(ctx.toolName));
  throw needsTasks(ctx.toolName);
};

/**
 * The job written, then handed to its worker, holding its tool's lock (a dry run needs none). What
 * fails on the way ends the job, if it was written, and lets go of the lock.
 */
const start = async (ctx: WorkspaceToolContext, tool: JobTool, input: Record<string, unknown>, locks = true) => {
  const { services, principal, now } = ctx;
  const jobId = randomUUID();
  if (locks && (await services.jobs.lock(principal.workspaceId, tool, jobId, new Date(now.getTime() + LOCK_MS), now)))
    throw longWorkRunning(tool);
  let job: Job | undefined;
  try {
    job = await services.jobs.create({
      workspaceId: principal.workspaceId,
      jobId,
      userId: principal.userId,
      tool,
      input: { ...input, client: sourceOf(ctx).client },
      createdAt: now.toISOString(),
    });
    if (!services.work) throw new Error('no work queue is configured');
    await services.work.start({ workspaceId: principal.workspaceId, jobId });
    return taskStarted(taskOfJob(job, now));
  } catch (err) {
    const failed = {
      status: 'failed',
      statusMessage: 'It could not be started.',
      error: { code: -32603, message: 'Internal error' },
    } as const;
    await Promise.allSettled([
      job ? services.jobs.finish(principal.workspaceId, jobId, failed, now) : undefined,
      locks ? services.jobs.unlock(principal.workspaceId, tool, jobId) : undefined,
    ]);
    throw err;
  }
};

const importOutput = z.object({
  format: z.string(),
  file: z.string(),
  dryRun: z.boolean(),
  rows: z.number(),
  skipped: z.number(),
  created: z.number(),
  refused: z.number(),
  changes: z.array(z.string()).check(z.describe('change_undo of each takes its part back')),
  report: z.array(z.string()),
});

export const workspaceImport = defineTool({
  name: 'workspace_import',
  title: 'Import tasks from a file',
  description: 'Imports an attached Jira, Linear, Asana or Todoist CSV or a doers export; dryRun first. Admins. A task: poll tasks/get.',
  input: z.strictObject({
    attachmentId: idArg,
    format: z.optional(z.enum(ROW_FORMATS)),
    dryRun: z._default(z.boolean(), false),
  }),
  output: importOutput,
  // What a client acts on: how many were made, and the changes change_undo takes back.
  listedOutput: z.object({ created: z.number(), changes: z.array(z.string()) }),
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireTasks(ctx);
    requireRole(principal, 'admin', 'importing into the workspace');
    const a = await services.attachments.get(principal.workspaceId, args.attachmentId);
    if (!a) throw attachmentNotFound(args.attachmentId);
    if (a.deletedAt) throw attachmentDeleted(args.attachmentId, a.deletedAt);
    // One import at a time in a workspace; a dry run writes nothing and needs no turn.
    return start(
      ctx,
      'workspace_import',
      { attachmentId: args.attachmentId, dryRun: args.dryRun, ...(args.format ? { format: args.format } : {}) },
      !args.dryRun,
    );
  },
});

const exportOutput = z.object({
  attachmentId: z.string(),
  taskId: z.string(),
  name: z.string(),
  size: z.number(),
  items: z.number(),
  uri: z.string(),
  activityId: z.string(),
});

export const workspaceExport = defineTool({
  name: 'workspace_export',
  title: 'Export the workspace',
  description: 'Attaches a doers export (JSON Lines) of the workspace to the task named. Admins. A task: poll tasks/get.',
  input: z.strictObject({ taskId: taskRefArg }),
  output: exportOutput,
  listedOutput: z.object({ uri: z.string() }),
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireTasks(ctx);
    requireRole(principal, 'admin', 'exporting the workspace');
    const task = await taskOrRefuse(services, principal, args.taskId);
    // One export at a time in a workspace too: each reads the whole table.
    return start(ctx, 'workspace_export', { taskId: task.taskId });
  },
});

export const TRANSFER_TOOLS = [workspaceImport, workspaceExport];
