import { type DynamoDBDocumentClient, GetCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { TASK_PREFIX, taskSk, WORKSPACE_SK, wsPk } from '../../platform/item-keys.js';
import { commitWrites } from '../../platform/transact.js';
import { type Workspace, workspaceKeyOf } from '../../vocabulary.js';
import type { ActivityRecord } from '../model/activity.js';
import { workspaceNotFound } from '../model/refusals.js';
import { CounterMoved, NumberTaken, TaskNumbers } from '../store/task-numbers.js';
import { writesOf } from '../store/writes.js';

/** What only the operator runs (npm run admin): the numbering of a workspace from before task keys, and a new key. */

/**
 * The migration of a workspace from before task numbers (`npm run admin -- tasks number`): every
 * task without a number gets the next one, oldest first, each in one write with the counter and its
 * claim; a task numbered meanwhile is skipped. Run again, it numbers nothing. Deleted tasks kept for
 * undo are numbered too, so an undo brings them back with a key.
 */
export const numberExistingTasks = async (
  db: DynamoDBDocumentClient,
  table: string,
  workspaceId: string,
  /** The stores whose write side records the numbering (its record goes in with the key). */
  stores: object,
  /** The numbering's record, once it is known how many were numbered (none when nothing was). */
  recordOf: (numbered: number) => ActivityRecord | undefined,
): Promise<{ readonly numbered: number; readonly counter: number }> => {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateQuery(
    { client: db },
    {
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':t': TASK_PREFIX },
      ProjectionExpression: 'taskId, createdAt, #n',
      ExpressionAttributeNames: { '#n': 'number' },
    },
  ))
    items.push(...(page.Items ?? []));
  const todo = items
    .filter((i) => i.number === undefined)
    .sort((a, b) => `${String(a.createdAt)}#${String(a.taskId)}`.localeCompare(`${String(b.createdAt)}#${String(b.taskId)}`));
  const meta = (await db.send(new GetCommand({ TableName: table, Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK }, ConsistentRead: true })))
    .Item;
  if (!meta) throw workspaceNotFound(workspaceId);
  const numbers = new TaskNumbers(db, table);
  let counter = typeof meta.taskCounter === 'number' ? meta.taskCounter : 0;
  let numbered = 0;
  for (const item of todo) {
    const taskId = String(item.taskId);
    for (let attempt = 1; ; attempt++) {
      const n = counter + 1;
      try {
        await commitWrites(db, [
          numbers.counterOp(workspaceId, counter, n),
          numbers.claimOp(workspaceId, n, taskId),
          {
            item: {
              Update: {
                TableName: table,
                Key: { pk: wsPk(workspaceId), sk: taskSk(taskId) },
                UpdateExpression: 'SET #n = :n',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#n)',
                ExpressionAttributeNames: { '#n': 'number' },
                ExpressionAttributeValues: { ':n': n },
              },
            },
            refused: () => {
              throw new AlreadyNumbered();
            },
          },
        ]);
        counter = n;
        numbered++;
        break;
      } catch (err) {
        if (err instanceof AlreadyNumbered) break;
        // The operator's one-off run has no one to refuse to: it goes on while others create, a bounded number of times.
        if (attempt >= MIGRATION_ATTEMPTS) throw err;
        if (err instanceof NumberTaken) counter = Math.max(counter, await numbers.movePast(workspaceId, err.number));
        else if (err instanceof CounterMoved) counter = Math.max(err.counter, counter + 1);
        else throw err;
      }
    }
  }
  // The key itself: a workspace from before keys had it only derived from its name.
  await commitWrites(db, [
    {
      item: {
        Update: {
          TableName: table,
          Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
          UpdateExpression: 'SET #k = if_not_exists(#k, :k)',
          ExpressionAttributeNames: { '#k': 'key' },
          ExpressionAttributeValues: { ':k': workspaceKeyOf(meta as unknown as Workspace) },
        },
      },
    },
    ...[recordOf(numbered)].flatMap((r) => (r ? [writesOf(stores).activity.recordOp(r)] : [])),
  ]);
  return { numbered, counter };
};

class AlreadyNumbered extends Error {}

/** How often one task's numbering is tried again while creates move the counter meanwhile. */
const MIGRATION_ATTEMPTS = 20;
