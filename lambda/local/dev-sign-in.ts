import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { fromItem } from '../platform/dynamodb.js';
import { WORKSPACE_SK } from '../platform/item-keys.js';
import type { DevMember } from '../sign-in/sign-in.js';
import type { Workspace } from '../vocabulary.js';
import type { DirectoryStore } from '../workspace/store/directory-store.js';

/**
 * Who the local development sign-in offers: every active member of every active workspace in the
 * local table. A Scan is fine on a developer's machine; nothing deployed ever calls this.
 */
export const localDevMembers =
  (db: DynamoDBDocumentClient, table: string) =>
  async (directory: DirectoryStore): Promise<readonly DevMember[]> => {
    const workspaces: Workspace[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new ScanCommand({
          TableName: table,
          FilterExpression: 'sk = :meta AND begins_with(pk, :ws)',
          ExpressionAttributeValues: { ':meta': WORKSPACE_SK, ':ws': 'WS#' },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      workspaces.push(...(page.Items ?? []).map((i) => fromItem<Workspace>(i)));
      start = page.LastEvaluatedKey;
    } while (start);
    const active = workspaces.filter((w) => w.status === 'active');
    const members = await Promise.all(
      active.map(async (workspace) => (await directory.listMembers(workspace.workspaceId)).map((member) => ({ member, workspace }))),
    );
    return members.flat().filter(({ member }) => member.status === 'active');
  };
