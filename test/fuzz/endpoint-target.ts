import { type JWTPayload, SignJWT } from 'jose';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import { buildHandler } from '../../lambda/http/pipeline.js';
import type { HttpEvent, HttpResult } from '../../lambda/http/request-context.js';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import type { LocalServer } from '../../lambda/local/server.js';
import type { Observer } from '../../lambda/observability/observer.js';
import { SCOPES, type Scope } from '../../lambda/vocabulary.js';
import { addComment } from '../../lambda/workspace/comments/comment-writer.js';
import { callerOf } from '../../lambda/workspace/model/caller.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import type { WorkspaceServices } from '../../lambda/workspace/surface/services.js';
import { httpEvent, lambdaContext } from '../helpers/events.js';
import { signingKey, signToken, startJwksServer, type TokenOptions, unsecuredToken, withPayload } from '../helpers/jwks.js';
import { MODERN, modernMeta, startTestServer } from '../helpers/local.js';
import type { JsonSchema } from './schema-arbitrary.js';

/**
 * The fuzz target: the Lambda handler of a local server (embedded DynamoDB, demo workspace), driven
 * in-process with API Gateway v2 events, plus what the generators need to know about it: tokens of
 * every kind, the tools' input schemas as `tools/list` shows them, and ids that exist.
 */

/** How the credential gate must treat a token (docs/auth.md). */
export type CredentialClass = 'full' | 'scoped' | 'ghost' | 'refused' | 'none';

/** A bearer token and how the gate must treat it. */
export interface TaggedToken {
  readonly token: string;
  readonly credential: CredentialClass;
}

export interface FuzzTokens {
  /** The dev token: demo owner, every scope. */
  readonly full: string;
  /** A viewer holding only tasks:read: write tools and team tools are scope refusals (403 -32003). */
  readonly scoped: string;
  /** Valid token whose user is no member: 403 -32600. */
  readonly ghost: string;
  /** Known to the store but expired or revoked: 401 invalid_token like any unknown token. */
  readonly expired: string;
  readonly revoked: string;
  /**
   * JWTs of the configured authorization server (limits-off target only): good ones, and ones the
   * verifier must refuse (expired, early, foreign issuer or audience, unknown key, forged, `none`, HS256,
   * ID token, unverified or odd e-mail claims), and good ones naming nobody in the workspace.
   */
  readonly jwts: readonly TaggedToken[];
}

/**
 * Ids of things that exist, so generated calls reach real data and not only "not found". Mutable:
 * runCase adds ids that successful calls return, since deletes would otherwise drain them.
 */
export interface IdPools {
  readonly tasks: string[];
  readonly projects: string[];
  /** Members the fuzzer may change or remove: never the holders of `full` and `scoped`. */
  readonly members: string[];
  readonly comments: { taskId: string; commentId: string }[];
  /** nextCursor values lists returned: bound to their call, so mostly refused elsewhere, which is a case too. */
  readonly cursors: string[];
}

export interface ToolInfo {
  readonly name: string;
  readonly inputSchema: JsonSchema;
}

export interface PromptInfo {
  readonly name: string;
  readonly arguments: readonly { name: string; required: boolean }[];
}

export interface FuzzFixture {
  readonly port: number;
  /** DOERS_PUBLIC_URL: what metadata and challenges must name, whatever headers say. */
  readonly publicUrl: string;
  readonly tokens: FuzzTokens;
  readonly ids: IdPools;
  readonly tools: readonly ToolInfo[];
  readonly prompts: readonly PromptInfo[];
  readonly resourceTemplates: readonly string[];
  /** Members the fuzzer must not remove or demote: the token holders. */
  readonly protectedUsers: ReadonlySet<string>;
}

export interface FuzzTarget {
  readonly fixture: FuzzFixture;
  readonly limits: boolean;
  /** A token of the configured authorization server (limits-off target only), for plain tests. */
  readonly signJwt?: (claims: JWTPayload) => Promise<string>;
  invoke(event: HttpEvent): Promise<HttpResult>;
  close(): Promise<void>;
}

