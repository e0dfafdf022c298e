import type { PromptDefinition } from '../mcp/prompt-registry.js';
import type { ResourceTemplateDefinition } from '../mcp/resource-registry.js';
import type { ToolDefinition } from '../mcp/tool-registry.js';
import type { WorkspaceServices } from './services.js';
import { meGet } from './tools/me.js';

/** Everything the deployed function offers; `tools/list` sorts it by name. */
export const PRODUCT_TOOLS: readonly ToolDefinition<WorkspaceServices>[] = [meGet];
export const PRODUCT_PROMPTS: readonly PromptDefinition[] = [];
export const PRODUCT_RESOURCE_TEMPLATES: readonly ResourceTemplateDefinition<WorkspaceServices>[] = [];
