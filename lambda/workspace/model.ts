import type { Role } from '../auth/principal.js';

export type { Role };
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];
const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1, viewer: 0 };
export const roleAtLeast = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];

export type Status = 'active' | 'disabled';

export interface Workspace {
  readonly workspaceId: string;
  readonly name: string;
  readonly status: Status;
  readonly createdAt: string;
  /** Raised by every member or project write (workspace/names.ts); absent until the first. */
  readonly directoryVersion?: number;
}

export interface Member {
  readonly workspaceId: string;
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly timeZone: string;
  readonly status: Status;
  readonly createdAt: string;
}

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
