import type { ToolDefinition } from '../../mcp/tool-registry.js';
import type { ToolGroup } from '../../vocabulary.js';
import { linkViews } from './app-views.js';
import type { WorkspaceServices } from './services.js';
import { activityList, changeUndo } from './tools/activity.js';
import { agendaGet } from './tools/agenda.js';
import { ATTACHMENT_TOOLS } from './tools/attachments.js';
import { BULK_TOOLS } from './tools/bulk.js';
import { COMMENT_TOOLS } from './tools/comments.js';
import { INBOX_TOOLS } from './tools/inbox.js';
import { meGet, meUpdate } from './tools/me.js';
import { MEMBER_TOOLS } from './tools/members.js';
import { PROJECT_TOOLS, projectsList } from './tools/projects.js';
import { TASK_TOOLS } from './tools/tasks.js';
import { TRANSFER_TOOLS } from './tools/transfer.js';
import { VIEW_TOOLS } from './tools/views.js';

/**
 * Every tool the workspace offers, whole, in its group (docs/clients.md, "Tool groups"), with the
 * file of `tools/` it is declared in. The functions never import this: they list the tools from the
 * listing the build makes of it (tool-listing.json, lib/build-tool-listing.ts) and load a tool's file
 * on its first call (catalog.ts). The build, the tests and the fuzzers read it whole.
 */

type Tool = ToolDefinition<WorkspaceServices>;

/** The files of `lambda/workspace/surface/tools/` that declare tools: each is a chunk of the bundle. */
export const TOOL_FILES = [
  'activity',
  'agenda',
  'attachments',
  'bulk',
  'comments',
  'inbox',
  'me',
  'members',
  'projects',
  'tasks',
  'transfer',
  'views',
] as const;
export type ToolFile = (typeof TOOL_FILES)[number];

interface Declared {
  readonly group: ToolGroup;
  readonly file: ToolFile;
  readonly tools: readonly Tool[];
}

const DECLARED: readonly Declared[] = [
  // What a person needs every day: their tasks, their comments, and taking a change back.
  // projects_list too: a task's projectId is found there.
  { group: 'tasks', file: 'me', tools: [meGet] },
  { group: 'tasks', file: 'agenda', tools: [agendaGet] },
  { group: 'tasks', file: 'tasks', tools: TASK_TOOLS },
  { group: 'tasks', file: 'comments', tools: COMMENT_TOOLS },
  { group: 'tasks', file: 'activity', tools: [changeUndo] },
  { group: 'tasks', file: 'projects', tools: [projectsList] },
  // What others did that concerns you.
  { group: 'inbox', file: 'inbox', tools: INBOX_TOOLS },
  // Many tasks in one call: planning and triage sessions, imports from a list.
  { group: 'bulk', file: 'bulk', tools: BULK_TOOLS },
  // Saving and sharing queries (tasks_search runs a saved one by name in any group).
  { group: 'views', file: 'views', tools: VIEW_TOOLS },
  { group: 'projects', file: 'projects', tools: PROJECT_TOOLS.filter((t) => t !== projectsList) },
  // The team, and your own settings (time zone, e-mail).
  { group: 'people', file: 'members', tools: MEMBER_TOOLS },
  { group: 'people', file: 'me', tools: [meUpdate] },
  { group: 'files', file: 'attachments', tools: ATTACHMENT_TOOLS },
  { group: 'history', file: 'activity', tools: [activityList] },
  // Long work for admins, as tasks of the tasks extension: a file's tasks in, the workspace out.
  { group: 'transfer', file: 'transfer', tools: TRANSFER_TOOLS },
];

/** Every tool, whole, in its group and with its view's link; `tools/list` sorts them by name. */
export const PRODUCT_TOOLS: readonly Tool[] = linkViews(DECLARED.flatMap(({ group, tools }) => tools.map((t) => ({ ...t, group }))));

/** The file each tool is declared in, by name. */
export const FILE_OF: ReadonlyMap<string, ToolFile> = new Map(DECLARED.flatMap(({ file, tools }) => tools.map((t) => [t.name, file])));
