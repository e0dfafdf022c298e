import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { DynamoDirectoryStore } from '../../lambda/workspace/store/directory-store.js';
import { admin, type CliResult } from '../helpers/admin-cli.js';
import { type CognitoStandIn, startCognito } from '../helpers/cognito.js';
import { modernCall, startTestServer } from '../helpers/local.js';
import { approve, pkcePair, startHttpsServer, trustingFetch } from '../helpers/oauth.js';
import { type SecretsManagerStandIn, startSecretsManager } from '../helpers/secrets-manager.js';

// `npm run admin`, end to end: the CLI against a running local server's data, and the server
// refusing or admitting what the CLI minted, revoked, disabled and enabled. Against local data it
// runs in this process (`main` with its own environment: a process per call cost a second each);
// the deployed path runs as the script an operator runs, offline: the SDK's standard endpoint
// variables point CloudFormation, DynamoDB, Secrets Manager and Cognito at loopback, so the CLI's
// production code reads the stack's outputs and calls each service exactly as it would on AWS.
const ROOT = new URL('../../', import.meta.url).pathname;
const TSX = join(ROOT, 'node_modules/.bin/tsx');

const run = (env: Record<string, string>, args: readonly string[]): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      TSX,
      ['cli/main.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

let dataDir: string;
let server: LocalServer;
/** Where this test's metadata-document client lives (https on loopback, trusted by the server only). */
let documents: Awaited<ReturnType<typeof startHttpsServer>>;
const cli = (...args: string[]) => admin(dataDir, ...args);
const meGet = (token: string) => modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token });

