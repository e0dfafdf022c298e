import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { registrationWindowKey } from '../platform/item-keys.js';

/** Dynamic Client Registrations one source address may make per window. */
export const REGISTRATION_LIMIT = { perWindow: 20, windowSeconds: 3600 } as const;

/**
 * Open registration is a write anyone can make; this bounds how many clients one address can create
 * (each expires when unused, see dynamodb-adapter.ts). One conditional write per registration,
 * counted in DynamoDB so the bound holds across every instance. Returns the seconds to wait, or 0.
 */
export const takeRegistrationPermit = async (
  db: DynamoDBDocumentClient,
  table: string,
  source: string,
  nowMs = Date.now(),
  limit: { readonly perWindow: number; readonly windowSeconds: number } = REGISTRATION_LIMIT,
): Promise<number> => {
  const now = Math.floor(nowMs / 1000);
  const windowStart = now - (now % limit.windowSeconds);
  try {
    await db.send(
      new UpdateCommand({
        TableName: table,
        Key: registrationWindowKey(source, windowStart),
        UpdateExpression: 'ADD #n :one SET expiresAt = :exp',
        ConditionExpression: 'attribute_not_exists(#n) OR #n < :max',
        ExpressionAttributeNames: { '#n': 'registrations' },
        ExpressionAttributeValues: { ':one': 1, ':max': limit.perWindow, ':exp': windowStart + 2 * limit.windowSeconds },
      }),
    );
    return 0;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return windowStart + limit.windowSeconds - now;
    throw err;
  }
};
