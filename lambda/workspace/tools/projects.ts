import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { ConflictRefusal, InvalidArgumentRefusal } from '../../errors.js';
import type { ToolContext } from '../../mcp/tool-registry.js';
import type { Principal } from '../../vocabulary.js';
import type { ActivityAction } from '../activity.js';
import { activityIdOutput, commitWithRecord, projectRecord, sourceOf, undoLine } from '../changes.js';
import { confirmation, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { requireRole } from '../membership.js';
import type { Project } from '../model.js';
import { cursorFor, isString, positionFrom } from '../paging.js';
import { moreLine, projectBlock, projectLine } from '../render.js';
import { dateOut, idArg, listFields, pagingArgs, projectOutput, versionArg } from '../schemas.js';
import type { WorkspaceServices } from '../services.js';
import { dateInZone } from '../time.js';
import { projectOrRefuse, toProjectOutput } from '../views.js';
import { CREATE, READ, REMOVE, UPDATE } from './annotations.js';

const projectIdArg = idArg('project');
const nameArg = z.string().check(z.trim(), z.minLength(1), z.maxLength(120));
const descriptionArg = z.string().check(z.maxLength(2000));

const currentProject = async (services: WorkspaceServices, principal: Principal, projectId: string, version?: number): Promise<Project> => {
  const project = await projectOrRefuse(services, principal, projectId);
  if (version !== undefined && version !== project.version) {
    throw new ConflictRefusal(
      `Conflict: project ${projectId} is at version ${project.version}, not ${version}; someone changed it. Read it again (project_get) and retry with version ${project.version}.`,
    );
  }
  return project;
};

const changedProjectOutput = z.extend(projectOutput, activityIdOutput);

/**
 * Writes `next` over `project` (or as new) with its record and the directory's version bump (every
 * instance's names snapshot reads it again), all in one write.
 */
const writeProject = async (ctx: ToolContext<WorkspaceServices>, action: ActivityAction, project: Project | undefined, next: Project) => {
  const { services } = ctx;
  const record = projectRecord(services, sourceOf(ctx), action, project, next);
  await commitWithRecord(services, [services.projects.putOp(next, project?.version), services.names.changeOp(next.workspaceId)], record);
  services.names.forget(next.workspaceId);
  return { ...toProjectOutput(next), activityId: record.activityId };
};

// ---- projects_list ------------------------------------------------------------------------------

const listInput = z.strictObject({
  includeArchived: z._default(z.boolean(), false).check(z.describe('Also list archived projects')),
  ...pagingArgs,
});
const listOutput = z.object({ ...listFields, projects: z.array(projectOutput) });

export const projectsList = defineTool({
  name: 'projects_list',
  title: 'List projects',
  description: 'Lists the projects with their projectIds (archived too with includeArchived).',
  input: listInput,
  output: listOutput,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const after = await positionFrom(ctx, args, isString);
    const page = await ctx.services.projects.list(ctx.principal.workspaceId, { includeArchived: args.includeArchived }, args.limit, after);
    return {
      returned: page.projects.length,
      truncated: page.next !== undefined,
      ...(page.next ? { nextCursor: await cursorFor(ctx, args, page.next) } : {}),
      projects: page.projects.map(toProjectOutput),
    };
  },
  render: (r) =>
    r.returned === 0
      ? 'No projects.'
      : `${r.returned} project(s):\n${r.projects.map(projectLine).join('\n')}${moreLine(r.truncated, r.returned)}`,
});

// ---- project_get --------------------------------------------------------------------------------

const getInput = z.strictObject({ projectId: projectIdArg });
const getOutput = z.object({
  project: projectOutput,
  today: dateOut,
  counts: z.object({
    open: z.number().check(z.int()),
    overdue: z.number().check(z.int()),
    dueToday: z.number().check(z.int()),
    done: z.number().check(z.int()),
  }),
});

export const projectGet = defineTool({
  name: 'project_get',
  title: 'Read a project',
  description: 'One project with counts of its open, overdue, due-today and done tasks; tasks_search with project lists them.',
  input: getInput,
  output: getOutput,
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, { services, principal, now }) => {
    const today = dateInZone(now, principal.timeZone);
    const [project, tasks] = await Promise.all([
      projectOrRefuse(services, principal, args.projectId),
      services.tasks.all(principal.workspaceId, { status: 'any', projectId: args.projectId }),
    ]);
    const open = tasks.filter((t) => t.status === 'open');
    return {
      project: toProjectOutput(project),
      today,
      counts: {
        open: open.length,
        overdue: open.filter((t) => t.dueDate !== undefined && t.dueDate < today).length,
        dueToday: open.filter((t) => t.dueDate === today).length,
        done: tasks.length - open.length,
      },
    };
  },
  render: (r) =>
    `${projectBlock(r.project)}\n${r.counts.open} open task(s), ${r.counts.overdue} overdue, ${r.counts.dueToday} due today, ${r.counts.done} done.`,
});

// ---- project_create -----------------------------------------------------------------------------

const createInput = z.strictObject({ name: nameArg, description: z.optional(descriptionArg) });

