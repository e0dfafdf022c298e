import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  AdminCreateUserCommand,
  AdminDisableUserCommand,
  AdminEnableUserCommand,
  CognitoIdentityProviderClient,
} from '@aws-sdk/client-cognito-identity-provider';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoTokenStore, generateTokenSecret, type PersonalTokenRecord, type TokenStore } from '../auth/personal-tokens.js';
import { isScope, type Scope } from '../auth/scopes.js';
import { DynamoGrantStore, type GrantRecord } from '../oauth/grant-store.js';
import { OAUTH_SK, oauthPk } from '../oauth/item-keys.js';
import { loadConfig } from '../platform/config.js';
import { createDocumentClient, isTransientDynamoError } from '../platform/dynamodb.js';
import { dataDirKeySource, type KeySource, secretsManagerKeySource } from '../platform/keys.js';
import { type DirectoryStore, DynamoDirectoryStore } from '../workspace/directory-store.js';
import { type Member, ROLES, type Role } from '../workspace/model.js';
import { announceDirectoryChange } from '../workspace/names.js';
import { DEMO_WORKSPACE_ID } from './demo-seed.js';
import { LOCAL_SERVER_FILE } from './server.js';

/**
 * `npm run admin -- <group> <action> [options]`: users, workspaces, personal access tokens and the
 * OAuth grants of the built-in authorization server, against the running local server's DynamoDB or
 * a deployed stack. Thin on purpose: every operation is a DirectoryStore / TokenStore / GrantStore
 * call, the same code the functions run. On a stack whose people sign in through its Cognito user
 * pool (output `SignInUserPoolId`), adding, disabling and enabling a user is mirrored there.
 */
const USAGE = `Usage: npm run admin -- <command> [options] [--stack NAME --region R]

  user add --email E --name N [--role owner|admin|member|viewer] [--time-zone Z] [--workspace W]
  user disable --email E
  user enable --email E
  workspace disable [--workspace W]
  workspace enable [--workspace W]
  token create --email E --scopes "tasks:read tasks:write" [--expires-in 30d|12h|never] [--label L]
  token list [--email E] [--workspace W]
  token revoke --id tok_... [--workspace W]
  grants list [--workspace W] [--email E]
  grants revoke --grant ID

Without --stack it works on the running local server's data (DOERS_DATA_DIR, default .data).
With --stack NAME --region R it uses that CloudFormation stack's outputs and your AWS credentials.
Workspace default: ${DEMO_WORKSPACE_ID} locally, ws_main on a stack.
grants: the apps people connected through the built-in authorization server; revoking one stops
its refresh token at once and its access tokens at their next MCP call.
On a stack with the output SignInUserPoolId (people sign in through its Cognito user pool), user add
also invites the person there (Cognito e-mails a temporary password; re-running user add for an
existing member does only that), and user disable / user enable disable / enable them there.`;

/** A refusal the operator can fix; printed without a stack trace. */
class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
const usage = (message: string): CliError => new CliError(`${message}\n(npm run admin -- --help lists the commands and options)`, 2);

const DEPLOYED_DEFAULT_WORKSPACE = 'ws_main';
const DEFAULT_TOKEN_LIFETIME = '90d';

/** The Cognito user pool people sign in with at the built-in authorization server. */
interface SignInPool {
  readonly userPoolId: string;
  readonly cognito: CognitoIdentityProviderClient;
}

interface Target {
  readonly directory: DirectoryStore;
  readonly tokens: TokenStore;
  readonly grants: DynamoGrantStore;
  readonly defaultWorkspace: string;
  readonly where: string;
  readonly db: DynamoDBDocumentClient;
  readonly table: string;
  /** Only on a stack with the `SignInUserPoolId` output. */
  readonly signInPool?: SignInPool;
}

const stackOutputs = async (stack: string, region: string): Promise<Record<string, string>> => {
  const cfn = new CloudFormationClient({ region });
  try {
    const out = await cfn.send(new DescribeStacksCommand({ StackName: stack }));
    const outputs = out.Stacks?.[0]?.Outputs ?? [];
    return Object.fromEntries(outputs.flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])));
  } catch (err) {
    throw new CliError(`--stack: cannot read the outputs of stack "${stack}" in ${region}: ${(err as Error).message}`);
  } finally {
    cfn.destroy();
  }
};

