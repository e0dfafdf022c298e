import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { declaresTasks, taskStarted, tasksRequired } from '../../../mcp/tasks.js';
import { requireRole } from '../../membership/rules.js';
import { attachmentDeleted, attachmentNotFound, importRunning, needsTasks, needsTasksMessage } from '../../model/refusals.js';
import type { JobTool } from '../../store/job-store.js';
import { taskOrRefuse } from '../../store/lookups.js';
import { ROW_FORMATS } from '../../transfer/import-formats.js';
import { defineTool, type WorkspaceToolContext } from '../define-tool.js';
import { taskOfJob } from '../long-work.js';
import { idArg, taskRefArg } from '../schemas.js';
import { sourceOf } from '../sources.js';
import { CREATE, UPDATE } from './annotations.js';

/**
 * Long work as tasks of the tasks extension (lambda/workspace/surface/long-work.ts runs them): the
 * call checks what it can at once (the client follows tasks, the caller's role, the file or task it
 * names), writes its job, hands it to the work queue and answers the task's handle; tasks/get says
 * how far it is and, at the end, what the call would have answered.
 */

/** How long an import may hold the workspace's import lock: a worker's longest run and a minute. */
const IMPORT_LOCK_MS = 16 * 60_000;

/** The client follows tasks, else the refusal its revision has: -32021 on 2026-07-28, a tool error naming the admin CLI before. */
const requireTasks = (ctx: WorkspaceToolContext): void => {
  if (declaresTasks(ctx.meta)) return;
  if (ctx.meta.era.modern) throw tasksRequired(needsTasksMessage(ctx.toolName));
  throw needsTasks(ctx.toolName);
};

/** The job written, then handed to its worker; a hand-over that fails ends the job (and its lock) at once. */
const start = async (ctx: WorkspaceToolContext, tool: JobTool, jobId: string, input: Record<string, unknown>) => {
  const { services, principal, now } = ctx;
  const job = await services.jobs.create({
    workspaceId: principal.workspaceId,
    jobId,
    userId: principal.userId,
    tool,
    input: { ...input, client: sourceOf(ctx).client },
    createdAt: now.toISOString(),
  });
  try {
    if (!services.work) throw new Error('no work queue is configured');
    await services.work.start({ workspaceId: principal.workspaceId, jobId });
  } catch (err) {
    await services.jobs.finish(
      principal.workspaceId,
      jobId,
      { status: 'failed', statusMessage: 'It could not be started.', error: { code: -32603, message: 'Internal error' } },
      now,
    );
    if (tool === 'workspace_import') await services.jobs.unlock(principal.workspaceId, tool, jobId);
    throw err;
  }
  return taskStarted(taskOfJob(job, now));
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
    const { services, principal, now } = ctx;
    requireTasks(ctx);
    requireRole(principal, 'admin', 'importing into the workspace');
    const a = await services.attachments.get(principal.workspaceId, args.attachmentId);
    if (!a) throw attachmentNotFound(args.attachmentId);
    if (a.deletedAt) throw attachmentDeleted(args.attachmentId, a.deletedAt);
    const jobId = randomUUID();
    // One import at a time in a workspace; a dry run writes nothing and needs no turn.
    if (
      !args.dryRun &&
      (await services.jobs.lock(principal.workspaceId, 'workspace_import', jobId, new Date(now.getTime() + IMPORT_LOCK_MS), now))
    )
      throw importRunning();
    return start(ctx, 'workspace_import', jobId, {
      attachmentId: args.attachmentId,
      dryRun: args.dryRun,
      ...(args.format ? { format: args.format } : {}),
    });
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
    return start(ctx, 'workspace_export', randomUUID(), { taskId: task.taskId });
  },
});

export const TRANSFER_TOOLS = [workspaceImport, workspaceExport];
