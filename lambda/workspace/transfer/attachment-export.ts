import { type Workspace, workspaceKeyOf } from '../../vocabulary.js';
import { addAttachment, type WrittenAttachment } from '../attachments/attachment-writer.js';
import type { Task } from '../model/types.js';
import type { WriteContext } from '../store/stores.js';
import { exportLine, readTaskExport } from './workspace-export.js';

/**
 * workspace_export's work: the workspace's tasks as a doers export (the admin CLI's format, its tasks'
 * part only: `readTaskExport` in lambda/workspace/transfer/workspace-export.ts says what is left out
 * and why) written as an attachment of a task the member names, through the one attachment writer,
 * so it is recorded, counted against the quota and undone like any other file.
 */

export interface AttachmentExported {
  readonly written?: WrittenAttachment;
  readonly items: number;
  readonly bytes: number;
  /** Set when the export is larger than an attachment may be: nothing was written. */
  readonly tooBig?: true;
}

export const exportToAttachment = async (
  ctx: WriteContext,
  workspace: Workspace,
  task: Task,
  db: Parameters<typeof readTaskExport>[0],
  table: string,
): Promise<AttachmentExported> => {
  const now = ctx.source.now;
  const { header, all } = await readTaskExport(db, table, workspace, now);
  // Line by line, stopping once past what an attachment may be: the file is never built whole beyond it.
  const max = ctx.stores.files.maxBytes;
  const lines = [JSON.stringify(header)];
  let size = Buffer.byteLength(lines[0]!) + 1;
  for (const item of all) {
    const line = exportLine(item);
    size += Buffer.byteLength(line) + 1;
    if (size > max) return { items: all.length, bytes: size, tooBig: true };
    lines.push(line);
  }
  const bytes = new TextEncoder().encode(`${lines.join('\n')}\n`);
  const written = await addAttachment(ctx, task, {
    name: `doers-export-${workspaceKeyOf(workspace)}-${now.toISOString().slice(0, 10)}.jsonl`,
    bytes,
    asText: true,
    declared: 'text/plain',
  });
  return { written, items: all.length, bytes: bytes.byteLength };
};
