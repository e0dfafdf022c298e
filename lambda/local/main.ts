import { loadConfig } from '../platform/config.js';
import { startLocalServer } from './server.js';

const config = loadConfig();
const local = await startLocalServer(config);

process.stderr.write(
  `${[
    '',
    `doers is running at ${local.mcpUrl}`,
    `  data:   ${config.dataDir === ':memory:' ? 'in memory (nothing kept)' : config.dataDir}${config.dynamodbEndpoint ? ` on ${config.dynamodbEndpoint}` : ' (embedded DynamoDB)'}`,
    `  token:  ${local.token}`,
    ...(config.builtinAuthorizationServer
      ? [
          `  sign-in: ${config.signIn ? config.signIn.issuer : 'development sign-in (any member, no password: this machine only)'}`,
          `  account: ${local.url}/account`,
        ]
      : []),
    '',
    'Connect Claude Code with the token:',
    `  claude mcp add --transport http doers ${local.mcpUrl} --header "Authorization: Bearer ${local.token}"`,
    ...(config.builtinAuthorizationServer
      ? ['Or with just the URL (it signs in through the browser):', `  claude mcp add --transport http doers ${local.mcpUrl}`]
      : []),
    'Or the MCP Inspector:',
    `  npx @modelcontextprotocol/inspector  (Streamable HTTP, URL ${local.mcpUrl}; OAuth, or header Authorization: Bearer ${local.token})`,
    '',
  ].join('\n')}\n`,
);

const stop = () => {
  void local.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