/** Counts nothing and keeps nothing: 100,000 cases must not pile up audit records in memory. */
const quietObserver: Observer = { toolCall: () => {}, resourceRead: () => {}, request: () => {}, refusal: () => {} };

const POOL_LIMIT = 200;
const READER = { userId: 'usr_fuzz_reader', email: 'fuzz-reader@example.com', name: 'Fuzz Reader' } as const;

export const startFuzzTarget = async (opts: { limits?: boolean } = {}): Promise<FuzzTarget> => {
  const env: Record<string, string> = opts.limits
    ? // Tight enough that a short run meets both refusals (rate and concurrency).
      { DOERS_RATE_LIMIT_CALLS: '3', DOERS_RATE_LIMIT_WINDOW_SECONDS: '60', DOERS_MAX_CONCURRENT_CALLS: '1' }
    : { DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' };
  const jwks = opts.limits ? undefined : await startJwtIssuer();
  const server = await startTestServer(jwks ? { ...env, ...jwks.env } : env, { observer: quietObserver });
  const handler = buildHandler(server.app);
  const port = new URL(server.url).port;
  const invoke = (event: HttpEvent): Promise<HttpResult> => handler(event, lambdaContext());

  const tokens = { ...(await registerTokens(server)), jwts: jwks ? await jwks.tokens() : [] };
  const rpc = setupCaller(invoke, port, server.token);
  const tools = ((await rpc('tools/list')).tools as { name: string; inputSchema: JsonSchema }[]).map(({ name, inputSchema }) => ({
    name,
    inputSchema,
  }));
  const prompts = ((await rpc('prompts/list')).prompts as PromptInfo[]).map(({ name, arguments: args }) => ({
    name,
    arguments: args ?? [],
  }));
  const resourceTemplates = ((await rpc('resources/templates/list')).resourceTemplates as { uriTemplate: string }[]).map(
    (t) => t.uriTemplate,
  );
  const protectedUsers = new Set<string>([DEMO_OWNER.userId, READER.userId]);
  const ids = await collectIds(server.app.services, protectedUsers);

  return {
    fixture: { port: Number(port), publicUrl: server.app.config.publicUrl, tokens, ids, tools, prompts, resourceTemplates, protectedUsers },
    limits: opts.limits ?? false,
    ...(jwks ? { signJwt: jwks.sign } : {}),
    invoke,
    close: async () => {
      await server.close();
      await jwks?.server.close();
    },
  };
};

/** Both targets (limits off, limits on); if one cannot start, the other is closed, so nothing keeps the process alive. */
export const startFuzzTargets = async (): Promise<[FuzzTarget, FuzzTarget]> => {
  const [open, limited] = await Promise.allSettled([startFuzzTarget(), startFuzzTarget({ limits: true })]);
  if (open.status === 'fulfilled' && limited.status === 'fulfilled') return [open.value, limited.value];
  await Promise.all([open, limited].map((r) => (r.status === 'fulfilled' ? r.value.close() : undefined)));
  throw [open, limited].map((r) => (r.status === 'rejected' ? r.reason : undefined)).find((e) => e !== undefined);
};

const JWT_ISSUER = 'https://issuer.fuzz.example';
const JWT_AUDIENCE = 'doers-fuzz';
const ALL_SCOPES = SCOPES.join(' ');

/** An external authorization server: its key set on a loopback port, and tokens it (or a forger) signed. */
const startJwtIssuer = async () => {
  const key = await signingKey('fuzz-es256', 'ES256');
  const stranger = await signingKey('fuzz-stranger', 'ES256');
  const server = await startJwksServer([key]);
  const defaults = { issuer: JWT_ISSUER, audience: JWT_AUDIENCE };
  // Valid for longer than any fuzz run: a token expiring mid-run would turn into a false failure.
  const sign = (claims: JWTPayload, opts: TokenOptions = {}) => signToken(key, claims, defaults, { expiresAt: '4h', ...opts });
  const ada = DEMO_OWNER.email;
  const tokens = async (): Promise<TaggedToken[]> => {
    const good = await sign({ email: ada, scope: ALL_SCOPES });
    const tagged = async (credential: CredentialClass, token: Promise<string> | string) => ({ credential, token: await token });
    const later = Math.floor(Date.now() / 1000) + 4 * 3600;
    return Promise.all([
      tagged('full', good),
      tagged('full', sign({ email: ada.toUpperCase(), scp: ALL_SCOPES.split(' ') })),
      tagged('scoped', sign({ email: READER.email, scope: 'tasks:read' })),
      tagged('ghost', sign({ email: 'nobody@example.com', scope: ALL_SCOPES })),
      // Signed, so trusted, but no address of anyone: a lookup key DynamoDB would refuse, odd characters.
      tagged('ghost', sign({ email: `${'x'.repeat(3_000)}@example.com`, scope: ALL_SCOPES })),
      tagged('ghost', sign({ email: '\ud800@example.com', scope: ALL_SCOPES })),
      tagged('ghost', sign({ email: 'a@b', scope: 'tasks:read nonsense' })),
      tagged('refused', sign({ email: ada }, { expiresAt: Math.floor(Date.now() / 1000) - 3_600 })),
      tagged('refused', sign({ email: ada }, { notBefore: '1h' })),
      tagged('refused', sign({ email: ada }, { issuer: 'https://other.example' })),
      tagged('refused', sign({ email: ada }, { audience: 'someone-else' })),
      tagged('refused', sign({ email: ada }, { audience: null })),
      tagged('refused', sign({ email: ada, token_use: 'id' })),
      tagged('refused', sign({ email: ada, email_verified: false })),
      tagged('refused', sign({ email: 42 })),
      tagged('refused', sign({ email: '   ' })),
      tagged('refused', sign({ email: { nested: ada } })),
      tagged('refused', sign({ scope: ALL_SCOPES })),
      tagged('refused', signToken(stranger, { email: ada }, defaults, { expiresAt: '4h' })),
      tagged('refused', withPayload(good, { email: 'grace@example.com', iss: JWT_ISSUER, aud: JWT_AUDIENCE, exp: later })),
      tagged('refused', unsecuredToken({ email: ada, iss: JWT_ISSUER, aud: JWT_AUDIENCE, exp: later })),
      tagged(
        'refused',
        new SignJWT({ email: ada, iss: JWT_ISSUER, aud: JWT_AUDIENCE, exp: later })
          .setProtectedHeader({ alg: 'HS256' })
          .sign(new TextEncoder().encode('a shared secret')),
      ),
      tagged(
        'refused',
        new SignJWT({ email: ada, iss: JWT_ISSUER, aud: JWT_AUDIENCE, exp: 'tomorrow' } as unknown as JWTPayload)
          .setProtectedHeader({ alg: 'ES256', kid: key.kid })
          .sign(key.privateKey),
      ),
      tagged(
        'refused',
        new SignJWT({ email: ada, iss: JWT_ISSUER, aud: JWT_AUDIENCE, exp: later })
          .setProtectedHeader({ alg: 'ES256', kid: key.kid, crit: ['x-fuzz'], 'x-fuzz': 1 })
          .sign(key.privateKey, { crit: { 'x-fuzz': true } }),
      ),
    ]);
  };
  return {
    server,
    tokens,
    sign: (claims: JWTPayload) => sign(claims),
    env: { DOERS_JWT_ISSUER: JWT_ISSUER, DOERS_JWKS_URI: server.url, DOERS_JWT_AUDIENCE: JWT_AUDIENCE },
  };
};

const registerTokens = async (server: LocalServer): Promise<Omit<FuzzTokens, 'jwts'>> => {
  const { services } = server.app;
  const createdAt = new Date().toISOString();
  await writesOf(services).directory.createMember({
    workspaceId: DEMO_WORKSPACE_ID,
    ...READER,
    role: 'viewer',
    timeZone: 'UTC',
    status: 'active',
    createdAt,
  });
  const register = async (userId: string, scopes: readonly Scope[], extra: { expiresAt?: number; revokedAt?: string } = {}) => {
    const secret = generateTokenSecret();
    await writesOf(services).tokens.register(secret, {
      workspaceId: DEMO_WORKSPACE_ID,
      userId,
      scopes,
      label: 'fuzz',
      createdAt,
      ...extra,
    });
    return secret;
  };
  const all = SCOPES;
  return {
    full: server.token,
    scoped: await register(READER.userId, ['tasks:read']),
    ghost: await register('usr_fuzz_ghost', all),
    expired: await register(DEMO_OWNER.userId, all, { expiresAt: Math.floor(Date.now() / 1000) - 60 }),
    revoked: await register(DEMO_OWNER.userId, all, { revokedAt: createdAt }),
  };
};

type Rpc = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** A 2026-07-28 call through the handler for setup; anything but a result is a broken target. */
const setupCaller = (invoke: FuzzTarget['invoke'], port: string, token: string): Rpc => {
  let id = 0;
  return async (method, params = {}) => {
    const name = method === 'tools/call' ? params.name : undefined;
    const res = await invoke(
      httpEvent({
        headers: {
          host: `127.0.0.1:${port}`,
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'mcp-protocol-version': MODERN,
          'mcp-method': method,
          ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: modernMeta() } }),
      }),
    );
    const json = JSON.parse(res.body ?? '') as { result?: Record<string, unknown>; error?: unknown };
    if (res.statusCode !== 200 || !json.result) throw new Error(`fuzz setup: ${method} answered ${res.statusCode} ${res.body}`);
    return json.result;
  };
};

