import * as z from 'zod/mini';
import { TEXT_TYPES } from '../../attachments/attachment-types.js';
import { addAttachment, deleteAttachment } from '../../attachments/attachment-writer.js';
import { requireRole } from '../../membership/rules.js';
import {
  attachmentDeleted,
  attachmentEmpty,
  attachmentNotFound,
  contentOrText,
  contentTooBig,
  decodesToNothing,
  fileNameEmpty,
  fileNameHasPath,
  fileNameUnprintable,
  noCommentToAttachTo,
  notBase64,
  taskDeleted,
  textTooBig,
} from '../../model/refusals.js';
import { taskNameOf } from '../../model/task-refs.js';
import { taskOfAttachment } from '../../store/attachment-store.js';
import { taskIdOf, taskOrRefuse } from '../../store/lookups.js';
import { ASKS_FIRST, confirmation, NOT_CONFIRMED, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { sizeWords, undoLine } from '../render.js';
import { activityIdOutput, idArg, taskRefArg } from '../schemas.js';
import { writeContext } from '../sources.js';
import { CREATE, REMOVE } from './annotations.js';

/**
 * Files on tasks: attachment_add and attachment_delete (the attachment writer does the writing;
 * lambda/workspace/attachments/attachment-writer.ts). What a file is comes from its bytes, never its
 * name: a type the bytes show (PNG, PDF, ZIP, …) wins, text is text only when its bytes are UTF-8
 * without control characters, anything else is application/octet-stream. Its bytes are read back
 * with resources/read of doers://attachments/{attachmentId} (lambda/workspace/surface/resources.ts).
 */

/** The text types a file given as text (or bytes that are text) may declare; text/plain without one. */

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A file's name: what a person sees and a download is called; no path, no control or invisible characters. */
const readName = (given: string): string => {
  const name = given.trim();
  if (!name) throw fileNameEmpty();
  if (/[/\\]/.test(name) || name === '.' || name === '..') throw fileNameHasPath(name);
  if (/[\p{Cc}\p{Cf}]/u.test(name)) throw fileNameUnprintable();
  return name;
};

const addOutput = z.object({
  attachmentId: z.string(),
  taskId: z.string(),
  key: z.optional(z.string()),
  name: z.string(),
  type: z.string(),
  size: z.number().check(z.int()),
  uri: z.string(),
  ...activityIdOutput,
});

export const attachmentAdd = defineTool({
  name: 'attachment_add',
  title: 'Attach a file',
  description:
    'Attaches a file to a task (or with commentId to one of its comments): base64 content or text, at most 4 MB. ' +
    'Its type is read from its bytes; read it back at its uri.',
  input: z.strictObject({
    taskId: taskRefArg,
    commentId: z.optional(idArg).check(z.describe('A comment of the task it belongs to')),
    name: z.string().check(z.maxLength(255), z.describe('The file name, e.g. screenshot.png')),
    content: z.optional(z.string()).check(z.describe('The bytes, base64')),
    text: z.optional(z.string()).check(z.describe('Or the file as text')),
    type: z.optional(z.enum(TEXT_TYPES)).check(z.describe('For text: its kind (default text/plain)')),
  }),
  output: addOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'attaching files');
    const name = readName(args.name);
    // What the call names comes first: a task or comment of nowhere (or of another workspace) is
    // refused as such, whatever else the call says.
    const taskId = await taskIdOf(services, principal, args.taskId);
    const [task, comment] = await Promise.all([
      taskOrRefuse(services, principal, taskId),
      args.commentId === undefined ? undefined : services.comments.get(principal.workspaceId, taskId, args.commentId),
    ]);
    if (args.commentId !== undefined && !comment) throw noCommentToAttachTo(args.commentId, taskNameOf(principal.workspaceKey, task));
    if ((args.content === undefined) === (args.text === undefined)) throw contentOrText();
    const bytes = readBytes(args.content, args.text, services.files.maxBytes);
    const w = await addAttachment(writeContext(ctx), task, {
      name,
      bytes,
      asText: args.text !== undefined,
      declared: args.type,
      commentId: args.commentId,
    });
    const a = w.attachment;
    return {
      attachmentId: a.attachmentId,
      taskId: a.taskId,
      ...(task.number !== undefined && principal.workspaceKey ? { key: `${principal.workspaceKey}-${task.number}` } : {}),
      name: a.name,
      type: a.type,
      size: a.size,
      uri: `doers://attachments/${a.attachmentId}`,
      activityId: w.record.activityId,
    };
  },
  render: (a) =>
    `Attached ${a.name} (${a.type}, ${sizeWords(a.size)}) to ${a.key ?? `[${a.taskId}]`}: [${a.attachmentId}], read it at ${a.uri}.${undoLine(a.activityId)}`,
});

