import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoTokenStore, generateTokenSecret, type PersonalTokenRecord, type TokenStore } from '../auth/personal-tokens.js';
import { isScope, type Scope } from '../auth/scopes.js';
import { loadConfig } from '../platform/config.js';
import { createDocumentClient, isTransientDynamoError } from '../platform/dynamodb.js';
import { dataDirKeySource, secretsManagerKeySource, type KeySource } from '../platform/keys.js';
import { DynamoDirectoryStore, type DirectoryStore } from '../workspace/directory-store.js';
import { announceDirectoryChange } from '../workspace/names.js';
import { ROLES, type Member, type Role } from '../workspace/model.js';
import { DEMO_WORKSPACE_ID } from './demo-seed.js';
import { LOCAL_SERVER_FILE } from './server.js';

/**
 * `npm run admin -- <group> <action> [options]`: users, workspaces and personal access tokens,
 * against the running local server's DynamoDB or a deployed stack. Thin on purpose: every operation
 * is a DirectoryStore / TokenStore call, the same code the function runs.
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

Without --stack it works on the running local server's data (DOERS_DATA_DIR, default .data).
With --stack NAME --region R it uses that CloudFormation stack's outputs and your AWS credentials.
Workspace default: ${DEMO_WORKSPACE_ID} locally, ws_main on a stack.`;

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

interface Target {
  readonly directory: DirectoryStore;
  readonly tokens: TokenStore;
  readonly defaultWorkspace: string;
  readonly where: string;
  readonly db: DynamoDBDocumentClient;
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
    if (!table || !secretArn) throw new CliError(`--stack: stack "${stack}" has no WorkspaceTableName/SecretArn outputs; is it a doers stack?`);
    const stackRegion = outputs.Region ?? r;
    const db = createDocumentClient({ region: stackRegion });
    const keys: KeySource = secretsManagerKeySource(new SecretsManagerClient({ region: stackRegion }), secretArn);
    return stores(db, table, keys, DEPLOYED_DEFAULT_WORKSPACE, `stack ${stack} (${stackRegion})`);
  }
  if (region !== undefined) throw usage('--region: only meaningful with --stack');
  const config = loadConfig();
  const file = join(config.dataDir, LOCAL_SERVER_FILE);
  let local: { dynamodbEndpoint?: string; tables?: { workspace?: string } };
  try {
    local = JSON.parse(await readFile(file, 'utf8')) as typeof local;
  } catch {
    throw new CliError(`No local server data at ${file}: start the local server (npm start) with the same DOERS_DATA_DIR, or pass --stack NAME --region R`);
  }
  if (!local.dynamodbEndpoint || !local.tables?.workspace) throw new CliError(`${file} is not a local server file`);
  const db = createDocumentClient({ endpoint: local.dynamodbEndpoint });
  return stores(db, local.tables.workspace, dataDirKeySource(config.dataDir), DEMO_WORKSPACE_ID, `local server data (${local.dynamodbEndpoint})`);
};

const stores = (db: DynamoDBDocumentClient, table: string, keys: KeySource, defaultWorkspace: string, where: string): Target => ({
  directory: new DynamoDirectoryStore(db, table, (ws) => announceDirectoryChange(db, table, ws)),
  tokens: new DynamoTokenStore(db, table, keys),
  defaultWorkspace,
  where,
  db,
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
  const names = required(value, 'scopes').split(/[\s,]+/).filter(Boolean);
  const unknown = names.filter((s) => !isScope(s));
  if (unknown.length) throw usage(`--scopes: unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; known: tasks:read tasks:write team:read team:admin`);
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

// ---- commands ------------------------------------------------------------------------------------

type Options = Partial<Record<'email' | 'name' | 'role' | 'time-zone' | 'workspace' | 'scopes' | 'expires-in' | 'label' | 'id', string>>;
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
      const createdAt = now.toISOString();
      if (await target.directory.createWorkspace({ workspaceId, name: workspaceId, status: 'active', createdAt })) {
        out.stderr(`Created workspace ${workspaceId}.`);
      }
      const userId = `usr_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      const added = await target.directory.createMember({ workspaceId, userId, email, name, role, timeZone, status: 'active', createdAt });
      if (!added) throw new CliError(`--email: a user with the e-mail ${email} already exists`);
      out.stdout(`Added ${name} <${email}> [${userId}] as ${role} of ${workspaceId}.`);
      return;
    }
    case 'user disable':
    case 'user enable': {
      const member = await memberByEmail(target, emailOf(o.email));
      const status = command === 'user disable' ? 'disabled' : 'active';
      await target.directory.setMemberStatus(member.workspaceId, member.userId, status);
      out.stdout(`${member.email} [${member.userId}] is ${status}${status === 'disabled' ? '; their tokens are refused from the next request on' : ''}.`);
      return;
    }
    case 'workspace disable':
    case 'workspace enable': {
      const workspaceId = workspaceOf(o.workspace, target);
      const status = command === 'workspace disable' ? 'disabled' : 'active';
      if (!(await target.directory.setWorkspaceStatus(workspaceId, status))) throw new CliError(`--workspace: no workspace ${workspaceId} in ${target.where}`);
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
        out.stdout([t.tokenId, emails.get(t.userId) ?? t.userId, t.scopes.join(' ') || '-', `expires ${expires}`, tokenStatus(t, now), JSON.stringify(t.label)].join('\t'));
      }
      return;
    }
    case 'token revoke': {
      const id = required(o.id, 'id');
      if (!/^tok_[A-Za-z0-9]+$/.test(id)) throw usage(`--id: "${id}" is not a token id (tok_…, see token list)`);
      const workspaceId = workspaceOf(o.workspace, target);
      if (!(await target.tokens.revoke(workspaceId, id, now.toISOString()))) throw new CliError(`--id: no token ${id} in workspace ${workspaceId}`);
      out.stdout(`Revoked ${id}; it is refused from the next request on.`);
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
