import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NETWORK_FAILURES } from '../errors.js';
import { afterAdmission, stopIfRefused } from './admission-gate.js';
import { callBudget } from './call-budget.js';

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
  meterReads(client);
  waitForAdmission(client);
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
};

const READ_COMMANDS = new Set(['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand', 'ScanCommand', 'TransactGetItemsCommand']);

type Capacity = { readonly CapacityUnits?: number } | readonly { readonly CapacityUnits?: number }[] | undefined;
const unitsOf = (c: Capacity): number =>
  Array.isArray(c)
    ? c.reduce((sum: number, x: { CapacityUnits?: number }) => sum + (x.CapacityUnits ?? 0), 0)
    : ((c as { CapacityUnits?: number })?.CapacityUnits ?? 0);

/**
 * Counts what each read of a call costs into the call's budget (platform/call-budget.ts): the units
 * DynamoDB reports (every read asks for them) and the bytes of its answer, and refuses a read once
 * the call is past its ceiling, before it is sent. Outside a call nothing is counted.
 */
const meterReads = (client: DynamoDBClient): void => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const budget = callBudget();
      if (!budget || !READ_COMMANDS.has(context.commandName ?? '')) return next(args);
      budget.checkRead();
      const input = args.input as { ReturnConsumedCapacity?: string };
      const result = await next(input.ReturnConsumedCapacity ? args : { ...args, input: { ...input, ReturnConsumedCapacity: 'TOTAL' } });
      const bytes = Number((result.response as { headers?: Record<string, string> } | undefined)?.headers?.['content-length'] ?? 0);
      budget.noteRead(unitsOf((result.output as { ConsumedCapacity?: Capacity }).ConsumedCapacity), bytes);
      return result;
    },
    { step: 'initialize', name: 'doersCallBudget', override: true },
  );
};

const WRITE_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

/**
 * A call's writes wait for its admission (platform/admission-gate.ts); its reads do not, but none is
 * sent once the call is known to be refused.
 */
const waitForAdmission = (client: DynamoDBClient): void => {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (WRITE_COMMANDS.has(context.commandName ?? '')) await afterAdmission();
      else stopIfRefused();
      return next(args);
    },
    { step: 'initialize', name: 'doersAdmissionGate', override: true },
  );
};

const THROTTLE_OR_UNREACHABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  ...NETWORK_FAILURES,
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
