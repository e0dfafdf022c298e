import * as z from 'zod/mini';
import { requireRole } from '../../membership/rules.js';
import { planFields } from '../../model/custom-fields.js';
import { moveToWithoutStatuses, nothingToChange, versionConflict } from '../../model/refusals.js';
import { NO_STATUSES, type PlannedSet, planStatusSet } from '../../model/status-sets.js';
import { setOf } from '../../model/statuses.js';
import { dateInZone } from '../../model/time.js';
import type { Project } from '../../model/types.js';
import { changeProject, createProject, refuseUnlessEmpty } from '../../projects/project-writer.js';
import { projectOrRefuse } from '../../store/lookups.js';
import { ASKS_FIRST, confirmation, NOT_CONFIRMED, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { toProjectOutput, toStatusesOutput } from '../outputs.js';
import { cursorFor, isString, positionFrom } from '../paging.js';
import { moreLine, projectBlock, projectLine, undoLine } from '../render.js';
import {
  activityIdOutput,
  dateOut,
  fieldsArg,
  idArg,
  listFields,
  newFieldsArg,
  pagingArgs,
  projectOutput,
  statusesArg,
  statusesOutput,
  versionArg,
} from '../schemas.js';
import { writeContext } from '../sources.js';
import { CREATE, READ, REMOVE, UPDATE } from './annotations.js';

const projectIdArg = idArg;
const nameArg = z.string().check(z.trim(), z.minLength(1), z.maxLength(120));
const descriptionArg = z.string().check(z.maxLength(2000));

const changedProjectOutput = z.extend(projectOutput, activityIdOutput);
/** project_create's and project_update's answer: the project with its statuses, and where removed ones' tasks went. */
const createdOutput = z.extend(changedProjectOutput, { statuses: statusesOutput });
const statusedOutput = z.extend(createdOutput, {
  moved: z.optional(z.array(z.string())).check(z.describe('Removed → where its tasks went')),
  declined: z.optional(z.enum(NOT_CONFIRMED)),
});
type StatusedOutput = z.output<typeof statusedOutput>;

/**
 * What the listing shows of a changed project: what a client acts on next (its id and version, the
 * change's id, whether the person declined); the rest (who made it and when, its description) is in
 * the answer and its text. Some 500 bytes of every listing of every group.
 */
const listedChange = z.object({
  projectId: z.string(),
  name: z.string(),
  status: z.string(),
  version: z.number(),
  ...activityIdOutput,
  declined: z.optional(z.string()),
});

const statusedOf = (p: Project, activityId?: string, moved?: PlannedSet['removed']): StatusedOutput => ({
  ...toProjectOutput(p),
  statuses: toStatusesOutput(p),
  ...(activityId ? { activityId } : {}),
  ...(moved?.some((r) => r.to) ? { moved: moved.flatMap((r) => (r.to ? [`${r.status.name} → ${r.to.name}`] : [])) } : {}),
});

const statusesLine = (p: Pick<StatusedOutput, 'statuses' | 'moved'>): string =>
  `\nStatuses: ${p.statuses.map((s) => `${s.name} (${s.category})`).join(', ')}${
    p.moved?.length ? `\nRemoved (its tasks now read as the other): ${p.moved.join(', ')}` : ''
  }`;

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
  listedOutput: z.object({ ...listFields, projects: z.array(z.object({ projectId: z.string(), name: z.string(), status: z.string() })) }),
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
  render: (r) => (r.returned === 0 ? 'No projects.' : `${r.returned} project(s):\n${r.projects.map(projectLine).join('\n')}${moreLine(r)}`),
});

// ---- project_get --------------------------------------------------------------------------------

const getOutput = z.object({
  project: projectOutput,
  statuses: statusesOutput,
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
  description: 'One project, its statuses and counts of open, overdue, due-today and done tasks; tasks_search lists them.',
  input: z.strictObject({ projectId: projectIdArg }),
  output: getOutput,
  // Its statuses, counts and custom fields; who made it and when are in its text.
  listedOutput: z.object({
    project: z.object({
      projectId: z.string(),
      name: z.string(),
      status: z.string(),
      version: z.number(),
      fields: z.optional(z.array(z.object({ name: z.string(), type: z.string(), options: z.optional(z.array(z.string())) }))),
    }),
    statuses: statusesOutput,
    today: dateOut,
    counts: z.object({ open: z.number(), overdue: z.number(), dueToday: z.number(), done: z.number() }),
  }),
  annotations: READ,
  scope: 'tasks:read',
  run: async (args, { services, principal, now }) => {
    const today = dateInZone(now, principal.timeZone);
    // The counts the project's changes keep (one read, whatever its size).
    const [project, counts] = await Promise.all([
      projectOrRefuse(services, principal, args.projectId),
      services.tasks.counts(principal, { projectId: args.projectId }, today, now.toISOString(), now.toISOString()),
    ]);
    return {
      project: toProjectOutput(project),
      statuses: toStatusesOutput(project),
      today,
      counts: { open: counts.open, overdue: counts.overdue, dueToday: counts.dueToday, done: counts.done },
    };
  },
  render: (r) =>
    `${projectBlock(r.project)}\nStatuses: ${r.statuses.map((s) => s.name).join(', ')}\n${r.counts.open} open task(s), ${r.counts.overdue} overdue, ${r.counts.dueToday} due today, ${r.counts.done} done.`,
});