const REDIRECT = 'http://127.0.0.1:5555/cb';
const CLIENT_DOC_PATH = '/admin-cli-client.json';

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'doers-admin-'));
  documents = await startHttpsServer((path) =>
    path === CLIENT_DOC_PATH
      ? {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            client_id: `${documents.origin}${CLIENT_DOC_PATH}`,
            client_name: 'Document app',
            redirect_uris: [REDIRECT],
            token_endpoint_auth_method: 'none',
          }),
        }
      : { status: 404, body: '' },
  );
  // No principal cache, so a revocation shows on the very next request (the bound has its own test).
  server = await startTestServer({ DOERS_DATA_DIR: dataDir, DOERS_AUTH_CACHE_SECONDS: '0' }, { oauthFetch: trustingFetch(documents.ca) });
});
after(async () => {
  await server.close();
  await documents.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('admin CLI against a running local server', { timeout: 300_000 }, () => {
  test('mint, use, list, revoke: the revoked token is refused', async () => {
    const added = await cli(
      'user',
      'add',
      '--email',
      'Bob@Example.com',
      '--name',
      'Bob Builder',
      '--role',
      'admin',
      '--time-zone',
      'Europe/Berlin',
    );
    assert.equal(added.code, 0, added.stderr);

    const minted = await cli(
      'token',
      'create',
      '--email',
      'bob@example.com',
      '--scopes',
      'tasks:read team:read',
      '--expires-in',
      '30d',
      '--label',
      'laptop',
    );
    assert.equal(minted.code, 0, minted.stderr);
    const lines = minted.stdout.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, 'nothing on stdout but the secret');
    const secret = lines[0]!;
    assert.match(secret, /^doers_pat_[A-Za-z0-9_-]{43}$/);
    const tokenId = /tok_[A-Za-z0-9]+/.exec(minted.stderr)?.[0];
    assert.ok(tokenId, minted.stderr);

    const used = await meGet(secret);
    assert.equal(used.status, 200, used.text);
    assert.equal(used.json.result.structuredContent.email, 'bob@example.com');
    assert.equal(used.json.result.structuredContent.role, 'admin');
    assert.equal(used.json.result.structuredContent.timeZone, 'Europe/Berlin');
    assert.deepEqual(used.json.result.structuredContent.scopes, ['tasks:read', 'team:read']);

    const listed = await cli('token', 'list', '--email', 'bob@example.com');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(
      listed.stdout,
      new RegExp(`^${tokenId}\\tbob@example.com\\ttasks:read team:read\\texpires \\S+\\tactive\\t"laptop"$`, 'm'),
    );
    assert.doesNotMatch(listed.stdout, /doers_pat_/, 'a listing never shows a secret');
    assert.doesNotMatch(listed.stdout, /ada@example.com/, 'only the named user');

    const revoked = await cli('token', 'revoke', '--id', tokenId);
    assert.equal(revoked.code, 0, revoked.stderr);
    const refused = await meGet(secret);

    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token", error_description="The access token was revoked"/);
  });

  test("a disabled user and a disabled workspace are refused with 403; enabled again, the workspace's tokens work and the user's old token stays dead", async () => {
    await cli('user', 'add', '--email', 'carol@example.com', '--name', 'Carol');
    const minted = await cli('token', 'create', '--email', 'carol@example.com', '--scopes', 'tasks:read');
    const secret = minted.stdout.trim();

    const disabled = await cli('user', 'disable', '--email', 'carol@example.com');
    const whileDisabled = await meGet(secret);
    const enabled = await cli('user', 'enable', '--email', 'carol@example.com');
    const afterEnable = await meGet(secret);
    const wsDisabled = await cli('workspace', 'disable');
    const whileWsDisabled = await meGet(server.token);
    const wsEnabled = await cli('workspace', 'enable');
    const afterWsEnable = await meGet(server.token);

    for (const r of [disabled, enabled, wsDisabled, wsEnabled]) assert.equal(r.code, 0, r.stderr);
    for (const r of [whileDisabled, whileWsDisabled]) {
      assert.equal(r.status, 403);
      assert.equal(r.headers.get('www-authenticate'), null);
      assert.deepEqual(r.json.error, { code: -32600, message: 'The user may not use the MCP endpoint.' });
    }
    // A disabled person's credentials never come back by enabling them: they make new ones.
    assert.equal(afterEnable.status, 401);
    assert.match(afterEnable.headers.get('www-authenticate') ?? '', /invalid_token/);
    assert.match(enabled.stdout, /tokens from before stay dead/);
    assert.equal(afterWsEnable.status, 200);
  });

  test('the workspace rules hold for the operator too: the last active owner cannot be disabled, demoted or removed', async () => {
    // Arrange: Ada is the demo workspace's only owner.
    const directory = server.app.services.directory;

    // Act
    const disable = await cli('user', 'disable', '--email', DEMO_OWNER.email);
    const demote = await cli('user', 'role', '--email', DEMO_OWNER.email, '--role', 'admin');
    const remove = await cli('user', 'remove', '--email', DEMO_OWNER.email);
    const ada = await directory.getMember(DEMO_WORKSPACE_ID, DEMO_OWNER.userId);

    // Assert: each refused, naming the reason and what to do; nothing changed.
    for (const r of [disable, demote, remove]) {
      assert.equal(r.code, 1, r.stdout);
      assert.match(
        r.stderr,
        /^error: Conflict: Ada Lovelace \[usr_ada\] is the last owner of this workspace who is active; make someone else owner first\.$/m,
      );
    }
    assert.equal(ada?.role, 'owner');
    assert.equal(ada?.status, 'active');
    assert.equal((await meGet(server.token)).status, 200);
  });

  test('with a second owner the operator can demote one; role changes are checked like the tools', async () => {
    // Arrange
    await cli('user', 'add', '--email', 'olga@example.com', '--name', 'Olga', '--role', 'owner');

    // Act
    const demoted = await cli('user', 'role', '--email', 'olga@example.com', '--role', 'member');
    const badRole = await cli('user', 'role', '--email', 'olga@example.com', '--role', 'boss');
    const removed = await cli('user', 'remove', '--email', 'olga@example.com');
    const gone = await server.app.services.directory.findMemberByEmail('olga@example.com');

    // Assert
    assert.equal(demoted.code, 0, demoted.stderr);
    assert.match(demoted.stdout, /olga@example\.com \[usr_[0-9a-f]{16}\] is member of ws_demo\./);
    assert.equal(badRole.code, 2);
    assert.match(badRole.stderr, /--role: "boss" is not one of owner, admin, member, viewer/);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(gone, undefined);
    // Every change the operator made is in the activity record, through the admin CLI.
    const recorded = await server.app.services.activity.list(
      { workspaceId: DEMO_WORKSPACE_ID, layout: 2 },
      { actorId: 'operator', includeTeam: true },
      10,
      new Date(),
    );
    assert.deepEqual(
      recorded.records.slice(0, 3).map((r) => [r.client, r.tool, r.kind, r.action, r.targetLabel]),
      [
        ['admin CLI', 'admin CLI: user remove', 'member', 'removed', 'Olga'],
        ['admin CLI', 'admin CLI: user role', 'member', 'role_changed', 'Olga'],
        ['admin CLI', 'admin CLI: user add', 'member', 'invited', 'Olga'],
      ],
    );
  });

  test('migrate on a workspace in the current data layout says so and changes nothing; a bad --drain-seconds is named', async () => {
    const [migrated, bad] = await Promise.all([
      cli('migrate', '--workspace', 'all', '--drain-seconds', '0'),
      cli('migrate', '--drain-seconds', 'soon'),
    ]);

    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, new RegExp(`^${DEMO_WORKSPACE_ID}: in the current layout already\\.$`, 'm'));
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--drain-seconds: a number of seconds from 0 to 600/);
  });

  test('workspace show names the table it read and counts what the agenda counts', async () => {
    // Arrange: what the function answers for the same workspace.
    const agenda = await modernCall(
      server,
      'tools/call',
      { name: 'agenda_get', arguments: { assignee: 'anyone' } },
      { token: server.token },
    );
    const members = await new DynamoDirectoryStore(
      createDocumentClient({ endpoint: server.dynamodbEndpoint }),
      server.app.config.tables.workspace,
    ).listMembers(DEMO_WORKSPACE_ID);

    // Act
    const shown = await cli('workspace', 'show');

    // Assert
    assert.equal(shown.code, 0, shown.stderr);
    const { open } = agenda.json.result.structuredContent.counts as { open: number };
    assert.ok(open > 0);
    assert.match(
      shown.stdout,
      new RegExp(`^Workspace ${DEMO_WORKSPACE_ID} ".+" \\(active\\) in table ${server.app.config.tables.workspace} `, 'm'),
    );
    assert.match(shown.stdout, /data layout 2$/m);
    assert.match(shown.stdout, new RegExp(`open tasks: ${open} \\(`));
    assert.match(shown.stdout, new RegExp(`members: ${members.length} \\(`));
  });

  test('bad input exits non-zero with an error naming the argument', async () => {
    const emptyDir = await mkdtemp(join(tmpdir(), 'doers-admin-empty-'));
    try {
      const [badScope, unknownCommand, unknownOption, badExpiry, duplicate, noServer] = await Promise.all([
        cli('token', 'create', '--email', 'ada@example.com', '--scopes', 'tasks:read tasks:delete'),
        cli('token', 'frobnicate'),
        cli('user', 'add', '--email', 'x@example.com', '--name', 'X', '--colour', 'red'),
        cli('token', 'create', '--email', 'ada@example.com', '--scopes', 'tasks:read', '--expires-in', 'soon'),
        cli('user', 'add', '--email', 'ada@example.com', '--name', 'Ada again'),
        admin(emptyDir, 'token', 'list'),
      ]);

      const expectations: [CliResult, number, RegExp][] = [
        [badScope, 2, /--scopes: unknown scope "tasks:delete"/],
        [unknownCommand, 2, /unknown command "token frobnicate"/],
        [unknownOption, 2, /Unknown option '--colour'/],
        [badExpiry, 2, /--expires-in: "soon" is not a duration/],
        [duplicate, 1, /--email: a user with the e-mail ada@example.com already exists/],
        [noServer, 1, /No local server data at .*local-server\.json/],
      ];
      for (const [result, code, message] of expectations) {
        assert.equal(result.code, code, `${message}: ${result.stderr}`);
        assert.match(result.stderr, message);
        assert.equal(result.stdout, '', 'nothing on stdout when refused');
      }
    } finally {
      await rm(emptyDir, { recursive: true, force: true });
    }
  });
});

