import { randomBytes } from 'node:crypto';
import { isConditionFailure } from '../../platform/dynamodb.js';

/**
 * Runs a conditional write; a failed ConditionExpression becomes what `onRefused` decides (a domain
 * refusal), in the manner of Powertools' DynamoDBPersistenceLayer. Anything else propagates.
 */
export const conditionally = async <T>(write: () => Promise<T>, onRefused: () => Promise<T>): Promise<T> => {
  try {
    return await write();
  } catch (err) {
    if (isConditionFailure(err)) return onRefused();
    throw err;
  }
};

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then random bits. Its text sorts by creation
 * time, so items keyed by it come back in creation order without a timestamp in the key.
 */
export const uuidV7 = (now: Date = new Date()): string => {
  const bytes = randomBytes(16);
  const ms = BigInt(now.getTime());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