const connect = async (stack: string | undefined, region: string | undefined): Promise<Target> => {
  if (stack !== undefined) {
    const r = region ?? loadConfig().region;
    if (!r) throw usage('--region: required with --stack (or set AWS_REGION)');
    const outputs = await stackOutputs(stack, r);
    const table = outputs.WorkspaceTableName;
    const secretArn = outputs.SecretArn;
    if (!table || !secretArn)
      throw new CliError(`--stack: stack "${stack}" has no WorkspaceTableName/SecretArn outputs; is it a doers stack?`);
    const stackRegion = outputs.Region ?? r;
    const db = createDocumentClient({ region: stackRegion });
    const keys: KeySource = secretsManagerKeySource(new SecretsManagerClient({ region: stackRegion }), secretArn);
    const userPoolId = outputs.SignInUserPoolId;
    const signInPool = userPoolId ? { userPoolId, cognito: new CognitoIdentityProviderClient({ region: stackRegion }) } : undefined;
    return stores(db, table, keys, DEPLOYED_DEFAULT_WORKSPACE, `stack ${stack} (${stackRegion})`, signInPool);
  }
  if (region !== undefined) throw usage('--region: only meaningful with --stack');
  const config = loadConfig();
  const file = join(config.dataDir, LOCAL_SERVER_FILE);
  let local: { dynamodbEndpoint?: string; tables?: { workspace?: string } };
  try {
    local = JSON.parse(await readFile(file, 'utf8')) as typeof local;
  } catch {
    throw new CliError(
      `No local server data at ${file}: start the local server (npm start) with the same DOERS_DATA_DIR, or pass --stack NAME --region R`,
    );
  }
  if (!local.dynamodbEndpoint || !local.tables?.workspace) throw new CliError(`${file} is not a local server file`);
  const db = createDocumentClient({ endpoint: local.dynamodbEndpoint });
  return stores(
    db,
    local.tables.workspace,
    dataDirKeySource(config.dataDir),
    DEMO_WORKSPACE_ID,
    `local server data (${local.dynamodbEndpoint})`,
  );
};

const stores = (
  db: DynamoDBDocumentClient,
  table: string,
  keys: KeySource,
  defaultWorkspace: string,
  where: string,
  signInPool?: SignInPool,
): Target => ({
  directory: new DynamoDirectoryStore(db, table, (ws) => announceDirectoryChange(db, table, ws)),
  tokens: new DynamoTokenStore(db, table, keys),
  grants: new DynamoGrantStore(db, table),
  defaultWorkspace,
  where,
  db,
  table,
  ...(signInPool ? { signInPool } : {}),
});

// ---- argument checks -----------------------------------------------------------------------------

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const required = (value: string | undefined, name: string): string => {
  if (value === undefined || value.trim() === '') throw usage(`--${name}: required`);
  return value.trim();
};

const emailOf = (value: string | undefined): string => {
  const email = required(value, 'email');
  if (!EMAIL.test(email)) throw usage(`--email: "${email}" is not an e-mail address`);
  return email.toLowerCase();
};

const roleOf = (value: string | undefined): Role => {
  const role = value ?? 'member';
  if (!(ROLES as readonly string[]).includes(role)) throw usage(`--role: "${role}" is not one of ${ROLES.join(', ')}`);
  return role as Role;
};

const timeZoneOf = (value: string | undefined): string => {
  const zone = value ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    throw usage(`--time-zone: "${zone}" is not an IANA time zone (e.g. Europe/Berlin)`);
  }
};

const workspaceOf = (value: string | undefined, target: Target): string => {
  const ws = value ?? target.defaultWorkspace;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(ws)) throw usage(`--workspace: "${ws}" is not a workspace id (letters, digits, _ and -)`);
  return ws;
};

