import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { InboxKind, Notice } from '../../delivery/notice.js';
import { fromItem, isConditionFailure } from '../../platform/dynamodb.js';
import {
  WEBHOOK_COUNT_SK,
  WEBHOOK_DUE_CURSOR,
  WEBHOOK_PREFIX,
  webhookDeliveriesPk,
  webhookDeliverySk,
  webhookDuePk,
  webhookDueSk,
  webhookLaneSk,
  webhookRatePk,
  webhookSk,
  wsPk,
} from '../../platform/item-keys.js';
import { commitWrites, type WriteOp, writtenUnlessRefused } from '../../platform/transact.js';
import { webhookNotFound, webhooksFull } from '../model/refusals.js';

/**
 * Outbound webhooks (docs/notifications.md, "Webhooks"): the webhooks themselves, items of the
 * workspace partition with a count item beside them that holds the workspace to its most, which
 * only the webhook writer changes (workspace/webhooks/webhook-writer.ts, with its record); and the
 * state of their deliveries, which only the dispatcher changes (workspace/webhooks/webhook-dispatch.ts).
 *
 * A delivery is one item per webhook and notice (so a notice delivered twice is found the second
 * time), and one lane item per webhook and task keeps that task's deliveries in order: the lane's
 * head is the one being delivered, the others wait in its queue. A head that waits for a try has one
 * item in the partition of the minute it is due (`HOOKDUE#<minute>`), which the minute job reads; a
 * try is claimed by moving that item to the minute of the try after it, in one conditional write
 * with the delivery's attempt count, so two runners never both send it and one that dies mid-way
 * leaves the next try scheduled (at least once).
 */

export type WebhookFormat = 'standard' | 'slack';
export const WEBHOOK_FORMATS: readonly WebhookFormat[] = ['standard', 'slack'];

/** A failed try as the admin sees it (`webhook list`): when, why (a stable code), the status if there was one. */
export interface WebhookFailure {
  readonly at: string;
  readonly cause: string;
  readonly status?: number;
  readonly noticeId: string;
}

export interface Webhook {
  readonly workspaceId: string;
  readonly webhookId: string;
  readonly url: string;
  readonly events: readonly InboxKind[];
  readonly format: WebhookFormat;
  /** `whsec_…`: what signs every delivery; shown once, when it is made. */
  readonly secret: string;
  readonly createdAt: string;
  readonly createdBy: string;
  readonly lastFailure?: WebhookFailure;
  /** Deliveries given up after their last try. */
  readonly failedDeliveries?: number;
}

export type DeliveryStatus = 'waiting' | 'pending' | 'sent' | 'failed';

export interface Delivery {
  readonly workspaceId: string;
  readonly webhookId: string;
  readonly noticeId: string;
  readonly taskId: string;
  readonly notice: Notice;
  readonly status: DeliveryStatus;
  /** Tries made so far. */
  readonly attempts: number;
  /** The first try's time: tries stop 24 hours after it. */
  readonly firstAt?: string;
  /** While pending: the minute its due item is in. */
  readonly dueMinute?: string;
  readonly lastCause?: string;
  readonly lastStatus?: number;
  /** Its last try was claimed: no try follows it, whatever its outcome. */
  readonly lastTry?: boolean;
}

export interface DueItem {
  readonly workspaceId: string;
  readonly webhookId: string;
  readonly noticeId: string;
  readonly minute: string;
}

/** How long a delivery and a lane are kept after their last change (the table's TTL): past every retry. */
const DELIVERY_KEEP_SECONDS = 3 * 24 * 3600;
/** How long a workspace's rate counter of one minute is kept. */
const RATE_KEEP_SECONDS = 3600;

/** `YYYY-MM-DDTHH:MM` of an instant (UTC): the due partitions' and the rate's key. */
export const minuteOf = (at: Date): string => at.toISOString().slice(0, 16);
/** The minute `n` minutes after `minute`. */
export const minuteAfter = (minute: string, n: number): string => minuteOf(new Date(Date.parse(`${minute}:00Z`) + n * 60_000));

const expiresAt = (now: Date, seconds: number): number => Math.floor(now.getTime() / 1000) + seconds;

