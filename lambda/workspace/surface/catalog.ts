import type { PromptDefinition } from '../../mcp/prompt-registry.js';
import type { ResourceTemplateDefinition } from '../../mcp/resource-registry.js';
import type { ToolDefinition } from '../../mcp/tool-registry.js';
import { DEFAULT_TOOL_GROUPS, type ToolGroup } from '../../vocabulary.js';
import { linkViews } from './app-views.js';
import { WORKSPACE_PROMPTS } from './prompts.js';
import { WORKSPACE_RESOURCE_TEMPLATES } from './resources.js';
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

type Tool = ToolDefinition<WorkspaceServices>;
const inGroup = (group: ToolGroup, defs: readonly Tool[]): Tool[] => defs.map((d) => ({ ...d, group }));

/**
 * Everything the deployed function offers, in groups (docs/clients.md, "Tool groups"): a connection
 * lists the default groups, or those its URL names (`/mcp?tools=projects,people`, `tools=all`).
 * `tools/list` sorts them by name. Some render in an MCP Apps view.
 */
export const PRODUCT_TOOLS: readonly Tool[] = linkViews([
  // What a person needs every day: their tasks, their comments, and taking a change back.
  // projects_list too: a task's projectId is found there.
  ...inGroup('tasks', [meGet, agendaGet, ...TASK_TOOLS, ...COMMENT_TOOLS, changeUndo, projectsList]),
  // What others did that concerns you.
  ...inGroup('inbox', INBOX_TOOLS),
  // Many tasks in one call: planning and triage sessions, imports from a list.
  ...inGroup('bulk', BULK_TOOLS),
  // Saving and sharing queries (tasks_search runs a saved one by name in any group).
  ...inGroup('views', VIEW_TOOLS),
  ...inGroup(
    'projects',
    PROJECT_TOOLS.filter((t) => t !== projectsList),
  ),
  // The team, and your own settings (time zone, e-mail).
  ...inGroup('people', [...MEMBER_TOOLS, meUpdate]),
  ...inGroup('files', ATTACHMENT_TOOLS),
  ...inGroup('history', [activityList]),
  // Long work for admins, as tasks of the tasks extension: a file's tasks in, the workspace out.
  ...inGroup('transfer', TRANSFER_TOOLS),
]);

/** What `/mcp` lists without `tools=` (named in the vocabulary, which the authorization server reads too). */
export { DEFAULT_TOOL_GROUPS };
export const PRODUCT_PROMPTS: readonly PromptDefinition[] = WORKSPACE_PROMPTS;
export const PRODUCT_RESOURCE_TEMPLATES: readonly ResourceTemplateDefinition<WorkspaceServices>[] = WORKSPACE_RESOURCE_TEMPLATES;