// ---- OAuth grants of the built-in authorization server ----------------------------------------------

const tokenRequest = async (form: Record<string, string>) => {
  const res = await fetch(`${server.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
};

/** Dynamic Client Registration, as an MCP client does it. */
const registerClient = async (clientName: string): Promise<string> => {
  const res = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: clientName }),
  });
  const body = (await res.json()) as Record<string, string>;
  assert.equal(res.status, 201, JSON.stringify(body));
  return body.client_id!;
};

/** A person connects an app: authorization request, sign-in and consent, code redeemed with PKCE. */
const connectApp = async (clientId: string, email: string) => {
  const pkce = pkcePair();
  const url = new URL(`${server.url}/oauth/authorize`);
  const params = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'tasks:read team:read',
    resource: server.mcpUrl,
    state: 'admin-cli',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const back = await approve(url, { email });
  const code = back.searchParams.get('code');
  assert.ok(code, `no code in ${back.href}`);
  const tokens = await tokenRequest({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    client_id: clientId,
    code_verifier: pkce.verifier,
    resource: server.mcpUrl,
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const access = tokens.body.access_token!;
  return {
    access,
    refresh: tokens.body.refresh_token!,
    grantId: String(JSON.parse(Buffer.from(access.split('.')[1]!, 'base64url').toString()).gid),
  };
};

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

describe('admin CLI: grants (apps connected through the built-in authorization server)', { timeout: 300_000 }, () => {
  test("grants list shows each grant: id, client (id and name, or a metadata document's host), person, scopes, created, expires", async () => {
    // Arrange: Ada connects a registered app and a metadata-document app; Erin connects one too.
    const registered = await registerClient('Listed app');
    const documentClient = `${documents.origin}${CLIENT_DOC_PATH}`;
    const viaRegistration = await connectApp(registered, DEMO_OWNER.email);
    const viaDocument = await connectApp(documentClient, DEMO_OWNER.email);
    assert.equal((await cli('user', 'add', '--email', 'erin@example.com', '--name', 'Erin')).code, 0);
    const erins = await connectApp(registered, 'erin@example.com');

    // Act
    const adas = await cli('grants', 'list', '--email', DEMO_OWNER.email);
    const everyone = await cli('grants', 'list');

    // Assert
    assert.equal(adas.code, 0, adas.stderr);
    const line = (grantId: string, client: string, email: string) =>
      new RegExp(
        `^${grantId}\\t${escapeRegExp(client)}\\t${escapeRegExp(email)}\\ttasks:read team:read\\tcreated ${ISO}\\texpires ${ISO}$`,
        'm',
      );
    assert.match(adas.stdout, line(viaRegistration.grantId, `${registered} "Listed app"`, DEMO_OWNER.email));
    assert.match(adas.stdout, line(viaDocument.grantId, new URL(documentClient).host, DEMO_OWNER.email));
    assert.doesNotMatch(adas.stdout, /erin@example\.com/, 'only the named person');
    assert.doesNotMatch(adas.stdout, /eyJ/, 'a listing never shows a token');
    assert.equal(everyone.code, 0, everyone.stderr);
    assert.match(everyone.stdout, line(erins.grantId, `${registered} "Listed app"`, 'erin@example.com'));
    assert.match(everyone.stdout, line(viaRegistration.grantId, `${registered} "Listed app"`, DEMO_OWNER.email));
  });

  test("a registrant's client name cannot break the listing: tabs, newlines, terminal escapes and bidi overrides come out escaped", async () => {
    // Arrange: anyone may register a client, and its name is theirs to choose.
    const client = await registerClient('Evil\tapp\nforged line\u001b[31m\u202eexe.txt');
    const app = await connectApp(client, DEMO_OWNER.email);

    // Act
    const listed = await cli('grants', 'list', '--email', DEMO_OWNER.email);

    // Assert
    assert.equal(listed.code, 0, listed.stderr);
    const line = listed.stdout.split('\n').find((l) => l.startsWith(`${app.grantId}\t`));
    assert.equal(line?.split('\t')[1], `${client} "Evil\\tapp\\nforged line\\u001b[31m\\u202eexe.txt"`);
    assert.doesNotMatch(listed.stdout, /^forged line/m);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is exactly what must not reach the terminal
    assert.doesNotMatch(listed.stdout, /[\u001b\u202e]/);
  });

  test('grants revoke stops the app at once: its refresh token is refused and its access token gets 401 on the next tools/call', async () => {
    // Arrange
    const client = await registerClient('Revoked app');
    const app = await connectApp(client, DEMO_OWNER.email);
    assert.equal((await meGet(app.access)).status, 200);
    const listed = await cli('grants', 'list', '--email', DEMO_OWNER.email);
    const grantId = listed.stdout
      .split('\n')
      .find((l) => l.includes(`${client} "Revoked app"`))
      ?.split('\t')[0];
    assert.equal(grantId, app.grantId, listed.stdout);

    // Act
    const revoked = await cli('grants', 'revoke', '--grant', grantId);

    // Assert
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(
      revoked.stdout,
      `Revoked grant ${grantId} (${client} "Revoked app" for ${DEMO_OWNER.email}); its refresh token is refused from now on, its access tokens from their next MCP call.\n`,
    );
    const call = await meGet(app.access);
    assert.equal(call.status, 401);
    assert.match(call.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: app.refresh, client_id: client });
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body.error, 'invalid_grant');
    assert.doesNotMatch((await cli('grants', 'list')).stdout, new RegExp(grantId));
  });

  test('grants revoke of an unknown, malformed or missing grant id exits non-zero naming --grant', async () => {
    // Act
    const [unknown, dashed, malformed, missing] = await Promise.all([
      cli('grants', 'revoke', '--grant', 'NoSuchGrant0123456789'),
      // Grant ids are random base64url: one may start with a dash, and is still the option's value.
      cli('grants', 'revoke', '--grant', '-NoSuchGrant012345678'),
      cli('grants', 'revoke', '--grant', 'not a grant'),
      cli('grants', 'revoke'),
    ]);

    // Assert
    const expectations: [CliResult, number, RegExp][] = [
      [unknown, 1, /^error: --grant: no grant NoSuchGrant0123456789 in local server data/m],
      [dashed, 1, /^error: --grant: no grant -NoSuchGrant012345678 in local server data/m],
      [malformed, 2, /^error: --grant: "not a grant" is not a grant id \(see grants list\)/m],
      [missing, 2, /^error: --grant: required/m],
    ];
    for (const [result, code, message] of expectations) {
      assert.equal(result.code, code, `${message}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '', 'nothing on stdout when refused');
    }
  });
});

