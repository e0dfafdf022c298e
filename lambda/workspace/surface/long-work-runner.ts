import { ToolRefusal } from '../../errors.js';
import { refusalResult } from '../../mcp/tool-registry.js';
import { type Member, type Workspace, workspaceKeyOf } from '../../vocabulary.js';
import { clientSource } from '../activity/records.js';
import { requireRole } from '../membership/rules.js';
import { callerOf } from '../model/caller.js';
import { exportTooBig, longWorkRunning, taskNotFound } from '../model/refusals.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Job, JobEnd } from '../store/job-store.js';
import { exportToAttachment } from '../transfer/attachment-export.js';
import { importAttachment } from '../transfer/attachment-import.js';
import type { RowFormat } from '../transfer/import-formats.js';
import type { ImportTarget } from '../transfer/import-tasks.js';
import { LOCK_MS } from './long-work.js';
import { sizeWords } from './render.js';
import type { WorkspaceServices } from './services.js';

/**
 * The worker's side of long work (long-work.ts has the tasks' side): a job run to its end, its
 * result shaped as the tool's answer would be. Only the worker (lambda/worker-app.ts) imports it.
 */

/** The report lines a result keeps; the rest are counted. */
const MAX_REPORT_LINES = 200;

const INTERNAL = {
  code: -32603,
  message:
    'Internal error: the work failed. What it wrote stays, each step whole; run it again (rows imported before are not imported twice).',
};

/** The longest a report line is kept: a result is stored whole on its job, an item of at most 400 KB. */
const MAX_LINE = 300;

/** What a worker is given: the services as the functions build them, and the table for the import's own reads. */
export interface JobDeps {
  readonly services: WorkspaceServices;
  readonly target: ImportTarget;
}

const textResult = (text: string, structured: Record<string, unknown>): Record<string, unknown> => ({
  content: [{ type: 'text', text }],
  structuredContent: structured,
  isError: false,
});

const clipped = (all: readonly string[]): string[] => {
  const lines = all.map((l) => (l.length > MAX_LINE ? `${l.slice(0, MAX_LINE)}…` : l));
  return lines.length <= MAX_REPORT_LINES
    ? lines
    : [...lines.slice(0, MAX_REPORT_LINES), `… and ${lines.length - MAX_REPORT_LINES} more lines`];
};

const undoWords = (changes: readonly string[]): string =>
  changes.length ? ` change_undo of ${changes.join(', ')} takes ${changes.length === 1 ? 'it' : 'them'} back.` : '';

/** Who runs a job, as they are when it starts, and through which client. */
interface Runner {
  readonly workspace: Workspace;
  readonly member: Member;
  readonly client: string;
}

/** workspace_import's end: its rows written (or, dry, described), or stopped between two calls. */
const importEnd = async (deps: JobDeps, job: Job, who: Runner, now: () => Date): Promise<JobEnd> => {
  const { services } = deps;
  const dryRun = job.input.dryRun === true;
  const done = await importAttachment(
    services,
    deps.target,
    {
      ...who,
      attachmentId: String(job.input.attachmentId),
      format: job.input.format as RowFormat | undefined,
      dryRun,
      between: async (rows, total) => {
        if (holdsTurn(job)) await turn(deps, job, now);
        return services.jobs.progress(job.workspaceId, job.jobId, `Imported ${rows} of ${total} rows.`, now());
      },
    },
    now(),
  );
  const s = done.summary;
  const changes = s?.changes ?? [];
  if (s?.stopped)
    return {
      status: 'cancelled',
      statusMessage: `Cancelled: ${s.created} task(s) were written before it stopped, each call whole.${undoWords(changes)}`,
    };
  const structured = {
    format: done.format,
    file: done.file,
    dryRun,
    rows: done.rows,
    skipped: done.skipped,
    created: s?.created ?? 0,
    refused: s?.refused ?? 0,
    changes: [...changes],
    report: clipped(done.lines),
  };
  const head = dryRun
    ? `Dry run of ${done.file} (${done.format}): ${done.rows} row(s) read, nothing written. What each column and row would become:`
    : `Imported ${structured.created} task(s) from ${done.file} (${done.format}).${undoWords(changes)}`;
  return {
    status: 'completed',
    statusMessage: dryRun ? 'Dry run done.' : `Imported ${structured.created} task(s).`,
    result: textResult([head, ...structured.report].join('\n'), structured),
  };
};

