import { createApp } from '../../lambda/app.js';
import { buildHandler } from '../../lambda/http/pipeline.js';
import { createLimitsGuard } from '../../lambda/limits/limits-guard.js';
import { createLogger } from '../../lambda/observability/logger.js';
import { createPowertoolsObserver } from '../../lambda/observability/powertools-observer.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { dataDirKeySource } from '../../lambda/platform/keys.js';
import { httpEvent, lambdaContext } from '../helpers/events.js';

// Bundled like the Lambda function and run in a fresh Node 22 process by `npm run bench`: the same
// init as lambda/handler.ts (configuration, clients, composition; the key ring read in parallel),
// but against the bench's embedded DynamoDB and key seed, then one tools/call. Prints the time from
// process start to the first successful answer.
const config = loadConfig();
const db = createDocumentClient({ endpoint: config.dynamodbEndpoint });
const keys = dataDirKeySource(config.dataDir);
void keys().catch(() => undefined);
const logger = createLogger();
const handler = buildHandler(
  createApp({ config, db, logger, keys, observer: createPowertoolsObserver(logger), guard: createLimitsGuard(db, config, logger), loopbackHostOnly: true }),
);
const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'me_get', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
});
const res = await handler(
  httpEvent({
    headers: {
      authorization: `Bearer ${process.env.BENCH_TOKEN}`,
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'me_get',
    },
    body,
  }),
  lambdaContext(),
);
console.log(JSON.stringify({ ms: performance.now(), ok: res.statusCode === 200 && !String(res.body).includes('"isError":true') }));
process.exit(0);
