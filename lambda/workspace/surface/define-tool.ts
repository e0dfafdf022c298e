import { defineToolFor } from '../../mcp/tool-registry.js';
import type { WorkspaceServices } from './services.js';

/** Declares a workspace tool; its argument and result types come from its schemas. */
export const defineTool = defineToolFor<WorkspaceServices>();
