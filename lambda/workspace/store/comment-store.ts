import { type DynamoDBDocumentClient, GetCommand, paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent, fromItem, type ItemKey } from '../../platform/dynamodb.js';
import { commentSk, commentsOfTaskPrefix, deletedCommentSk, TASK_ITEM_SK, taskSk, wsPk } from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import { commentIdTaken, commentNotDeleted, commentNotOnTask } from '../model/refusals.js';
import type { Comment } from '../model/types.js';
import { taskKey } from './task-items.js';

export interface CommentPage {
  readonly comments: readonly Comment[];
  /** The last returned comment's id, present when more follow. */
  readonly next?: string;
}

export interface CommentStore {
  get(workspaceId: string, taskId: string, commentId: string): Promise<Comment | undefined>;
  /** The comment and its task's item, in one request (a deletion shows the task's title). */
  getWithTask(workspaceId: string, taskId: string, commentId: string): Promise<{ comment?: Comment; taskItem?: Record<string, unknown> }>;
  /** A deleted comment, kept for undo until it expires. */
  getDeleted(workspaceId: string, taskId: string, commentId: string): Promise<Comment | undefined>;
  /** Oldest first, strictly after `afterId`. */
  list(workspaceId: string, taskId: string, limit: number, afterId?: string): Promise<CommentPage>;
  /** The keys of every comment of a task (the first `most`, when given): what its deletion marks to expire. */
  keysOfTask(workspaceId: string, taskId: string, most?: number): Promise<ItemKey[]>;
}

/**
 * A comment's writes: the comment writer's, and a task's delete or restore (store/writes.ts).
 */
export interface CommentWrites {
  addOp(comment: Comment): WriteOp;
  /** Moves a comment out of its task's list, kept until `expiresAt` (two actions). */
  removeOps(comment: Comment, expiresAt: number): WriteOp[];
  /** Puts a deleted comment back where it was (two actions). */
  restoreOps(comment: Comment): WriteOp[];
  /** Marks a comment of a deleted task to expire with it (or, `undefined`, keeps it again). */
  expiryOp(key: ItemKey, expiresAt: number | undefined): WriteOp;
}

const toComment = (item: Record<string, unknown>): Comment => {
  const { expiresAt: _e, ...rest } = fromItem<Comment & { expiresAt?: number }>(item);
  return rest;
};

/**
 * Comments are `COMMENT#<taskId>#<commentId>` items in the workspace partition. The id is a UUIDv7,
 * so one key-range query returns a task's comments in the order they were written. A deleted one
 * moves to `GONE#COMMENT#…` (still in the partition, out of the range) until undo or its expiry;
 * the comments of a deleted task stay where they are, invisible because their task is.
 */
export class DynamoCommentStore implements CommentStore, CommentWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(workspaceId: string, taskId: string, commentId: string): Promise<Comment | undefined> {
    return this.read(wsPk(workspaceId), commentSk(taskId, commentId));
  }

  async getWithTask(
    workspaceId: string,
    taskId: string,
    commentId: string,
  ): Promise<{ comment?: Comment; taskItem?: Record<string, unknown> }> {
    const pk = wsPk(workspaceId);
    // The comment and its task (where it is, and where layout 1 kept it) in one read.
    const items = await batchGetConsistent(this.db, this.table, [
      { pk, sk: commentSk(taskId, commentId) },
      taskKey(workspaceId, taskId),
      { pk, sk: taskSk(taskId) },
    ]);
    const comment = items.find((i) => i.sk === commentSk(taskId, commentId));
    const taskItem = items.find((i) => i.sk === TASK_ITEM_SK) ?? items.find((i) => i.sk === taskSk(taskId));
    return { ...(comment ? { comment: toComment(comment) } : {}), ...(taskItem ? { taskItem } : {}) };
  }

  async getDeleted(workspaceId: string, taskId: string, commentId: string): Promise<Comment | undefined> {
    return this.read(wsPk(workspaceId), deletedCommentSk(taskId, commentId));
  }

  async list(workspaceId: string, taskId: string, limit: number, afterId?: string): Promise<CommentPage> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':p': commentsOfTaskPrefix(taskId) },
        ...(afterId ? { ExclusiveStartKey: { pk: wsPk(workspaceId), sk: commentSk(taskId, afterId) } } : {}),
        Limit: limit + 1,
      }),
    );
    const items = (out.Items ?? []).map(toComment);
    const page = items.slice(0, limit);
    return { comments: page, ...(items.length > limit ? { next: page.at(-1)!.commentId } : {}) };
  }

  async keysOfTask(workspaceId: string, taskId: string, most?: number): Promise<ItemKey[]> {
    const keys: ItemKey[] = [];
    const pages = paginateQuery(
      { client: this.db, ...(most !== undefined ? { pageSize: most } : {}) },
      {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':p': commentsOfTaskPrefix(taskId) },
        ProjectionExpression: 'pk, sk',
      },
    );
    for await (const page of pages) {
      keys.push(...((page.Items ?? []) as ItemKey[]));
      if (most !== undefined && keys.length >= most) break;
    }
    return keys;
  }

  addOp(comment: Comment): WriteOp {
    return {
      item: { Put: { TableName: this.table, Item: this.item(comment), ConditionExpression: 'attribute_not_exists(pk)' } },
      // The id is a fresh UUIDv7, so this is a collision no retry repeats.
      refused: () => {
        throw commentIdTaken();
      },
    };
  }

  removeOps(comment: Comment, expiresAt: number): WriteOp[] {
    const pk = wsPk(comment.workspaceId);
    return [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: { pk, sk: commentSk(comment.taskId, comment.commentId) },
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        refused: () => {
          throw commentNotOnTask(comment.commentId, comment.taskId);
        },
      },
      {
        item: {
          Put: {
            TableName: this.table,
            Item: { ...this.item(comment), sk: deletedCommentSk(comment.taskId, comment.commentId), expiresAt },
          },
        },
      },
    ];
  }

  restoreOps(comment: Comment): WriteOp[] {
    const pk = wsPk(comment.workspaceId);
    return [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: { pk, sk: deletedCommentSk(comment.taskId, comment.commentId) },
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        refused: () => {
          throw commentNotDeleted(comment.commentId);
        },
      },
      { item: { Put: { TableName: this.table, Item: this.item(comment), ConditionExpression: 'attribute_not_exists(pk)' } } },
    ];
  }

  expiryOp(key: ItemKey, expiresAt: number | undefined): WriteOp {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: key,
          ...(expiresAt === undefined
            ? { UpdateExpression: 'REMOVE expiresAt' }
            : { UpdateExpression: 'SET expiresAt = :e', ExpressionAttributeValues: { ':e': expiresAt } }),
          // A comment deleted on its own meanwhile moved away: nothing is recreated under its old key.
          ConditionExpression: 'attribute_exists(pk)',
        },
      },
    };
  }

  private item(comment: Comment): Record<string, unknown> {
    return { pk: wsPk(comment.workspaceId), sk: commentSk(comment.taskId, comment.commentId), ...comment };
  }

  private async read(pk: string, sk: string): Promise<Comment | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { pk, sk }, ConsistentRead: true }));
    return out.Item ? toComment(out.Item) : undefined;
  }
}
