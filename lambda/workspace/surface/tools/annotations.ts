import type { ToolAnnotations } from '../../../mcp/tool-registry.js';

/**
 * The four kinds of workspace tool (docs/protocol.md): openWorldHint is false everywhere; destructive
 * for what removes content or access; idempotent unless the call creates something new. A read
 * carries neither of those two, which the protocol defines only for tools that change something.
 */
export const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
export const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
export const UPDATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const REMOVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
