import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ToolRefusal } from '../lambda/errors.js';
import { DEMO_WORKSPACE_ID } from '../lambda/local/local-data.js';
import { isTransientDynamoError } from '../lambda/platform/dynamodb.js';
import type { Command, Options, Out } from './args.js';
import { CliError, usage } from './errors.js';
import { GRANT_COMMANDS } from './grants.js';
import { connect, DEPLOYED_DEFAULT_WORKSPACE, type Target } from './target.js';
import { TOKEN_COMMANDS } from './tokens.js';
import { TRANSFER_COMMANDS } from './transfer.js';
import { USER_COMMANDS } from './users.js';
import { WEBHOOK_COMMANDS } from './webhooks.js';
import { WORKSPACE_COMMANDS } from './workspaces.js';

/**
 * `npm run admin -- <group> <action> [options]`: the operator's tool, against the running local
 * server's DynamoDB or a deployed stack. Thin on purpose: every operation is a call of the same
 * stores and membership rules the functions run (lambda/workspace/membership.ts), so the CLI can do
 * nothing a workspace's own rules refuse. On a stack whose people sign in through its Cognito user
 * pool (output `SignInUserPoolId`), adding, disabling and enabling a user is mirrored there.
 */
const USAGE = `Usage: npm run admin -- <command> [options] [--stack NAME --region R]

  user add --email E --name N [--role owner|admin|member|viewer] [--time-zone Z] [--workspace W]
  user role --email E --role owner|admin|member|viewer
  user disable --email E
  user enable --email E
  user remove --email E
  workspace show [--workspace W]
  workspace disable [--workspace W]
  workspace enable [--workspace W]
  workspace key --key ACME [--workspace W]
  tasks number [--workspace W]
  migrate [--workspace W|all] [--drain-seconds 20]
  token create --email E --scopes "tasks:read tasks:write" [--expires-in 30d|12h|never] [--label L]
  token list [--email E] [--workspace W]
  token revoke --id tok_... [--workspace W]
  grants list [--workspace W] [--email E]
  grants revoke --grant ID
  export --file F [--workspace W]
  files sweep [--workspace W] [--dry-run]
  import --file F [--as KEY [--workspace NEW]]   (a doers export: the whole workspace)
  import --file F.csv [--format todoist|asana|linear|jira] [--project P] [--workspace W] [--dry-run]
  webhook add --url https://… [--events assigned,completed] [--format standard|slack] [--workspace W]
  webhook list [--workspace W]
  webhook remove --id hook_... [--workspace W]
  webhook test --id hook_... [--workspace W]

Without --stack it works on the running local server's data (DOERS_DATA_DIR, default .data).
With --stack NAME --region R it uses that CloudFormation stack's outputs and your AWS credentials.
Workspace default: ${DEMO_WORKSPACE_ID} locally, ${DEPLOYED_DEFAULT_WORKSPACE} on a stack.
The workspace's rules hold here too: the last active owner cannot be disabled, demoted or removed
(make someone else owner first).
workspace key: tasks are shown as KEY-<number>; the old key keeps naming them. tasks number: the
one-time migration of a workspace from before task numbers (idempotent: run it again, it does nothing).
migrate: brings a workspace (or all) from an earlier version's data layout to this one's, after
cdk deploy of this version (docs/deploy-and-operations.md, "Upgrading"). Task changes pause while it
runs; reads go on. Stopped anywhere, run it again: it goes on where it was.
workspace show: the table the CLI reads, the workspace's task numbers, layout, open tasks and
members: the check after adopting a restored table (docs/deploy-and-operations.md).
export / import: a whole workspace (members, projects, tasks, comments, history) to one JSON Lines
file and into a stack that does not have it, ids and keys kept; tokens and connected apps stay
behind (docs/deploy-and-operations.md, "Moving a workspace"); --as KEY imports it as a copy beside
the original: a new workspace id (--workspace, else a new one) and every id new, tasks named KEY-n.
A CSV export of Todoist, Asana, Linear or Jira is imported as tasks (docs/deploy-and-operations.md,
"Moving a team in"); --project names the project of rows that name none (Todoist: the file's name);
--dry-run lists every column of the file and what it becomes, what each row would be and every field
it cannot map, and writes nothing; a re-run creates nothing twice.
files sweep: removes a workspace's attachment objects that no attachment names (older than an hour),
which only a crash between an upload and its write leaves; --dry-run lists them.
grants: the apps people connected through the built-in authorization server; revoking one stops
its refresh token at once and its access tokens at their next MCP call.
On a stack with the output SignInUserPoolId (people sign in through its Cognito user pool), user add
also invites the person there (Cognito e-mails a temporary password; re-running user add for an
existing member does only that), and user disable / user enable disable / enable them there.
webhook: a workspace's outbound webhooks (docs/notifications.md, "Webhooks"): https to public
addresses only, each delivery signed per Standard Webhooks with the webhook's own secret (printed
once by add); list shows each one's failed deliveries and last failure; test sends a signed
test delivery and prints what came of it.`;

