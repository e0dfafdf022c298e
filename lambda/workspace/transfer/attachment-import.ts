import type { Member, Workspace } from '../../vocabulary.js';
import { objectKeyOf } from '../attachments/attachment-writer.js';
import { attachmentDeleted, attachmentNotFound, notAnImportFile } from '../model/refusals.js';
import type { WorkspaceStores } from '../store/stores.js';
import { isDoersExport, readDoersExport } from './doers-rows.js';
import { type Format, type RowFormat, readExport } from './import-formats.js';
import { type ImportSummary, type ImportTarget, importTasks } from './import-tasks.js';

/**
 * workspace_import's work: a CSV export of another tool (or a doers export, read row by row:
 * doers-rows.ts), attached to a task of the workspace, read and written as the admin CLI's `import` does (lambda/workspace/transfer/import-tasks.ts), by the
 * member who asked and through their client, so its records, its undo and its report are theirs.
 */

export interface AttachmentImport {
  readonly workspace: Workspace;
  readonly member: Member;
  readonly client: string;
  readonly attachmentId: string;
  readonly format?: RowFormat | undefined;
  readonly project?: string | undefined;
  readonly dryRun: boolean;
  /** Asked after each fifty rows, with the rows done and planned: whether to go on. */
  readonly between: (done: number, total: number) => Promise<boolean>;
}

export interface AttachmentImported {
  readonly format: RowFormat;
  readonly file: string;
  /** The report, line by line, as the admin CLI prints it. */
  readonly lines: readonly string[];
  /** Undefined for a dry run (nothing was written). */
  readonly summary?: ImportSummary | undefined;
  readonly rows: number;
  readonly skipped: number;
}

/** The attachment's text: it must be there and live, and be UTF-8 text (a CSV is). */
const fileText = async (stores: WorkspaceStores, workspaceId: string, attachmentId: string): Promise<{ name: string; text: string }> => {
  const a = await stores.attachments.get(workspaceId, attachmentId);
  if (!a) throw attachmentNotFound(attachmentId);
  if (a.deletedAt) throw attachmentDeleted(attachmentId, a.deletedAt);
  const bytes = await stores.files.store.get(objectKeyOf(a));
  if (!bytes) throw attachmentNotFound(attachmentId);
  try {
    return { name: a.name, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    throw notAnImportFile(a.name, 'is not text (a CSV export is UTF-8 text)', []);
  }
};

export const importAttachment = async (
  stores: WorkspaceStores,
  target: ImportTarget,
  job: AttachmentImport,
  now: Date,
): Promise<AttachmentImported> => {
  const { workspace } = job;
  const { name, text } = await fileText(stores, workspace.workspaceId, job.attachmentId);
  const doers = job.format === 'doers' || (job.format === undefined && isDoersExport(text));
  const read = doers ? readDoersExport(text) : readExport(text, job.format as Format | undefined);
  if ('error' in read)
    throw notAnImportFile(
      name,
      `is ${read.error}${read.unknownFormat ? ', nor a doers export; if it is one of them, name it in format' : ''}`,
      read.header.slice(0, 20).map((c) => (c.length > 100 ? `${c.slice(0, 100)}…` : c)),
    );
  // Todoist's export names its project only by the file's name.
  const project = job.project?.trim() || (read.format === 'todoist' ? name.replace(/\.[^.]*$/, '').trim() : undefined);
  const lines: string[] = [];
  const summary = await importTasks(
    target,
    {
      workspaceId: workspace.workspaceId,
      workspace,
      // The rows, the rows skipped, and what each column becomes.
      ...read,
      ...(project ? { project } : {}),
      dryRun: job.dryRun,
      file: name,
      by: { member: job.member, client: job.client },
      between: job.between,
    },
    { stdout: (line) => lines.push(line), stderr: (line) => lines.push(line) },
    now,
  );
  return { format: read.format, file: name, lines, summary, rows: read.rows.length, skipped: read.skipped.length };
};
