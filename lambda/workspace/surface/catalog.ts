import type { PromptDefinition } from '../../mcp/prompt-registry.js';
import type { ResourceTemplateDefinition } from '../../mcp/resource-registry.js';
import type { ToolDefinition } from '../../mcp/tool-registry.js';
import { linkViews } from './app-views.js';
import { WORKSPACE_PROMPTS } from './prompts.js';
import { WORKSPACE_RESOURCE_TEMPLATES } from './resources.js';
import type { WorkspaceServices } from './services.js';
import { ACTIVITY_TOOLS } from './tools/activity.js';
import { agendaGet } from './tools/agenda.js';
import { ATTACHMENT_TOOLS } from './tools/attachments.js';
import { BULK_TOOLS } from './tools/bulk.js';
import { COMMENT_TOOLS } from './tools/comments.js';
import { meGet } from './tools/me.js';
import { MEMBER_TOOLS } from './tools/members.js';
import { PROJECT_TOOLS } from './tools/projects.js';
import { TASK_TOOLS } from './tools/tasks.js';

/** Everything the deployed function offers; `tools/list` sorts it by name. Some render in an MCP Apps view. */
export const PRODUCT_TOOLS: readonly ToolDefinition<WorkspaceServices>[] = linkViews([
  meGet,
  agendaGet,
  ...TASK_TOOLS,
  ...BULK_TOOLS,
  ...PROJECT_TOOLS,
  ...COMMENT_TOOLS,
  ...ATTACHMENT_TOOLS,
  ...MEMBER_TOOLS,
  ...ACTIVITY_TOOLS,
]);
export const PRODUCT_PROMPTS: readonly PromptDefinition[] = WORKSPACE_PROMPTS;
export const PRODUCT_RESOURCE_TEMPLATES: readonly ResourceTemplateDefinition<WorkspaceServices>[] = WORKSPACE_RESOURCE_TEMPLATES;