/** What every member of the team may not see of a webhook: its secret (the record and `list` never carry it). */
export const withoutSecret = (w: Webhook): Omit<Webhook, 'secret'> => {
  const { secret: _secret, ...rest } = w;
  return rest;
};

export interface WebhookStore {
  /** A workspace's webhooks, oldest first. */
  list(workspaceId: string): Promise<Webhook[]>;
  get(workspaceId: string, webhookId: string): Promise<Webhook | undefined>;
}

export interface WebhookWrites {
  /** A new webhook, counted: refused when the workspace holds `most` already. */
  createOps(webhook: Webhook, most: number): WriteOp[];
  /** A webhook removed, and its count given back. */
  removeOps(webhook: Webhook): WriteOp[];
}

/** How a notice entered its lane: to be tried now, behind an earlier one, or not at all (it is known). */
export interface Enqueued {
  readonly as: 'head' | 'queued' | 'known';
  readonly delivery: Delivery;
}

/** What a lane holds: the head being delivered, the rest in order. */
interface Lane {
  readonly head?: string;
  readonly queue: readonly string[];
  readonly v: number;
}

/** A failed condition on a lane: it moved meanwhile; read it again. */
class LaneMoved extends Error {}
/** How often a lane that keeps moving under a write is read again before the write gives up. */
const LANE_ATTEMPTS = 8;