const scopesOf = (value: string | undefined): Scope[] => {
  const names = required(value, 'scopes')
    .split(/[\s,]+/)
    .filter(Boolean);
  const unknown = names.filter((s) => !isScope(s));
  if (unknown.length)
    throw usage(`--scopes: unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; known: tasks:read tasks:write team:read team:admin`);
  return [...new Set(names as Scope[])];
};

const UNIT_SECONDS: Record<string, number> = { m: 60, h: 3600, d: 86_400 };

/** `30d`, `12h`, `45m` or `never`: epoch seconds of expiry, or undefined. */
const expiryOf = (value: string | undefined, now: Date): number | undefined => {
  const text = value ?? DEFAULT_TOKEN_LIFETIME;
  if (text === 'never') return undefined;
  const m = /^(\d+)([mhd])$/.exec(text);
  if (!m || Number(m[1]) === 0) throw usage(`--expires-in: "${text}" is not a duration like 30d, 12h, 45m or never`);
  return Math.floor(now.getTime() / 1000) + Number(m[1]) * UNIT_SECONDS[m[2]!]!;
};

const memberByEmail = async (target: Target, email: string): Promise<Member> => {
  const member = await target.directory.findMemberByEmail(email);
  if (!member) throw new CliError(`--email: no user ${email} in ${target.where}`);
  return member;
};

const grantIdOf = (value: string | undefined): string => {
  const id = required(value, 'grant');
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) throw usage(`--grant: "${id}" is not a grant id (see grants list)`);
  return id;
};

// ---- OAuth clients, as an operator recognises them -----------------------------------------------

/**
 * A client name is whatever the registrant sent: quoted, with control, format and bidi characters
 * escaped, so it can neither break the one-line-per-grant layout nor disguise itself on a terminal.
 */
