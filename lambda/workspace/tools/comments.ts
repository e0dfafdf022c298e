import * as z from 'zod/mini';
import { NotFoundRefusal } from '../../errors.js';
import { buildRecord } from '../activity.js';
import { activityIdOutput, commitWithRecord, sourceOf, undoLine } from '../changes.js';
import { confirmation, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { uuidV7 } from '../item-support.js';
import { requireOwnOrAdmin, requireRole } from '../membership.js';
import type { Comment, Task } from '../model.js';
import { cursorFor, isString, positionFrom } from '../paging.js';
import { commentLine, moreLine, taskName } from '../render.js';
import { commentOutput, idArg, listFields, pagingArgs, taskKeyOut, taskRefArg } from '../schemas.js';
import type { WorkspaceServices } from '../services.js';
import { keyField } from '../task-numbers.js';
import { toTask } from '../task-store.js';
import { loadNames, taskIdOf, taskOrRefuse, toCommentOutput } from '../views.js';
import { CREATE, READ, REMOVE } from './annotations.js';

const taskIdArg = taskRefArg;

const listInput = z.strictObject({ taskId: taskIdArg, ...pagingArgs });
const listOutput = z.object({
  key: taskKeyOut,
  taskId: z.string(),
  taskTitle: z.string(),
  ...listFields,
  comments: z.array(commentOutput),
});

export const commentsList = defineTool({
  name: 'comments_list',
  title: 'Read the comments of a task',
  description: "Lists a task's comments, oldest first, with author and time.",
  input: listInput,
  output: listOutput,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    const after = await positionFrom(ctx, args, isString);
    const taskId = await taskIdOf(services, principal, args.taskId);
    // The page needs only the task id, so it is read alongside the task (whose absence still refuses).
    const [task, { members }, page] = await Promise.all([
      taskOrRefuse(services, principal, taskId),
      loadNames(services, principal),
      services.comments.list(principal.workspaceId, taskId, args.limit, after),
    ]);
    return {
      ...keyField(principal.workspaceKey, task.number),
      taskId: task.taskId,
      taskTitle: task.title,
      returned: page.comments.length,
      truncated: page.next !== undefined,
      ...(page.next ? { nextCursor: await cursorFor(ctx, args, page.next) } : {}),
      comments: page.comments.map((c) => toCommentOutput(c, (id) => members.get(id)?.name)),
    };
  },
  render: (r) =>
    r.returned === 0
      ? `No comments on ${taskName(r)} ${r.taskTitle}.`
      : `${r.returned} comment(s) on ${taskName(r)} ${r.taskTitle}:\n${r.comments.map(commentLine).join('\n')}${moreLine(r.truncated, r.returned)}`,
});

const addInput = z.strictObject({
  taskId: taskIdArg,
  body: z.string().check(z.trim(), z.minLength(1), z.maxLength(4000), z.describe('The comment text')),
});

/** The record of a comment added or deleted: the comment itself is what undo needs. */
const commentRecord = (
  ctx: Parameters<typeof sourceOf>[0] & { services: WorkspaceServices },
  action: 'created' | 'deleted',
  comment: Comment,
  task: Task,
  at: string,
) =>
  buildRecord(
    sourceOf(ctx),
    comment.workspaceId,
    {
      kind: 'comment',
      action,
      targetId: comment.commentId,
      targetLabel: task.title,
      taskId: task.taskId,
      ...(task.number !== undefined ? { taskNumber: task.number } : {}),
      ...(task.projectId ? { projectId: task.projectId } : {}),
      changes: action === 'created' ? [{ field: 'body', after: comment.body }] : [{ field: 'deletedAt', after: at }],
      ...(action === 'created' ? { after: { ...comment } } : { before: { ...comment } }),
    },
    ctx.services.activity.expiresAtFor(ctx.now),
  );

const addOutput = z.extend(commentOutput, { key: taskKeyOut, ...activityIdOutput });

