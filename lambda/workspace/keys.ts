/**
 * Item keys of the single workspace table (layout in docs/workspace.md, "Data model"). Every item of a
 * workspace lives under its `WS#` partition, so a query can never leave the caller's workspace.
 */
export const wsPk = (workspaceId: string): string => `WS#${workspaceId}`;
export const WORKSPACE_SK = 'META';
export const memberSk = (userId: string): string => `USER#${userId}`;
export const MEMBER_PREFIX = 'USER#';
export const emailPk = (email: string): string => `EMAIL#${email.toLowerCase()}`;
export const EMAIL_SK = 'EMAIL';
export const tokenPk = (hash: string): string => `TOKEN#${hash}`;
export const TOKEN_SK = 'TOKEN';
export const tokensOfWorkspaceGsiPk = (workspaceId: string): string => `WS#${workspaceId}#TOKENS`;

// ---- the task workspace (layout and access patterns in docs/workspace.md, "Data model") ----------------------
export const PROJECT_PREFIX = 'PROJECT#';
export const projectSk = (projectId: string): string => `${PROJECT_PREFIX}${projectId}`;
export const TASK_PREFIX = 'TASK#';
export const taskSk = (taskId: string): string => `${TASK_PREFIX}${taskId}`;
/** Comment ids are UUIDv7 (time-ordered), so a task's comments sort by creation under this prefix. */
export const commentsOfTaskPrefix = (taskId: string): string => `COMMENT#${taskId}#`;
export const commentSk = (taskId: string, commentId: string): string => `${commentsOfTaskPrefix(taskId)}${commentId}`;

/** gsi1 partition holding every task of a workspace, ordered by `taskOrderKey`. */
export const tasksGsiPk = (workspaceId: string): string => `WS#${workspaceId}#TASKS`;
/** Sorts below every real date, so an undated open task comes after all dated ones. */
export const UNDATED = '~';
export const OPEN_ORDER_PREFIX = 'O#';
export const DONE_ORDER_PREFIX = 'X#';
/**
 * gsi1sk of a task: open tasks by due date (undated last), then priority (P1 first); done tasks
 * by completion time. One key range per status, so status and due-date filters become key ranges.
 */
export const taskOrderKey = (t: {
  readonly taskId: string;
  readonly status: 'open' | 'done';
  readonly priority: string;
  readonly dueDate?: string | undefined;
  readonly completedAt?: string | undefined;
}): string =>
  t.status === 'open'
    ? `${OPEN_ORDER_PREFIX}${t.dueDate ?? UNDATED}#${t.priority}#${t.taskId}`
    : `${DONE_ORDER_PREFIX}${t.completedAt ?? ''}#${t.taskId}`;

/** gsi2 partition holding the tasks assigned to one member (unassigned tasks are not in gsi2). */
export const tasksOfAssigneeGsiPk = (workspaceId: string, assigneeId: string): string => `WS#${workspaceId}#A#${assigneeId}`;
/** Sorts before `O#`, so one key range from `D#<instant>` holds the done-since and every open task. */
export const AGENDA_DONE_PREFIX = 'D#';
/**
 * gsi2sk of an assigned task: open tasks as in gsi1; done tasks by completion under `D#`. A
 * person's agenda (open tasks, done on a day) is then one range of one partition: one request.
 */
export const agendaOrderKey = (t: Parameters<typeof taskOrderKey>[0]): string =>
  t.status === 'open' ? taskOrderKey(t) : `${AGENDA_DONE_PREFIX}${t.completedAt ?? ''}#${t.taskId}`;