/** Read from the stores, not through tools: on the limits-on target those calls would spend the rate. */
const collectIds = async (services: WorkspaceServices, protectedUsers: ReadonlySet<string>): Promise<IdPools> => {
  const ws = DEMO_WORKSPACE_ID;
  const tasks = (await services.tasks.search({ workspaceId: ws, layout: 2 }, { status: 'any' }, 100)).tasks.map((t) => t.taskId);
  const projects = (await services.projects.all(ws)).map((p) => p.projectId);
  const members = (await services.directory.listMembers(ws)).map((m) => m.userId).filter((u) => !protectedUsers.has(u));
  const comments: IdPools['comments'] = [];
  const workspace = (await services.directory.getWorkspace(ws))!;
  const owner = (await services.directory.getMember(ws, DEMO_OWNER.userId))!;
  const ctx = {
    stores: services,
    caller: callerOf(workspace, owner),
    source: { actorId: owner.userId, actorName: owner.name, client: 'fuzz seed', tool: 'test', now: new Date() },
  };
  for (const taskId of tasks.slice(0, 3)) {
    // Seeded tasks have no comments: one each, so comment_delete and comments_list meet real ones.
    const task = (await services.tasks.get(ws, taskId))!;
    const { comment } = await addComment(ctx, task, 'fuzz seed comment');
    comments.push({ taskId, commentId: comment.commentId });
  }
  return { tasks, projects, members, comments, cursors: [] };
};

