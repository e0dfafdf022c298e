import { randomBytes } from 'node:crypto';
import { type Resolve, vetUrl } from '../../delivery/address-guard.js';
import { INBOX_KINDS, type InboxKind } from '../../delivery/notice.js';
import type { SendOutcome } from '../../delivery/webhook-sender.js';
import { requireRole } from '../membership/rules.js';
import { type ActivityRecord, buildRecord, type FieldChange, WEBHOOK_ID_PREFIX } from '../model/activity.js';
import type { Caller } from '../model/caller.js';
import { webhookEventsUnknown, webhookFormatUnknown, webhookNotFound, webhookUrlRefused } from '../model/refusals.js';
import { confirmedOr } from '../store/confirmed.js';
import type { WorkspaceStores, WriteContext } from '../store/stores.js';
import { WEBHOOK_FORMATS, type Webhook, type WebhookFormat, withoutSecret } from '../store/webhook-store.js';
import { writesOf } from '../store/writes.js';
import type { WebhookDispatch } from './webhook-dispatch.js';

/**
 * The one writer of a workspace's outbound webhooks (docs/notifications.md, "Webhooks"), for every
 * door (the admin CLI today). Only admins and owners add, remove, list and test them: a webhook sends
 * the workspace's events out of it. A URL is vetted here (https, a public address: the address guard)
 * and again at every delivery (webhook-dispatch.ts). Adding or removing one is one write with its
 * record, of kind `workspace` like the workspace's other settings; the record never holds the secret.
 */

/** The most webhooks one workspace may have. */
export const MAX_WEBHOOKS = 10;

export interface WebhookFields {
  readonly url: string;
  /** Of INBOX_KINDS; absent or empty: all of them. */
  readonly events?: readonly string[];
  readonly format?: string;
}

/** How URLs are vetted where this door runs: loopback only on the local server; the resolver a test's own. */
export interface VetSettings {
  readonly allowLoopback: boolean;
  readonly resolve?: Resolve;
}

const MANAGE = 'managing webhooks';

/** Who may see and change webhooks: admins and owners (the operator acts as an owner). */
export const requireWebhookRights = (caller: Pick<Caller, 'role'>): void => requireRole(caller, 'admin', MANAGE);

/** `whsec_` and 32 random bytes in base64: the form Standard Webhooks' libraries read. */
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;
const newWebhookId = (): string => `${WEBHOOK_ID_PREFIX}${randomBytes(8).toString('hex')}`;

/** The secret as `list` shows it: enough to tell two apart, never enough to sign. */
export const maskedSecret = (secret: string): string => `whsec_…${secret.slice(-4)}`;

const eventsOf = (given: readonly string[] | undefined): InboxKind[] => {
  const names = [...new Set((given ?? []).map((e) => e.trim()).filter(Boolean))];
  if (!names.length) return [...INBOX_KINDS];
  const unknown = names.filter((n) => !(INBOX_KINDS as readonly string[]).includes(n));
  if (unknown.length) throw webhookEventsUnknown(unknown, INBOX_KINDS);
  return INBOX_KINDS.filter((k) => names.includes(k));
};

const formatOf = (given: string | undefined): WebhookFormat => {
  const format = given ?? 'standard';
  if (!(WEBHOOK_FORMATS as readonly string[]).includes(format)) throw webhookFormatUnknown(format, WEBHOOK_FORMATS);
  return format as WebhookFormat;
};

const labelOf = (w: Webhook): string => `webhook to ${new URL(w.url).host}`;

/**
 * The record names the webhook by its host only: its path and query are as secret as the secret
 * (a Slack URL is the credential to post in the channel), and every member with team:read reads
 * the workspace's records.
 */
const record = (ctx: WriteContext, action: 'created' | 'removed', w: Webhook): ActivityRecord => {
  const { url: _url, ...rest } = withoutSecret(w);
  const shown = { ...rest, host: new URL(w.url).host };
  const changes: FieldChange[] =
    action === 'created'
      ? [
          { field: 'webhook', after: labelOf(w) },
          { field: 'events', after: [...w.events] },
          { field: 'format', after: w.format },
        ]
      : [{ field: 'webhook', before: labelOf(w) }];
  return buildRecord(
    ctx.source,
    w.workspaceId,
    {
      kind: 'workspace',
      action,
      targetId: w.webhookId,
      targetLabel: labelOf(w),
      changes,
      ...(action === 'created' ? { after: { ...shown } } : { before: { ...shown } }),
    },
    ctx.stores.activity.expiresAtFor(ctx.source.now),
  );
};

/** Adds a webhook: the rights, the events and format, the URL vetted, the limit (in the write itself). Its secret is in the answer, once. */
export const addWebhook = async (
  ctx: WriteContext,
  fields: WebhookFields,
  vet: VetSettings,
): Promise<{ readonly webhook: Webhook; readonly record: ActivityRecord }> => {
  requireWebhookRights(ctx.caller);
  const events = eventsOf(fields.events);
  const format = formatOf(fields.format);
  const url = fields.url.trim();
  const vetted = await vetUrl(url, vet);
  if (!vetted.ok) throw webhookUrlRefused(vetted.cause, vetted.addressClass);
  const webhook: Webhook = {
    workspaceId: ctx.caller.workspaceId,
    webhookId: newWebhookId(),
    url: vetted.url.href,
    events,
    format,
    secret: newSecret(),
    createdAt: ctx.source.now.toISOString(),
    createdBy: ctx.caller.userId,
  };
  const added = record(ctx, 'created', webhook);
  const w = writesOf(ctx.stores);
  await confirmedOr('webhook list shows whether it was added.', () =>
    w.commit([...w.webhooks.createOps(webhook, MAX_WEBHOOKS), w.activity.recordOp(added)]),
  );
  return { webhook, record: added };
};

/** Removes a webhook: deliveries still waiting for it are dropped at their next try. */
export const removeWebhook = async (
  ctx: WriteContext,
  webhookId: string,
): Promise<{ readonly webhook: Webhook; readonly record: ActivityRecord }> => {
  requireWebhookRights(ctx.caller);
  const webhook = await ctx.stores.webhooks.get(ctx.caller.workspaceId, webhookId);
  if (!webhook) throw webhookNotFound(webhookId);
  const removed = record(ctx, 'removed', webhook);
  const w = writesOf(ctx.stores);
  await confirmedOr('webhook list shows whether it was removed.', () =>
    w.commit([...w.webhooks.removeOps(webhook), w.activity.recordOp(removed)]),
  );
  return { webhook, record: removed };
};

/** A workspace's webhooks as an admin sees them: secrets masked. */
export const listWebhooks = async (
  stores: Pick<WorkspaceStores, 'webhooks'>,
  caller: Pick<Caller, 'role' | 'workspaceId'>,
): Promise<Webhook[]> => {
  requireWebhookRights(caller);
  return (await stores.webhooks.list(caller.workspaceId)).map((w) => ({ ...w, secret: maskedSecret(w.secret) }));
};

/** A signed test delivery to one of the workspace's webhooks, for an admin: what came of it. */
export const testWebhook = async (
  caller: Pick<Caller, 'role' | 'workspaceId'>,
  dispatch: Pick<WebhookDispatch, 'test'>,
  webhookId: string,
  now: Date,
): Promise<SendOutcome> => {
  requireWebhookRights(caller);
  return dispatch.test(caller.workspaceId, webhookId, now);
};
