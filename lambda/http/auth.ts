import type { CredentialGate } from '../auth/credential-gate.js';
import { type DoersMiddleware, header, stateOf } from './request-context.js';

/**
 * Every MCP method needs a credential (initialize and ping included); only the protected-resource
 * metadata document is served without one. The token comes from the Authorization header only.
 */
export const authMiddleware = (gate: CredentialGate): DoersMiddleware => ({
  before: async (request) => {
    const state = stateOf(request);
    if (state.route !== 'mcp') return;
    state.principal = await gate.authenticate(header(request.event, 'authorization'));
  },
});
