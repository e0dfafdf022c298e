import type { Member, Workspace } from '../../vocabulary.js';
import { workspaceKeyOf } from '../../vocabulary.js';
import { addAttachment, type WrittenAttachment } from '../attachments/attachment-writer.js';
import type { Task } from '../model/types.js';
import type { WriteContext } from '../store/stores.js';
import { exportLine, readWorkspaceExport } from './workspace-export.js';

/**
 * workspace_export's work: the workspace as one doers export (lambda/workspace/transfer/workspace-export.ts,
 * the admin CLI's format) written as an attachment of a task the member names, through the one
 * attachment writer, so it is recorded, counted against the quota and undone like any other file.
 * Attachment files themselves are not in it (the admin CLI's export writes them beside the file).
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
  members: readonly Member[],
  task: Task,
  db: Parameters<typeof readWorkspaceExport>[0],
  table: string,
): Promise<AttachmentExported> => {
  const now = ctx.source.now;
  const { header, all } = await readWorkspaceExport(db, table, workspace, members, now);
  const text = `${[JSON.stringify(header), ...all.map(exportLine)].join('\n')}\n`;
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength > ctx.stores.files.maxBytes) return { items: all.length, bytes: bytes.byteLength, tooBig: true };
  const written = await addAttachment(ctx, task, {
    name: `doers-export-${workspaceKeyOf(workspace)}-${now.toISOString().slice(0, 10)}.jsonl`,
    bytes,
    asText: true,
    declared: 'text/plain',
  });
  return { written, items: all.length, bytes: bytes.byteLength };
};
