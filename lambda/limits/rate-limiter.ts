import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RATE_LIMIT_TABLE_KEYS } from '../platform/tables.js';
import { isConditionFailure } from '../platform/dynamodb.js';
import { roundTripOptions } from './round-trip.js';

export type RateDecision = { readonly granted: true } | { readonly granted: false; readonly retryAfterSeconds: number };

/**
 * Fixed windows aligned to the epoch: one item per user and window, keyed
 * `<subject>#<windowStart>`. A permit is one conditional `ADD count :1` that fails once the count
 * has reached the limit, so instances that race for the last permit are ordered by DynamoDB itself:
 * exactly `calls` writes per window succeed, whatever the interleaving. One round trip, one write
 * unit (the item stays far below 1 KB; a refused conditional write is billed the same).
 */
export class RateLimiter {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly calls: number,
    private readonly windowSeconds: number,
  ) {}

  async take(subject: string, nowMs: number): Promise<RateDecision> {
    const nowSeconds = nowMs / 1000;
    const windowStart = Math.floor(nowSeconds / this.windowSeconds) * this.windowSeconds;
    const windowEnd = windowStart + this.windowSeconds;
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { [RATE_LIMIT_TABLE_KEYS.partitionKey]: `${subject}#${windowStart}` },
          UpdateExpression: 'ADD #count :one SET #expiresAt = :expiresAt',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'count', '#expiresAt': RATE_LIMIT_TABLE_KEYS.ttl },
          // The key carries the window, so the item is dead the moment its window ends; TTL only tidies.
          ExpressionAttributeValues: { ':one': 1, ':limit': this.calls, ':expiresAt': windowEnd },
        }),
        roundTripOptions(),
      );
      return { granted: true };
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // The next permit frees when this window ends; never advertise less than a second.
      return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil(windowEnd - nowSeconds)) };
    }
  }
}
