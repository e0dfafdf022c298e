import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, search: _s, ...rest } = item;
  return rest as T;
};

/**
 * A refused conditional write (the condition said no). Matched by name, not `instanceof`, so a second
 * copy of the SDK in node_modules cannot turn a refusal into a 500.
 */
export const isConditionFailure = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ConditionalCheckFailedException';
