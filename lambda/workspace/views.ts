import { InvalidArgumentRefusal, NotFoundRefusal } from '../errors.js';
import type { Member, Principal } from '../vocabulary.js';
import type { Comment, Project, Task } from './model.js';
import type { Names } from './names.js';
import type { CommentOutput, MemberOutput, ProjectOutput, TaskOutput, TaskSummaryOutput } from './schemas.js';
import type { WorkspaceServices } from './services.js';

export type { Names };

/**
 * The names a view shows, from the instance's directory snapshot (usually no request at all). A
 * name made elsewhere a moment ago may be missing for up to DOERS_AUTH_CACHE_SECONDS; the view then
 * shows the id alone, which is always right.
 */
export const loadNames = async (services: WorkspaceServices, principal: Principal): Promise<Names> => ({
  ...(await services.names.get(principal)),
  workspaceKey: principal.workspaceKey,
});

export const toSummary = (t: Task, names: Names): TaskSummaryOutput => ({
  ...(t.number !== undefined && names.workspaceKey ? { key: `${names.workspaceKey}-${t.number}` } : {}),
  taskId: t.taskId,
  title: t.title,
  status: t.status,
  priority: t.priority,
  ...(t.dueDate ? { dueDate: t.dueDate } : {}),
  ...(t.dueTime ? { dueTime: t.dueTime } : {}),
  ...(t.assigneeId ? { assigneeId: t.assigneeId, ...optionalName(names.members.get(t.assigneeId)?.name, 'assigneeName') } : {}),
  ...(t.projectId ? { projectId: t.projectId, ...optionalName(names.projects.get(t.projectId)?.name, 'projectName') } : {}),
  labels: [...t.labels],
  ...(t.completedAt ? { completedAt: t.completedAt } : {}),
  ...(t.blockedBy && Object.keys(t.blockedBy).length
    ? {
        blockedBy: Object.entries(t.blockedBy).map(([taskId, n]) => ({
          ...(n && names.workspaceKey ? { key: `${names.workspaceKey}-${n}` } : {}),
          taskId,
          open: (t.openBlockers ?? []).includes(taskId),
        })),
      }
    : {}),
  version: t.version,
});

export const toTaskOutput = (t: Task, names: Names): TaskOutput => ({
  ...toSummary(t, names),
  ...(t.notes ? { notes: t.notes } : {}),
  createdBy: t.createdBy,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  ...(t.completedBy ? { completedBy: t.completedBy } : {}),
});

export const toProjectOutput = (p: Project): ProjectOutput => {
  const { workspaceId: _ws, ...rest } = p;
  return rest;
};

export const toCommentOutput = (c: Comment, nameOf: (userId: string) => string | undefined): CommentOutput => ({
  commentId: c.commentId,
  taskId: c.taskId,
  authorId: c.authorId,
  ...optionalName(nameOf(c.authorId), 'authorName'),
  body: c.body,
  createdAt: c.createdAt,
});

export const toMemberOutput = (m: Member): MemberOutput => ({
  userId: m.userId,
  name: m.name,
  email: m.email,
  role: m.role,
  timeZone: m.timeZone,
  status: m.status,
});

const optionalName = <K extends string>(name: string | undefined, key: K): Partial<Record<K, string>> =>
  (name === undefined ? {} : { [key]: name }) as Partial<Record<K, string>>;

/** Reads a task of the caller's workspace; an id of another workspace is simply not there. */
/** The id a task reference names: a key in any spelling (`DEMO-42`, `#42`, `42`) or the id itself. */
export const taskIdOf = (services: WorkspaceServices, principal: Principal, ref: string, param = 'taskId'): Promise<string> =>
  services.numbers.idOrRefuse(principal, ref, param);

/** Reads a task of the caller's workspace by key or id; an id of another workspace is simply not there. */
export const taskOrRefuse = async (services: WorkspaceServices, principal: Principal, ref: string, param = 'taskId'): Promise<Task> => {
  const taskId = await taskIdOf(services, principal, ref, param);
  const task = await services.tasks.getAny(principal.workspaceId, taskId);
  if (!task) throw new NotFoundRefusal(`Task ${ref} was not found in this workspace; tasks_search finds tasks and their keys.`);
  if (task.deletedAt) {
    throw new NotFoundRefusal(
      `Task ${ref} was deleted (${task.deletedAt}); activity_list with task shows who deleted it, and change_undo of that change restores it.`,
    );
  }
  return task;
};

export const projectOrRefuse = async (services: WorkspaceServices, principal: Principal, projectId: string): Promise<Project> => {
  const project = await services.projects.getAny(principal.workspaceId, projectId);
  if (!project || project.deletedAt)
    throw new NotFoundRefusal(
      project
        ? `Project ${projectId} was deleted (${project.deletedAt}); activity_list kind project shows the change, and change_undo of it restores it.`
        : `Project ${projectId} was not found in this workspace; projects_list lists projects and their ids.`,
    );
  return project;
};

/** `me`, `none` (only where `allowNone`) or a member's user id; anything else names the parameter. */
export const resolveAssignee = async (
  services: WorkspaceServices,
  principal: Principal,
  value: string,
  param: string,
): Promise<string | null> => {
  if (value === 'me') return principal.userId;
  if (value === 'none') return null;
  // Checked against the snapshot; one that lacks the id is read again before the id is refused.
  const member = (await services.names.get(principal, { members: [value] })).members.get(value);
  if (!member)
    throw new InvalidArgumentRefusal(`${param}: no member ${value} in this workspace; use "me", "none" or a userId from members_list.`);
  return member.userId;
};

/** A project id given as an argument, archived or not, checked against the directory snapshot. */
export const projectArgOrRefuse = async (
  services: WorkspaceServices,
  principal: Principal,
  projectId: string,
  param: string,
): Promise<Project> => {
  const project = (await services.names.get(principal, { projects: [projectId] })).projects.get(projectId);
  if (!project) throw new InvalidArgumentRefusal(`${param}: no project ${projectId} in this workspace; projects_list lists them.`);
  return project;
};

/** A project that takes tasks: it exists in this workspace and is not archived. */
export const activeProjectOrRefuse = async (
  services: WorkspaceServices,
  principal: Principal,
  projectId: string,
  param: string,
): Promise<Project> => {
  const project = await projectArgOrRefuse(services, principal, projectId, param);
  if (project.status === 'archived') {
    throw new InvalidArgumentRefusal(
      `${param}: project ${project.name} [${projectId}] is archived; restore it with project_update (archived: false) first.`,
    );
  }
  return project;
};
