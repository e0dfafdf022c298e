export const PRIORITIES = ['P1', 'P2', 'P3', 'P4'] as const;
export type Priority = (typeof PRIORITIES)[number];
export type TaskStatus = 'open' | 'done';

/** A task as stored (without the item keys). `version` starts at 1 and grows by one per write. */
export interface Task {
  readonly workspaceId: string;
  readonly taskId: string;
  readonly title: string;
  readonly notes?: string;
  readonly status: TaskStatus;
  readonly priority: Priority;
  /** The user's calendar date, YYYY-MM-DD: a due date is a day, not an instant. */
  readonly dueDate?: string;
  /** HH:MM on the due date, in the assignee's reading of it (only with dueDate). */
  readonly dueTime?: string;
  readonly assigneeId?: string;
  readonly projectId?: string;
  readonly labels: readonly string[];
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly completedAt?: string;
  readonly completedBy?: string;
  readonly version: number;
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
