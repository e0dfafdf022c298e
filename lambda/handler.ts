import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createApp } from './app.js';
import { createJwtVerifier } from './auth/jwt.js';
import { buildHandler } from './http/pipeline.js';
import { createLimitsGuard } from './limits/limits-guard.js';
import { createLogger } from './observability/logger.js';
import { createPowertoolsObserver } from './observability/powertools-observer.js';
import { loadConfig } from './platform/config.js';
import { createDocumentClient } from './platform/dynamodb.js';
import { secretsManagerKeySource } from './platform/keys.js';

// Cold start: configuration, clients and registries are built once and reused by every request.
const config = loadConfig();
const logger = createLogger();
const db = createDocumentClient({ region: config.region });
if (!config.secretArn) throw new Error('DOERS_SECRET_ARN is required in Lambda');
const keys = secretsManagerKeySource(new SecretsManagerClient({ region: config.region }), config.secretArn);
// Fetched during the init phase, not on the first request; a failure here is retried on first use.
void keys().catch(() => undefined);

export const handler = buildHandler(
  createApp({
    config,
    db,
    logger,
    keys,
    observer: createPowertoolsObserver(logger),
    extraVerifiers: config.jwt ? [createJwtVerifier(config.jwt, logger)] : [],
    guard: createLimitsGuard(db, config, logger),
  }),
);
