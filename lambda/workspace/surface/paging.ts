import type { ToolContext } from '../../mcp/tool-registry.js';
import { openCursor, signCursor } from './cursor.js';
import type { WorkspaceServices } from './services.js';

/** The cursor of a list tool, bound to this call: the tool, the caller and its arguments. */
export const cursorFor = async (
  ctx: ToolContext<WorkspaceServices>,
  args: Readonly<Record<string, unknown>>,
  position: unknown,
): Promise<string> =>
  signCursor(
    await ctx.services.keys(),
    { tool: ctx.toolName, workspaceId: ctx.principal.workspaceId, userId: ctx.principal.userId, args },
    position,
  );

/** The position a call's `cursor` argument carries (undefined without one); refused when it belongs to another call. */
export const positionFrom = async <P>(
  ctx: ToolContext<WorkspaceServices>,
  args: Readonly<Record<string, unknown>> & { cursor?: string | undefined },
  isPosition: (value: unknown) => value is P,
): Promise<P | undefined> =>
  args.cursor === undefined
    ? undefined
    : openCursor(
        await ctx.services.keys(),
        { tool: ctx.toolName, workspaceId: ctx.principal.workspaceId, userId: ctx.principal.userId, args },
        args.cursor,
        isPosition,
      );

/** Keyset paging over an in-memory list already sorted by `keyOf`: entries strictly after `after`. */
export const pageAfter = <T>(
  sorted: readonly T[],
  keyOf: (t: T) => string,
  limit: number,
  after?: string,
): { page: T[]; last?: string } => {
  const rest = after === undefined ? sorted : sorted.filter((t) => keyOf(t) > after);
  const page = rest.slice(0, limit);
  return { page, ...(rest.length > limit ? { last: keyOf(page.at(-1)!) } : {}) };
};

export const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length < 1000;
