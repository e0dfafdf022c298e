import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchPut } from '../../platform/batch-writes.js';
import { isConditionFailure } from '../../platform/dynamodb.js';

/**
 * A workspace restored from its export (`npm run admin -- import` of a doers export; cli/transfer.ts
 * reads and checks the file): its items are copied as they were, raw, since ids, versions and
 * history must be the same on both sides, as a migration copies them. The operator's room only.
 * The workspace item goes last and the e-mail claims just before it: until it is written the
 * workspace does not exist, and a run cut short is run again (every write puts the same item).
 */

/** An e-mail the file's workspace claims is another workspace's in this table: the member cannot come along. */
export class EmailHeldElsewhere extends Error {
  override name = 'EmailHeldElsewhere';
  constructor(readonly email: string) {
    super(`${email} is a member of another workspace`);
  }
}

export interface RestoredItems {
  /** Every item but the claims and the workspace item. */
  readonly rest: readonly Record<string, unknown>[];
  /** Its members' e-mail claims (`EMAIL#…`). */
  readonly claims: readonly Record<string, unknown>[];
  /** The workspace item. */
  readonly workspace: readonly Record<string, unknown>[];
}

export const restoreWorkspaceItems = async (
  db: DynamoDBDocumentClient,
  table: string,
  workspaceId: string,
  items: RestoredItems,
  /** What goes in before the workspace item (its attachments' files). */
  beforeWorkspace: () => Promise<void>,
): Promise<void> => {
  await batchPut(db, table, items.rest);
  for (const claim of items.claims) {
    try {
      await db.send(
        new PutCommand({
          TableName: table,
          Item: claim,
          ConditionExpression: 'attribute_not_exists(pk) OR workspaceId = :ws',
          ExpressionAttributeValues: { ':ws': workspaceId },
        }),
      );
    } catch (err) {
      // Only a refused condition says someone else holds it; a throttled or dropped write is that, and said so.
      if (isConditionFailure(err)) throw new EmailHeldElsewhere(String(claim.pk).slice('EMAIL#'.length));
      throw err;
    }
  }
  await beforeWorkspace();
  await batchPut(db, table, items.workspace);
};
