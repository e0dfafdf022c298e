import { isRole, isScope, type Member, ROLES, type Role, type Scope, type Workspace } from '../lambda/vocabulary.js';
import { CliError, usage } from './errors.js';
import type { Target } from './target.js';

/** Option values by name, as parseArgs gives them; each command names the ones it takes. */
export type Options = Partial<
  Record<
    | 'email'
    | 'name'
    | 'role'
    | 'time-zone'
    | 'workspace'
    | 'scopes'
    | 'expires-in'
    | 'label'
    | 'id'
    | 'grant'
    | 'key'
    | 'drain-seconds'
    | 'file'
    | 'format'
    | 'url'
    | 'events'
    | 'as'
    | 'project',
    string
  >
> & { readonly 'dry-run'?: boolean };

/** Where a command writes: results on stdout, what a person reads on stderr. */
export interface Out {
  stdout(line: string): void;
  stderr(line: string): void;
}

/** One command: the options it takes, and what it does. */
export interface Command {
  readonly options: readonly (keyof Options)[];
  run(o: Options, target: Target, out: Out, now: Date): Promise<void>;
}

const DEFAULT_TOKEN_LIFETIME = '90d';

export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const required = (value: string | undefined, name: string): string => {
  if (value === undefined || value.trim() === '') throw usage(`--${name}: required`);
  return value.trim();
};

export const emailOf = (value: string | undefined): string => {
  const email = required(value, 'email');
  if (!EMAIL.test(email)) throw usage(`--email: "${email}" is not an e-mail address`);
  return email.toLowerCase();
};

export const roleOf = (value: string | undefined): Role => {
  const role = value ?? 'member';
  if (!isRole(role)) throw usage(`--role: "${role}" is not one of ${ROLES.join(', ')}`);
  return role;
};

export const timeZoneOf = (value: string | undefined): string => {
  const zone = value ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    throw usage(`--time-zone: "${zone}" is not an IANA time zone (e.g. Europe/Berlin)`);
  }
};

export const workspaceOf = (value: string | undefined, target: Target): string => {
  const ws = value ?? target.defaultWorkspace;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(ws)) throw usage(`--workspace: "${ws}" is not a workspace id (letters, digits, _ and -)`);
  return ws;
};

export const scopesOf = (value: string | undefined): Scope[] => {
  const names = required(value, 'scopes')
    .split(/[\s,]+/)
    .filter(Boolean);
  const unknown = names.filter((s) => !isScope(s));
  if (unknown.length)
    throw usage(`--scopes: unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; known: tasks:read tasks:write team:read team:admin`);
  return [...new Set(names as Scope[])];
};

export const UNIT_SECONDS: Record<string, number> = { m: 60, h: 3600, d: 86_400 };

/** `30d`, `12h`, `45m` or `never`: epoch seconds of expiry, or undefined. */
export const expiryOf = (value: string | undefined, now: Date): number | undefined => {
  const text = value ?? DEFAULT_TOKEN_LIFETIME;
  if (text === 'never') return undefined;
  const m = /^(\d+)([mhd])$/.exec(text);
  if (!m || Number(m[1]) === 0) throw usage(`--expires-in: "${text}" is not a duration like 30d, 12h, 45m or never`);
  return Math.floor(now.getTime() / 1000) + Number(m[1]) * UNIT_SECONDS[m[2]!]!;
};

export const memberByEmail = async (target: Target, email: string): Promise<Member> => {
  const member = await target.directory.findMemberByEmail(email);
  if (!member) throw new CliError(`--email: no user ${email} in ${target.where}`);
  return member;
};

export const grantIdOf = (value: string | undefined): string => {
  const id = required(value, 'grant');
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) throw usage(`--grant: "${id}" is not a grant id (see grants list)`);
  return id;
};

/** The refusal of a workspace id the target does not hold. */
export const noWorkspace = (workspaceId: string, target: Target): CliError =>
  new CliError(`--workspace: no workspace ${workspaceId} in ${target.where}`);

/** The workspace, or the refusal naming it. */
export const existingWorkspace = async (target: Target, workspaceId: string): Promise<Workspace> => {
  const workspace = await target.directory.getWorkspace(workspaceId);
  if (!workspace) throw noWorkspace(workspaceId, target);
  return workspace;
};
