import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent, fromItem } from '../../platform/dynamodb.js';
import {
  ATTACHMENT_BYTES_SK,
  ATTACHMENT_PREFIX,
  attachmentBytesPk,
  attachmentSk,
  deletedAttachmentSk,
  taskPk,
} from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import { MAX_ATTACHMENTS } from '../model/limits.js';
import { attachmentGone, attachmentQuotaFull, attachmentRaced, attachmentsFull, taskNotFound } from '../model/refusals.js';
import type { Attachment } from '../model/types.js';
import { and, Expression, or, Update } from './expressions.js';
import { taskKey } from './task-items.js';

/**
 * Attachments' items (their bytes are in the file store, lambda/files/): `ATT#<id>` in the task's own
 * partition, so task_get reads them in the request that reads the task; a deleted one moves to
 * `GONE#ATT#<id>` until its undo or its expiry (as comments do). The task item counts its live
 * attachments (`attachmentCount`, what list lines show), and one item per workspace holds the bytes
 * its attachments take, which each add holds to the quota in its own transaction.
 */

/** `<taskId>.<10 random>`: the task's partition is in the id itself. */
const ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([a-z0-9]{10})$/;

export const taskOfAttachment = (attachmentId: string): string | undefined => ID.exec(attachmentId)?.[1];

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const newAttachmentId = (taskId: string, random: Uint8Array): string =>
  `${taskId}.${[...random.slice(0, 10)].map((b) => ALPHABET[b % ALPHABET.length]).join('')}`;

export const isAttachmentItem = (item: Record<string, unknown>): boolean => String(item.sk).startsWith(ATTACHMENT_PREFIX);

export const toAttachment = (item: Record<string, unknown>): Attachment => {
  const { expiresAt: _e, ...rest } = fromItem<Attachment & { expiresAt?: number }>(item);
  return rest;
};

/** What an update of a task item it does not read costs: a typical task item and its three list entries. */
const TASK_ITEM_COST = { sizeHint: 2048, indexEntries: 3 } as const;

export interface AttachmentStore {
  /** The attachment, live or deleted (then `deletedAt` is set); undefined for an id of nowhere. */
  get(workspaceId: string, attachmentId: string): Promise<Attachment | undefined>;
}

/**
 * An attachment's writes: the attachment writer's alone (store/writes.ts).
 */
export interface AttachmentWrites {
  /** A new attachment, its task's count, and the workspace's bytes held to `quota`: three actions. */
  addOps(a: Attachment, quota: number, taskName: string): WriteOp[];
  /** Moves it out of its task, kept until `expiresAt`, and gives its bytes back. */
  removeOps(a: Attachment, expiresAt: number): WriteOp[];
  /** Puts a deleted one back, its bytes held to `quota` again. */
  restoreOps(a: Attachment, quota: number, taskName: string): WriteOp[];
}

export class DynamoAttachmentStore implements AttachmentStore, AttachmentWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get(workspaceId: string, attachmentId: string): Promise<Attachment | undefined> {
    const taskId = taskOfAttachment(attachmentId);
    if (!taskId) return undefined;
    const pk = taskPk(workspaceId, taskId);
    const items = await batchGetConsistent(this.db, this.table, [
      { pk, sk: attachmentSk(attachmentId) },
      { pk, sk: deletedAttachmentSk(attachmentId) },
    ]);
    const item = items.find((i) => i.sk === attachmentSk(attachmentId)) ?? items[0];
    return item ? toAttachment(item) : undefined;
  }

  addOps(a: Attachment, quota: number, taskName: string): WriteOp[] {
    return [
      {
        item: { Put: { TableName: this.table, Item: this.item(a), ConditionExpression: 'attribute_not_exists(pk)' } },
        refused: () => {
          throw attachmentRaced(a.attachmentId);
        },
      },
      this.countOp(a, 1, taskName),
      this.bytesOp(a.workspaceId, a.size, quota),
    ];
  }

  removeOps(a: Attachment, expiresAt: number): WriteOp[] {
    const pk = taskPk(a.workspaceId, a.taskId);
    const { deletedAt: _d, ...live } = a;
    return [
      {
        item: {
          Delete: { TableName: this.table, Key: { pk, sk: attachmentSk(a.attachmentId) }, ConditionExpression: 'attribute_exists(pk)' },
        },
        refused: () => {
          throw attachmentGone(a.attachmentId);
        },
      },
      {
        item: {
          Put: {
            TableName: this.table,
            Item: { ...this.item(live), sk: deletedAttachmentSk(a.attachmentId), deletedAt: a.deletedAt, expiresAt },
          },
        },
      },
      this.countOp(a, -1, a.taskId),
      this.bytesOp(a.workspaceId, -a.size),
    ];
  }

  restoreOps(a: Attachment, quota: number, taskName: string): WriteOp[] {
    const pk = taskPk(a.workspaceId, a.taskId);
    const { deletedAt: _d, ...live } = a;
    return [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: { pk, sk: deletedAttachmentSk(a.attachmentId) },
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        refused: () => {
          throw attachmentRaced(a.attachmentId);
        },
      },
      { item: { Put: { TableName: this.table, Item: this.item(live), ConditionExpression: 'attribute_not_exists(pk)' } } },
      this.countOp(a, 1, taskName),
      // A restore is change_undo's: its refusal names the change it was asked to undo.
      this.bytesOp(a.workspaceId, a.size, quota, 'activityId'),
    ];
  }

  /** The task's count of live attachments, on a task that is there (not deleted): its check too. */
  private countOp(a: Attachment, delta: number, taskName: string): WriteOp {
    const x = new Expression();
    const update = new Update(x);
    update.add('attachmentCount', delta);
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: taskKey(a.workspaceId, a.taskId),
          UpdateExpression: update.toString(),
          ConditionExpression: and(
            x.exists('pk'),
            x.absent('deletedAt'),
            delta > 0 ? or(x.absent('attachmentCount'), x.le('attachmentCount', MAX_ATTACHMENTS - delta)) : undefined,
          ),
          ...x.input(),
        },
      },
      ...TASK_ITEM_COST,
      refused: (current) => {
        if (current && !current.deletedAt) throw attachmentsFull(taskName, MAX_ATTACHMENTS);
        throw taskNotFound(taskName, 'taskId');
      },
    };
  }

  /** The workspace's bytes moved by `delta`; an add is held to `quota`. */
  private bytesOp(workspaceId: string, delta: number, quota?: number, param = 'content'): WriteOp {
    const x = new Expression();
    const update = new Update(x);
    update.add('bytes', delta);
    const held = quota === undefined ? undefined : or(x.absent('bytes'), x.le('bytes', quota - delta));
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: attachmentBytesPk(workspaceId), sk: ATTACHMENT_BYTES_SK },
          UpdateExpression: update.toString(),
          ...(held ? { ConditionExpression: held } : {}),
          ...x.input(),
        },
      },
      ...(quota === undefined
        ? {}
        : {
            refused: (current: Record<string, unknown> | undefined) => {
              throw attachmentQuotaFull(Number(current?.bytes ?? 0), delta, quota, param);
            },
          }),
    };
  }

  private item(a: Attachment): Record<string, unknown> {
    return { pk: taskPk(a.workspaceId, a.taskId), sk: attachmentSk(a.attachmentId), ...a };
  }
}
