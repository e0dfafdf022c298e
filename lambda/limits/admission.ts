import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { isConditionFailure } from '../platform/dynamodb.js';
import { LIMITS_TABLE_KEYS } from '../platform/tables.js';
import { noRelease } from './call-guard.js';
import { roundTripOptions } from './round-trip.js';

/** Clock skew between instances the bucket length absorbs (Lambda clocks are NTP-synced to ms). */
const SKEW_MARGIN_SECONDS = 1;
/** Stale counters a release tidies at most; anything left goes with the item's TTL. */
const MAX_STALE_REMOVED = 16;
/** docs/limits.md: a call refused for concurrency retries after one second. */
const BUSY_RETRY_AFTER_SECONDS = 1;

export interface AdmissionSettings {
  /** Tool calls and resource reads per window; 0: no rate limit. */
  readonly calls: number;
  readonly windowSeconds: number;
  /** Calls in flight at once; 0: no concurrency bound. */
  readonly maxConcurrent: number;
  readonly functionTimeoutSeconds: number;
}

export type Admission =
  | { readonly granted: true; readonly release: () => Promise<void> }
  | { readonly granted: false; readonly reason: 'busy' | 'ratelimited'; readonly retryAfterSeconds: number };

const leaseCounter = (bucket: number): string => `n${bucket}`;
const rateCounter = (windowStart: number): string => `r${windowStart}`;

type Item = Record<string, unknown>;
const numberOf = (item: Item | undefined, name: string): number => (typeof item?.[name] === 'number' ? (item[name] as number) : 0);

/**
 * Both limits of one user in one item, taken with one conditional update: a rate permit and a
 * concurrency lease together, or neither. No lease ids, nothing read first.
 *
 * Rate: fixed windows aligned to the epoch; the counter `r<windowStart>` counts the window's
 * permits and the update is refused once it reached `calls`.
 *
 * Concurrency: time is cut into buckets of G = function timeout + 1 s. A call that starts in bucket
 * k adds 1 to `n<k>` and `n<k+1>` and, once answered, subtracts 1 from the same two. So `n<k>`
 * always holds the calls started in buckets k-1 and k that are still running, which is every running
 * call, since none runs longer than the function timeout < G. A holder that dies never subtracts,
 * but its counters stop being consulted once the clock reaches bucket k+2: its lease stops counting
 * after at least G and at most 2G seconds (`boundSeconds`).
 *
 * DynamoDB checks and increments atomically, so both limits are exact under any contention across
 * instances. Cost: one write in, one write out (none when only the rate limit is on); a refusal is
 * the one refused write (DynamoDB returns the item with it, so the reason needs no read; a store
 * that does not, like dynalite, costs one read more).
 */
export class AdmissionLimiter {
  /** G: a bucket outlasts any live call, clock skew included. */
  readonly bucketSeconds: number;
  /** A dead holder's lease stops counting at most this long after its call began. */
  readonly boundSeconds: number;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly settings: AdmissionSettings,
  ) {
    this.bucketSeconds = settings.functionTimeoutSeconds + SKEW_MARGIN_SECONDS;
    this.boundSeconds = 2 * this.bucketSeconds;
  }

  async acquire(subject: string, nowMs: number): Promise<Admission> {
    const { calls, windowSeconds, maxConcurrent } = this.settings;
    const nowSeconds = nowMs / 1000;
    const bucket = Math.floor(nowSeconds / this.bucketSeconds);
    const windowStart = Math.floor(nowSeconds / windowSeconds) * windowSeconds;
    const windowEnd = windowStart + windowSeconds;
    const names: Record<string, string> = { '#expiresAt': LIMITS_TABLE_KEYS.ttl };
    const values: Record<string, unknown> = { ':one': 1 };
    const add: string[] = [];
    const conditions: string[] = [];
    const remove: string[] = [];
    if (maxConcurrent > 0) {
      Object.assign(names, { '#cur': leaseCounter(bucket), '#next': leaseCounter(bucket + 1), '#ahead': leaseCounter(bucket + 2) });
      Object.assign(values, { ':max': maxConcurrent, ':zero': 0 });
      add.push('#cur :one', '#next :one');
      // `#ahead` > 0 means an instance whose clock is already in the next bucket holds a lease this
      // one would not see: refusing for that instant keeps the bound exact under skew.
      conditions.push('(attribute_not_exists(#cur) OR #cur < :max)', '(attribute_not_exists(#ahead) OR #ahead <= :zero)');
    }
    if (calls > 0) {
      Object.assign(names, { '#rate': rateCounter(windowStart), '#previous': rateCounter(windowStart - windowSeconds) });
      values[':limit'] = calls;
      add.push('#rate :one');
      conditions.push('(attribute_not_exists(#rate) OR #rate < :limit)');
      // The previous window's counter is dead now; dropping it here keeps the item small even
      // when no release ever writes (rate limit alone).
      remove.push('#previous');
    }
    // From bucket k+2 on no lease counter written here is consulted, nor a window's after its end.
    values[':expiresAt'] = Math.max(maxConcurrent > 0 ? (bucket + 3) * this.bucketSeconds : 0, calls > 0 ? windowEnd : 0);
    const key = { [LIMITS_TABLE_KEYS.partitionKey]: subject };

    let item: Item | undefined;
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: `ADD ${add.join(', ')} SET #expiresAt = :expiresAt${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: maxConcurrent > 0 ? 'ALL_NEW' : 'NONE',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        roundTripOptions(),
      );
      item = out.Attributes;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // The item as the refused write found it (ReturnValuesOnConditionCheckFailure), in wire form.
      const old = (err as { Item?: Record<string, AttributeValue> }).Item;
      const current = old ? unmarshall(old) : await this.read(key);
      const busy =
        maxConcurrent > 0 && (numberOf(current, leaseCounter(bucket)) >= maxConcurrent || numberOf(current, leaseCounter(bucket + 2)) > 0);
      return busy
        ? { granted: false, reason: 'busy', retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS }
        : // The next permit frees when this window ends; never advertise less than a second.
          { granted: false, reason: 'ratelimited', retryAfterSeconds: Math.max(1, Math.ceil(windowEnd - nowSeconds)) };
    }
    if (maxConcurrent === 0) return { granted: true, release: noRelease };
    const stale = staleCounters(item, bucket, windowStart);
    return { granted: true, release: () => this.release(key, bucket, stale) };
  }

  /** One round trip: gives the lease back and drops counters no instance consults any more. */
  private async release(key: Record<string, string>, bucket: number, stale: readonly string[]): Promise<void> {
    const names: Record<string, string> = {
      '#pk': LIMITS_TABLE_KEYS.partitionKey,
      '#cur': leaseCounter(bucket),
      '#next': leaseCounter(bucket + 1),
    };
    for (const [i, name] of stale.entries()) names[`#s${i}`] = name;
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

  /** Only for a store that does not return the item with a refused write (dynalite). */
  private async read(key: Record<string, string>): Promise<Item | undefined> {
    return (await this.db.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }), roundTripOptions())).Item;
  }
}

/**
 * Lease counters of buckets before k-1 (consulted by nobody from bucket k on; k-1 only by a lagging
 * clock) and rate counters of windows that have ended.
 */
const staleCounters = (item: Item | undefined, bucket: number, windowStart: number): string[] =>
  Object.keys(item ?? {})
    .filter(
      (name) =>
        (/^n\d+$/.test(name) && Number(name.slice(1)) <= bucket - 2) || (/^r\d+$/.test(name) && Number(name.slice(1)) < windowStart),
    )
    .slice(0, MAX_STALE_REMOVED);
