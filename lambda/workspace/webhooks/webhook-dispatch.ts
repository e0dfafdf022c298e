import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Resolve } from '../../delivery/address-guard.js';
import type { Notice } from '../../delivery/notice.js';
import { type SendOutcome, sendSigned } from '../../delivery/webhook-sender.js';
import { webhookNotFound } from '../model/refusals.js';
import {
  type Delivery,
  type DueItem,
  DynamoWebhookStore,
  minuteAfter,
  minuteOf,
  type Webhook,
  type WebhookFailure,
  type WebhookFormat,
} from '../store/webhook-store.js';

/**
 * Delivers notices to a workspace's webhooks (docs/notifications.md, "Webhooks"). The notifier
 * (workspace/notify/) hands each change's notices to `dispatch` and calls `retryDue` every minute.
 *
 * - At least once, in order per task and webhook: every notice becomes a delivery in its task's
 *   lane (store/webhook-store.ts); the head is tried at once, the others wait behind it, and the
 *   next is tried as soon as the head is sent or given up.
 * - Each try is claimed before it is sent by moving its due item to the minute of the try after it,
 *   so a runner that dies mid-send leaves the next try scheduled and two runners never both send one.
 * - Once by (webhook, notice): a notice dispatched again (a stream redelivers) finds its delivery
 *   and is not sent again, unless its last try failed (then it is tried now, as its retry would be).
 * - Retries: 1 minute after the first try, then 5 min, 30 min, 2 h, 6 h, 12 h, and a last one 24 h
 *   after the first try; then the delivery is kept as failed, counted on the webhook with its last
 *   cause (`webhook list`).
 * - A workspace starts at most `ratePerMinute` tries a minute; a try over it is put off to the next
 *   minute, never dropped.
 * - Every try vets the URL again and connects only to the address vetted (delivery/webhook-sender.ts).
 */

export interface WebhookDispatch {
  /** Each notice to every webhook of the workspace that takes its kind, in the order given. */
  dispatch(workspaceId: string, notices: readonly Notice[], now: Date): Promise<void>;
  /** The tries due by `now` (the minute job). */
  retryDue(now: Date): Promise<void>;
  /** One signed test delivery (type `webhook.test`), recorded nowhere: what came of it. */
  test(workspaceId: string, webhookId: string, now: Date): Promise<SendOutcome>;
}

export interface WebhookDispatchOptions {
  readonly db: DynamoDBDocumentClient;
  readonly table: string;
  /** Loopback receivers allowed: the local server only. */
  readonly allowLoopback: boolean;
  /** How long a receiver has to answer (default 5 s). */
  readonly timeoutMs?: number;
  /** How host names resolve (default node:dns); tests map names to the addresses they attack with. */
  readonly resolve?: Resolve;
  /** Tries one workspace starts in a minute (default DEFAULT_RATE_PER_MINUTE). */
  readonly ratePerMinute?: number;
}

export const DEFAULT_RATE_PER_MINUTE = 60;

/** The wait after each failed try, by the try's number (the first retry a minute after the first try). */
export const RETRY_STEPS_MS: readonly number[] = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 6 * 3600_000, 12 * 3600_000];
/** Tries stop this long after the first: the last one is made then. */
export const RETRY_WINDOW_MS = 24 * 3600_000;
/** The most tries of one delivery: the first, the six steps, the last at 24 hours. */
export const MAX_ATTEMPTS = RETRY_STEPS_MS.length + 2;
/** The minute job reads this many minutes back on its first run. */
const FIRST_LOOKBACK_MINUTES = 60;
/** … and always the last few minutes again: a dispatch on another instance may have written a due item there just now. */
const RESCAN_MINUTES = 2;
/** … and never more than this far back. */
const MAX_LOOKBACK_MINUTES = 25 * 60;
/** How many minutes' due partitions are read at once (after a pause of the job, most are empty). */
const READ_AHEAD_MINUTES = 16;

/** When the try after try number `made` is due, or undefined when that was the last. */
export const nextTryAt = (firstAt: Date, made: number, now: Date): Date | undefined => {
  const end = firstAt.getTime() + RETRY_WINDOW_MS;
  if (made >= MAX_ATTEMPTS || now.getTime() >= end) return undefined;
  return new Date(Math.min(now.getTime() + (RETRY_STEPS_MS[made - 1] ?? Number.POSITIVE_INFINITY), end));
};

