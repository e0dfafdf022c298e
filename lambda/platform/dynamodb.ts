import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface DynamoClientOptions {
  readonly endpoint?: string | undefined;
  readonly region?: string | undefined;
}

/**
 * One document client per cold start. Timeouts are short and retries few: a request that cannot
 * reach DynamoDB answers 503 quickly rather than waiting out the function's timeout.
 */
export const createDocumentClient = (opts: DynamoClientOptions = {}): DynamoDBDocumentClient => {
  const local = opts.endpoint !== undefined;
  const client = new DynamoDBClient({
    ...(local
      ? { endpoint: opts.endpoint, region: opts.region ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : { region: opts.region }),
    maxAttempts: 3,
    // throwOnRequestTimeout: without it the SDK only warns when requestTimeout passes and keeps waiting.
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000, throwOnRequestTimeout: true },
  });
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
};

const THROTTLE_OR_UNREACHABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TimeoutError',
  'RequestTimeout',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** True when DynamoDB is throttling or out of reach: the caller should answer 503, not 500. */
export const isTransientDynamoError = (err: unknown): boolean => {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown };
  if ((e.name && THROTTLE_OR_UNREACHABLE.has(e.name)) || (e.code && THROTTLE_OR_UNREACHABLE.has(e.code))) return true;
  if (e.$retryable) return true;
  const status = e.$metadata?.httpStatusCode;
  return status === undefined ? e.name === 'AbortError' || e.name === 'TimeoutError' : status >= 500;
};

/** Drops the key attributes: what a store hands out is the domain object alone. */
export const fromItem = <T>(item: Record<string, unknown>): T => {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, gsi2pk: _g3, gsi2sk: _g4, search: _s, ...rest } = item;
  return rest as T;
};

/**
 * A refused conditional write (the condition said no). Matched by name, not `instanceof`, so a second
 * copy of the SDK in node_modules cannot turn a refusal into a 500.
 */
export const isConditionFailure = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ConditionalCheckFailedException';

export type ItemKey = Readonly<Record<string, string>>;

/** Unprocessed keys are asked for again at most this often before the read counts as throttled. */
const MAX_BATCH_GET_ATTEMPTS = 3;

/**
 * Strongly consistent reads of keys of one table, 100 per BatchGetItem: what would be one GetItem
 * per key costs one request per hundred. Keys DynamoDB leaves unprocessed (throttling) are asked for
 * again; if some are still left, it throws a ThrottlingException-named error (answered 503).
 */
export const batchGetConsistent = (
  db: DynamoDBDocumentClient,
  table: string,
  keys: readonly ItemKey[],
): Promise<Record<string, unknown>[]> => batchGet(db, table, keys, true);

/**
 * Reads of any number of keys of one table, 100 per BatchGetItem (in parallel), strongly consistent
 * or not; unprocessed keys are asked for again, as `batchGetConsistent` does.
 */
export const batchGet = async (
  db: DynamoDBDocumentClient,
  table: string,
  keys: readonly ItemKey[],
  consistent: boolean,
): Promise<Record<string, unknown>[]> => {
  const chunks: ItemKey[][] = [];
  for (let i = 0; i < keys.length; i += 100) chunks.push(keys.slice(i, i + 100));
  return (await Promise.all(chunks.map((c) => batchGetChunk(db, table, c, consistent)))).flat();
};

const batchGetChunk = async (
  db: DynamoDBDocumentClient,
  table: string,
  keys: readonly ItemKey[],
  consistent: boolean,
): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  let pending: ItemKey[] = [...keys];
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === MAX_BATCH_GET_ATTEMPTS)
      throw Object.assign(new Error('BatchGetItem left keys unprocessed'), { name: 'ThrottlingException' });
    const out = await db.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: consistent } } }));
    items.push(...(out.Responses?.[table] ?? []));
    pending = (out.UnprocessedKeys?.[table]?.Keys ?? []) as ItemKey[];
  }
  return items;
};

/** BatchWriteItem takes at most this many requests. */
const BATCH_WRITE_MAX = 25;
/** Unprocessed deletes are sent again at most this often before the write counts as throttled. */
const MAX_BATCH_WRITE_ATTEMPTS = 3;

/**
 * Deletes items by key, 25 per BatchWriteItem. Deletes DynamoDB leaves unprocessed (throttling) are
 * sent again after a short pause; if some are still left, it throws a ThrottlingException-named
 * error (answered 503), and a retry of the whole operation finishes it (deletes are idempotent).
 */
export const batchDelete = async (db: DynamoDBDocumentClient, table: string, keys: readonly ItemKey[]): Promise<void> => {
  for (let i = 0; i < keys.length; i += BATCH_WRITE_MAX) {
    let pending = keys.slice(i, i + BATCH_WRITE_MAX).map((Key) => ({ DeleteRequest: { Key } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === MAX_BATCH_WRITE_ATTEMPTS)
        throw Object.assign(new Error('BatchWriteItem left deletes unprocessed'), { name: 'ThrottlingException' });
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const out = await db.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as typeof pending;
    }
  }
};
