import * as z from 'zod/mini';
import { ROLES } from '../../vocabulary.js';
import { MAX_BLOCKERS, MAX_NOTES_LENGTH } from '../model/limits.js';
import { STATUS_CATEGORIES } from '../model/statuses.js';
import { PRIORITIES } from '../model/types.js';

/** The zod pieces the workspace tools share: identifiers, dates, list paging and the output shapes. */

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** No id of ours is longer; DynamoDB refuses a key over 1 KiB, so a longer one must not reach it. */
export const MAX_ID_LENGTH = 100;

/** An id argument: its name (projectId, userId, commentId) says what it names, so it carries no description. */
export const idArg = z.string().check(z.minLength(1), z.maxLength(MAX_ID_LENGTH));
/** Tasks a task waits on, by key or id: the whole set (an empty one clears it). */
export const blockedByArg = z
  .array(z.string().check(z.minLength(1), z.maxLength(MAX_ID_LENGTH)))
  .check(z.maxLength(MAX_BLOCKERS), z.describe('Keys of all tasks it waits on; [] clears'));
/** A task by its key (DEMO-42, demo-42, #42, 42) or its id. */
export const taskRefArg = z.string().check(z.minLength(1), z.maxLength(MAX_ID_LENGTH), z.describe('Task key (DEMO-42) or id'));
/**
 * A day: YYYY-MM-DD or the words a person types ("friday", "next friday 3pm", "in 2 weeks"), read by
 * the tool in the caller's time zone (model/date-words.ts), so 2026-02-30 and "5/6" are refused there,
 * naming the words.
 */
const dayText = z.string().check(z.trim(), z.minLength(1), z.maxLength(60));
export const dateArg = dayText.check(z.describe('YYYY-MM-DD or words (next fri 3pm)'));
/** A date the server wrote (as `dateArg`, under its own name for the output schemas). */
export const dateOut = z.iso.date();
export const timeArg = z.string().check(z.regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24-hour)'));
export const priorityArg = z.enum(PRIORITIES);
export const roleArg = z.enum(ROLES as ['owner', 'admin', 'member', 'viewer']);
export const labelArg = z.pipe(
  z.string().check(z.trim(), z.minLength(1), z.maxLength(40), z.regex(/^[^\s,]+$/, 'a label is one word without spaces or commas')),
  z.transform((s) => s.toLowerCase()),
);
export const versionArg = z.number().check(z.int(), z.minimum(1));

export const pagingArgs = {
  // No description: a page's size is what `limit` says, and its default and bounds are listed beside it.
  limit: z._default(z.number().check(z.int(), z.minimum(1), z.maximum(MAX_LIMIT)), DEFAULT_LIMIT),
  // The list's own nextCursor: the name says it (its description was 260 bytes of every listing).
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(2000))),
};

export const listFields = {
  returned: z.number().check(z.int(), z.minimum(0), z.describe('Entries in this page')),
  truncated: z.boolean().check(z.describe('True when more entries follow; pass nextCursor as cursor to get them')),
  nextCursor: z.optional(z.string()),
};

/** The task's key (DEMO-42), on every output that names a task; absent only before the numbering migration. */
export const taskKeyOut = z.optional(z.string().check(z.describe('DEMO-42: how people and text name the task')));

const taskCore = {
  key: taskKeyOut,
  taskId: z.string(),
  title: z.string(),
  status: z.string(),
  // One of STATUS_CATEGORIES; listed once, in tasks_search's status (the enum in every task output cost 560 bytes of tools/list).
  statusCategory: z.string(),
  priority: z.enum(PRIORITIES),
  dueDate: z.optional(dateOut),
  dueTime: z.optional(z.string()),
  assigneeId: z.optional(z.string()),
  assigneeName: z.optional(z.string()),
  projectId: z.optional(z.string()),
  projectName: z.optional(z.string()),
  labels: z.array(z.string()),
  repeat: z.optional(z.string()),
  completedAt: z.optional(z.string()),
  parent: z.optional(z.string()),
  /** How many files it has (task_get lists them). */
  attachments: z.optional(z.number().check(z.int())),
  /** Its project's custom fields: name → value. */
  fields: z.optional(z.record(z.string(), z.union([z.string(), z.number(), z.array(z.string())]))),
  blockedBy: z.optional(
    z
      .array(z.object({ key: z.optional(z.string()), taskId: z.string(), open: z.boolean(), deleted: z.optional(z.literal(true)) }))
      .check(z.describe('Tasks this one waits on')),
  ),
  version: z.number().check(z.int()),
};