/** Slack reads `&`, `<` and `>` as markup; a summary carries a person's words. */
const slackText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The body of a delivery: Standard Webhooks' `{type, timestamp, data}`, or Slack's `{text}`. */
export const webhookBody = (format: WebhookFormat, notice: Notice, type = `task.${notice.kind}`): string =>
  format === 'slack' ? JSON.stringify({ text: slackText(notice.summary) }) : JSON.stringify({ type, timestamp: notice.at, data: notice });

const failureOf = (outcome: Extract<SendOutcome, { ok: false }>, noticeId: string, now: Date): WebhookFailure => ({
  at: now.toISOString(),
  cause: outcome.cause,
  ...(outcome.status !== undefined ? { status: outcome.status } : {}),
  noticeId,
});

export const createWebhookDispatch = (opts: WebhookDispatchOptions): WebhookDispatch => {
  const store = new DynamoWebhookStore(opts.db, opts.table);
  const rate = opts.ratePerMinute ?? DEFAULT_RATE_PER_MINUTE;
  const sendOptions = {
    allowLoopback: opts.allowLoopback,
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  };

  const send = (webhook: Webhook, notice: Notice, type?: string) =>
    sendSigned(
      { url: webhook.url, secret: webhook.secret, messageId: notice.id, body: webhookBody(webhook.format, notice, type) },
      sendOptions,
    );

  /** The end of a delivery (sent, or failed for good: `outcome` undefined when its last try never told), then its lane's next, tried at once. */
  const finish = async (webhook: Webhook, d: Delivery, outcome: SendOutcome | undefined, now: Date): Promise<void> => {
    if (outcome?.ok) {
      const next = await store.finish(d, 'sent', now);
      if (next) await attempt(webhook, next, now);
      return;
    }
    const failure = outcome ? failureOf(outcome, d.noticeId, now) : { at: now.toISOString(), cause: 'unanswered', noticeId: d.noticeId };
    const next = await store.finish(d, 'failed', now, {
      cause: failure.cause,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
    });
    await store.noteFailure(d.workspaceId, d.webhookId, failure, true);
    if (next) await attempt(webhook, next, now);
  };

  /**
   * One try of a pending delivery as read: within the workspace's rate, claimed, sent. True when it
   * failed and will be tried again (the webhook is not answering now).
   */
  const attempt = async (webhook: Webhook, d: Delivery, now: Date): Promise<boolean> => {
    const minute = minuteOf(now);
    if (d.lastTry) {
      // Its last try was claimed and never told: it counts as failed.
      await finish(webhook, d, undefined, now);
      return false;
    }
    if (!(await store.takeRate(d.workspaceId, minute, rate, now))) {
      await store.defer(d, minuteAfter(minute, 1), now);
      return false;
    }
    const firstAt = d.firstAt ? new Date(d.firstAt) : now;
    const next = nextTryAt(firstAt, d.attempts + 1, now);
    // With no try after this one, the due item left is the check that gives it up, should this runner die.
    const claimed = await store.claim(d, next ? minuteOf(next) : minuteAfter(minute, 1), now, !next);
    if (!claimed) return false;
    const outcome = await send(webhook, claimed.notice);
    if (outcome.ok || !outcome.retryable || !next) {
      await finish(webhook, claimed, outcome, now);
      return false;
    }
    await store.noteTry(claimed, outcome.cause, outcome.status);
    await store.noteFailure(d.workspaceId, d.webhookId, failureOf(outcome, d.noticeId, now), false);
    return true;
  };

  /** One webhook's share of a change's notices, in their order. */
  const toWebhook = async (webhook: Webhook, notices: readonly Notice[], now: Date): Promise<void> => {
    // Once it failed in this run, its other heads wait for the minute job rather than for its timeout each.
    let down = false;
    for (const notice of notices) {
      if (!webhook.events.includes(notice.kind)) continue;
      const { as, delivery } = await store.enqueue(webhook, notice, now);
      // Handed over again after a failed try: tried now only once its next try is due (the schedule holds).
      const failedBefore =
        as === 'known' &&
        delivery.status === 'pending' &&
        delivery.attempts > 0 &&
        delivery.lastCause !== undefined &&
        (delivery.dueMinute ?? '') <= minuteOf(now);
      if ((as === 'head' || failedBefore) && !down) down = await attempt(webhook, delivery, now);
    }
  };

  /** One due item: its webhook and delivery read as they are now, then its try (or its drop). */
  const due = async (item: DueItem, webhooks: Map<string, Promise<Webhook | undefined>>, now: Date): Promise<void> => {
    const key = `${item.workspaceId}#${item.webhookId}`;
    if (!webhooks.has(key)) webhooks.set(key, store.get(item.workspaceId, item.webhookId));
    const webhook = await webhooks.get(key);
    const d = webhook ? await store.delivery(item.workspaceId, item.webhookId, item.noticeId) : undefined;
    // A removed webhook's deliveries, and a due item its delivery has moved past, are done with.
    if (!webhook || !d || d.status !== 'pending' || d.dueMinute !== item.minute) {
      await store.dropDue(item);
      return;
    }
    await attempt(webhook, d, now);
  };

  return {
    async dispatch(workspaceId, notices, now) {
      if (!notices.length) return;
      const webhooks = await store.list(workspaceId);
      // A webhook hears of what happened since it was added: a record handed over again later (a
      // retry, the local poller's look back) is no news to one added after it.
      const results = await Promise.allSettled(
        webhooks.map((w) =>
          toWebhook(
            w,
            notices.filter((n) => n.at >= w.createdAt),
            now,
          ),
        ),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },

    async retryDue(now) {
      const nowMinute = minuteOf(now);
      const cursor = await store.cursor();
      const oldest = minuteAfter(nowMinute, -MAX_LOOKBACK_MINUTES);
      let from = cursor ? minuteAfter(cursor, 1) : minuteAfter(nowMinute, -FIRST_LOOKBACK_MINUTES);
      if (from < oldest) from = oldest;
      const rescan = minuteAfter(nowMinute, -RESCAN_MINUTES);
      if (from > rescan) from = rescan;
      const webhooks = new Map<string, Promise<Webhook | undefined>>();
      let firstError: unknown;
      const minutes: string[] = [];
      for (let minute = from; minute <= nowMinute; minute = minuteAfter(minute, 1)) minutes.push(minute);
      // Read a run of minutes side by side (most are empty), then try their items minute by minute.
      const reads = new Map<string, Promise<DueItem[]>>();
      const read = (i: number) => {
        const minute = minutes[i];
        if (minute === undefined || reads.has(minute)) return;
        const reading = store.dueIn(minute);
        // A read ahead that fails is thrown where its minute is awaited, not as an unhandled rejection meanwhile.
        reading.catch(() => undefined);
        reads.set(minute, reading);
      };
      for (const [i, minute] of minutes.entries()) {
        for (let ahead = 0; ahead < READ_AHEAD_MINUTES; ahead++) read(i + ahead);
        const items = await reads.get(minute)!;
        reads.delete(minute);
        // Each webhook's items one after another (a slow receiver holds up only its own), webhooks side by side.
        const byWebhook = new Map<string, DueItem[]>();
        for (const item of items) {
          const key = `${item.workspaceId}#${item.webhookId}`;
          byWebhook.set(key, [...(byWebhook.get(key) ?? []), item]);
        }
        const results = await Promise.allSettled(
          [...byWebhook.values()].map(async (list) => {
            for (const item of list) await due(item, webhooks, now);
          }),
        );
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed && firstError === undefined) firstError = failed.reason;
        // The cursor stays behind a minute not fully tried, so the next run reads it again.
        if (firstError === undefined && minute <= rescan) await store.advanceCursor(minute);
      }
      if (firstError !== undefined) throw firstError;
    },

    async test(workspaceId, webhookId, now) {
      const webhook = await store.get(workspaceId, webhookId);
      if (!webhook) throw webhookNotFound(webhookId);
      const notice: Notice = {
        id: `test_${now.getTime().toString(36)}_${Math.random().toString(36).slice(2, 8)}`,
        kind: webhook.events[0] ?? 'assigned',
        workspaceKey: 'TEST',
        taskKey: 'TEST-1',
        taskId: 'task_test',
        taskTitle: 'A test delivery',
        actorName: 'doers',
        client: 'webhook test',
        at: now.toISOString(),
        summary: `doers: a test delivery to this webhook (${webhook.webhookId}); nothing happened in the workspace.`,
      };
      return send(webhook, notice, 'webhook.test');
    },
  };
};
