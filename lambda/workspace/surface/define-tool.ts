import type * as z from 'zod/mini';
import { defineToolFor, type ToolDefinition } from '../../mcp/tool-registry.js';
import { withCallBudget } from '../../platform/call-budget.js';
import { CALL_CEILINGS } from '../model/limits.js';
import { refusalOfStorage } from '../model/refusals.js';
import type { WorkspaceServices } from './services.js';

const define = defineToolFor<WorkspaceServices>();

/**
 * Declares a workspace tool; its argument and result types come from its schemas. Every call runs
 * with a budget of its own (platform/call-budget.ts: the read and write units one call may spend),
 * and what the storage layer could not do reaches the caller as the workspace's refusal
 * (model/refusals.ts, `refusalOfStorage`), never as a 500.
 */
export const defineTool = <I extends z.core.$ZodType, O extends z.core.$ZodType>(
  def: ToolDefinition<WorkspaceServices, I, O>,
): ToolDefinition<WorkspaceServices> =>
  define({
    ...def,
    run: (args, ctx) =>
      withCallBudget(CALL_CEILINGS, () => def.run(args, ctx)).catch((err: unknown) => {
        throw refusalOfStorage(err) ?? err;
      }),
  });
