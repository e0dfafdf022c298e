import { randomUUID } from 'node:crypto';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import type { LocalServer } from '../../lambda/local/server.js';
import type { Role } from '../../lambda/vocabulary.js';
import { SCOPES, type Scope } from '../../lambda/vocabulary.js';
import { callerOf } from '../../lambda/workspace/model/caller.js';
import type { WriteContext } from '../../lambda/workspace/store/stores.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { callTool, modernCall, startTestServer } from './local.js';

/** A server for workspace tests: limits off (these tests make many calls), demo data as usual. */
export const startWorkspaceServer = (env: Record<string, string> = {}) =>
  startTestServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0', ...env });

/**
 * The same without the demo workspace or its dev token (`server.token` is empty), for a file whose
 * tests make every workspace they use: a start without the seed takes a fifth of the time.
 */
export const startOwnWorkspacesServer = (env: Record<string, string> = {}) =>
  startTestServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0', ...env }, { demo: false });

export interface TestMember {
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly token: string;
}

export interface TestWorkspace {
  readonly workspaceId: string;
  readonly owner: TestMember;
  readonly admin: TestMember;
  readonly member: TestMember;
  readonly viewer: TestMember;
}

/**
 * A fresh workspace of its own (so tests do not see each other's or the demo's data) with one
 * member per role, each holding a personal access token with every scope unless `scopes` says otherwise.
 */
export const createTestWorkspace = async (
  server: LocalServer,
  /** `layout: 1`: a workspace as an earlier version made it (its tasks need `npm run admin -- migrate`). */
  opts: { timeZone?: string; scopes?: readonly Scope[]; layout?: number } = {},
): Promise<TestWorkspace> => {
  const { directory } = writesOf(server.app.services);
  const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
  const createdAt = new Date().toISOString();
  await directory.createWorkspace({
    workspaceId,
    name: `Test ${workspaceId}`,
    status: 'active',
    createdAt,
    ...(opts.layout !== undefined ? { layout: opts.layout, activityIndexed: false } : {}),
  });
  const make = async (role: Role): Promise<TestMember> => {
    const userId = `usr_${role}_${randomUUID().slice(0, 8)}`;
    const email = `${userId}@example.test`;
    const name = `${role[0]!.toUpperCase()}${role.slice(1)} ${userId.slice(-4)}`;
    await directory.createMember({ workspaceId, userId, email, name, role, timeZone: opts.timeZone ?? 'UTC', status: 'active', createdAt });
    return { userId, email, name, role, token: await addToken(server, workspaceId, userId, opts.scopes ?? SCOPES) };
  };
  const [owner, admin, member, viewer] = await Promise.all([make('owner'), make('admin'), make('member'), make('viewer')]);
  return { workspaceId, owner, admin, member, viewer };
};

/** A further member of an existing workspace, with a token. */
export const addMember = async (
  server: LocalServer,
  workspaceId: string,
  role: Role,
  timeZone: string,
  scopes: readonly Scope[] = SCOPES,
): Promise<TestMember> => {
  const userId = `usr_${role}_${randomUUID().slice(0, 8)}`;
  const email = `${userId}@example.test`;
  const name = `${role} ${timeZone}`;
  await writesOf(server.app.services).directory.createMember({
    workspaceId,
    userId,
    email,
    name,
    role,
    timeZone,
    status: 'active',
    createdAt: new Date().toISOString(),
  });
  return { userId, email, name, role, token: await addToken(server, workspaceId, userId, scopes) };
};

export const addToken = async (server: LocalServer, workspaceId: string, userId: string, scopes: readonly Scope[]): Promise<string> => {
  const secret = generateTokenSecret();
  await writesOf(server.app.services).tokens.register(secret, {
    workspaceId,
    userId,
    scopes: [...scopes],
    label: 'test',
    createdAt: new Date().toISOString(),
  });
  return secret;
};

/** Calls tools as the holder of `token` (2026-07-28), returning the tool result. */
export const caller =
  (server: LocalServer, token: string) =>
  (name: string, args: Record<string, unknown> = {}) =>
    callTool(server, name, args, token);

/** The compact text of a tool result. */
export const toolText = (r: { content: { text: string }[] }): string => r.content[0]!.text;

/**
 * Whether calling `name` with `token` is refused before the tool runs, for want of a scope: 403 with
 * an insufficient_scope challenge. A token's scopes are cut to what its member's role allows, so a
 * viewer's token made with every scope is refused this way on every write.
 */
export const refusedForScope = async (
  server: LocalServer,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
): Promise<boolean> => {
  const res = await modernCall(server, 'tools/call', { name, arguments: args }, { token });
  return res.status === 403 && /insufficient_scope/.test(res.headers.get('www-authenticate') ?? '');
};

/**
 * What a writer is given when a test drives it directly, as the member `who` of the workspace (its
 * workspace read now): a test's own door to the writers, like the admin CLI's.
 */
export const writeContextOf = async (
  server: LocalServer,
  workspaceId: string,
  who: Pick<TestMember, 'userId' | 'name' | 'role'>,
): Promise<WriteContext> => {
  const workspace = (await server.app.services.directory.getWorkspace(workspaceId))!;
  const now = new Date();
  return {
    stores: server.app.services,
    caller: callerOf(workspace, who),
    source: { actorId: who.userId, actorName: who.name, client: 'test fixture', tool: 'test', now },
  };
};
