import * as z from 'zod/mini';
import { checkQuery, MAX_QUERY_LENGTH } from '../../model/query.js';
import { viewNotFound } from '../../model/refusals.js';
import { queryOfView, VIEW_GROUPS, type View } from '../../model/views.js';
import { changeView, deleteView, saveView } from '../../saved-views/view-writer.js';
import { loadNames } from '../../store/lookups.js';
import { defineTool } from '../define-tool.js';
import { undoLine } from '../render.js';
import { activityIdOutput } from '../schemas.js';
import { writeContext } from '../sources.js';
import { customFieldNames, planQuery } from '../task-query.js';
import { CREATE, READ, REMOVE } from './annotations.js';

/**
 * Saved views (docs/workspace.md, "Views"): a query with a name, a sort and a grouping, a person's
 * own or shared with the workspace; tasks_search runs one by name, and the board and agenda views
 * open one.
 */

const viewOutput = z.object({
  viewId: z.string(),
  name: z.string(),
  query: z.string(),
  sort: z.optional(z.string()),
  group: z.enum(VIEW_GROUPS),
  shared: z.boolean(),
  ownerId: z.string(),
  ownerName: z.optional(z.string()),
  version: z.number().check(z.int()),
});

/** A view as listed: what names it and what it runs (the answers carry its owner and version too). */
const viewListed = z.object({ viewId: z.string(), name: z.string(), query: z.string(), group: z.string(), shared: z.boolean() });
const changedViewListed = z.object({ viewId: z.string(), name: z.string(), activityId: z.string() });

const toViewOutput = (v: View, ownerName?: string): z.input<typeof viewOutput> => ({
  viewId: v.viewId,
  name: v.name,
  query: v.query,
  ...(v.sort ? { sort: v.sort } : {}),
  group: v.group,
  shared: v.shared,
  ownerId: v.ownerId,
  ...(ownerName ? { ownerName } : {}),
  version: v.version,
});

const viewLine = (v: z.output<typeof viewOutput>): string =>
  `- ${v.name} (${v.viewId}): ${queryOfView(v) || '(every open task)'} · by ${v.group}${v.shared ? ` · shared${v.ownerName ? ` by ${v.ownerName}` : ''}` : ' · yours'}`;

export const viewSave = defineTool({
  name: 'view_save',
  title: 'Save a view',
  description:
    'Saves a query under a name (tasks_search view runs it; the board opens it); shared: the whole workspace sees it. viewId changes one.',
  input: z.strictObject({
    name: z.string().check(z.trim(), z.minLength(1), z.maxLength(60)),
    query: z.string().check(z.trim(), z.maxLength(MAX_QUERY_LENGTH)).check(z.describe("tasks_search's query language")),
    sort: z
      .optional(z.string().check(z.trim(), z.regex(/^[a-zA-Z]+(-(asc|desc))?$/), z.maxLength(30)))
      .check(z.describe('due, priority, created, updated, completed, title or key; -desc')),
    group: z._default(z.enum(VIEW_GROUPS), 'list'),
    shared: z._default(z.boolean(), false),
    viewId: z.optional(z.string().check(z.minLength(1), z.maxLength(100))).check(z.describe('Changes this view instead')),
  }),
  output: z.extend(viewOutput, activityIdOutput),
  listedOutput: changedViewListed,
  annotations: CREATE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
    const fields = { name: args.name, query: args.query, sort: args.sort, group: args.group, shared: args.shared };
    const [names, was] = await Promise.all([
      loadNames(services, principal),
      args.viewId === undefined ? undefined : services.views.find(principal.workspaceId, principal.userId, args.viewId),
    ]);
    if (args.viewId !== undefined && (!was || was.viewId !== args.viewId)) throw viewNotFound(args.viewId, 'viewId');
    // Read as tasks_search would run it: a name or date no one can read is refused now, not later.
    await planQuery(services, principal, names, now, queryOfView(fields), checkQuery(queryOfView(fields), customFieldNames(names)));
    const written = was ? await changeView(writeContext(ctx), was, fields) : await saveView(writeContext(ctx), fields);
    return { ...toViewOutput(written.view, principal.name), activityId: written.record.activityId };
  },
  render: (v) => `Saved view:\n${viewLine(v)}\nRun it: tasks_search view "${v.name}"${undoLine(v.activityId)}`,
});

export const viewsList = defineTool({
  name: 'views_list',
  title: 'List saved views',
  description: 'The saved views you can open: your own and the shared ones.',
  input: z.strictObject({}),
  output: z.object({ views: z.array(viewOutput) }),
  listedOutput: z.object({ views: z.array(viewListed) }),
  annotations: READ,
  scope: 'tasks:read',
  run: async (_args, { services, principal }) => {
    const [views, names] = await Promise.all([
      services.views.visible(principal.workspaceId, principal.userId),
      loadNames(services, principal),
    ]);
    return { views: views.map((v) => toViewOutput(v, names.members.get(v.ownerId)?.name)) };
  },
  render: (r) =>
    r.views.length ? `${r.views.length} view(s):\n${r.views.map(viewLine).join('\n')}` : 'No saved views yet (view_save makes one).',
});

export const viewDelete = defineTool({
  name: 'view_delete',
  title: 'Delete a saved view',
  description: 'Deletes a saved view by name or id (change_undo puts it back).',
  input: z.strictObject({ view: z.string().check(z.trim(), z.minLength(1), z.maxLength(100)) }),
  output: z.extend(viewOutput, activityIdOutput),
  listedOutput: changedViewListed,
  annotations: REMOVE,
  scope: 'tasks:write',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    const view = await services.views.find(principal.workspaceId, principal.userId, args.view);
    if (!view) throw viewNotFound(args.view);
    const written = await deleteView(writeContext(ctx), view);
    return { ...toViewOutput(view), activityId: written.record.activityId };
  },
  render: (v) => `Deleted view '${v.name}'.${undoLine(v.activityId)}`,
});

export const VIEW_TOOLS = [viewSave, viewsList, viewDelete];
