import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { isConditionFailure } from '../platform/dynamodb.js';
import { LIMITS_TABLE_KEYS } from '../platform/tables.js';
import { noRelease } from './call-guard.js';
import { ROUND_TRIP_DEADLINE_MS, roundTripOptions } from './round-trip.js';

/** Clock skew between instances the bucket length absorbs (Lambda clocks are NTP-synced to ms). */
const SKEW_MARGIN_SECONDS = 1;
/** Stale counters a release tidies at most; anything left goes with the item's TTL. */
const MAX_STALE_REMOVED = 16;
/** docs/limits.md: a call refused for concurrency retries after one second. */
const BUSY_RETRY_AFTER_SECONDS = 1;
/**
 * How long after a refused write the read that decides its reason may still be answered: the
 * write's and the read's deadlines, and clock skew. A window's rate counter outlives its window
 * by at least this long, so that read always finds it.
 */
const REASON_READ_SECONDS = (2 * ROUND_TRIP_DEADLINE_MS) / 1000 + SKEW_MARGIN_SECONDS;

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
 * the one refused write, plus one read with both limits on where the store does not return the item
 * with a refused write (dynalite; see `rateReached`).
 */
export class AdmissionLimiter {
  /** G: a bucket outlasts any live call, clock skew included. */
  readonly bucketSeconds: number;
  /** A dead holder's lease stops counting at most this long after its call began. */
  readonly boundSeconds: number;
  /** Ended windows whose rate counter is kept: the reason read of a refusal may still consult it. */
  private readonly keptWindows: number;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly settings: AdmissionSettings,
  ) {
    this.bucketSeconds = settings.functionTimeoutSeconds + SKEW_MARGIN_SECONDS;
    this.boundSeconds = 2 * this.bucketSeconds;
    this.keptWindows = Math.ceil(REASON_READ_SECONDS / settings.windowSeconds);
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
      const dead = windowStart - (this.keptWindows + 1) * windowSeconds;
      Object.assign(names, { '#rate': rateCounter(windowStart), '#dead': rateCounter(dead) });
      values[':limit'] = calls;
      add.push('#rate :one');
      conditions.push('(attribute_not_exists(#rate) OR #rate < :limit)');
      // The counter of the window before the kept ones is dead now; dropping it here keeps the
      // item small even when no release ever writes (rate limit alone).
      remove.push('#dead');
    }
    // From bucket k+2 on no lease counter written here is consulted, nor a window's counter once a
    // reason read can no longer trail a write of the window.
    values[':expiresAt'] = Math.max(
      maxConcurrent > 0 ? (bucket + 3) * this.bucketSeconds : 0,
      calls > 0 ? windowEnd + Math.ceil(REASON_READ_SECONDS) : 0,
    );
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
      return (await this.rateReached(err, key, windowStart))
        ? // The next permit frees when this window ends; never advertise less than a second.
          { granted: false, reason: 'ratelimited', retryAfterSeconds: Math.max(1, Math.ceil(windowEnd - nowSeconds)) }
        : { granted: false, reason: 'busy', retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS };
    }
    if (maxConcurrent === 0) return { granted: true, release: noRelease };
    const stale = staleCounters(item, bucket, windowStart - this.keptWindows * windowSeconds);
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

  /**
   * Whether a refused write is refused for rate (else it is busy). With one limit on, that limit
   * refused it. With both, the rate limit counts as reached when the window's counter is at the
   * limit: the rate clause failed then, or the window has no permit left by the time the caller is
   * answered, so no retry gets in before the window ends and its end is the truthful time to name.
   * DynamoDB returns the item as the failed condition saw it. A store that does not (dynalite) makes
   * this read it afterwards, and only the rate counter can tell then: leases may have been given
   * back meanwhile, but a window's counter only grows while a read can still consult it (it is
   * removed `keptWindows` windows after its end). So a counter below the limit at the read was
   * below it at the write, and the bound is what refused.
   */
  private async rateReached(err: unknown, key: Record<string, string>, windowStart: number): Promise<boolean> {
    const { calls, maxConcurrent } = this.settings;
    if (maxConcurrent === 0) return true;
    if (calls === 0) return false;
    // The item as the refused write found it (ReturnValuesOnConditionCheckFailure), in wire form.
    const old = (err as { Item?: Record<string, AttributeValue> }).Item;
    const item = old ? unmarshall(old) : await this.read(key);
    return numberOf(item, rateCounter(windowStart)) >= calls;
  }

  /** Only for a store that does not return the item with a refused write (dynalite). */
  private async read(key: Record<string, string>): Promise<Item | undefined> {
    return (await this.db.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }), roundTripOptions())).Item;
  }
}

/**
 * Lease counters of buckets before k-1 (consulted by nobody from bucket k on; k-1 only by a lagging
 * clock) and rate counters of windows before `oldestKept` (ended, and no reason read consults them).
 */
const staleCounters = (item: Item | undefined, bucket: number, oldestKept: number): string[] =>
  Object.keys(item ?? {})
    .filter(
      (name) => (/^n\d+$/.test(name) && Number(name.slice(1)) <= bucket - 2) || (/^r\d+$/.test(name) && Number(name.slice(1)) < oldestKept),
    )
    .slice(0, MAX_STALE_REMOVED);
