import * as z from 'zod';
import { PRIORITIES, ROLES } from './model.js';

/** The zod pieces the workspace tools share: identifiers, dates, list paging and the output shapes. */

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export const idArg = (what: string) => z.string().min(1).max(100).describe(`The ${what} id, as a list or search returned it`);
export const dateArg = z.iso.date();
export const timeArg = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24-hour)');
export const priorityArg = z.enum(PRIORITIES);
export const roleArg = z.enum(ROLES as ['owner', 'admin', 'member', 'viewer']);
export const labelArg = z
  .string()
  .trim()
  .min(1)
  .max(40)
  .regex(/^[^\s,]+$/, 'a label is one word without spaces or commas')
  .transform((s) => s.toLowerCase());
export const versionArg = z.number().int().min(1);

export const pagingArgs = {
  limit: z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe(`Entries per page (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})`),
  cursor: z.string().min(1).max(2000).optional().describe('The nextCursor of the previous page of this same call, to continue it'),
};

export const listFields = {
  returned: z.number().int().min(0).describe('Entries in this page'),
  truncated: z.boolean().describe('True when more entries follow; pass nextCursor as cursor to get them'),
  nextCursor: z.string().optional(),
};

const taskCore = {
  taskId: z.string(),
  title: z.string(),
  status: z.enum(['open', 'done']),
  priority: z.enum(PRIORITIES),
  dueDate: z.iso.date().optional(),
  dueTime: z.string().optional(),
  assigneeId: z.string().optional(),
  assigneeName: z.string().optional(),
  projectId: z.string().optional(),
  projectName: z.string().optional(),
  labels: z.array(z.string()),
  completedAt: z.string().optional(),
  version: z.number().int(),
};

/** A search hit: everything but the notes (read those with task_get). */
export const taskSummaryOutput = z.object(taskCore);
export type TaskSummaryOutput = z.output<typeof taskSummaryOutput>;

export const taskOutput = z.object({
  ...taskCore,
  notes: z.string().optional(),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedBy: z.string().optional(),
});
export type TaskOutput = z.output<typeof taskOutput>;

export const projectOutput = z.object({
  projectId: z.string(),
  name: z.string(),
  description: z.string().optional(),
  status: z.enum(['active', 'archived']),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  archivedAt: z.string().optional(),
  version: z.number().int(),
});
export type ProjectOutput = z.output<typeof projectOutput>;

export const commentOutput = z.object({
  commentId: z.string(),
  taskId: z.string(),
  authorId: z.string(),
  authorName: z.string().optional(),
  body: z.string(),
  createdAt: z.string(),
});
export type CommentOutput = z.output<typeof commentOutput>;

export const memberOutput = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  role: roleArg,
  timeZone: z.string(),
  status: z.enum(['active', 'disabled']),
});
export type MemberOutput = z.output<typeof memberOutput>;
