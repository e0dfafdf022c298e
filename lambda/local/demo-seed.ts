import type { WorkspaceServices } from '../workspace/services.js';
import { SCOPES } from '../auth/scopes.js';

export const DEMO_WORKSPACE_ID = 'ws_demo';
export const DEMO_OWNER = { userId: 'usr_ada', email: 'ada@example.com', name: 'Ada Lovelace' } as const;

/**
 * The demo workspace with its owner. Every write is create-if-absent, so a second server (or a
 * restart on a kept data dir) seeds nothing twice.
 */
export const seedDemoWorkspace = async (services: WorkspaceServices, timeZone: string, now = new Date()): Promise<void> => {
  const createdAt = now.toISOString();
  await services.directory.createWorkspace({ workspaceId: DEMO_WORKSPACE_ID, name: 'Demo workspace', status: 'active', createdAt });
  await services.directory.createMember({
    workspaceId: DEMO_WORKSPACE_ID,
    ...DEMO_OWNER,
    role: 'owner',
    timeZone,
    status: 'active',
    createdAt,
  });
};

/** Registers the dev token as the owner's personal access token with every scope (idempotent). */
export const registerDevToken = async (services: WorkspaceServices, token: string, now = new Date()): Promise<void> => {
  await services.tokens.register(token, {
    workspaceId: DEMO_WORKSPACE_ID,
    userId: DEMO_OWNER.userId,
    scopes: [...SCOPES],
    label: 'local dev token',
    createdAt: now.toISOString(),
  });
};
