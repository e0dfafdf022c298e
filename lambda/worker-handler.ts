import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lazyFileParts, S3_FILES_BUNDLE } from './files/file-store.js';
import { createLogger } from './observability/logger.js';
import { loadConfig } from './platform/config.js';
import { createDocumentClient } from './platform/dynamodb.js';
import { createJobDeps, runQueueBatch } from './worker-app.js';

/**
 * The worker function: the long-work queue's messages (lib/worker.ts), each job run to its end
 * (worker-app.ts). Its timeout is Lambda's longest, 15 minutes; the queue's visibility is longer.
 */
const config = loadConfig();
const logger = createLogger();
const deps = createJobDeps(
  config,
  createDocumentClient({ region: config.region }),
  lazyFileParts(() =>
    (import(new URL(S3_FILES_BUNDLE, import.meta.url).href) as Promise<typeof import('./files/s3-files.js')>).then(({ createS3Files }) =>
      createS3Files({ bucket: config.attachments.bucket, region: config.region, endpoint: config.attachments.endpoint }),
    ),
  ),
);

export const handler = (event: SQSEvent): Promise<SQSBatchResponse> =>
  runQueueBatch(deps, event, (messageId, error) =>
    logger.error('long work failed', {
      messageId,
      error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
    }),
  );
