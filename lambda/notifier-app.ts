import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createEmailSender } from './delivery/email-sender.js';
import type { Config } from './platform/config.js';
import type { NotifyDeps } from './workspace/notify/notifier.js';
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