/** The bytes given, checked: base64 that decodes exactly, or text; neither empty nor above the limit. */
const readBytes = (content: string | undefined, text: string | undefined, max: number): Uint8Array => {
  if (text !== undefined) {
    const bytes = new TextEncoder().encode(text);
    if (!bytes.byteLength) throw attachmentEmpty('text');
    if (bytes.byteLength > max) throw textTooBig(sizeWords(bytes.byteLength), sizeWords(max));
    return bytes;
  }
  const b64 = content!.replace(/\s+/g, '');
  if (!b64) throw attachmentEmpty('content');
  const padded = b64.includes('=');
  if (!BASE64.test(b64) || b64.length % 4 === 1 || (padded && b64.length % 4 !== 0)) throw notBase64();
  // Checked before decoding: a body can carry more than a file may be.
  if (Math.floor((b64.length * 3) / 4) - (b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0) > max) throw contentTooBig(sizeWords(max));
  const decoded = Buffer.from(b64, 'base64');
  // Node decodes leniently: what does not encode back to the same text (stray bits in the last character) is no base64 either.
  if (decoded.toString('base64').replace(/=+$/, '') !== b64.replace(/=+$/, '')) throw notBase64();
  const bytes = new Uint8Array(decoded);
  if (!bytes.byteLength) throw decodesToNothing();
  return bytes;
};

// ---- attachment_delete -------------------------------------------------------------------------------

const deleteOutput = z.object({
  attachmentId: z.string(),
  name: z.string(),
  deleted: z.boolean().check(z.describe('false when the person did not confirm: nothing changed')),
  declined: z.optional(z.enum(NOT_CONFIRMED)),
  ...activityIdOutput,
});

export const attachmentDelete = defineTool({
  name: 'attachment_delete',
  title: 'Delete an attachment',
  description: `Deletes an attachment (members their own; admins any); change_undo restores it. ${ASKS_FIRST}`,
  input: z.strictObject({ attachmentId: idArg }),
  output: deleteOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'deleting attachments');
    // The id names its task: the file's item and its task are read together.
    const taskId = taskOfAttachment(args.attachmentId);
    if (!taskId) throw attachmentNotFound(args.attachmentId);
    const [a, task] = await Promise.all([
      services.attachments.get(principal.workspaceId, args.attachmentId),
      services.tasks.getAny(principal.workspaceId, taskId),
    ]);
    if (!a || !task) throw attachmentNotFound(args.attachmentId);
    if (a.deletedAt) throw attachmentDeleted(args.attachmentId, a.deletedAt);
    if (task.deletedAt) throw taskDeleted(taskNameOf(principal.workspaceKey, task), task.deletedAt, 'attachmentId');
    const asked = confirmation(
      ctx,
      { id: a.attachmentId, state: 'live' },
      `Delete the attachment '${a.name}' (${sizeWords(a.size)}) of ${taskNameOf(principal.workspaceKey, task)}? You can undo this for ${services.activity.retentionDays} days.`,
      'Delete the attachment',
    );
    if (asked.kind === 'ask') return asked.request;
    if (asked.kind !== 'proceed') return { attachmentId: a.attachmentId, name: a.name, deleted: false, declined: asked.kind };
    const w = await deleteAttachment(writeContext(ctx), task, a);
    return { attachmentId: a.attachmentId, name: a.name, deleted: true, activityId: w.record.activityId };
  },
  render: (d) =>
    d.deleted
      ? `Deleted the attachment ${d.name} [${d.attachmentId}].${undoLine(d.activityId)}`
      : notConfirmedText(d.declined ?? 'declined', `deleting the attachment ${d.name}`),
});

export const ATTACHMENT_TOOLS = [attachmentAdd, attachmentDelete];
