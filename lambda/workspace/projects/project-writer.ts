import { randomUUID } from 'node:crypto';
import { projectRecord } from '../activity/records.js';
import { requireRole } from '../membership/rules.js';
import type { ActivityRecord } from '../model/activity.js';
import type { FieldDef } from '../model/custom-fields.js';
import { projectHoldsTasks, versionConflict } from '../model/refusals.js';
import { DEFAULT_SET, type StatusSet, setOf } from '../model/statuses.js';
import type { Project } from '../model/types.js';
import { writeClaimed } from '../store/confirmed.js';
import type { WriteContext } from '../store/stores.js';
import { writesOf } from '../store/writes.js';

/**
 * The one writer of projects, for every door (the tools and change_undo): admins only, each change
 * held to the version read, written with its record and the directory's version bump (every
 * instance's names snapshot reads it again) in one write. A project is deleted only while it holds
 * no tasks, whoever asks (an undo of its creation too).
 */

export interface ProjectPatch {
  readonly name?: string | undefined;
  readonly description?: string | null | undefined;
  /** true archives it, false restores an archived one. */
  readonly archived?: boolean | undefined;
  /** true deletes it (kept for undo), false restores it. */
  readonly deleted?: boolean | undefined;
  /** Its statuses as model/status-sets.ts planned them (the workspace's: DEFAULT_SET). */
  readonly statusSet?: StatusSet | undefined;
  /** Its custom fields as model/custom-fields.ts planned them, all of them (none: an empty list). */
  readonly fields?: readonly FieldDef[] | undefined;
}

/** What a project stores of its statuses: nothing while they are the workspace's. */
const statusFields = (set: StatusSet): Pick<Project, 'statuses' | 'retiredStatuses'> =>
  set === DEFAULT_SET ? {} : { statuses: set.statuses, ...(set.retired.length ? { retiredStatuses: set.retired } : {}) };

export interface ProjectChangeOptions {
  readonly expectVersion?: number;
  readonly undoes?: ActivityRecord;
  /**
   * A delete whose caller ran `refuseUnlessEmpty` on this project a moment ago (before asking the
   * person): the writer does not read its tasks a second time.
   */
  readonly checkedEmpty?: boolean;
}

/** Refuses to delete a project that holds tasks: they would be in no list. */
export const refuseUnlessEmpty = async (ctx: WriteContext, project: Project): Promise<void> => {
  // The project's counts (kept by every change of its tasks): one read, whatever it held.
  const at = ctx.source.now.toISOString();
  const held = await ctx.stores.tasks.counts(ctx.caller, { projectId: project.projectId }, at.slice(0, 10), at, at);
  if (held.open + held.done > 0) throw projectHoldsTasks(project.name, project.projectId);
};

export interface WrittenProject {
  readonly before: Project | undefined;
  readonly project: Project;
  readonly record: ActivityRecord;
}

const write = async (
  ctx: WriteContext,
  before: Project | undefined,
  next: Project,
  opts: ProjectChangeOptions,
): Promise<WrittenProject> => {
  const { stores, caller, source } = ctx;
  const record = projectRecord(stores.activity, source, before, next, opts.undoes ? { undoOf: opts.undoes.activityId } : {});
  await writeClaimed(ctx, record.activityId, `project_get ${next.projectId} shows whether it was written.`, (claim) =>
    writesOf(stores).commit([
      ...claim,
      writesOf(stores).projects.putOp(next, before?.version, next.deletedAt ? record.expiresAt : undefined),
      writesOf(stores).names.changeOp(caller.workspaceId),
      writesOf(stores).activity.recordOp(record),
      ...(opts.undoes ? [writesOf(stores).activity.markUndoneOp(opts.undoes, record.activityId, record.at)] : []),
    ]),
  );
  stores.names.forget(caller.workspaceId);
  return { before, project: next, record };
};

export const createProject = async (
  ctx: WriteContext,
  fields: {
    readonly name: string;
    readonly description?: string | undefined;
    readonly statusSet?: StatusSet | undefined;
    readonly fields?: readonly FieldDef[] | undefined;
    /** Given by a door that names its projects (the demo seed's fixed ids); else a new one. A taken id is refused. */
    readonly projectId?: string | undefined;
  },
) => {
  requireRole(ctx.caller, 'admin', 'creating a project');
  const at = ctx.source.now.toISOString();
  const project: Project = {
    workspaceId: ctx.caller.workspaceId,
    projectId: fields.projectId ?? randomUUID(),
    name: fields.name,
    ...(fields.description ? { description: fields.description } : {}),
    ...statusFields(fields.statusSet ?? DEFAULT_SET),
    ...(fields.fields?.length ? { fields: fields.fields } : {}),
    status: 'active',
    createdBy: ctx.caller.userId,
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  return write(ctx, undefined, project, {});
};

/** Changes, archives, deletes or restores a project; undefined when nothing changes. */
export const changeProject = async (
  ctx: WriteContext,
  before: Project,
  patch: ProjectPatch,
  opts: ProjectChangeOptions = {},
): Promise<WrittenProject | undefined> => {
  const { caller, source } = ctx;
  requireRole(caller, 'admin', patch.deleted ? 'deleting a project' : patch.archived ? 'archiving a project' : 'changing a project');
  if (opts.expectVersion !== undefined && opts.expectVersion !== before.version) {
    throw versionConflict(`project ${before.projectId}`, before.version, opts.expectVersion, 'project_get');
  }
  const at = source.now.toISOString();
  if (patch.deleted === true && !before.deletedAt && !opts.checkedEmpty) await refuseUnlessEmpty(ctx, before);
  const { description: _d, archivedAt: _a, deletedAt: _x, statuses: _s, retiredStatuses: _r, fields: _f, ...kept } = before;
  const fieldDefs = patch.fields ?? before.fields ?? [];
  const description = patch.description === undefined ? before.description : (patch.description ?? undefined);
  const status = patch.archived === undefined ? before.status : patch.archived ? 'archived' : 'active';
  const archivedAt = status === 'archived' ? (before.status === 'archived' ? before.archivedAt : at) : undefined;
  const deleted = patch.deleted === undefined ? !!before.deletedAt : patch.deleted;
  const next: Project = {
    ...kept,
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(description ? { description } : {}),
    ...statusFields(patch.statusSet ?? setOf(before)),
    ...(fieldDefs.length ? { fields: fieldDefs } : {}),
    status,
    ...(archivedAt ? { archivedAt } : {}),
    ...(deleted ? { deletedAt: before.deletedAt ?? at } : {}),
    updatedAt: at,
    version: before.version + 1,
  };
  const same = (a: Project, b: Project) => {
    const strip = ({ updatedAt: _u, version: _v, statuses: s, retiredStatuses: r, fields: f, ...rest }: Project) =>
      JSON.stringify(rest, Object.keys(rest).sort()) + JSON.stringify([s, r, f]);
    return strip(a) === strip(b);
  };
  if (same(before, next)) return undefined;
  return write(ctx, before, next, opts);
};