export const projectCreate = defineTool({
  name: 'project_create',
  title: 'Create a project',
  description: 'Creates a project (admins); calling it twice makes two, so check projects_list first.',
  input: createInput,
  output: changedProjectOutput,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { principal, now } = ctx;
    requireRole(principal, 'admin', 'creating a project');
    const at = now.toISOString();
    const project: Project = {
      workspaceId: principal.workspaceId,
      projectId: randomUUID(),
      name: args.name,
      ...(args.description ? { description: args.description } : {}),
      status: 'active',
      createdBy: principal.userId,
      createdAt: at,
      updatedAt: at,
      version: 1,
    };
    return writeProject(ctx, 'created', undefined, project);
  },
  render: (p) => `Created project:\n${projectBlock(p)}${undoLine(p.activityId)}`,
});

// ---- project_update -----------------------------------------------------------------------------

const updateInput = z.strictObject({
  projectId: projectIdArg,
  version: versionArg.check(z.describe('The version read')),
  name: z.optional(nameArg),
  description: z.optional(z.nullable(descriptionArg)).check(z.describe('null clears it')),
  archived: z.optional(z.literal(false)).check(z.describe('false restores it')),
});

export const projectUpdate = defineTool({
  name: 'project_update',
  title: 'Change a project',
  description: 'Renames a project, changes its description or restores an archived one (admins). A stale version is a conflict.',
  input: updateInput,
  output: changedProjectOutput,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    requireRole(principal, 'admin', 'changing a project');
    const { projectId, version, ...changes } = args;
    if (Object.values(changes).every((v) => v === undefined))
      throw new InvalidArgumentRefusal('arguments: name at least one field to change.');
    const project = await currentProject(services, principal, projectId, version);
    const { description: _d, archivedAt: _a, ...kept } = project;
    const description = changes.description === undefined ? project.description : (changes.description ?? undefined);
    const restore = changes.archived === false;
    const next: Project = {
      ...kept,
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(description ? { description } : {}),
      status: restore ? 'active' : project.status,
      ...(!restore && project.archivedAt ? { archivedAt: project.archivedAt } : {}),
      updatedAt: now.toISOString(),
      version: project.version + 1,
    };
    return writeProject(ctx, restore && project.status === 'archived' ? 'unarchived' : 'changed', project, next);
  },
  render: (p) => `Updated project:\n${projectBlock(p)}${undoLine(p.activityId)}`,
});

// ---- project_archive / project_delete -----------------------------------------------------------

const removeInput = z.strictObject({
  projectId: projectIdArg,
  version: z.optional(versionArg).check(z.describe('If given, must be current')),
});

export const projectArchive = defineTool({
  name: 'project_archive',
  title: 'Archive a project',
  description: 'Archives a project (admins): it leaves projects_list and takes no new tasks; its tasks stay. Prefer it to project_delete.',
  input: removeInput,
  output: changedProjectOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    requireRole(principal, 'admin', 'archiving a project');
    const project = await currentProject(services, principal, args.projectId, args.version);
    if (project.status === 'archived') return toProjectOutput(project);
    const at = now.toISOString();
    const next: Project = { ...project, status: 'archived', archivedAt: at, updatedAt: at, version: project.version + 1 };
    return writeProject(ctx, 'archived', project, next);
  },
  render: (p) => `Archived project:\n${projectBlock(p)}${undoLine(p.activityId)}`,
});

const deleteOutput = z.object({
  projectId: z.string(),
  name: z.string(),
  deleted: z.boolean().check(z.describe('false when the person declined or cancelled: nothing changed')),
  declined: z.optional(z.enum(['declined', 'cancelled'])),
  ...activityIdOutput,
});

export const projectDelete = defineTool({
  name: 'project_delete',
  title: 'Delete a project',
  description: 'Deletes an empty project (admins), asking the person first where the client can; change_undo restores it.',
  input: removeInput,
  output: deleteOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    requireRole(principal, 'admin', 'deleting a project');
    const project = await currentProject(services, principal, args.projectId, args.version);
    const held = await services.tasks.search(principal.workspaceId, { status: 'any', projectId: project.projectId }, 1);
    if (held.tasks.length) {
      throw new ConflictRefusal(
        `Conflict: project ${project.name} [${project.projectId}] still holds tasks; move or delete them (tasks_search with project), or archive it instead.`,
      );
    }
    const asked = confirmation(
      ctx,
      { id: project.projectId, state: `v${project.version}` },
      `Delete the project '${project.name}'? It holds no tasks. You can undo this for ${services.activity.retentionDays} days.`,
      'Delete the project',
    );
    if (asked.kind === 'ask') return asked.request;
    if (asked.kind !== 'proceed') return { projectId: project.projectId, name: project.name, deleted: false, declined: asked.kind };
    const at = now.toISOString();
    const deleted: Project = { ...project, deletedAt: at, updatedAt: at, version: project.version + 1 };
    const record = projectRecord(services, sourceOf(ctx), 'deleted', project, deleted);
    await commitWithRecord(
      services,
      [services.projects.putOp(deleted, project.version, record.expiresAt), services.names.changeOp(principal.workspaceId)],
      record,
    );
    services.names.forget(principal.workspaceId);
    return { projectId: project.projectId, name: project.name, deleted: true, activityId: record.activityId };
  },
  render: (d) =>
    d.deleted
      ? `Deleted project [${d.projectId}] ${d.name}.${undoLine(d.activityId)}`
      : notConfirmedText(d.declined ?? 'declined', `deleting project [${d.projectId}] ${d.name}`),
});

export const PROJECT_TOOLS = [projectsList, projectGet, projectCreate, projectUpdate, projectArchive, projectDelete];