const COMMANDS: Readonly<Record<string, Command>> = {
  ...USER_COMMANDS,
  ...WORKSPACE_COMMANDS,
  ...TOKEN_COMMANDS,
  ...GRANT_COMMANDS,
  ...TRANSFER_COMMANDS,
  ...WEBHOOK_COMMANDS,
};

const OPTION_NAMES = [
  'email',
  'name',
  'role',
  'time-zone',
  'workspace',
  'scopes',
  'expires-in',
  'label',
  'id',
  'grant',
  'key',
  'drain-seconds',
  'file',
  'format',
  'url',
  'events',
  'as',
  'project',
] as const;

/**
 * One run of the CLI: `env` holds the configuration names (the script passes its environment; a
 * test its own), parsed once by the target.
 */
export const main = async (argv: readonly string[], out: Out, env: Record<string, string | undefined>): Promise<number> => {
  let target: Target | undefined;
  try {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (err) {
      throw usage((err as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      out.stdout(USAGE);
      return 0;
    }
    const name = positionals.join(' ');
    const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
    if (!command) throw usage(name ? `unknown command "${name}"` : 'no command given');
    const { stack, region, help: _help, ...options } = values;
    // A misplaced option is named instead of silently ignored.
    for (const option of Object.keys(options)) {
      if (!command.options.includes(option as keyof Options)) throw usage(`--${option}: not an option of "${name}"`);
    }
    target = await connect(stack, region, env);
    await command.run(options as Options, target, out, new Date());
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      out.stderr(`error: ${err.message}`);
      return err.exitCode;
    }
    // The workspace's own rules (membership.ts) refused: the same words a tool or the account page gives.
    if (err instanceof ToolRefusal) {
      out.stderr(`error: ${err.message}`);
      return 1;
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

const STRING_OPTIONS = new Set<string>([...OPTION_NAMES, 'stack', 'region']);

/**
 * `--name value` as `--name=value` for the options that take a value: an id that starts with a dash
 * (a grant's, a token's: random base64url) is then the option's value, not read as another option.
 */
const joined = (argv: readonly string[]): string[] => {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (name !== undefined && STRING_OPTIONS.has(name) && i + 1 < argv.length) out.push(`${arg}=${argv[++i]}`);
    else out.push(arg);
  }
  return out;
};

const parse = (argv: readonly string[]) =>
  parseArgs({
    args: joined(argv),
    allowPositionals: true,
    strict: true,
    options: {
      ...Object.fromEntries(OPTION_NAMES.map((n) => [n, { type: 'string' as const }])),
      stack: { type: 'string' },
      region: { type: 'string' },
      'dry-run': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    } as Record<(typeof OPTION_NAMES)[number] | 'stack' | 'region', { type: 'string' }> & {
      'dry-run': { type: 'boolean' };
      help: { type: 'boolean'; short: 'h' };
    },
  });

// Run as a script (npm run admin), not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(
    process.argv.slice(2),
    {
      stdout: (line) => process.stdout.write(`${line}\n`),
      stderr: (line) => process.stderr.write(`${line}\n`),
    },
    process.env,
  );
}
