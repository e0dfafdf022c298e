import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, fromItem } from '../../platform/dynamodb.js';
import { ownViewsPk, sharedViewsPk, VIEW_PREFIX, viewSk } from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import { viewNameTaken, viewNotFound } from '../model/refusals.js';
import { type View, viewNameKey } from '../model/views.js';

/**
 * Saved views: the shared ones in one partition, each member's own in another, keyed by their folded
 * name. What a member sees is two small queries (at most MAX_VIEWS items each); a view by name is
 * one read of two keys. A name taken is the item's own condition; a private name a shared one has
 * (or the other way round) is a condition check on the other partition, in the same write.
 */
export interface ViewStore {
  /** The views a member sees: the shared ones and their own, by name. */
  visible(workspaceId: string, userId: string): Promise<View[]>;
  /** A view by name (their own first) or by id, of those the member sees; undefined when none. */
  find(workspaceId: string, userId: string, ref: string): Promise<View | undefined>;
}

export interface ViewWrites {
  /** A new view (or one put back by an undo): refused when its name is taken where its owner sees it. */
  createOps(view: View): WriteOp[];
  /** A view changed from `was` (its version checked): a new name or visibility moves it. */
  changeOps(was: View, now: View): WriteOp[];
  /** Removes a view, as the version read. */
  removeOp(view: View): WriteOp;
}

const pkOf = (v: Pick<View, 'workspaceId' | 'shared' | 'ownerId'>): string =>
  v.shared ? sharedViewsPk(v.workspaceId) : ownViewsPk(v.workspaceId, v.ownerId);
const keyOf = (v: View) => ({ pk: pkOf(v), sk: viewSk(viewNameKey(v.name)) });
const toView = (item: Record<string, unknown>): View => fromItem<View>(item);

export class DynamoViewStore implements ViewStore, ViewWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async visible(workspaceId: string, userId: string): Promise<View[]> {
    const read = (pk: string) =>
      this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :v)',
          ExpressionAttributeValues: { ':pk': pk, ':v': VIEW_PREFIX },
        }),
      );
    const [own, shared] = await Promise.all([read(ownViewsPk(workspaceId, userId)), read(sharedViewsPk(workspaceId))]);
    return [...(own.Items ?? []), ...(shared.Items ?? [])].map(toView).sort((a, b) => a.name.localeCompare(b.name));
  }

  async find(workspaceId: string, userId: string, ref: string): Promise<View | undefined> {
    const sk = viewSk(viewNameKey(ref));
    const items = await batchGet(
      this.db,
      this.table,
      [
        { pk: ownViewsPk(workspaceId, userId), sk },
        { pk: sharedViewsPk(workspaceId), sk },
      ],
      true,
    );
    const views = items.map(toView);
    const byName = views.find((v) => !v.shared) ?? views[0];
    if (byName) return byName;
    return (await this.visible(workspaceId, userId)).find((v) => v.viewId === ref);
  }

  /** The other partition of its owner's sight must not hold the name. */
  private otherSideFree(v: View): WriteOp {
    const other = { ...v, shared: !v.shared };
    return {
      item: {
        ConditionCheck: {
          TableName: this.table,
          Key: keyOf(other),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      refused: (current) => {
        throw viewNameTaken(v.name, String(current?.viewId ?? ''));
      },
    };
  }

  createOps(view: View): WriteOp[] {
    return [
      {
        item: {
          Put: {
            TableName: this.table,
            Item: { ...keyOf(view), ...view },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        refused: (current) => {
          throw viewNameTaken(view.name, String(current?.viewId ?? ''));
        },
      },
      this.otherSideFree(view),
    ];
  }

  changeOps(was: View, now: View): WriteOp[] {
    const moved = keyOf(was).pk !== keyOf(now).pk || keyOf(was).sk !== keyOf(now).sk;
    const gone = (): never => {
      throw viewNotFound(was.name, 'viewId');
    };
    if (!moved)
      return [
        {
          item: {
            Put: {
              TableName: this.table,
              Item: { ...keyOf(now), ...now },
              ConditionExpression: 'version = :v',
              ExpressionAttributeValues: { ':v': was.version },
            },
          },
          refused: gone,
        },
      ];
    // Shared or not, under the same name: the item it leaves is the other side, freed in this write.
    const [put, check] = this.createOps(now);
    const sameName = keyOf(was).sk === keyOf(now).sk;
    return [this.removeOp(was), put!, ...(sameName ? [] : [check!])];
  }

  removeOp(view: View): WriteOp {
    return {
      item: {
        Delete: {
          TableName: this.table,
          Key: keyOf(view),
          ConditionExpression: 'version = :v',
          ExpressionAttributeValues: { ':v': view.version },
        },
      },
      refused: () => {
        throw viewNotFound(view.name, 'viewId');
      },
    };
  }
}
