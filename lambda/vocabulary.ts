/**
 * The words every room shares: who a caller is (principal), what a member may be (role, status),
 * what a token may do (scope), and how a member is named across rooms (member reference, the
 * authorization server's account id). This module is ground: it imports nothing of ours, so any
 * room may use it without leaning on another room.
 */

// ---- roles --------------------------------------------------------------------------------------

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1, viewer: 0 };
export const roleAtLeast = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];
export const isRole = (value: unknown): value is Role => typeof value === 'string' && (ROLES as readonly string[]).includes(value);

/** Of a member and of a workspace: a disabled one may not use the endpoint. */
export type Status = 'active' | 'disabled';

// ---- scopes -------------------------------------------------------------------------------------

export const SCOPES = ['tasks:read', 'tasks:write', 'team:read', 'team:admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

// ---- tool groups (docs/clients.md, "Tool groups") -------------------------------------------------

/** The groups the tools are listed in: a connection names them in its URL (`/mcp?tools=a,b`). */
export const TOOL_GROUPS = ['tasks', 'inbox', 'bulk', 'views', 'projects', 'people', 'files', 'history', 'transfer'] as const;
export type ToolGroup = (typeof TOOL_GROUPS)[number];
/** What the bare `/mcp` lists: what a person needs every day. */
export const DEFAULT_TOOL_GROUPS: readonly ToolGroup[] = ['tasks', 'inbox'];

/**
 * A `tools` value as a URL names groups: group names, `default` or `all`, comma-separated (the
 * authorization server takes such a resource; the MCP function answers one it does not know -32602).
 */
export const isToolGroupList = (value: string): boolean =>
  /^[a-z]+(,[a-z]+)*$/.test(value) &&
  value.split(',').every((g) => g === 'all' || g === 'default' || (TOOL_GROUPS as readonly string[]).includes(g));

/** Keeps the known scopes of a token, in the canonical order (so cache keys are stable). */
export const normalizeScopes = (values: Iterable<string>): Scope[] => {
  const granted = new Set(values);
  return SCOPES.filter((s) => granted.has(s));
};

/**
 * The scopes a person of a role can use at all: what the role may do in the tools. The account page
 * offers no more when someone makes a token (a viewer's `tasks:write` would open nothing but
 * still read as if it did).
 */
export const scopesForRole = (role: Role): readonly Scope[] =>
  role === 'owner' || role === 'admin'
    ? SCOPES
    : role === 'member'
      ? ['tasks:read', 'tasks:write', 'team:read']
      : ['tasks:read', 'team:read'];

// ---- the directory's records --------------------------------------------------------------------

export interface Workspace {
  readonly workspaceId: string;
  readonly name: string;
  readonly status: Status;
  readonly createdAt: string;
  /** Raised by every member or project write (workspace/names.ts); absent until the first. */
  readonly directoryVersion?: number;
  /** What task keys start with (`DEMO` in `DEMO-42`); absent on a workspace from before keys: derived from the name. */
  readonly key?: string;
  /** Keys it had before: `OLD-42` still names task 42. */
  readonly pastKeys?: readonly string[];
  /** The highest task number handed out; absent until the first. */
  readonly taskCounter?: number;
  /**
   * How its tasks are stored: 2 for every workspace made since, absent (1) on one from before until
   * its operator migrates it (npm run admin -- migrate). Reads work in both; task changes need 2.
   */
  readonly layout?: number;
  /** Set while a migration moves its tasks (when it began): task changes wait until it is done. */
  readonly migrating?: string;
  /**
   * Every activity record of it is in the history's index by project and by kind: true for every
   * workspace made since, set on one from before by npm run admin -- migrate (until then those
   * filters read the whole history, a page at a time).
   */
  readonly activityIndexed?: boolean;
}

/** The layout every new workspace gets, and the one task changes need. */
export const CURRENT_LAYOUT = 2;

/** A workspace key: 2 to 6 capital letters. */
export const WORKSPACE_KEY = /^[A-Z]{2,6}$/;

/**
 * The key a workspace gets from its name: its first word's letters (at most six; "Demo workspace"
 * → DEMO), else the initials of its words, else TASK.
 */
export const keyFromName = (name: string): string => {
  const words = name
    .normalize('NFKD')
    .replace(/[^A-Za-z\s_-]/g, '')
    .split(/[\s_-]+/)
    .filter(Boolean);
  const first = (words[0] ?? '').toUpperCase();
  if (first.length >= 2) return first.slice(0, 6);
  const initials = words
    .map((w) => w[0]!.toUpperCase())
    .join('')
    .slice(0, 6);
  return initials.length >= 2 ? initials : 'TASK';
};

/** The key a workspace's tasks are shown with. */
export const workspaceKeyOf = (w: Pick<Workspace, 'key' | 'name'>): string => w.key ?? keyFromName(w.name);

export interface Member {
  readonly workspaceId: string;
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly timeZone: string;
  /** How they are told besides their inbox (docs/notifications.md); absent: the inbox only. */
  readonly notify?: NotifySettings;
  readonly status: Status;
  readonly createdAt: string;
  /**
   * Credentials issued before this instant (tokens, connected apps, external JWTs) are dead: set
   * when the member is added (again) or enabled again, so a person's old ways in never come back by
   * an undo or a re-enable (workspace/membership/members.ts). Absent: none is older than the member.
   */
  readonly credentialsFrom?: string;
}

/** A member's e-mail: none, each event as it happens, or one digest a day at a local hour (0-23). */
export interface NotifySettings {
  readonly email: 'off' | 'each' | 'digest';
  readonly digestHour?: number;
}

/** A member named across rooms: a user id is unique within its workspace only. */
export interface MemberRef {
  readonly workspaceId: string;
  readonly userId: string;
}

/** Every user id doers makes (tools, admin CLI): `usr_` and 16 lower-case hex digits (64 random bits). */
export const newUserId = (): string => `usr_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;

/**
 * oidc-provider knows an account by one string; ours is a member of a workspace. Each part is
 * encoded, so a `/` inside an id cannot move the boundary between them.
 */
export const accountIdOf = ({ workspaceId, userId }: MemberRef): string =>
  `${encodeURIComponent(workspaceId)}/${encodeURIComponent(userId)}`;

/**
 * The member an accountId names, or undefined when it is not one `accountIdOf` could have made
 * (only the canonical encoding is accepted, so one member never has two account ids).
 */
export const memberRefOfAccountId = (accountId: string): MemberRef | undefined => {
  const parts = accountId.split('/');
  if (parts.length !== 2) return undefined;
  const [ws, user] = parts as [string, string];
  if (!ws || !user) return undefined;
  let ref: MemberRef;
  try {
    ref = { workspaceId: decodeURIComponent(ws), userId: decodeURIComponent(user) };
  } catch {
    return undefined;
  }
  return accountIdOf(ref) === accountId ? ref : undefined;
};

// ---- the caller ---------------------------------------------------------------------------------

/** Who is calling, resolved once per request by the credential gate. */
export interface Principal {
  readonly userId: string;
  readonly workspaceId: string;
  readonly workspaceName: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly timeZone: string;
  /** How they are told besides their inbox (their member's `notify`). */
  readonly notify?: NotifySettings;
  readonly scopes: readonly Scope[];
  /** Scopes the credential carries that the member's role cuts (a viewer's token minted with tasks:write): a refusal names the role. */
  readonly scopesAboveRole?: readonly Scope[];
  readonly credential: 'personal_access_token' | 'jwt' | 'oauth';
  /**
   * The workspace's directory version as read with this principal: a per-instance snapshot of
   * members and projects at least this new needs no read (workspace/names.ts).
   */
  readonly directoryVersion: number;
  /** Stable per-scope-set key: tool lists are cached by it. */
  readonly scopeKey: string;
  /** The workspace's task key now, and the ones it had: `DEMO-42`, and `OLD-42` of a renamed key. */
  readonly workspaceKey: string;
  readonly pastKeys: readonly string[];
  /** The workspace's task counter as read with this principal: where a new task's number starts looking. */
  readonly taskCounter: number;
  /** How the workspace's tasks are stored (Workspace.layout), and whether a migration is moving them now. */
  readonly layout: number;
  readonly migrating?: boolean;
  /** Workspace.activityIndexed as read with this principal. */
  readonly activityIndexed?: boolean;
  /**
   * What the credential is called by its owner: a personal token's label, a connected app's client
   * name. Activity records name the client by it when the request's `clientInfo` does not.
   */
  readonly credentialLabel?: string;
  /**
   * The tool groups a connected app's grant was given for (it asked for the resource
   * `/mcp?tools=a,b`): listed when a request's URL names none (docs/clients.md, "Tool groups").
   */
  readonly toolGroups?: string;
}

/** What an MCP client says of itself (`clientInfo`): logged and recorded, never trusted. */
export interface ClientInfo {
  readonly name?: string;
  readonly version?: string;
}

/** The principal's role, when their credential carries `scope` and the role is what cuts it: what a refusal names. */
export const roleCutting = (principal: Pick<Principal, 'role' | 'scopesAboveRole'>, scope: Scope): Role | undefined =>
  principal.scopesAboveRole?.includes(scope) ? principal.role : undefined;
