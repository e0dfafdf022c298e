import type { FieldDef, FieldValues } from './custom-fields.js';
import type { Repeat } from './repeat-rules.js';
import type { RetiredStatus, WorkflowStatus } from './statuses.js';

export const PRIORITIES = ['P1', 'P2', 'P3', 'P4'] as const;
export type Priority = (typeof PRIORITIES)[number];
export type TaskStatus = 'open' | 'done';

/** A task as stored (without the item keys). `version` starts at 1 and grows by one per write. */
export interface Task {
  readonly workspaceId: string;
  readonly taskId: string;
  /** Unique in the workspace, never reused: shown as `<KEY>-<number>`. Absent on a task from before numbers (until the migration). */
  readonly number?: number;
  readonly title: string;
  readonly notes?: string;
  /** Its phase: open or done (closed: done or canceled). What the list indexes are keyed on. */
  readonly status: TaskStatus;
  /** Its workflow status's key, when not its phase's first one (model/statuses.ts). */
  readonly state?: string;
  readonly priority: Priority;
  /** The user's calendar date, YYYY-MM-DD: a due date is a day, not an instant. */
  readonly dueDate?: string;
  /** HH:MM on the due date, in the assignee's reading of it (only with dueDate). */
  readonly dueTime?: string;
  readonly assigneeId?: string;
  readonly projectId?: string;
  readonly labels: readonly string[];
  /**
   * The task this one is a subtask of (workspace/tasks/subtasks.ts), with its number for the "sub of
   * DEMO-12" a list line shows without reading the parent. Written by this task's own changes only.
   */
  readonly parentId?: string;
  readonly parentNumber?: number;
  /** How many live subtasks it has: kept by the subtasks' own changes, never by this task's. */
  readonly subtaskCount?: number;
  /** How many live attachments it has: kept by the attachments' writes, never by this task's own. */
  readonly attachmentCount?: number;
  /** Raised by every placement below it, at any depth: what a change that read its subtree holds. */
  readonly treeVersion?: number;
  /** A recurring task's rule: completing it moves `dueDate` to the next occurrence (model/repeat-rules.ts). */
  readonly repeat?: Repeat;
  /**
   * The tasks this one waits on: task id → its number (0 for one from before numbers). Written by
   * this task's own changes only; a blocker's delete or restore changes only which of them wait
   * (`openBlockers`, `goneBlockers`), never the links (workspace/tasks/links.ts).
   */
  readonly blockedBy?: Readonly<Record<string, number>>;
  /** Of `blockedBy`, the ones still open: kept by the blockers' own completions and reopenings. */
  readonly openBlockers?: readonly string[];
  /**
   * Of `blockedBy`, the ones deleted (kept for undo): the link stays the waiting task's own, shown as
   * "(deleted)" and waiting on nothing, until the blocker is restored or the link is removed.
   */
  readonly goneBlockers?: readonly string[];
  /** The tasks waiting on this one that are not deleted: kept by their changes, never by this task's. */
  readonly blocks?: readonly string[];
  /** Raised with every change to `blocks`: a status change of this task is written only against the `blocks` it read. */
  readonly linksVersion?: number;
  /** Values of its project's custom fields, by field id (model/custom-fields.ts). */
  readonly fields?: FieldValues;
  /** Reminders in words, each its member's (model/reminder-words.ts); the minute job fires them. */
  readonly reminders?: readonly TaskReminder[];
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly completedAt?: string;
  readonly completedBy?: string;
  /** A deleted task is kept, invisible to every read, until its undo window ends (workspace/activity.ts). */
  readonly deletedAt?: string;
  readonly version: number;
}

/** A reminder on a task: when, read from which words, and whose. */
export interface TaskReminder {
  readonly reminderId: string;
  /** ISO instant of a whole minute, UTC. */
  readonly at: string;
  readonly words: string;
  /** A reminder relative to the due date moves with it (a recurring task's next occurrence too). */
  readonly beforeDue?: { readonly minutes?: number; readonly days?: number; readonly at?: string };
  /** The member it reminds: the one who set it. */
  readonly userId: string;
  /** Their time zone when they set it: a relative one's time of day ("the day before at 17:00") is theirs. */
  readonly zone?: string;
}

export type ProjectStatus = 'active' | 'archived';

export interface Project {
  readonly workspaceId: string;
  readonly projectId: string;
  readonly name: string;
  readonly description?: string;
  readonly status: ProjectStatus;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly archivedAt?: string;
  /** As a task's: kept for undo, invisible. */
  readonly deletedAt?: string;
  /** Its own workflow statuses, in order (model/status-sets.ts); none: the workspace's. */
  readonly statuses?: readonly WorkflowStatus[];
  /** The statuses it removed, kept so that a task still stored in one reads right. */
  readonly retiredStatuses?: readonly RetiredStatus[];
  /** Its custom fields, in order (model/custom-fields.ts); absent: none. */
  readonly fields?: readonly FieldDef[];
  readonly version: number;
}

export interface Comment {
  readonly workspaceId: string;
  readonly taskId: string;
  readonly commentId: string;
  readonly authorId: string;
  readonly body: string;
  readonly createdAt: string;
}

/** What a parent keeps of each live subtask, beside it in its own partition: what task_get lists without reading the subtasks. */
export interface SubtaskEntry {
  readonly taskId: string;
  readonly number?: number;
  readonly title: string;
  readonly status: TaskStatus;
  readonly state?: string;
  readonly dueDate?: string;
  /** Whose statuses name its state (a subtask may be in another project than its parent). */
  readonly projectId?: string;
  /** Who created it (never changes): whether a member may delete it with its parent is decided from the entries. */
  readonly createdBy?: string;
}

/** A file on a task (or one of its comments): its bytes are in the file store, this is what the table keeps. */
export interface Attachment {
  readonly workspaceId: string;
  readonly taskId: string;
  /** `<taskId>.<random>`: the task it is on, so a read by id finds its partition without a lookup. */
  readonly attachmentId: string;
  /** The comment it came with, when it did. */
  readonly commentId?: string;
  readonly name: string;
  /** The MIME type read from its bytes (or text/plain for text given as text). */
  readonly type: string;
  readonly size: number;
  readonly addedBy: string;
  readonly addedAt: string;
  /** Set while it is deleted (kept for undo). */
  readonly deletedAt?: string;
}
