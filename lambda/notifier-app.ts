import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createEmailSender } from './delivery/email-sender.js';
import type { Config } from './platform/config.js';
import { type NotifyDeps, notifyRecords } from './workspace/notify/notifier.js';
import { recordOfItem } from './workspace/store/activity-store.js';
import { createWorkspaceStores } from './workspace/store/create-stores.js';
import { createWebhookDispatch } from './workspace/webhooks/webhook-dispatch.js';

/**
 * The notifier's composition root (docs/notifications.md): the stores it reads and writes through,
 * the e-mail sender when the deployment has one, and the webhooks. The stream function, the minute
 * function and the local server's poller each build it once.
 */
export interface NotifyRuntime {
  /** Webhooks to this machine are allowed: the local server only. */
  readonly allowLoopback: boolean;
  /** How long a webhook receiver has to answer (tests shorten it). */
  readonly webhookTimeoutMs?: number;
  /** How host names resolve for webhooks (tests map names to addresses). */
  readonly resolve?: Parameters<typeof createWebhookDispatch>[0]['resolve'];
}

const noKeys = async (): Promise<never> => {
  throw new Error('the notifier signs nothing: it has no key ring');
};

export const createNotifyDeps = (config: Config, db: DynamoDBDocumentClient, rt: NotifyRuntime): NotifyDeps => ({
  stores: createWorkspaceStores(db, config.tables.workspace, noKeys, config.activityDays),
  mail: config.notifications.emailFrom
    ? createEmailSender({ from: config.notifications.emailFrom, endpoint: config.notifications.sesEndpoint, region: config.region })
    : undefined,
  hooks: createWebhookDispatch({
    db,
    table: config.tables.workspace,
    allowLoopback: rt.allowLoopback,
    ...(rt.webhookTimeoutMs ? { timeoutMs: rt.webhookTimeoutMs } : {}),
    ...(rt.resolve ? { resolve: rt.resolve } : {}),
  }),
  publicUrl: config.publicUrl,
  activityDays: config.activityDays,
});

/**
 * One batch of the table's stream (new activity records, in order per shard): each record told in
 * turn. A record that fails stops the batch there: it and every later one are reported as failed, so
 * Lambda hands them over again in order (partial batch response), and after the retries the stream's
 * failure destination keeps them (a dead-letter queue). `onFailure` hears why.
 */
export const tellStreamBatch = async (
  deps: NotifyDeps,
  event: DynamoDBStreamEvent,
  onFailure: (sequenceNumber: string, error: unknown) => void = () => {},
): Promise<DynamoDBBatchResponse> => {
  const records = event.Records.map((r) => ({ id: r.dynamodb?.SequenceNumber ?? '', image: r.dynamodb?.NewImage }));
  for (const [i, r] of records.entries()) {
    if (!r.image) continue;
    try {
      await notifyRecords(deps, [recordOfItem(unmarshall(r.image as unknown as Parameters<typeof unmarshall>[0]))]);
    } catch (err) {
      onFailure(r.id, err);
      return { batchItemFailures: records.slice(i).map((x) => ({ itemIdentifier: x.id })) };
    }
  }
  return { batchItemFailures: [] };
};
