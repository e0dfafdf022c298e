import * as z from 'zod/mini';
import { NotFoundRefusal } from '../../errors.js';
import { defineTool } from '../define-tool.js';
import { uuidV7 } from '../item-support.js';
import { requireOwnOrAdmin, requireRole } from '../membership.js';
import type { Comment } from '../model.js';
import { cursorFor, isString, positionFrom } from '../paging.js';
import { commentLine, moreLine } from '../render.js';
import { commentOutput, idArg, listFields, pagingArgs } from '../schemas.js';
import { loadNames, taskOrRefuse, toCommentOutput } from '../views.js';
import { CREATE, READ, REMOVE } from './annotations.js';

const taskIdArg = idArg('task');

const listInput = z.strictObject({ taskId: taskIdArg, ...pagingArgs });
const listOutput = z.object({ taskId: z.string(), taskTitle: z.string(), ...listFields, comments: z.array(commentOutput) });

export const commentsList = defineTool({
  name: 'comments_list',
  title: 'Read the comments of a task',
  description:
    "Lists one task's comments, oldest first, with author and time: the discussion around a task. task_get has the task's own " +
    'notes; comment_add adds to the discussion.',
  input: listInput,
  output: listOutput,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    const after = await positionFrom(ctx, args, isString);
    // The page needs only the task id, so it is read alongside the task (whose absence still refuses).
    const [task, { members }, page] = await Promise.all([
      taskOrRefuse(services, principal, args.taskId),
      loadNames(services, principal),
      services.comments.list(principal.workspaceId, args.taskId, args.limit, after),
    ]);
    return {
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
      ? `No comments on [${r.taskId}] ${r.taskTitle}.`
      : `${r.returned} comment(s) on [${r.taskId}] ${r.taskTitle}:\n${r.comments.map(commentLine).join('\n')}${moreLine(r.truncated, r.returned)}`,
});

const addInput = z.strictObject({
  taskId: taskIdArg,
  body: z.string().check(z.trim(), z.minLength(1), z.maxLength(4000), z.describe('The comment text')),
});

export const commentAdd = defineTool({
  name: 'comment_add',
  title: 'Comment on a task',
  description:
    "Adds a comment to a task's discussion (members and up); each call adds one more comment. To change the task's own notes, use task_update.",
  input: addInput,
  output: commentOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, { services, principal, now }) => {
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
    await services.comments.add(comment);
    return toCommentOutput(comment, () => principal.name);
  },
  render: (c) => `Comment added to task [${c.taskId}]:\n${commentLine(c)}`,
});

const deleteInput = z.strictObject({ taskId: taskIdArg, commentId: idArg('comment') });
const deleteOutput = z.object({ taskId: z.string(), commentId: z.string(), deleted: z.literal(true) });

export const commentDelete = defineTool({
  name: 'comment_delete',
  title: 'Delete a comment',
  description: 'Deletes one comment of a task for good. Members delete only their own comments; admins any.',
  input: deleteInput,
  output: deleteOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, { services, principal }) => {
    requireRole(principal, 'member', 'deleting a comment');
    const comment = await services.comments.get(principal.workspaceId, args.taskId, args.commentId);
    if (!comment) throw new NotFoundRefusal(`Comment ${args.commentId} was not found on task ${args.taskId}; comments_list lists them.`);
    requireOwnOrAdmin(principal, comment.authorId, 'delete comments');
    await services.comments.remove(principal.workspaceId, args.taskId, args.commentId);
    return { taskId: args.taskId, commentId: args.commentId, deleted: true as const };
  },
  render: (d) => `Deleted comment [${d.commentId}] of task [${d.taskId}].`,
});

export const COMMENT_TOOLS = [commentsList, commentAdd, commentDelete];
