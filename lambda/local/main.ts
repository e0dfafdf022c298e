import { createCallLinesObserver } from '../observability/call-lines-observer.js';
import { loadConfig } from '../platform/config.js';
import { LOCAL_EMAIL_FROM } from './embedded-ses.js';
import { startLocalServer } from './server.js';

/**
 * The Inspector the banner names, pinned: it needs Node 22.19 or later, which `npm exec` in this
 * directory provides (the project's own Node 22 first on the PATH).
 */
const INSPECTOR_VERSION = '2.12.0';

const config = loadConfig();
const local = await startLocalServer(
  config,
  config.localLog === 'calls' ? { observer: createCallLinesObserver((line) => process.stdout.write(line)), quietLogger: true } : {},
);

process.stderr.write(
  `${[
    '',
    `doers is running at ${local.mcpUrl}`,
    `  data:   ${config.dataDir === ':memory:' ? 'in memory (nothing kept)' : config.dataDir}${config.dynamodbEndpoint ? ` on ${config.dynamodbEndpoint}` : ' (embedded DynamoDB)'}`,
    local.token ? `  token:  ${local.token}` : '  demo:   off (DOERS_DEMO_SEED=off): no demo workspace and no dev token',
    config.notifications.sesEndpoint
      ? `  e-mail: through the SES API at ${local.sesUrl}`
      : `  e-mail: ${local.sesUrl}  (local SES: open it to see the mail sent, from ${config.notifications.emailFrom ?? LOCAL_EMAIL_FROM})`,
    ...(config.builtinAuthorizationServer
      ? [
          `  sign-in: ${config.signIn ? config.signIn.issuer : 'development sign-in (any member, no password: this machine only)'}`,
          `  account: ${local.url}/account`,
        ]
      : []),
    '',
    ...(local.token
      ? [
          'Connect Claude Code with the token:',
          `  claude mcp add --transport http doers ${local.mcpUrl} --header "Authorization: Bearer ${local.token}"`,
          ...(config.builtinAuthorizationServer
            ? ['Or with just the URL (it signs in through the browser):', `  claude mcp add --transport http doers ${local.mcpUrl}`]
            : []),
          'Or the MCP Inspector:',
          `  npm exec -y -- @modelcontextprotocol/inspector@${INSPECTOR_VERSION}  (Streamable HTTP, URL ${local.mcpUrl}; OAuth, or header Authorization: Bearer ${local.token})`,
        ]
      : [
          'Put a workspace here first: npm run admin -- import --file <export> (a doers export), then',
          '  npm run admin -- token create --email <member> --scopes "tasks:read tasks:write"',
        ]),
    '',
    config.localLog === 'calls'
      ? 'One line per call below (time, tool, outcome, ms); DOERS_LOCAL_LOG=json prints the audit lines and metrics Lambda writes.'
      : 'Audit lines and metric records below, as Lambda writes them.',
    '',
  ].join('\n')}\n`,
);

const stop = () => {
  void local.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
