import type { Caller } from '../model/caller.js';
import { assigneeNotMember, projectArchived, projectDeleted, projectNotFound, taskDeleted, taskNotFound } from '../model/refusals.js';
import { DEFAULT_SET, type StatusSet, setOf } from '../model/statuses.js';
import type { Project, Task } from '../model/types.js';
import type { Names } from './names.js';
import type { WorkspaceStores } from './stores.js';

/**
 * What the domain looks up by a caller's reference, refused by name when it names nothing here. An
 * id of another workspace is simply not here: every key is built under the caller's own workspace.
 */

/**
 * The names a view shows, from the instance's directory snapshot (usually no request at all). A
 * name made elsewhere a moment ago may be missing for up to DOERS_AUTH_CACHE_SECONDS; the view then
 * shows the id alone, which is always right.
 */
export const loadNames = async (stores: Pick<WorkspaceStores, 'names'>, caller: Caller): Promise<Names> => ({
  ...(await stores.names.get(caller)),
  workspaceKey: caller.workspaceKey,
});

/** The id a task reference names: a key in any spelling (`DEMO-42`, `#42`, `42`) or the id itself. */
export const taskIdOf = (stores: WorkspaceStores, caller: Caller, ref: string, param = 'taskId'): Promise<string> =>
  stores.numbers.idOrRefuse(caller, ref, param);

/** Reads a task of the caller's workspace by key or id; a deleted one is refused saying how to restore it. */
export const taskOrRefuse = async (stores: WorkspaceStores, caller: Caller, ref: string, param = 'taskId'): Promise<Task> => {
  const taskId = await taskIdOf(stores, caller, ref, param);
  const task = await stores.tasks.getAny(caller.workspaceId, taskId);
  if (!task) throw taskNotFound(ref, param);
  if (task.deletedAt) throw taskDeleted(ref, task.deletedAt, param);
  return task;
};

export const projectOrRefuse = async (
  stores: WorkspaceStores,
  caller: Caller,
  projectId: string,
  param = 'projectId',
): Promise<Project> => {
  const project = await stores.projects.getAny(caller.workspaceId, projectId);
  if (!project) throw projectNotFound(projectId, param);
  if (project.deletedAt) throw projectDeleted(projectId, project.deletedAt, param);
  return project;
};

/** `me`, `none` (→ null) or a member's user id; anything else names the parameter. */
export const resolveAssignee = async (stores: WorkspaceStores, caller: Caller, value: string, param: string): Promise<string | null> => {
  if (value === 'me') return caller.userId;
  if (value === 'none') return null;
  return memberIdOrRefuse(stores, caller, value, param);
};

/** A member's user id, checked against the snapshot; one that lacks it is read again before the id is refused. */
export const memberIdOrRefuse = async (stores: WorkspaceStores, caller: Caller, userId: string, param: string): Promise<string> => {
  const member = (await stores.names.get(caller, { members: [userId] })).members.get(userId);
  if (!member) throw assigneeNotMember(param, userId);
  return member.userId;
};

/** A project id given as an argument, archived or not, checked against the directory snapshot. */
export const projectArgOrRefuse = async (stores: WorkspaceStores, caller: Caller, projectId: string, param: string): Promise<Project> => {
  const project = (await stores.names.get(caller, { projects: [projectId] })).projects.get(projectId);
  if (!project) throw projectNotFound(projectId, param);
  return project;
};

/** A project that takes tasks: it exists in this workspace and is not archived. */
export const activeProjectOrRefuse = async (
  stores: WorkspaceStores,
  caller: Caller,
  projectId: string,
  param: string,
): Promise<Project> => {
  const project = await projectArgOrRefuse(stores, caller, projectId, param);
  if (project.status === 'archived') throw projectArchived(param, project.name, projectId);
  return project;
};

/** The statuses a task of this project is in (the workspace's without one), from the directory snapshot. */
export const statusSetOf = async (stores: WorkspaceStores, caller: Caller, projectId: string | undefined): Promise<StatusSet> =>
  projectId ? setOf((await stores.names.get(caller, { projects: [projectId] })).projects.get(projectId)) : DEFAULT_SET;