// ---- a deployed stack, offline ----------------------------------------------------------------------

const readBody = async (req: IncomingMessage): Promise<string> => {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
};
const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * CloudFormation's DescribeStacks on loopback, in its query protocol (form-encoded request, XML
 * answer): the stacks named here, with these outputs; any other name does not exist.
 */
const startCloudFormation = (stacks: Record<string, Record<string, string>>): Promise<{ url: string; close(): Promise<void> }> =>
  new Promise((ok) => {
    const ns = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';
    const server: Server = createServer(async (req, res) => {
      const form = new URLSearchParams(await readBody(req));
      const name = form.get('StackName') ?? '';
      const outputs = form.get('Action') === 'DescribeStacks' ? stacks[name] : undefined;
      res.setHeader('content-type', 'text/xml');
      if (!outputs) {
        res.statusCode = 400;
        res.end(
          `<ErrorResponse xmlns="${ns}"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${xml(name)} does not exist</Message></Error><RequestId>1</RequestId></ErrorResponse>`,
        );
        return;
      }
      const members = Object.entries(outputs).map(
        ([k, v]) => `<member><OutputKey>${xml(k)}</OutputKey><OutputValue>${xml(v)}</OutputValue></member>`,
      );
      res.end(
        `<DescribeStacksResponse xmlns="${ns}"><DescribeStacksResult><Stacks><member><StackName>${xml(name)}</StackName>` +
          `<StackStatus>UPDATE_COMPLETE</StackStatus><CreationTime>2026-01-01T00:00:00Z</CreationTime><Outputs>${members.join('')}</Outputs>` +
          `</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></DescribeStacksResponse>`,
      );
    });
    server.listen(0, '127.0.0.1', () =>
      ok({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    );
  });

describe('admin CLI against a deployed stack whose people sign in through its Cognito user pool', { timeout: 300_000 }, () => {
  const POOL = 'eu-west-1_AdminCli';
  const ACCESS_KEY = 'AKIDADMINCLITEST';
  let cloudFormation: Awaited<ReturnType<typeof startCloudFormation>>;
  let secrets: SecretsManagerStandIn;
  let cognito: CognitoStandIn;
  let directory: DynamoDirectoryStore;

  before(async () => {
    const base = {
      WorkspaceTableName: server.app.config.tables.workspace,
      SecretArn: 'arn:aws:secretsmanager:eu-west-1:000000000000:secret:doers',
      Region: 'eu-west-1',
    };
    [cloudFormation, secrets, cognito] = await Promise.all([
      startCloudFormation({ Doers: { ...base, SignInUserPoolId: POOL }, DoersExternalIssuer: base }),
      startSecretsManager('s'.repeat(43)),
      startCognito(),
    ]);
    directory = new DynamoDirectoryStore(createDocumentClient({ endpoint: server.dynamodbEndpoint }), server.app.config.tables.workspace);
  });
  after(async () => {
    await Promise.all([cloudFormation.close(), secrets.close(), cognito.close()]);
  });
  beforeEach(() => {
    cognito.requests.splice(0);
    cognito.failing = undefined;
  });

  /** The CLI as an operator runs it against a stack; every AWS endpoint is a loopback stand-in. */
  const onStack = (stack: string, ...args: string[]) =>
    run(
      {
        AWS_ACCESS_KEY_ID: ACCESS_KEY,
        AWS_SECRET_ACCESS_KEY: 'admin-cli-test-secret',
        AWS_CONFIG_FILE: join(dataDir, 'no-aws-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(dataDir, 'no-aws-credentials'),
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url,
        AWS_ENDPOINT_URL_DYNAMODB: server.dynamodbEndpoint,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url,
        AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: cognito.url,
      },
      [...args, '--stack', stack, '--region', 'eu-west-1'],
    );
  const operations = () => cognito.requests.map((r) => r.operation);

  test('user add adds the member and invites them to the pool: AdminCreateUser, e-mail as username, verified, invitation by e-mail', async () => {
    // Act
    const added = await onStack('Doers', 'user', 'add', '--email', 'Fay@Example.com', '--name', 'Fay', '--role', 'admin');

    // Assert
    assert.equal(added.code, 0, added.stderr);
    const member = await directory.findMemberByEmail('fay@example.com');
    assert.equal(member?.workspaceId, 'ws_main');
    assert.equal(member?.role, 'admin');
    assert.equal(
      added.stdout,
      `Added Fay <fay@example.com> [${member.userId}] as admin of ws_main.\n` +
        `Cognito user pool ${POOL}: created fay@example.com; Cognito e-mails them an invitation with a temporary password.\n`,
    );
    assert.deepEqual(operations(), ['AdminCreateUser']);
    assert.deepEqual(cognito.requests[0]!.body, {
      UserPoolId: POOL,
      Username: 'fay@example.com',
      UserAttributes: [
        { Name: 'email', Value: 'fay@example.com' },
        { Name: 'email_verified', Value: 'true' },
      ],
      DesiredDeliveryMediums: ['EMAIL'],
    });
    assert.match(cognito.requests[0]!.authorization, new RegExp(`Credential=${ACCESS_KEY}/\\d{8}/eu-west-1/cognito-idp/aws4_request`));
  });

  test('user add of someone already in the pool (UsernameExistsException) says so and succeeds', async () => {
    // Arrange
    cognito.users.add('gus@example.com');

    // Act
    const added = await onStack('Doers', 'user', 'add', '--email', 'gus@example.com', '--name', 'Gus');

    // Assert
    assert.equal(added.code, 0, added.stderr);
    assert.deepEqual(operations(), ['AdminCreateUser']);
    assert.match(added.stdout, /^Added Gus <gus@example\.com> \[usr_\w+\] as member of ws_main\.$/m);
    assert.match(
      added.stdout,
      new RegExp(`^Cognito user pool ${POOL}: gus@example.com already exists there; left as it is \\(no new invitation\\)\\.$`, 'm'),
    );
  });

  test('user disable and user enable disable and enable the person in the pool too', async () => {
    // Arrange
    assert.equal((await onStack('Doers', 'user', 'add', '--email', 'hal@example.com', '--name', 'Hal')).code, 0);
    cognito.requests.splice(0);

    // Act
    const disabled = await onStack('Doers', 'user', 'disable', '--email', 'hal@example.com');
    const whileDisabled = await directory.findMemberByEmail('hal@example.com');
    const enabled = await onStack('Doers', 'user', 'enable', '--email', 'hal@example.com');

    // Assert
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.equal(enabled.code, 0, enabled.stderr);
    assert.equal(whileDisabled?.status, 'disabled');
    assert.equal((await directory.findMemberByEmail('hal@example.com'))?.status, 'active');
    assert.deepEqual(
      cognito.requests.map((r) => [r.operation, r.body]),
      [
        ['AdminDisableUser', { UserPoolId: POOL, Username: 'hal@example.com' }],
        ['AdminEnableUser', { UserPoolId: POOL, Username: 'hal@example.com' }],
      ],
    );
    assert.match(disabled.stdout, new RegExp(`^Cognito user pool ${POOL}: hal@example.com is disabled; they cannot sign in\\.$`, 'm'));
    assert.match(enabled.stdout, new RegExp(`^Cognito user pool ${POOL}: hal@example.com is enabled; they can sign in again\\.$`, 'm'));
  });

  test('a Cognito failure after user add says the member is in doers but not in Cognito; re-running user add does only the Cognito part', async () => {
    // Arrange
    cognito.failing = {
      status: 400,
      type: 'AccessDeniedException',
      message: 'User is not authorized to perform: cognito-idp:AdminCreateUser',
    };

    // Act
    const failed = await onStack('Doers', 'user', 'add', '--email', 'ivy@example.com', '--name', 'Ivy');
    const member = await directory.findMemberByEmail('ivy@example.com');
    cognito.failing = undefined;
    const retried = await onStack('Doers', 'user', 'add', '--email', 'ivy@example.com', '--name', 'Ivy');

    // Assert
    assert.equal(failed.code, 1);
    assert.ok(member, 'the member was written before Cognito was called');
    assert.equal(failed.stdout, `Added Ivy <ivy@example.com> [${member.userId}] as member of ws_main.\n`);
    assert.match(
      failed.stderr,
      new RegExp(
        `^error: ivy@example.com \\[${member.userId}\\] was added as a member of ws_main in doers, but was not added to Cognito user pool ${POOL} ` +
          '\\(AccessDeniedException: User is not authorized to perform: cognito-idp:AdminCreateUser\\)\\. ' +
          'Run the same user add command again to retry: for an existing member it does only the Cognito part\\.$',
        'm',
      ),
    );
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal(
      retried.stdout,
      `ivy@example.com [${member.userId}] is already an active member of ws_main; left as it is in doers.\n` +
        `Cognito user pool ${POOL}: created ivy@example.com; Cognito e-mails them an invitation with a temporary password.\n`,
    );
    assert.equal((await directory.findMemberByEmail('ivy@example.com'))?.userId, member.userId, 'the doers member is unchanged');
    assert.deepEqual(operations(), ['AdminCreateUser', 'AdminCreateUser']);
  });

  test('a Cognito failure after user disable says the user is disabled in doers but not in Cognito, and how to retry', async () => {
    // Arrange
    assert.equal((await onStack('Doers', 'user', 'add', '--email', 'jon@example.com', '--name', 'Jon')).code, 0);
    cognito.failing = {
      status: 400,
      type: 'AccessDeniedException',
      message: 'User is not authorized to perform: cognito-idp:AdminDisableUser',
    };

    // Act
    const failed = await onStack('Doers', 'user', 'disable', '--email', 'jon@example.com');

    // Assert
    assert.equal(failed.code, 1);
    assert.equal((await directory.findMemberByEmail('jon@example.com'))?.status, 'disabled');
    assert.match(failed.stdout, /^jon@example\.com \[usr_\w+\] is disabled; their tokens are refused from the next request on\.$/m);
    assert.match(
      failed.stderr,
      new RegExp(
        `^error: jon@example.com is disabled in doers \\(their tokens are refused\\), but not in Cognito user pool ${POOL} \\(AccessDeniedException: .*\\)\\. Run the same user disable command again to retry\\.$`,
        'm',
      ),
    );
  });

  test('on a stack without SignInUserPoolId (an external issuer) user add, disable and enable make no Cognito request', async () => {
    // Act
    const results = [
      await onStack('DoersExternalIssuer', 'user', 'add', '--email', 'kim@example.com', '--name', 'Kim'),
      await onStack('DoersExternalIssuer', 'user', 'disable', '--email', 'kim@example.com'),
      await onStack('DoersExternalIssuer', 'user', 'enable', '--email', 'kim@example.com'),
    ];

    // Assert
    for (const r of results) {
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /Cognito/);
    }
    assert.equal((await directory.findMemberByEmail('kim@example.com'))?.status, 'active');
    assert.deepEqual(operations(), []);
  });
});