/** Keeps the pools fed with what successful tool calls created (bounded: newest kept). */
export const harvestIds = (ids: IdPools, protectedUsers: ReadonlySet<string>, structuredContent: unknown): void => {
  if (typeof structuredContent !== 'object' || structuredContent === null) return;
  const s = structuredContent as Record<string, unknown>;
  const add = <T>(pool: T[], value: T, same: (a: T) => boolean) => {
    if (pool.some(same)) return;
    pool.push(value);
    if (pool.length > POOL_LIMIT) pool.shift();
  };
  if (typeof s.nextCursor === 'string') add(ids.cursors, s.nextCursor, (x) => x === s.nextCursor);
  if (typeof s.commentId === 'string' && typeof s.taskId === 'string') {
    const c = { taskId: s.taskId, commentId: s.commentId };
    add(ids.comments, c, (x) => x.commentId === c.commentId);
  } else if (typeof s.taskId === 'string' && typeof s.title === 'string') {
    add(ids.tasks, s.taskId, (x) => x === s.taskId);
  } else if (typeof s.projectId === 'string' && typeof s.name === 'string') {
    add(ids.projects, s.projectId, (x) => x === s.projectId);
  } else if (typeof s.userId === 'string' && typeof s.email === 'string' && s.removed === undefined && !protectedUsers.has(s.userId)) {
    add(ids.members, s.userId, (x) => x === s.userId);
  }
};