/** workspace_export's end: the export attached to the task named. */
const exportEnd = async (deps: JobDeps, job: Job, who: Runner, now: () => Date): Promise<JobEnd> => {
  const { services } = deps;
  const { workspace, member } = who;
  const task = await services.tasks.get(job.workspaceId, String(job.input.taskId));
  if (!task) throw taskNotFound(String(job.input.taskId));
  const source = clientSource(member, who.client, 'workspace_export', now());
  const out = await exportToAttachment(
    { stores: services, caller: callerOf(workspace, member), source },
    workspace,
    task,
    deps.target.db,
    deps.target.table,
  );
  if (!out.written) throw exportTooBig(sizeWords(out.bytes), sizeWords(services.files.maxBytes));
  const a = out.written.attachment;
  const structured = {
    attachmentId: a.attachmentId,
    taskId: a.taskId,
    name: a.name,
    size: a.size,
    items: out.items,
    uri: `doers://attachments/${a.attachmentId}`,
    activityId: out.written.record.activityId,
  };
  return {
    status: 'completed',
    statusMessage: `Exported ${out.items} items.`,
    result: textResult(
      `Exported the workspace (${out.items} items, ${sizeWords(a.size)}) to ${a.name} on ${taskNameOf(workspaceKeyOf(workspace), task)}: read it at ${structured.uri}. Its attachment files are not in it.${undoWords([structured.activityId])}`,
      structured,
    ),
  };
};

/** Whether the job holds its tool's turn in the workspace (a dry run needs none). */
const holdsTurn = (job: Job): boolean => !(job.tool === 'workspace_import' && job.input.dryRun === true);

/** Takes (or keeps) the job's turn for another worker's longest run; answers the job that holds it instead. */
const turn = (deps: JobDeps, job: Job, now: () => Date): Promise<string | undefined> =>
  deps.services.jobs.lock(job.workspaceId, job.tool, job.jobId, new Date(now().getTime() + LOCK_MS), now());

/** The job's end: its work done, stopped, or refused (a refusal is the tool's answer: completed, as an error result). */
const endOf = async (deps: JobDeps, job: Job, now: () => Date): Promise<JobEnd> => {
  const { services } = deps;
  if (job.cancel) return { status: 'cancelled', statusMessage: 'Cancelled before it started; nothing was written.' };
  const [workspace, member] = await Promise.all([
    services.directory.getWorkspace(job.workspaceId),
    services.directory.getMember(job.workspaceId, job.userId),
  ]);
  if (!workspace) throw new Error(`workspace ${job.workspaceId} is gone`);
  try {
    // Rights as they are when the work starts: an admin demoted (or removed) meanwhile is refused.
    const active = member?.status === 'active' ? member : undefined;
    requireRole(
      active ?? { role: 'viewer' },
      'admin',
      job.tool === 'workspace_import' ? 'importing into the workspace' : 'exporting the workspace',
    );
    // The tool's turn in the workspace, taken again now that the job runs (it may have waited in the
    // queue past the call's hold), and kept at every step (`between`).
    if (holdsTurn(job) && (await turn(deps, job, now))) throw longWorkRunning(job.tool);
    if (!(await services.jobs.start(job.workspaceId, job.jobId, now())))
      return { status: 'cancelled', statusMessage: 'Cancelled before it started; nothing was written.' };
    const who: Runner = { workspace, member: active!, client: String(job.input.client ?? 'unknown client') };
    return await (job.tool === 'workspace_import' ? importEnd : exportEnd)(deps, job, who, now);
  } catch (err) {
    if (err instanceof ToolRefusal)
      return {
        status: 'completed',
        statusMessage: 'Refused.',
        result: refusalResult(err.message, { reason: err.reason, code: err.code, data: err.data }),
      };
    throw err;
  }
};

/**
 * Runs one job to its end, once: a job that ended already (a second delivery of its message) is left
 * alone. What fails unexpectedly ends it as failed, its internals in `onError` (the log), never in the answer.
 */
export const runJob = async (
  deps: JobDeps,
  workspaceId: string,
  jobId: string,
  onError: (err: unknown) => void,
  now: () => Date = () => new Date(),
): Promise<void> => {
  const { jobs } = deps.services;
  const job = await jobs.get(workspaceId, jobId, now());
  if (job?.status !== 'working') return;
  let end: JobEnd;
  try {
    end = await endOf(deps, job, now);
  } catch (err) {
    onError(err);
    end = { status: 'failed', statusMessage: 'It failed.', error: INTERNAL };
  }
  try {
    await jobs.finish(workspaceId, jobId, end, now()).catch(async (err: unknown) => {
      // An end that cannot be kept (too large an item): the job ends failed without it.
      onError(err);
      await jobs.finish(workspaceId, jobId, { status: 'failed', statusMessage: 'It failed.', error: INTERNAL }, now());
    });
  } finally {
    if (holdsTurn(job)) await jobs.unlock(workspaceId, job.tool, jobId);
  }
};
