import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LEASE_TABLE_KEYS } from '../platform/tables.js';
import { isConditionFailure } from '../platform/dynamodb.js';
import { roundTripOptions } from './round-trip.js';

/** Clock skew between instances the bucket length absorbs (Lambda clocks are NTP-synced to ms). */
const SKEW_MARGIN_SECONDS = 1;
/** Stale counters a release tidies at most; anything left goes with the item's TTL. */
const MAX_STALE_REMOVED = 16;

export type LeaseDecision = { readonly granted: true; readonly release: () => Promise<void> } | { readonly granted: false };

const counterName = (bucket: number): string => `n${bucket}`;

/**
 * Concurrency leases as counters in one item per user, without lease ids and without reading first.
 *
 * Time is cut into buckets of G = function timeout + 1 s. A call that starts in bucket k adds 1 to
 * the counters `n<k>` and `n<k+1>` and, once answered, subtracts 1 from the same two. So `n<k>`
 * always holds the calls started in buckets k-1 and k that are still running, which is every running
 * call, since none runs longer than the function timeout < G. Admission is one conditional update:
 * `n<current> < max`, checked and incremented atomically by DynamoDB, hence exact under any
 * contention across instances.
 *
 * A holder that dies never subtracts, but its two counters stop being consulted once the clock
 * reaches bucket k+2: its lease stops counting after at least G and at most 2G seconds
 * (`boundSeconds`). Nothing is ever read or swept to get there.
 */
export class ConcurrencyLimiter {
  /** G: a bucket outlasts any live call, clock skew included. */
  readonly bucketSeconds: number;
  /** A dead holder's lease stops counting at most this long after its call began. */
  readonly boundSeconds: number;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly max: number,
    functionTimeoutSeconds: number,
  ) {
    this.bucketSeconds = functionTimeoutSeconds + SKEW_MARGIN_SECONDS;
    this.boundSeconds = 2 * this.bucketSeconds;
  }

  async acquire(subject: string, nowMs: number): Promise<LeaseDecision> {
    const bucket = Math.floor(nowMs / 1000 / this.bucketSeconds);
    const key = { [LEASE_TABLE_KEYS.partitionKey]: subject };
    let item: Record<string, unknown> | undefined;
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: 'ADD #cur :one, #next :one SET #expiresAt = :expiresAt',
          // `#ahead` > 0 means an instance whose clock is already in the next bucket holds a lease
          // this one would not see: refusing for that instant keeps the bound exact under skew.
          ConditionExpression: '(attribute_not_exists(#cur) OR #cur < :max) AND (attribute_not_exists(#ahead) OR #ahead <= :zero)',
          ExpressionAttributeNames: {
            '#cur': counterName(bucket),
            '#next': counterName(bucket + 1),
            '#ahead': counterName(bucket + 2),
            '#expiresAt': LEASE_TABLE_KEYS.ttl,
          },
          // From bucket k+2 on no counter written here is consulted; one bucket more before TTL tidies.
          ExpressionAttributeValues: { ':one': 1, ':max': this.max, ':zero': 0, ':expiresAt': (bucket + 3) * this.bucketSeconds },
          ReturnValues: 'ALL_NEW',
        }),
        roundTripOptions(),
      );
      item = out.Attributes;
    } catch (err) {
      if (isConditionFailure(err)) return { granted: false };
      throw err;
    }
    const stale = staleCounters(item, bucket);
    return { granted: true, release: () => this.release(key, bucket, stale) };
  }

  /** One round trip: gives the lease back and drops counters no instance consults any more. */
  private async release(key: Record<string, string>, bucket: number, stale: readonly string[]): Promise<void> {
    const names: Record<string, string> = { '#pk': LEASE_TABLE_KEYS.partitionKey, '#cur': counterName(bucket), '#next': counterName(bucket + 1) };
    stale.forEach((name, i) => (names[`#s${i}`] = name));
    const remove = stale.length ? ` REMOVE ${stale.map((_, i) => `#s${i}`).join(', ')}` : '';
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: `ADD #cur :minusOne, #next :minusOne${remove}`,
          // Without the item (TTL took it, so the lease had stopped counting anyway) an update would
          // recreate it without expiresAt: a leak. The condition makes that a no-op instead.
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ':minusOne': -1 },
        }),
        roundTripOptions(),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }
}

/** Counters of buckets before k-1: consulted by nobody from bucket k on (k-1 only by a lagging clock). */
const staleCounters = (item: Record<string, unknown> | undefined, bucket: number): string[] =>
  Object.keys(item ?? {})
    .filter((name) => /^n\d+$/.test(name) && Number(name.slice(1)) <= bucket - 2)
    .slice(0, MAX_STALE_REMOVED);
