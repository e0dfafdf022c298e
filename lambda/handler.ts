import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createApp } from './app.js';
import { createJwtVerifier } from './auth/jwt.js';
import { lazyFileParts, S3_FILES_BUNDLE } from './files/file-store.js';
import { buildHandler } from './http/pipeline.js';
import { createLimitsGuard } from './limits/limits-guard.js';
import { createLogger } from './observability/logger.js';
import { createPowertoolsObserver } from './observability/powertools-observer.js';
import { loadConfig } from './platform/config.js';
import { createDocumentClient } from './platform/dynamodb.js';
import { secretsManagerKeySource } from './platform/key-ring.js';
import { mapStacksLazily } from './platform/lazy-source-map.js';
import { sqsWorkQueue } from './platform/work-queue.js';
import { loadTimeZoneData } from './workspace/model/time.js';

// Stacks point at lambda/*.ts lines, the source map read only when one is formatted (the file says why).
mapStacksLazily(new URL(import.meta.url));

// Cold start: configuration, clients and registries are built once and reused by every request.
const config = loadConfig();
if (!config.secretArn) throw new Error('DOERS_SECRET_ARN is required in Lambda');
const keys = secretsManagerKeySource(new SecretsManagerClient({ region: config.region }), config.secretArn);
// The secret read starts first and the rest of init runs while it is out. One turn of the event loop
// lets the SDK resolve credentials and sign, so the request is on its way before the CPU-bound work.
const secretRead = keys().catch(() => undefined); // a failure is retried on first use
await new Promise((resolve) => setImmediate(resolve));

const logger = createLogger();
const db = createDocumentClient({ region: config.region });
loadTimeZoneData();

export const handler = buildHandler(
  createApp({
    config,
    db,
    logger,
    keys,
    observer: createPowertoolsObserver(logger),
    extraVerifiers: config.jwt ? [createJwtVerifier(config.jwt, logger)] : [],
    guard: createLimitsGuard(db, config, logger),
    // Shipped beside this bundle (lib/mcp-function.ts); read on a view's first read, never at init.
    views: (file) => import('node:fs/promises').then((fs) => fs.readFile(new URL(`views/${file}`, import.meta.url), 'utf8')),
    // A bundle of its own beside this one (lib/bundling.ts): the S3 client and the type sniffer load
    // on the first attachment, and a call that touches none pays nothing for them.
    files: lazyFileParts(() =>
      (import(new URL(S3_FILES_BUNDLE, import.meta.url).href) as Promise<typeof import('./files/s3-files.js')>).then(({ createS3Files }) =>
        // DOERS_S3_ENDPOINT is never set by the stack; the deployed-bundle tests point it at the embedded S3 API.
        createS3Files({ bucket: config.attachments.bucket, region: config.region, endpoint: config.attachments.endpoint }),
      ),
    ),
    // Long work goes to its worker through SQS (lib/worker.ts); the SQS client loads on the first hand-over.
    ...(config.workQueueUrl ? { work: sqsWorkQueue(config.workQueueUrl, config.region) } : {}),
  }),
);

// Init ends with the key ring in hand: the first request does not wait for it, and no read is left in
// flight when Lambda freezes the environment between init and the first invoke.
await secretRead;