// ---- project_create -----------------------------------------------------------------------------

export const projectCreate = defineTool({
  name: 'project_create',
  title: 'Create a project',
  description: "Creates a project (admins), with its own statuses or the workspace's; each call makes one, so check projects_list first.",
  input: z.strictObject({
    name: nameArg,
    description: z.optional(descriptionArg),
    statuses: z.optional(statusesArg),
    fields: z.optional(newFieldsArg),
  }),
  output: createdOutput,
  listedOutput: listedChange,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const statusSet = args.statuses ? planStatusSet(NO_STATUSES, args.statuses, undefined).set : undefined;
    const fields = args.fields ? planFields([], args.fields).fields : undefined;
    const w = await createProject(writeContext(ctx), { name: args.name, description: args.description, statusSet, fields });
    return statusedOf(w.project, w.record.activityId);
  },
  render: (p) => `Created project:\n${projectBlock(p)}${statusesLine(p)}${undoLine(p.activityId)}`,
});

// ---- project_update -----------------------------------------------------------------------------

export const projectUpdate = defineTool({
  name: 'project_update',
  title: 'Change a project',
  description: `Changes a project's name, description, statuses (removing one asks where its tasks go) or custom fields, or restores an archived one (admins). ${ASKS_FIRST}`,
  input: z.strictObject({
    projectId: projectIdArg,
    version: versionArg.check(z.describe('The version read')),
    name: z.optional(nameArg),
    description: z.optional(z.nullable(descriptionArg)).check(z.describe('null clears it')),
    archived: z.optional(z.literal(false)).check(z.describe('false restores it')),
    statuses: z.optional(statusesArg),
    moveTo: z.optional(z.record(z.string(), z.string())).check(z.describe('A removed status → where its tasks go')),
    fields: z.optional(fieldsArg),
  }),
  output: statusedOutput,
  listedOutput: listedChange,
  annotations: UPDATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'admin', 'changing a project');
    const { projectId, version, statuses, moveTo, fields, ...changes } = args;
    if (Object.values(changes).every((v) => v === undefined) && !statuses && !fields) {
      if (moveTo) throw moveToWithoutStatuses();
      throw nothingToChange();
    }
    const project = await projectOrRefuse(services, principal, projectId);
    if (version !== project.version) throw versionConflict(`project ${project.projectId}`, project.version, version, 'project_get');
    let plan = statuses ? planStatusSet(setOf(project), statuses, moveTo) : undefined;
    const fieldsPlan = fields ? planFields(project.fields ?? [], fields) : undefined;
    if (fieldsPlan?.removed.length) {
      // A field removed takes its values with it (an undo brings both back): asked first, as a removed status is.
      const names = fieldsPlan.removed.map((f) => `'${f.name}'`).join(', ');
      const asked = confirmation(
        ctx,
        { id: project.projectId, state: `v${project.version}:fields` },
        `Remove the field${fieldsPlan.removed.length > 1 ? 's' : ''} ${names} of '${project.name}', and the values its tasks have there? You can undo this for ${services.activity.retentionDays} days.`,
        'Remove the fields',
      );
      if (asked.kind === 'ask') return asked.request;
      if (asked.kind !== 'proceed') return { ...statusedOf(project), declined: asked.kind };
    }
    if (plan?.removed.length) {
      // Asked where the tasks of each removed status go, with the planned answer chosen.
      const choices = Object.fromEntries(
        plan.removed.flatMap((r, i) =>
          r.to && r.choices.length > 1
            ? [[`to${i}`, { title: `Tasks in ${r.status.name} go to`, options: r.choices.map((c) => c.name), proposed: r.to.name }]]
            : [],
        ),
      );
      const removedWords = plan.removed
        .map((r) =>
          r.to ? `${r.status.name} (its tasks go to ${r.to.name})` : `${r.status.name} (no longer offered; its tasks stay as they are)`,
        )
        .join(', ');
      const asked = confirmation(
        ctx,
        { id: project.projectId, state: `v${project.version}` },
        `Change the statuses of '${project.name}' to ${plan.set.statuses.map((s) => s.name).join(', ')}, removing ${removedWords}? You can undo this for ${services.activity.retentionDays} days.`,
        'Change the statuses',
        choices,
      );
      if (asked.kind === 'ask') return asked.request;
      if (asked.kind !== 'proceed') return { ...statusedOf(project), declined: asked.kind };
      if (asked.chosen) {
        const chosen = Object.fromEntries(
          plan.removed.flatMap((r, i) => (asked.chosen?.[`to${i}`] ? [[r.status.name, asked.chosen[`to${i}`]!]] : [])),
        );
        plan = planStatusSet(setOf(project), statuses!, { ...moveTo, ...chosen });
      }
    }
    const w = await changeProject(
      writeContext(ctx),
      project,
      { ...changes, ...(plan ? { statusSet: plan.set } : {}), ...(fieldsPlan ? { fields: fieldsPlan.fields } : {}) },
      { expectVersion: version },
    );
    return w ? statusedOf(w.project, w.record.activityId, plan?.removed) : statusedOf(project);
  },
  render: (p) =>
    p.declined
      ? notConfirmedText(p.declined, `changing the statuses of project [${p.projectId}] ${p.name}`)
      : p.activityId
        ? `Updated project:\n${projectBlock(p)}${statusesLine(p)}${undoLine(p.activityId)}`
        : `Unchanged (it was so already):\n${projectBlock(p)}${statusesLine(p)}`,
});

