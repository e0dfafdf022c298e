import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createNotifyDeps } from './notifier-app.js';
import { createLogger } from './observability/logger.js';
import { loadConfig } from './platform/config.js';
import { createDocumentClient } from './platform/dynamodb.js';
import { notifyRecords } from './workspace/notify/notifier.js';
import { recordOfItem } from './workspace/store/activity-store.js';

/**
 * The notifier function: the workspace table's stream, filtered to new activity records
 * (lib/notifier.ts), in order per shard. A record that fails stops the batch there: it and every
 * later one are reported as failed, so Lambda hands them over again in order (partial batch
 * response), and after the retries the stream's failure destination keeps them (a dead-letter queue).
 */
const config = loadConfig();
const logger = createLogger();
const deps = createNotifyDeps(config, createDocumentClient({ region: config.region }), { allowLoopback: false });

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const records = event.Records.map((r) => ({
    id: r.dynamodb?.SequenceNumber ?? '',
    image: r.dynamodb?.NewImage,
  }));
  for (const [i, r] of records.entries()) {
    if (!r.image) continue;
    try {
      await notifyRecords(deps, [recordOfItem(unmarshall(r.image as unknown as Parameters<typeof unmarshall>[0]))]);
    } catch (err) {
      logger.error('notify failed', { sequenceNumber: r.id, error: err instanceof Error ? err.name : 'unknown' });
      return { batchItemFailures: records.slice(i).map((x) => ({ itemIdentifier: x.id })) };
    }
  }
  return { batchItemFailures: [] };
};