export class DynamoWebhookStore implements WebhookStore, WebhookWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  // ---- webhooks ------------------------------------------------------------------------------

  async list(workspaceId: string): Promise<Webhook[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':p': WEBHOOK_PREFIX },
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).map((i) => fromItem<Webhook>(i)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async get(workspaceId: string, webhookId: string): Promise<Webhook | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: webhookSk(webhookId) }, ConsistentRead: true }),
    );
    return out.Item ? fromItem<Webhook>(out.Item) : undefined;
  }

  private countOp(workspaceId: string, add: 1 | -1, most: number): WriteOp {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: WEBHOOK_COUNT_SK },
          UpdateExpression: 'ADD n :d',
          ...(add === 1 ? { ConditionExpression: 'attribute_not_exists(n) OR n < :most' } : {}),
          ExpressionAttributeValues: { ':d': add, ...(add === 1 ? { ':most': most } : {}) },
        },
      },
      refused: () => {
        throw webhooksFull(most);
      },
    };
  }

  createOps(webhook: Webhook, most: number): WriteOp[] {
    return [
      {
        item: {
          Put: {
            TableName: this.table,
            Item: { pk: wsPk(webhook.workspaceId), sk: webhookSk(webhook.webhookId), ...webhook },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      },
      this.countOp(webhook.workspaceId, 1, most),
    ];
  }

  removeOps(webhook: Webhook): WriteOp[] {
    return [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: { pk: wsPk(webhook.workspaceId), sk: webhookSk(webhook.webhookId) },
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        refused: () => {
          throw webhookNotFound(webhook.webhookId);
        },
      },
      this.countOp(webhook.workspaceId, -1, 0),
    ];
  }

  /** A try that failed, on the webhook as its admin sees it; a webhook removed meanwhile is left gone. */
  async noteFailure(workspaceId: string, webhookId: string, failure: WebhookFailure, gaveUp: boolean): Promise<void> {
    await this.updateWebhook(
      workspaceId,
      webhookId,
      `SET lastFailure = :f${gaveUp ? ' ADD failedDeliveries :one' : ''}`,
      gaveUp ? { ':f': failure, ':one': 1 } : { ':f': failure },
    );
  }

  private async updateWebhook(workspaceId: string, webhookId: string, expression: string, values: Record<string, unknown>) {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: webhookSk(webhookId) },
          UpdateExpression: expression,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: values,
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }

  // ---- deliveries ----------------------------------------------------------------------------

  private deliveryKey(d: Pick<Delivery, 'workspaceId' | 'webhookId' | 'noticeId'>) {
    return { pk: webhookDeliveriesPk(d.workspaceId, d.webhookId), sk: webhookDeliverySk(d.noticeId) };
  }

  private laneKey(workspaceId: string, webhookId: string, taskId: string) {
    return { pk: webhookDeliveriesPk(workspaceId, webhookId), sk: webhookLaneSk(taskId) };
  }

  private dueKey(d: Pick<Delivery, 'workspaceId' | 'webhookId' | 'noticeId'>, minute: string) {
    return { pk: webhookDuePk(minute), sk: webhookDueSk(d.workspaceId, d.webhookId, d.noticeId) };
  }

  async delivery(workspaceId: string, webhookId: string, noticeId: string): Promise<Delivery | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: this.deliveryKey({ workspaceId, webhookId, noticeId }), ConsistentRead: true }),
    );
    return out.Item ? fromItem<Delivery>(out.Item) : undefined;
  }

  private async lane(workspaceId: string, webhookId: string, taskId: string): Promise<Lane> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: this.laneKey(workspaceId, webhookId, taskId), ConsistentRead: true }),
    );
    const item = out.Item as Partial<Lane> | undefined;
    return { ...(item?.head ? { head: item.head } : {}), queue: item?.queue ?? [], v: item?.v ?? 0 };
  }

  /** The lane written as `next`, on condition that it is still as read (`was`). */
  private laneOp(workspaceId: string, webhookId: string, taskId: string, was: Lane, next: Omit<Lane, 'v'>, now: Date): WriteOp {
    const Key = this.laneKey(workspaceId, webhookId, taskId);
    const condition =
      was.v === 0
        ? { ConditionExpression: 'attribute_not_exists(pk)' }
        : { ConditionExpression: 'v = :v', ExpressionAttributeValues: { ':v': was.v } };
    const refused = () => {
      throw new LaneMoved();
    };
    if (!next.head) return { item: { Delete: { TableName: this.table, Key, ...condition } }, refused };
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: { ...Key, head: next.head, queue: [...next.queue], v: was.v + 1, expiresAt: expiresAt(now, DELIVERY_KEEP_SECONDS) },
          ...condition,
        },
      },
      refused,
    };
  }

  private duePut(d: Pick<Delivery, 'workspaceId' | 'webhookId' | 'noticeId'>, minute: string, now: Date): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: {
            ...this.dueKey(d, minute),
            workspaceId: d.workspaceId,
            webhookId: d.webhookId,
            noticeId: d.noticeId,
            minute,
            expiresAt: expiresAt(now, DELIVERY_KEEP_SECONDS),
          },
        },
      },
    };
  }

  private dueDelete(d: Pick<Delivery, 'workspaceId' | 'webhookId' | 'noticeId'>, minute: string | undefined): WriteOp[] {
    return minute ? [{ item: { Delete: { TableName: this.table, Key: this.dueKey(d, minute) } } }] : [];
  }

  /** Writes a lane change, reading the lane again while it moves under the write. */
  private async withLane(workspaceId: string, webhookId: string, taskId: string, write: (lane: Lane) => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const lane = await this.lane(workspaceId, webhookId, taskId);
      try {
        await write(lane);
        return;
      } catch (err) {
        if (!(err instanceof LaneMoved) || attempt >= LANE_ATTEMPTS) throw err;
      }
    }
  }

  /**
   * A notice for a webhook: a new delivery, at the head of its task's lane (due now) or behind the
   * one there; or the delivery this notice already has (a stream's redelivery), unchanged.
   */
  async enqueue(webhook: Pick<Webhook, 'workspaceId' | 'webhookId'>, notice: Notice, now: Date): Promise<Enqueued> {
    const { workspaceId, webhookId } = webhook;
    const base = { workspaceId, webhookId, noticeId: notice.id, taskId: notice.taskId, notice, attempts: 0 };
    let result: Enqueued | undefined;
    const known = new Error('known');
    try {
      await this.withLane(workspaceId, webhookId, notice.taskId, async (lane) => {
        const head = !lane.head;
        const minute = minuteOf(now);
        const delivery: Delivery = head ? { ...base, status: 'pending', dueMinute: minute } : { ...base, status: 'waiting' };
        await commitWrites(this.db, [
          {
            item: {
              Put: {
                TableName: this.table,
                Item: { ...this.deliveryKey(delivery), ...delivery, expiresAt: expiresAt(now, DELIVERY_KEEP_SECONDS) },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            refused: () => {
              throw known;
            },
          },
          this.laneOp(
            workspaceId,
            webhookId,
            notice.taskId,
            lane,
            // Kept in the order of the notices' ids (time-ordered): records of one task may reach the
            // notifier through different shards of the stream, out of the order they were written.
            head ? { head: notice.id, queue: [] } : { head: lane.head, queue: [...lane.queue, notice.id].sort() },
            now,
          ),
          ...(head ? [this.duePut(delivery, minute, now)] : []),
        ]);
        result = { as: head ? 'head' : 'queued', delivery };
      });
    } catch (err) {
      if (err !== known) throw err;
      const delivery = await this.delivery(workspaceId, webhookId, notice.id);
      if (!delivery) throw err;
      return { as: 'known', delivery };
    }
    return result!;
  }

  /** The condition that the delivery is the pending head as read: its tries and its due minute unchanged. */
  private asRead(d: Delivery): { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> } {
    return {
      ConditionExpression: '#s = :pending AND attempts = :a AND dueMinute = :m',
      ExpressionAttributeValues: { ':pending': 'pending', ':a': d.attempts, ':m': d.dueMinute },
    };
  }

  /**
   * Claims the try of a pending delivery as read: its due item moves to `nextMinute` (the try after
   * this one, or, `final`, the check that gives it up) and its tries count one more, in one
   * conditional write. Undefined when another runner claimed it first or it moved on.
   */
  async claim(d: Delivery, nextMinute: string, now: Date, final: boolean): Promise<Delivery | undefined> {
    const firstAt = d.firstAt ?? now.toISOString();
    const claimed: Delivery = { ...d, attempts: d.attempts + 1, firstAt, dueMinute: nextMinute, ...(final ? { lastTry: true } : {}) };
    const cond = this.asRead(d);
    const ok = await writtenUnlessRefused((refused) =>
      commitWrites(this.db, [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: this.deliveryKey(d),
              UpdateExpression: `SET attempts = :a1, firstAt = :first, dueMinute = :next, expiresAt = :exp${final ? ', lastTry = :last' : ''}`,
              ConditionExpression: cond.ConditionExpression,
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: {
                ...cond.ExpressionAttributeValues,
                ':a1': claimed.attempts,
                ':first': firstAt,
                ':next': nextMinute,
                ':exp': expiresAt(now, DELIVERY_KEEP_SECONDS),
                ...(final ? { ':last': true } : {}),
              },
            },
          },
          refused,
        },
        ...(nextMinute === d.dueMinute ? [] : [...this.dueDelete(d, d.dueMinute), this.duePut(d, nextMinute, now)]),
      ]),
    );
    return ok ? claimed : undefined;
  }

  /** A pending delivery's try put off to `minute` (the workspace's rate is spent this minute); false when it moved on. */
  async defer(d: Delivery, minute: string, now: Date): Promise<boolean> {
    if (minute === d.dueMinute) return true;
    const cond = this.asRead(d);
    return writtenUnlessRefused((refused) =>
      commitWrites(this.db, [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: this.deliveryKey(d),
              UpdateExpression: 'SET dueMinute = :to',
              ConditionExpression: cond.ConditionExpression,
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ...cond.ExpressionAttributeValues, ':to': minute },
            },
          },
          refused,
        },
        ...this.dueDelete(d, d.dueMinute),
        this.duePut(d, minute, now),
      ]),
    );
  }

  /** A failed try that will be tried again: why, on the delivery (as claimed). */
  async noteTry(d: Delivery, cause: string, status: number | undefined): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: this.deliveryKey(d),
          UpdateExpression: status === undefined ? 'SET lastCause = :c REMOVE lastStatus' : 'SET lastCause = :c, lastStatus = :st',
          ConditionExpression: 'attempts = :a',
          ExpressionAttributeValues: { ':c': cause, ':a': d.attempts, ...(status === undefined ? {} : { ':st': status }) },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }

  /**
   * A head's last word, sent or failed for good: its due item goes, and the next of its task's lane
   * becomes the head, due now, in the same write. Returns that next delivery (to be tried at once),
   * or undefined; also undefined when the delivery moved on meanwhile (another runner finished it).
   */
  async finish(
    d: Delivery,
    outcome: 'sent' | 'failed',
    now: Date,
    why?: { cause: string; status?: number },
  ): Promise<Delivery | undefined> {
    let next: Delivery | undefined;
    const moved = new Error('moved');
    try {
      await this.withLane(d.workspaceId, d.webhookId, d.taskId, async (lane) => {
        next = undefined;
        // The first of the queue still waiting (one whose item expired meanwhile is passed over).
        let rest = lane.head === d.noticeId ? [...lane.queue] : [];
        let waiting: Delivery | undefined;
        while (!waiting && rest.length) {
          const found = await this.delivery(d.workspaceId, d.webhookId, rest[0]!);
          rest = rest.slice(1);
          if (found?.status === 'waiting') waiting = found;
        }
        const minute = minuteOf(now);
        const ops: WriteOp[] = [
          {
            item: {
              Update: {
                TableName: this.table,
                Key: this.deliveryKey(d),
                UpdateExpression: `SET #s = :out, finishedAt = :now${why ? ', lastCause = :c' : ''}${why?.status !== undefined ? ', lastStatus = :st' : ''} REMOVE dueMinute`,
                ConditionExpression: '#s = :pending AND attempts = :a',
                ExpressionAttributeNames: { '#s': 'status' },
                ExpressionAttributeValues: {
                  ':out': outcome,
                  ':now': now.toISOString(),
                  ':pending': 'pending',
                  ':a': d.attempts,
                  ...(why ? { ':c': why.cause } : {}),
                  ...(why?.status !== undefined ? { ':st': why.status } : {}),
                },
              },
            },
            refused: () => {
              throw moved;
            },
          },
          ...this.dueDelete(d, d.dueMinute),
        ];
        // A lane this delivery does not head (an older layout of the lane, a lane gone) is left as it is.
        if (lane.head === d.noticeId) {
          ops.push(
            this.laneOp(d.workspaceId, d.webhookId, d.taskId, lane, waiting ? { head: waiting.noticeId, queue: rest } : { queue: [] }, now),
          );
        }
        if (waiting) {
          next = { ...waiting, status: 'pending', dueMinute: minute };
          ops.push(
            {
              item: {
                Update: {
                  TableName: this.table,
                  Key: this.deliveryKey(waiting),
                  UpdateExpression: 'SET #s = :pending, dueMinute = :m',
                  ConditionExpression: '#s = :waiting',
                  ExpressionAttributeNames: { '#s': 'status' },
                  ExpressionAttributeValues: { ':pending': 'pending', ':m': minute, ':waiting': 'waiting' },
                },
              },
              refused: () => {
                throw new LaneMoved();
              },
            },
            this.duePut(waiting, minute, now),
          );
        }
        await commitWrites(this.db, ops);
      });
    } catch (err) {
      if (err === moved) return undefined;
      throw err;
    }
    return next;
  }

  /** Drops a due item whose delivery is gone or whose webhook was removed. */
  async dropDue(item: DueItem): Promise<void> {
    await commitWrites(this.db, this.dueDelete(item, item.minute));
  }

  // ---- the rate and the minute job -----------------------------------------------------------

  /** Takes one of a workspace's deliveries of `minute`; false when `most` are taken already. */
  async takeRate(workspaceId: string, minute: string, most: number, now: Date): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: webhookRatePk(workspaceId), sk: minute },
          UpdateExpression: 'ADD n :one SET expiresAt = :exp',
          ConditionExpression: 'attribute_not_exists(n) OR n < :most',
          ExpressionAttributeValues: { ':one': 1, ':most': most, ':exp': expiresAt(now, RATE_KEEP_SECONDS) },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** The due items of one minute, every page. */
  async dueIn(minute: string): Promise<DueItem[]> {
    const items: DueItem[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': webhookDuePk(minute) },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const i of out.Items ?? []) items.push(fromItem<DueItem>(i));
      start = out.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /** The last minute whose due items were all read and tried (undefined before the first run). */
  async cursor(): Promise<string | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: WEBHOOK_DUE_CURSOR, ConsistentRead: true }));
    return typeof out.Item?.minute === 'string' ? out.Item.minute : undefined;
  }

  /** Moves the cursor forward, never back (two runners may end in either order). */
  async advanceCursor(minute: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: WEBHOOK_DUE_CURSOR,
          UpdateExpression: 'SET #m = :m',
          ConditionExpression: 'attribute_not_exists(#m) OR #m < :m',
          ExpressionAttributeNames: { '#m': 'minute' },
          ExpressionAttributeValues: { ':m': minute },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }
}
