import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createNotifyDeps, tellStreamBatch } from './notifier-app.js';
import { createLogger } from './observability/logger.js';
import { loadConfig } from './platform/config.js';
import { createDocumentClient } from './platform/dynamodb.js';

/**
 * The notifier function: the workspace table's stream, filtered to new activity records
 * (lib/notifier.ts), told a batch at a time (notifier-app.ts, tellStreamBatch).
 */
const config = loadConfig();
const logger = createLogger();
const deps = createNotifyDeps(config, createDocumentClient({ region: config.region }), { allowLoopback: false });

export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> =>
  tellStreamBatch(deps, event, (sequenceNumber, error) =>
    logger.error('notify failed', { sequenceNumber, error: error instanceof Error ? error.name : 'unknown' }),
  );