const quoted = (text: string): string =>
  JSON.stringify(text).replace(
    /[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** The host of a Client ID Metadata Document client (its client id is the document's https URL). */
const metadataDocumentHost = (clientId: string): string | undefined => {
  if (!clientId.startsWith('https://')) return undefined;
  try {
    return new URL(clientId).host;
  } catch {
    return undefined;
  }
};

/**
 * How `grants` shows a client: a metadata-document client by its (verified) host; a registered one
 * by its id and, while its registration lasts, its `client_name`.
 */
const clientLabel = async (target: Target, clientId: string, now: Date): Promise<string> => {
  const host = metadataDocumentHost(clientId);
  if (host) return host;
  const id = /^[\x21-\x7e]+$/.test(clientId) ? clientId : quoted(clientId);
  const out = await target.db.send(new GetCommand({ TableName: target.table, Key: { pk: oauthPk('Client', clientId), sk: OAUTH_SK } }));
  const item = out.Item;
  if (!item || typeof item.payload !== 'string' || (typeof item.expiresAt === 'number' && item.expiresAt * 1000 <= now.getTime()))
    return id;
  const name = (JSON.parse(item.payload) as { client_name?: unknown }).client_name;
  return typeof name === 'string' && name.trim() ? `${id} ${quoted(name)}` : id;
};

const clientLabels = async (target: Target, grants: readonly GrantRecord[], now: Date): Promise<Map<string, string>> => {
  const ids = [...new Set(grants.map((g) => g.clientId))];
  return new Map(await Promise.all(ids.map(async (id) => [id, await clientLabel(target, id, now)] as const)));
};

// ---- the stack's Cognito user pool (SignInUserPoolId) ---------------------------------------------

const errorName = (err: unknown): string | undefined => (err as { name?: unknown } | null)?.name as string | undefined;
const describeError = (err: unknown): string => {
  const name = errorName(err);
  const message = (err as Error).message;
  return name && name !== 'Error' && !message.startsWith(name) ? `${name}: ${message}` : message;
};

/**
 * AdminCreateUser with the e-mail address as username: Cognito e-mails the person an invitation with
 * a temporary password. A user already there is left as it is. Answers what was done.
 */
const inviteToSignInPool = async (pool: SignInPool, email: string): Promise<string> => {
  try {
    await pool.cognito.send(
      new AdminCreateUserCommand({
        UserPoolId: pool.userPoolId,
        Username: email,
        UserAttributes: [
          { Name: 'email', Value: email },
          { Name: 'email_verified', Value: 'true' },
        ],
        DesiredDeliveryMediums: ['EMAIL'],
      }),
    );
    return `Cognito user pool ${pool.userPoolId}: created ${email}; Cognito e-mails them an invitation with a temporary password.`;
  } catch (err) {
    if (errorName(err) !== 'UsernameExistsException') throw err;
    return `Cognito user pool ${pool.userPoolId}: ${email} already exists there; left as it is (no new invitation).`;
  }
};

/** AdminDisableUser / AdminEnableUser. A user not in the pool is reported, not an error. */
const setSignInPoolStatus = async (pool: SignInPool, email: string, status: 'active' | 'disabled'): Promise<string> => {
  const input = { UserPoolId: pool.userPoolId, Username: email };
  try {
    await pool.cognito.send(status === 'disabled' ? new AdminDisableUserCommand(input) : new AdminEnableUserCommand(input));
    return `Cognito user pool ${pool.userPoolId}: ${email} is ${status === 'disabled' ? 'disabled; they cannot sign in' : 'enabled; they can sign in again'}.`;
  } catch (err) {
    if (errorName(err) !== 'UserNotFoundException') throw err;
    return status === 'disabled'
      ? `Cognito user pool ${pool.userPoolId}: no user ${email} there; nothing to disable.`
      : `Cognito user pool ${pool.userPoolId}: no user ${email} there; "user add --email ${email} --name …" invites them.`;
  }
};

// ---- commands ------------------------------------------------------------------------------------

type Options = Partial<
  Record<'email' | 'name' | 'role' | 'time-zone' | 'workspace' | 'scopes' | 'expires-in' | 'label' | 'id' | 'grant', string>
>;
type Out = { stdout: (line: string) => void; stderr: (line: string) => void };

const tokenStatus = (t: PersonalTokenRecord, now: Date): string =>
  t.revokedAt ? `revoked ${t.revokedAt}` : t.expiresAt !== undefined && t.expiresAt * 1000 <= now.getTime() ? 'expired' : 'active';

const run = async (command: string, o: Options, target: Target, out: Out, now: Date): Promise<void> => {
  switch (command) {
    case 'user add': {
      const email = emailOf(o.email);
      const name = required(o.name, 'name');
      const role = roleOf(o.role);
      const timeZone = timeZoneOf(o['time-zone']);
      const workspaceId = workspaceOf(o.workspace, target);
      const pool = target.signInPool;
      const alreadyExists = (where?: string) =>
        new CliError(`--email: a user with the e-mail ${email} already exists${where ? ` (in workspace ${where})` : ''}`);
      // Re-running user add for a member whose Cognito invitation failed does the Cognito part only.
      const existing = await target.directory.findMemberByEmail(email);
      let userId: string;
      if (existing) {
        if (!pool) throw alreadyExists();
        if (existing.workspaceId !== workspaceId) throw alreadyExists(existing.workspaceId);
        userId = existing.userId;
        out.stdout(
          `${email} [${userId}] is already ${existing.status === 'disabled' ? 'a disabled' : 'an active'} ${existing.role} of ${workspaceId}; left as it is in doers.`,
        );
      } else {
        const createdAt = now.toISOString();
        if (await target.directory.createWorkspace({ workspaceId, name: workspaceId, status: 'active', createdAt })) {
          out.stderr(`Created workspace ${workspaceId}.`);
        }
        userId = `usr_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
        const added = await target.directory.createMember({
          workspaceId,
          userId,
          email,
          name,
          role,
          timeZone,
          status: 'active',
          createdAt,
        });
        if (!added) throw alreadyExists();
        out.stdout(`Added ${name} <${email}> [${userId}] as ${role} of ${workspaceId}.`);
      }
      if (!pool) return;
      try {
        out.stdout(await inviteToSignInPool(pool, email));
      } catch (err) {
        throw new CliError(
          `${email} [${userId}] ${existing ? 'is' : 'was added as'} a member of ${workspaceId} in doers, but was not added to Cognito user pool ` +
            `${pool.userPoolId} (${describeError(err)}). Run the same user add command again to retry: for an existing member it does only the Cognito part.`,
        );
      }
      return;
    }
    case 'user disable':
    case 'user enable': {
      const member = await memberByEmail(target, emailOf(o.email));
      const status = command === 'user disable' ? 'disabled' : 'active';
      await target.directory.setMemberStatus(member.workspaceId, member.userId, status);
      out.stdout(
        `${member.email} [${member.userId}] is ${status}${status === 'disabled' ? '; their tokens are refused from the next request on' : ''}.`,
      );
      const pool = target.signInPool;
      if (!pool) return;
      try {
        out.stdout(await setSignInPoolStatus(pool, member.email, status));
      } catch (err) {
        throw new CliError(
          `${member.email} is ${status} in doers${status === 'disabled' ? ' (their tokens are refused)' : ''}, but not in Cognito user pool ` +
            `${pool.userPoolId} (${describeError(err)}). Run the same user ${command === 'user disable' ? 'disable' : 'enable'} command again to retry.`,
        );
      }
      return;
    }
    case 'workspace disable':
    case 'workspace enable': {
      const workspaceId = workspaceOf(o.workspace, target);
      const status = command === 'workspace disable' ? 'disabled' : 'active';
      if (!(await target.directory.setWorkspaceStatus(workspaceId, status)))
        throw new CliError(`--workspace: no workspace ${workspaceId} in ${target.where}`);
      out.stdout(`Workspace ${workspaceId} is ${status}.`);
      return;
    }
    case 'token create': {
      const email = emailOf(o.email);
      const scopes = scopesOf(o.scopes);
      const expiresAt = expiryOf(o['expires-in'], now);
      const member = await memberByEmail(target, email);
      if (member.status !== 'active') throw new CliError(`--email: ${email} is disabled; enable the user first`);
      const secret = generateTokenSecret();
      const record = await target.tokens.register(secret, {
        workspaceId: member.workspaceId,
        userId: member.userId,
        scopes,
        label: o.label?.trim() || `admin cli ${now.toISOString().slice(0, 10)}`,
        createdAt: now.toISOString(),
        ...(expiresAt === undefined ? {} : { expiresAt }),
      });
      out.stderr(
        `Token ${record.tokenId} for ${email}, scopes ${scopes.join(' ')}, ` +
          `${expiresAt === undefined ? 'never expires' : `expires ${new Date(expiresAt * 1000).toISOString()}`}. ` +
          'The secret below is shown once and stored nowhere:',
      );
      out.stdout(secret);
      return;
    }
    case 'token list': {
      const member = o.email !== undefined ? await memberByEmail(target, emailOf(o.email)) : undefined;
      const workspaceId = member?.workspaceId ?? workspaceOf(o.workspace, target);
      const [tokens, members] = await Promise.all([target.tokens.list(workspaceId), target.directory.listMembers(workspaceId)]);
      const emails = new Map(members.map((m) => [m.userId, m.email]));
      const shown = tokens.filter((t) => !member || t.userId === member.userId).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      if (!shown.length) out.stderr(`No tokens in ${workspaceId}${member ? ` for ${member.email}` : ''}.`);
      for (const t of shown) {
        const expires = t.expiresAt === undefined ? 'never' : new Date(t.expiresAt * 1000).toISOString();
        out.stdout(
          [
            t.tokenId,
            emails.get(t.userId) ?? t.userId,
            t.scopes.join(' ') || '-',
            `expires ${expires}`,
            tokenStatus(t, now),
            JSON.stringify(t.label),
          ].join('\t'),
        );
      }
      return;
    }
    case 'token revoke': {
      const id = required(o.id, 'id');
      if (!/^tok_[A-Za-z0-9]+$/.test(id)) throw usage(`--id: "${id}" is not a token id (tok_…, see token list)`);
      const workspaceId = workspaceOf(o.workspace, target);
      if (!(await target.tokens.revoke(workspaceId, id, now.toISOString())))
        throw new CliError(`--id: no token ${id} in workspace ${workspaceId}`);
      out.stdout(`Revoked ${id}; it is refused from the next request on.`);
      return;
    }
    case 'grants list': {
      const member = o.email !== undefined ? await memberByEmail(target, emailOf(o.email)) : undefined;
      const workspaceId = member?.workspaceId ?? workspaceOf(o.workspace, target);
      const [grants, members] = await Promise.all([
        target.grants.list(workspaceId, member?.userId),
        target.directory.listMembers(workspaceId),
      ]);
      const emails = new Map(members.map((m) => [m.userId, m.email]));
      const shown = grants.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
      if (!shown.length) out.stderr(`No grants in ${workspaceId}${member ? ` for ${member.email}` : ''}.`);
      const clients = await clientLabels(target, shown, now);
      for (const g of shown) {
        out.stdout(
          [
            g.grantId,
            clients.get(g.clientId)!,
            emails.get(g.userId) ?? g.userId,
            g.scopes.join(' ') || '-',
            `created ${g.createdAt}`,
            `expires ${g.expiresAt ?? 'never'}`,
          ].join('\t'),
        );
      }
      return;
    }
    case 'grants revoke': {
      const id = grantIdOf(o.grant);
      const grant = await target.grants.get(id);
      if (!(await target.grants.revoke(id))) throw new CliError(`--grant: no grant ${id} in ${target.where}`);
      const person = grant ? ((await target.directory.getMember(grant.workspaceId, grant.userId))?.email ?? grant.userId) : undefined;
      const what = grant ? ` (${await clientLabel(target, grant.clientId, now)} for ${person})` : '';
      out.stdout(`Revoked grant ${id}${what}; its refresh token is refused from now on, its access tokens from their next MCP call.`);
      return;
    }
    default:
      throw usage(command ? `unknown command "${command}"` : 'no command given');
  }
};

/** Where each option is allowed, so a misplaced one is named instead of silently ignored. */
const ALLOWED: Record<string, readonly (keyof Options)[]> = {
  'user add': ['email', 'name', 'role', 'time-zone', 'workspace'],
  'user disable': ['email'],
  'user enable': ['email'],
  'workspace disable': ['workspace'],
  'workspace enable': ['workspace'],
  'token create': ['email', 'scopes', 'expires-in', 'label'],
  'token list': ['email', 'workspace'],
  'token revoke': ['id', 'workspace'],
  'grants list': ['workspace', 'email'],
  'grants revoke': ['grant'],
};

export const main = async (argv: readonly string[], out: Out): Promise<number> => {
  let target: Target | undefined;
  try {
    let parsed;
    try {
      parsed = parseArgs({
        args: [...argv],
        allowPositionals: true,
        strict: true,
        options: {
          email: { type: 'string' },
          name: { type: 'string' },
          role: { type: 'string' },
          'time-zone': { type: 'string' },
          workspace: { type: 'string' },
          scopes: { type: 'string' },
          'expires-in': { type: 'string' },
          label: { type: 'string' },
          id: { type: 'string' },
          grant: { type: 'string' },
          stack: { type: 'string' },
          region: { type: 'string' },
          help: { type: 'boolean', short: 'h' },
        },
      });
    } catch (err) {
      throw usage((err as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      out.stdout(USAGE);
      return 0;
    }
    const command = positionals.join(' ');
    const allowed = ALLOWED[command];
    if (!allowed) throw usage(command ? `unknown command "${command}"` : 'no command given');
    const { stack, region, help: _help, ...options } = values;
    for (const name of Object.keys(options)) {
      if (!allowed.includes(name as keyof Options)) throw usage(`--${name}: not an option of "${command}"`);
    }
    target = await connect(stack, region);
    await run(command, options as Options, target, out, new Date());
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      out.stderr(`error: ${err.message}`);
      return err.exitCode;
    }
    if (isTransientDynamoError(err)) {
      const hint = target?.where.startsWith('local') ? '; is the local server (npm start) running?' : '';
      out.stderr(`error: cannot reach DynamoDB for ${target?.where ?? 'the data'}${hint} (${(err as Error).message})`);
      return 1;
    }
    out.stderr(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    target?.db.destroy();
    target?.signInPool?.cognito.destroy();
  }
};

// Run as a script (npm run admin), not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const code = await main(process.argv.slice(2), {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
  });
  process.exitCode = code;
}