// ---- project_archive / project_delete -----------------------------------------------------------

const removeInput = z.strictObject({
  projectId: projectIdArg,
  version: z.optional(versionArg).check(z.describe('Checked if given')),
});

export const projectArchive = defineTool({
  name: 'project_archive',
  title: 'Archive a project',
  description: 'Archives a project (admins): out of projects_list, no new tasks; its tasks stay. Prefer it to project_delete.',
  input: removeInput,
  output: changedProjectOutput,
  listedOutput: listedChange,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'admin', 'archiving a project');
    const project = await projectOrRefuse(services, principal, args.projectId);
    const w = await changeProject(
      writeContext(ctx),
      project,
      { archived: true },
      args.version !== undefined ? { expectVersion: args.version } : {},
    );
    return w ? { ...toProjectOutput(w.project), activityId: w.record.activityId } : toProjectOutput(project);
  },
  render: (p) => `${p.activityId ? 'Archived project' : 'Archived already'}:\n${projectBlock(p)}${undoLine(p.activityId)}`,
});

const deleteOutput = z.object({
  projectId: z.string(),
  name: z.string(),
  deleted: z.boolean().check(z.describe('false when the person did not confirm: nothing changed')),
  declined: z.optional(z.enum(NOT_CONFIRMED)),
  ...activityIdOutput,
});

export const projectDelete = defineTool({
  name: 'project_delete',
  title: 'Delete a project',
  description: `Deletes an empty project (admins); change_undo restores it. ${ASKS_FIRST}`,
  input: removeInput,
  output: deleteOutput,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    requireRole(principal, 'admin', 'deleting a project');
    const project = await projectOrRefuse(services, principal, args.projectId);
    if (args.version !== undefined && args.version !== project.version) {
      throw versionConflict(`project ${project.projectId}`, project.version, args.version, 'project_get');
    }
    // Refused before the person is asked: a project with tasks is never deleted.
    await refuseUnlessEmpty(writeContext(ctx), project);
    const asked = confirmation(
      ctx,
      { id: project.projectId, state: `v${project.version}` },
      `Delete the project '${project.name}'? It holds no tasks. You can undo this for ${services.activity.retentionDays} days.`,
      'Delete the project',
    );
    if (asked.kind === 'ask') return asked.request;
    if (asked.kind !== 'proceed') return { projectId: project.projectId, name: project.name, deleted: false, declined: asked.kind };
    const w = await changeProject(writeContext(ctx), project, { deleted: true }, { expectVersion: project.version, checkedEmpty: true });
    return { projectId: project.projectId, name: project.name, deleted: true, activityId: w!.record.activityId };
  },
  render: (d) =>
    d.deleted
      ? `Deleted project [${d.projectId}] ${d.name}.${undoLine(d.activityId)}`
      : notConfirmedText(d.declined ?? 'declined', `deleting project [${d.projectId}] ${d.name}`),
});

export const PROJECT_TOOLS = [projectsList, projectGet, projectCreate, projectUpdate, projectArchive, projectDelete];
