import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictRefusal, NotFoundRefusal } from '../errors.js';
import { batchDelete, fromItem, type ItemKey } from '../platform/dynamodb.js';
import { commentSk, commentsOfTaskPrefix, wsPk } from '../platform/item-keys.js';
import { conditionally } from './item-support.js';
import type { Comment } from './model.js';

export interface CommentPage {
  readonly comments: readonly Comment[];
  /** The last returned comment's id, present when more follow. */
  readonly next?: string;
}

export interface CommentStore {
  add(comment: Comment): Promise<Comment>;
  get(workspaceId: string, taskId: string, commentId: string): Promise<Comment | undefined>;
  /** Oldest first, strictly after `afterId`. */
  list(workspaceId: string, taskId: string, limit: number, afterId?: string): Promise<CommentPage>;
  remove(workspaceId: string, taskId: string, commentId: string): Promise<void>;
  /** Cleans up after a deleted task. */
  removeAllOfTask(workspaceId: string, taskId: string): Promise<void>;
}

/**
 * Comments are `COMMENT#<taskId>#<commentId>` items in the workspace partition. The id is a UUIDv7,
 * so one key-range query returns a task's comments in the order they were written.
 */
export class DynamoCommentStore implements CommentStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async add(comment: Comment): Promise<Comment> {
    return conditionally(
      async () => {
        await this.db.send(
          new PutCommand({
            TableName: this.table,
            Item: { pk: wsPk(comment.workspaceId), sk: commentSk(comment.taskId, comment.commentId), ...comment },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return comment;
      },
      // The id is a fresh UUIDv7, so this is a collision no retry repeats; the comment was not stored.
      () =>
        Promise.reject(
          new ConflictRefusal('The comment could not be stored (its id was taken); nothing was added, call comment_add again'),
        ),
    );
  }

  async get(workspaceId: string, taskId: string, commentId: string): Promise<Comment | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: commentSk(taskId, commentId) }, ConsistentRead: true }),
    );
    return out.Item ? fromItem<Comment>(out.Item) : undefined;
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
    const items = (out.Items ?? []).map((i) => fromItem<Comment>(i));
    const page = items.slice(0, limit);
    return { comments: page, ...(items.length > limit ? { next: page.at(-1)!.commentId } : {}) };
  }

  async remove(workspaceId: string, taskId: string, commentId: string): Promise<void> {
    await conditionally(
      () =>
        this.db.send(
          new DeleteCommand({
            TableName: this.table,
            Key: { pk: wsPk(workspaceId), sk: commentSk(taskId, commentId) },
            ConditionExpression: 'attribute_exists(pk)',
          }),
        ),
      () => Promise.reject(new NotFoundRefusal(`Comment ${commentId} was not found on task ${taskId}`)),
    );
  }

  async removeAllOfTask(workspaceId: string, taskId: string): Promise<void> {
    const keys: Record<string, unknown>[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':p': commentsOfTaskPrefix(taskId) },
        ProjectionExpression: 'pk, sk',
      },
    );
    for await (const page of pages) keys.push(...(page.Items ?? []));
    await batchDelete(this.db, this.table, keys as ItemKey[]);
  }
}