export const commentAdd = defineTool({
  name: 'comment_add',
  title: 'Comment on a task',
  description: "Adds a comment to a task's discussion; each call adds one. The task's own notes change with task_update.",
  input: addInput,
  output: addOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    requireRole(principal, 'member', 'commenting');
    const task = await taskOrRefuse(services, principal, args.taskId);
    const comment: Comment = {
      workspaceId: principal.workspaceId,
      taskId: task.taskId,
      commentId: uuidV7(now),
      authorId: principal.userId,
      body: args.body,
      createdAt: now.toISOString(),
    };
    const record = commentRecord(ctx, 'created', comment, task, comment.createdAt);
    // No condition on the task itself: every comment of a busy task would then queue on that one
    // item (DynamoDB answers concurrent transactions on an item with conflicts). A comment landing on a
    // task deleted that very moment is invisible with it (docs/workspace.md, known limits).
    await commitWithRecord(services, [services.comments.addOp(comment)], record);
    return {
      ...toCommentOutput(comment, () => principal.name),
      ...keyField(principal.workspaceKey, task.number),
      activityId: record.activityId,
    };
  },
  render: (c) => `Comment added to ${taskName(c)}:\n${commentLine(c)}${undoLine(c.activityId)}`,
});

const deleteInput = z.strictObject({ taskId: taskIdArg, commentId: idArg('comment') });
const deleteOutput = z.object({
  key: taskKeyOut,
  taskId: z.string(),
  commentId: z.string(),
  deleted: z.boolean().check(z.describe('false when the person declined or cancelled: nothing changed')),
  declined: z.optional(z.enum(['declined', 'cancelled'])),
  ...activityIdOutput,
});

const excerpt = (text: string, max = 80): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export const commentDelete = defineTool({
  name: 'comment_delete',
  title: 'Delete a comment',
  description: 'Deletes a comment (members their own; admins any), asking the person first where the client can; change_undo restores it.',
  input: deleteInput,
  output: deleteOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    requireRole(principal, 'member', 'deleting a comment');
    // The comment and its task in one request: a deletion names the task, and a deleted task's comments are gone with it.
    const taskId = await taskIdOf(services, principal, args.taskId);
    const [{ comment, taskItem }, names] = await Promise.all([
      services.comments.getWithTask(principal.workspaceId, taskId, args.commentId),
      loadNames(services, principal),
    ]);
    const task = taskItem && toTask(taskItem);
    if (!task || task.deletedAt) {
      throw new NotFoundRefusal(`Task ${args.taskId} was not found in this workspace; tasks_search finds tasks and their ids.`);
    }
    if (!comment) throw new NotFoundRefusal(`Comment ${args.commentId} was not found on task ${args.taskId}; comments_list lists them.`);
    requireOwnOrAdmin(principal, comment.authorId, 'delete comments');
    const author = names.members.get(comment.authorId)?.name ?? comment.authorId;
    const asked = confirmation(
      ctx,
      { id: comment.commentId, state: 'present' },
      `Delete ${author}'s comment on '${task.title}' ("${excerpt(comment.body)}")? You can undo this for ${services.activity.retentionDays} days.`,
      'Delete the comment',
    );
    if (asked.kind === 'ask') return asked.request;
    const key = keyField(principal.workspaceKey, task.number);
    if (asked.kind !== 'proceed') return { ...key, taskId, commentId: args.commentId, deleted: false, declined: asked.kind };
    const record = commentRecord(ctx, 'deleted', comment, task, now.toISOString());
    await commitWithRecord(services, services.comments.removeOps(comment, record.expiresAt), record);
    return { ...key, taskId, commentId: args.commentId, deleted: true, activityId: record.activityId };
  },
  render: (d) =>
    d.deleted
      ? `Deleted comment [${d.commentId}] of ${taskName(d)}.${undoLine(d.activityId)}`
      : notConfirmedText(d.declined ?? 'declined', `deleting comment [${d.commentId}]`),
});

export const COMMENT_TOOLS = [commentsList, commentAdd, commentDelete];
