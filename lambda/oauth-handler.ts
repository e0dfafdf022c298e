import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import middy from '@middy/core';
import serverless from 'serverless-http';
import { createOAuthApp } from './oauth-app.js';
import { createLogger } from './observability/logger.js';
import { loadConfig } from './platform/config.js';
import { createDocumentClient } from './platform/dynamodb.js';
import { secretsManagerKeySource } from './platform/key-ring.js';

// Readable stacks in the logs from the bundle's source map (the MCP function sets NODE_OPTIONS).
process.setSourceMapsEnabled(true);

// Cold start: the key ring (signing and cookie keys) and the sign-in client's secret are read once,
// then oidc-provider is built; every request of this instance reuses them.
const config = loadConfig();
if (!config.secretArn) throw new Error('DOERS_SECRET_ARN is required in Lambda');
const secrets = new SecretsManagerClient({ region: config.region });
const signInSecretArn = config.signIn?.clientSecretArn;
const signInClientSecret = signInSecretArn
  ? (await secrets.send(new GetSecretValueCommand({ SecretId: signInSecretArn }))).SecretString
  : undefined;

const logger = createLogger();
const app = await createOAuthApp({
  config,
  db: createDocumentClient({ region: config.region }),
  keys: secretsManagerKeySource(secrets, config.secretArn),
  logger,
  ...(signInClientSecret ? { signInClientSecret } : {}),
});

/**
 * API Gateway HTTP API (payload v2) in, several Set-Cookie headers out as `cookies`. Every log line
 * of an invocation carries its Lambda request id (Powertools' context injection), as the MCP
 * function's do.
 */
export const handler = middy(serverless(app.listener)).use(injectLambdaContext(logger));