/**
 * What a listing says of a task in a list or a change: the fields a client acts on. The answers carry
 * the whole summary (or more); these keep `tools/list` small (docs/protocol.md, "Listed output").
 */
export const taskBriefListed = z.object({
  key: taskKeyOut,
  taskId: z.string(),
  title: z.string(),
  status: z.optional(z.string()),
  priority: z.optional(z.enum(PRIORITIES)),
  dueDate: z.optional(dateOut),
  assigneeName: z.optional(z.string()),
  version: z.optional(z.number().check(z.int())),
});
export const changedTaskListed = z.object({
  key: taskKeyOut,
  taskId: z.string(),
  title: z.string(),
  status: z.string(),
  version: z.number().check(z.int()),
  activityId: z.optional(z.string()),
});

/** A search hit: everything but the notes (read those with task_get). */
export const taskSummaryOutput = z.object(taskCore);
export type TaskSummaryOutput = z.output<typeof taskSummaryOutput>;

export const taskOutput = z.object({
  ...taskCore,
  notes: z.optional(z.string()),
  subtasks: z.optional(
    z.array(
      z.object({
        key: z.optional(z.string()),
        taskId: z.string(),
        title: z.string(),
        status: z.string(),
        // One of STATUS_CATEGORIES; listed once, in tasks_search's status (the enum in every task output cost 560 bytes of tools/list).
        statusCategory: z.string(),
      }),
    ),
  ),
  files: z.optional(
    z.array(
      z.object({
        attachmentId: z.string(),
        name: z.string(),
        type: z.string(),
        size: z.number().check(z.int()),
        addedBy: z.string(),
        addedAt: z.string(),
        commentId: z.optional(z.string()),
      }),
    ),
  ),
  createdBy: z.string(),
  createdByName: z.optional(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  completedBy: z.optional(z.string()),
  watchers: z.optional(z.array(z.object({ userId: z.string(), name: z.optional(z.string()) }))),
  reminders: z.optional(
    z.array(z.object({ reminderId: z.string(), at: z.string(), words: z.string(), userId: z.string(), name: z.optional(z.string()) })),
  ),
});
export type TaskOutput = z.output<typeof taskOutput>;

/** task_get as listed: the task's fields, its subtasks, files and links by what names them. */
export const taskListed = z.extend(taskBriefListed, {
  statusCategory: z.optional(z.string()),
  dueTime: z.optional(z.string()),
  projectName: z.optional(z.string()),
  labels: z.optional(z.array(z.string())),
  repeat: z.optional(z.string()),
  parent: z.optional(z.string()),
  notes: z.optional(z.string()),
  completedAt: z.optional(z.string()),
  createdByName: z.optional(z.string()),
  subtasks: z.optional(z.array(z.object({ key: z.optional(z.string()), taskId: z.string(), title: z.string(), status: z.string() }))),
  files: z.optional(z.array(z.object({ attachmentId: z.string(), name: z.string() }))),
  blockedBy: z.optional(z.array(z.object({ key: z.optional(z.string()), taskId: z.string(), open: z.boolean() }))),
  // Custom fields by their type: each answer has them whole (watchers and reminders too).
  fields: z.optional(z.object({})),
});

export const projectOutput = z.object({
  projectId: z.string(),
  name: z.string(),
  description: z.optional(z.string()),
  status: z.enum(['active', 'archived']),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  archivedAt: z.optional(z.string()),
  fields: z.optional(z.array(z.object({ name: z.string(), type: z.string(), options: z.optional(z.array(z.string())) }))),
  version: z.number().check(z.int()),
});
export type ProjectOutput = z.output<typeof projectOutput>;

/** A project's workflow statuses, in order. */
export const statusesOutput = z.array(z.object({ name: z.string(), category: z.enum(STATUS_CATEGORIES) }));
export type StatusesOutput = z.output<typeof statusesOutput>;

/** A project's own statuses, as project_create and project_update take them (model/status-sets.ts reads them). */
export const statusesArg = z
  .array(
    z.strictObject({
      // Lengths are checked where the set is read (model/status-sets.ts), naming the item.
      name: z.string(),
      category: z.enum(STATUS_CATEGORIES),
      was: z.optional(z.string()).check(z.describe('Its name now (a rename)')),
    }),
  )
  .check(z.describe('The whole ordered set; a rename keeps tasks'));

/**
 * A project's custom fields, as project_create and project_update take them: types, lengths and
 * options are checked where the fields are planned (model/custom-fields.ts), naming the item.
 */
const fieldArg = {
  name: z.string().check(z.minLength(1), z.maxLength(40)),
  type: z.string().check(z.describe('text|number|date|select|multi-select|person|url')),
  options: z.optional(z.array(z.string())),
};
/** project_create's: a new project renames nothing. */
export const newFieldsArg = z.array(z.strictObject(fieldArg)).check(z.maxLength(50), z.describe('In order'));
export const fieldsArg = z
  .array(z.strictObject({ ...fieldArg, was: z.optional(z.string()) }))
  .check(z.maxLength(50), z.describe('All, in order; was: a rename'));

/** A task's custom field values by field name (null clears one), checked by each field's type (model/custom-fields.ts). */
export const fieldValuesArg = z.record(z.string(), z.unknown()).check(z.describe('Field name → value'));

export const commentOutput = z.object({
  commentId: z.string(),
  taskId: z.string(),
  authorId: z.string(),
  authorName: z.optional(z.string()),
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

/** Every writing tool's answer names its record, which is what change_undo takes. */
export const activityIdOutput = { activityId: z.optional(z.string().check(z.describe('The change, for activity_list and change_undo'))) };

// ---- a task's fields, as task_create, task_update and both bulk tools take them --------------------

export const titleArg = z.string().check(z.trim(), z.minLength(1), z.maxLength(300));
export const notesArg = z.string().check(z.maxLength(MAX_NOTES_LENGTH));
export const labelsArg = z.array(labelArg).check(z.maxLength(10));
export const whoArg = z.string().check(z.minLength(1), z.maxLength(100));
/** A recurring task's rule: a phrase or an RRULE, read by model/repeat-rules.ts (which names what it refuses). */
/** A workflow status as a person writes it: a name, a category, or open / done (model/statuses.ts reads it). */
export const statusArg = z.string().check(z.trim(), z.minLength(1), z.maxLength(40), z.describe('Todo, In progress, …, or open/done'));

export const repeatArg = z.string().check(z.trim(), z.minLength(1), z.maxLength(120));

// An empty phrase, like any unreadable one, is refused where the words are read (model/reminder-words.ts).
const remindPhrase = z.string().check(z.trim(), z.maxLength(80));
const remindPhrases = z.array(remindPhrase).check(z.maxLength(20));
/** A reminder in words, or several: a time in the caller's zone or relative to the due date. */
export const remindArg = z.union([remindPhrase, remindPhrases]).check(z.describe('friday 9am, 1 hour before'));
/** The same on a change: yours replaced, or null to take yours away (one union, listed once). */
export const remindChangeArg = z
  .union([remindPhrase, remindPhrases, z.null()])
  .check(z.describe('Yours, replaced (friday 9am, 1 hour before); null clears'));

/** What a new task may be given (task_create, and each item of tasks_create). */
export const newTaskFields = {
  title: titleArg,
  notes: z.optional(notesArg),
  priority: z._default(priorityArg, 'P4').check(z.describe('P1 most urgent; default P4')),
  dueDate: z.optional(dateArg),
  dueTime: z.optional(timeArg).check(z.describe('Needs dueDate')),
  assignee: z.optional(whoArg).check(z.describe('"me" or a userId')),
  projectId: z.optional(idArg),
  labels: z.optional(labelsArg),
  blockedBy: z.optional(blockedByArg),
  parent: z.optional(idArg),
  repeat: z.optional(repeatArg).check(z.describe('every monday, monthly on the 1st, or an RRULE')),
  status: z.optional(statusArg),
  remind: z.optional(remindArg),
  fields: z.optional(fieldValuesArg),
};

/** What a change of a task may set (task_update, and each entry of tasks_update). */
export const taskChangeFields = {
  title: z.optional(titleArg),
  notes: z.optional(z.nullable(notesArg)).check(z.describe('null clears')),
  priority: z.optional(priorityArg),
  dueDate: z.optional(z.nullable(dayText)).check(z.describe('YYYY-MM-DD or words (friday 3pm); null clears it and the time')),
  dueTime: z.optional(z.nullable(timeArg)).check(z.describe('null clears')),
  assignee: z.optional(z.nullable(whoArg)).check(z.describe('"me", a userId or null')),
  projectId: z.optional(z.nullable(idArg)).check(z.describe('null: no project')),
  labels: z.optional(labelsArg).check(z.describe('All labels')),
  blockedBy: z.optional(blockedByArg),
  parent: z.optional(z.nullable(idArg)).check(z.describe('Parent key; null: top level')),
  repeat: z.optional(z.nullable(repeatArg)).check(z.describe('As task_create; null stops')),
  status: z.optional(statusArg),
  remind: z.optional(remindChangeArg),
  watch: z.optional(z.boolean()),
  fields: z.optional(fieldValuesArg),
};
