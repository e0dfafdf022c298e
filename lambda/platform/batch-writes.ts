import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ItemKey } from './dynamodb.js';

/*
 * Unconditional writes of many items: what the authorization server's records and the operator's
 * raw copies (a workspace restored from its export) use. An item-writing module: only the writers,
 * the stores and the operator's own room import it (.dependency-cruiser.cjs, writers-only-write).
 */

/** BatchWriteItem takes at most this many requests. */
const BATCH_WRITE_MAX = 25;
/** Unprocessed writes are sent again at most this often before the write counts as throttled. */
const MAX_BATCH_WRITE_ATTEMPTS = 3;

type BatchWriteRequest = { DeleteRequest: { Key: ItemKey } } | { PutRequest: { Item: Record<string, unknown> } };

/**
 * Unconditional writes, 25 per BatchWriteItem. Writes DynamoDB leaves unprocessed (throttling) are
 * sent again after a short pause; if some are still left, it throws a ThrottlingException-named
 * error (answered 503), and a retry of the whole operation finishes it (each write is idempotent).
 */
const batchWrite = async (
  db: DynamoDBDocumentClient,
  table: string,
  requests: readonly BatchWriteRequest[],
  what: string,
): Promise<void> => {
  for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) {
    let pending = requests.slice(i, i + BATCH_WRITE_MAX);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === MAX_BATCH_WRITE_ATTEMPTS)
        throw Object.assign(new Error(`BatchWriteItem left ${what} unprocessed`), { name: 'ThrottlingException' });
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const out = await db.send(new BatchWriteCommand({ RequestItems: { [table]: pending as never } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as unknown as BatchWriteRequest[];
    }
  }
};

/** Deletes items by key (batchWrite). */
export const batchDelete = (db: DynamoDBDocumentClient, table: string, keys: readonly ItemKey[]): Promise<void> =>
  batchWrite(
    db,
    table,
    keys.map((Key) => ({ DeleteRequest: { Key } })),
    'deletes',
  );

/** Puts whole items, replacing what is there (batchWrite): the workspace import's copy of an export. */
export const batchPut = (db: DynamoDBDocumentClient, table: string, items: readonly Record<string, unknown>[]): Promise<void> =>
  batchWrite(
    db,
    table,
    items.map((Item) => ({ PutRequest: { Item } })),
    'puts',
  );
