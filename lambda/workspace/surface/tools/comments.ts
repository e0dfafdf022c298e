import * as z from 'zod/mini';
import { addComment, deleteComment } from '../../comments/comment-writer.js';
import { requireOwnOrAdmin, requireRole } from '../../membership/rules.js';
import { readMentions } from '../../model/mentions.js';
import { commentNotFound, taskDeleted, taskNotFound } from '../../model/refusals.js';
import { keyField, taskNameOf } from '../../model/task-refs.js';
import { loadNames, taskIdOf, taskOrRefuse } from '../../store/lookups.js';
import { toTask } from '../../store/task-store.js';
import { ASKS_FIRST, confirmation, NOT_CONFIRMED, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { toCommentOutput } from '../outputs.js';
import { cursorFor, isString, positionFrom } from '../paging.js';
import { commentLine, moreLine, taskName, undoLine } from '../render.js';
import { activityIdOutput, commentOutput, idArg, listFields, pagingArgs, taskKeyOut, taskRefArg } from '../schemas.js';
import { writeContext } from '../sources.js';
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
  // Each comment's task is the list's own, and its author is named: the ids the answer repeats are not listed.
  listedOutput: z.object({
    key: taskKeyOut,
    taskId: z.string(),
    taskTitle: z.string(),
    ...listFields,
    comments: z.array(z.object({ commentId: z.string(), authorName: z.optional(z.string()), body: z.string(), createdAt: z.string() })),
  }),
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
      : `${r.returned} comment(s) on ${taskName(r)} ${r.taskTitle}:\n${r.comments.map(commentLine).join('\n')}${moreLine(r)}`,
});

const addInput = z.strictObject({
  taskId: taskIdArg,
  body: z.string().check(z.trim(), z.minLength(1), z.maxLength(4000), z.describe('The comment text')),
});

const addOutput = z.extend(commentOutput, { key: taskKeyOut, ...activityIdOutput });

export const commentAdd = defineTool({
  name: 'comment_add',
  title: 'Comment on a task',
  description: "Adds one comment to a task's discussion (its notes change with task_update).",
  input: addInput,
  output: addOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'commenting');
    // Its mentions become references to members (model/mentions.ts): they are told, and watch the task.
    const mentions = args.body.includes('@');
    const [task, names] = await Promise.all([
      taskOrRefuse(services, principal, args.taskId),
      mentions ? loadNames(services, principal) : undefined,
    ]);
    const read = names
      ? readMentions(
          args.body,
          [...names.members.values()].filter((m) => m.status === 'active'),
          'body',
        )
      : undefined;
    const w = await addComment(writeContext(ctx), task, read?.text ?? args.body);
    return {
      ...toCommentOutput(w.comment, (id) => (id === principal.userId ? principal.name : names?.members.get(id)?.name)),
      ...keyField(principal.workspaceKey, task.number),
      activityId: w.record.activityId,
      ...(read?.unmatched.length
        ? {
            textNotes: [
              `body: @${read.unmatched.join(', @')} names no one in this workspace (or more than one): left as text, nobody told.`,
            ],
          }
        : {}),
    };
  },
  render: (c) => `Comment added to ${taskName(c)}:\n${commentLine(c)}${undoLine(c.activityId)}`,
});

const deleteInput = z.strictObject({ taskId: taskIdArg, commentId: idArg });
const deleteOutput = z.object({
  key: taskKeyOut,
  taskId: z.string(),
  commentId: z.string(),
  deleted: z.boolean().check(z.describe('false when the person did not confirm: nothing changed')),
  declined: z.optional(z.enum(NOT_CONFIRMED)),
  ...activityIdOutput,
});

const excerpt = (text: string, max = 80): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export const commentDelete = defineTool({
  name: 'comment_delete',
  title: 'Delete a comment',
  description: `Deletes a comment (members their own; admins any); change_undo restores it. ${ASKS_FIRST}`,
  input: deleteInput,
  output: deleteOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'member', 'deleting a comment');
    // The comment and its task in one request: a deletion names the task, and a deleted task's comments are gone with it.
    const taskId = await taskIdOf(services, principal, args.taskId);
    const [{ comment, taskItem }, names] = await Promise.all([
      services.comments.getWithTask(principal.workspaceId, taskId, args.commentId),
      loadNames(services, principal),
    ]);
    const task = taskItem && toTask(taskItem);
    if (!task) throw taskNotFound(args.taskId);
    if (task.deletedAt) throw taskDeleted(args.taskId, task.deletedAt);
    if (!comment) throw commentNotFound(args.commentId, taskNameOf(principal.workspaceKey, task));
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
    const w = await deleteComment(writeContext(ctx), task, comment);
    return { ...key, taskId, commentId: args.commentId, deleted: true, activityId: w.record.activityId };
  },
  render: (d) =>
    d.deleted
      ? `Deleted comment [${d.commentId}] of ${taskName(d)}.${undoLine(d.activityId)}`
      : notConfirmedText(d.declined ?? 'declined', `deleting comment [${d.commentId}]`),
});

export const COMMENT_TOOLS = [commentsList, commentAdd, commentDelete];
