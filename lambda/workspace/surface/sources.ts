import type { ToolContext } from '../../mcp/tool-registry.js';
import { clientSource } from '../activity/records.js';
import { type ChangeSource, clientLabel } from '../model/activity.js';
import type { WriteContext } from '../store/stores.js';
import type { UndoContext } from '../undo/undo.js';
import type { WorkspaceToolContext } from './define-tool.js';
import type { WorkspaceServices } from './services.js';

type Ctx = Pick<ToolContext<WorkspaceServices>, 'principal' | 'meta' | 'toolName' | 'now'>;

/**
 * The change's source as a tool call: the caller, the client, the tool. The client is what the
 * request's `clientInfo` says (on 2026-07-28 in every request's `_meta`; on the handshake revisions
 * only if the client repeats it there); without it, what the credential is called (a connected
 * app's name, a token's label), so a record never says "unknown client" when something better is known.
 */
export const sourceOf = (ctx: Ctx): ChangeSource => {
  const told = clientLabel(ctx.meta.clientInfo);
  const client =
    told !== 'unknown client' ? told : ctx.principal.credentialLabel ? clientLabel({ name: ctx.principal.credentialLabel }) : told;
  return clientSource(ctx.principal, client, ctx.toolName, ctx.now);
};

/** What a tool hands a writer: the stores, the caller with their role now, the change's source, and the call's claim. */
export const writeContext = (ctx: Ctx & Pick<WorkspaceToolContext, 'services' | 'claim'>): WriteContext => ({
  stores: ctx.services,
  caller: ctx.principal,
  source: sourceOf(ctx),
  ...(ctx.claim ? { claim: ctx.claim } : {}),
});

export const undoContext = (ctx: Ctx & Pick<ToolContext<WorkspaceServices>, 'services'>): UndoContext => ({
  ...writeContext(ctx),
  scopes: ctx.principal.scopes,
});
