import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { InboxKind } from '../../delivery/notice.js';
import {
  digestHourPk,
  digestSk,
  inboxPk,
  inboxStatePk,
  JOBS_PK,
  reminderMinutePk,
  reminderSk,
  taskPk,
  watchSk,
} from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import type { Task, TaskReminder } from '../model/types.js';

/**
 * What telling people keeps (docs/notifications.md, "Data model"): each member's inbox, who watches a
 * task, reminders by the minute they are due, the members who take a daily digest by hour, and where
 * the notifier and the minute job left off. Entries are written by the notifier, never by a change:
 * a change only writes its activity record (the outbox), so it never waits for a notification.
 */

export const ENTRY_STATES = ['unread', 'read', 'done'] as const;
export type EntryState = (typeof ENTRY_STATES)[number];

export interface InboxEntry {
  /** `<activityId>:<kind>` or, for a reminder, the minute's id and the reminder's: sorts by time as text. */
  readonly entryId: string;
  readonly userId: string;
  readonly kind: InboxKind;
  readonly taskId: string;
  readonly taskNumber?: number;
  readonly taskTitle: string;
  readonly actorId?: string;
  readonly actorName: string;
  readonly client: string;
  readonly at: string;
  readonly state: EntryState;
  /** A reminder's words ("friday 9am"), a status or due date it moved to: a few words, never notes. */
  readonly detail?: string;
  /** To be mailed (false) or mailed (true); absent: not for mail (its member did not want each event then). */
  readonly mailed?: boolean;
}

export interface InboxPage {
  readonly entries: readonly InboxEntry[];
  /** The last entry's id, when more may follow in the same state. */
  readonly next?: string;
}

/** A reminder due in a minute, as the minute's partition holds it. */
export interface DueReminder {
  readonly workspaceId: string;
  readonly taskId: string;
  readonly reminderId: string;
  readonly userId: string;
  readonly at: string;
  /** When a run told it (it is kept in its minute until its TTL, so a look back skips it). */
  readonly firedAt?: string;
}

/** A member who takes the daily digest at an hour. */
export interface DigestSubscriber {
  readonly workspaceId: string;
  readonly userId: string;
  /** The last entry a digest of theirs included. */
  readonly lastEntryId?: string;
}

/** A member's choice about a task: to watch it, or not (the creator and the assignee watch unless they said not). */
export interface WatchChoice {
  readonly userId: string;
  readonly on: boolean;
}

export interface InboxStore {
  list(workspaceId: string, userId: string, state: EntryState, limit: number, after?: string): Promise<InboxPage>;
  /** How many are unread, up to `cap` (the answer says "99+" past it). */
  unreadCount(workspaceId: string, userId: string, cap?: number): Promise<number>;
  get(workspaceId: string, userId: string, entryId: string): Promise<InboxEntry | undefined>;
  /** Ids of entries in `state` at or before `upTo`, newest first, at most `limit`. */
  idsUpTo(workspaceId: string, userId: string, state: EntryState, upTo: string, limit: number): Promise<string[]>;
  /** Entries after `afterId` (exclusive), oldest first: what a digest holds. */
  since(workspaceId: string, userId: string, afterId: string | undefined, limit: number): Promise<InboxEntry[]>;
  remindersDue(minute: string): Promise<DueReminder[]>;
  digestSubscribers(utcHour: string): Promise<DigestSubscriber[]>;
  cursor(name: string): Promise<string | undefined>;
}

export interface InboxWrites {
  /** Puts the entry unless it is there (a record redelivered): whether it was put. */
  putEntry(workspaceId: string, entry: InboxEntry, expiresAt: number): Promise<boolean>;
  /** Moves entries to `state`: how many moved, and how many of those were unread (ids not in the inbox are left out). */
  mark(
    workspaceId: string,
    userId: string,
    entryIds: readonly string[],
    state: EntryState,
  ): Promise<{ marked: number; wereUnread: number }>;
  markMailed(workspaceId: string, userId: string, entryId: string): Promise<void>;
  /** A member's choice about a task, written with the change that makes it. */
  watchOp(workspaceId: string, taskId: string, choice: WatchChoice, at: string): WriteOp;
  /** The minute entries of a task's reminders that a change adds or takes away. */
  reminderOps(before: Task | undefined, next: Task): WriteOp[];
  /**
   * Leases a due reminder to one runner for a few minutes: true for the one that tells it. A lease
   * older than that (a runner that died telling it) may be taken again.
   */
  leaseReminder(due: DueReminder, now: Date): Promise<boolean>;
  /** Marks a told reminder fired: a later run's look back skips it. */
  firedReminder(due: DueReminder, now: Date): Promise<void>;
  /** Moves a member's digest from one hour (UTC) to another; undefined: none. Written with the member's settings. */
  digestOps(workspaceId: string, userId: string, utcHour: string | undefined, wasHour: string | undefined, lastEntryId?: string): WriteOp[];
  digested(sub: DigestSubscriber, utcHour: string, lastEntryId: string): Promise<void>;
  setCursor(name: string, value: string): Promise<void>;
}

const ENTRY_FIELDS = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'expiresAt'] as const;

const toEntry = (item: Record<string, unknown>): InboxEntry => {
  const out: Record<string, unknown> = { ...item };
  for (const f of ENTRY_FIELDS) delete out[f];
  return out as unknown as InboxEntry;
};

/** A whole minute, as the minute partitions name it: `2026-12-04T09:00`. */
export const minuteOf = (iso: string): string => iso.slice(0, 16);

/** How long one runner holds a reminder it tells (more than a minute run may take). */
const REMINDER_LEASE_MS = 3 * 60_000;

/** Reminders kept in their minute this long after it, for a minute job that was down to catch up. */
const REMINDER_KEPT_SECONDS = 2 * 86_400;

const alreadyThere = (err: unknown): boolean => err instanceof ConditionalCheckFailedException;

export class DynamoInboxStore implements InboxStore, InboxWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async list(workspaceId: string, userId: string, state: EntryState, limit: number, after?: string): Promise<InboxPage> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: after ? 'gsi1pk = :p AND gsi1sk < :a' : 'gsi1pk = :p',
        ExpressionAttributeValues: { ':p': inboxStatePk(workspaceId, userId, state), ...(after ? { ':a': after } : {}) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    const entries = (out.Items ?? []).map(toEntry);
    return { entries, ...(out.LastEvaluatedKey && entries.length ? { next: entries.at(-1)!.entryId } : {}) };
  }

  async unreadCount(workspaceId: string, userId: string, cap = 100): Promise<number> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p',
        ExpressionAttributeValues: { ':p': inboxStatePk(workspaceId, userId, 'unread') },
        Select: 'COUNT',
        Limit: cap,
      }),
    );
    return out.Count ?? 0;
  }

  async get(workspaceId: string, userId: string, entryId: string): Promise<InboxEntry | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { pk: inboxPk(workspaceId, userId), sk: entryId } }));
    return out.Item ? toEntry(out.Item) : undefined;
  }

  async idsUpTo(workspaceId: string, userId: string, state: EntryState, upTo: string, limit: number): Promise<string[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p AND gsi1sk <= :u',
        ExpressionAttributeValues: { ':p': inboxStatePk(workspaceId, userId, state), ':u': upTo },
        ProjectionExpression: 'entryId',
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((i) => String(i.entryId));
  }

  async since(workspaceId: string, userId: string, afterId: string | undefined, limit: number): Promise<InboxEntry[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: afterId ? 'pk = :p AND sk > :a' : 'pk = :p',
        ExpressionAttributeValues: { ':p': inboxPk(workspaceId, userId), ...(afterId ? { ':a': afterId } : {}) },
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map(toEntry);
  }

  async remindersDue(minute: string): Promise<DueReminder[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :p',
          ExpressionAttributeValues: { ':p': reminderMinutePk(minute) },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start);
    return items.map((i) => ({
      workspaceId: String(i.workspaceId),
      taskId: String(i.taskId),
      reminderId: String(i.reminderId),
      userId: String(i.userId),
      at: String(i.at),
      ...(i.firedAt ? { firedAt: String(i.firedAt) } : {}),
    }));
  }

  async digestSubscribers(utcHour: string): Promise<DigestSubscriber[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'pk = :p',
        ExpressionAttributeValues: { ':p': digestHourPk(utcHour) },
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).map((i) => ({
      workspaceId: String(i.workspaceId),
      userId: String(i.userId),
      ...(i.lastEntryId ? { lastEntryId: String(i.lastEntryId) } : {}),
    }));
  }

  async cursor(name: string): Promise<string | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: { pk: JOBS_PK, sk: name }, ConsistentRead: true }));
    return out.Item?.value as string | undefined;
  }

  async putEntry(workspaceId: string, entry: InboxEntry, expiresAt: number): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: inboxPk(workspaceId, entry.userId),
            sk: entry.entryId,
            gsi1pk: inboxStatePk(workspaceId, entry.userId, entry.state),
            gsi1sk: entry.entryId,
            ...entry,
            expiresAt,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (err) {
      if (alreadyThere(err)) return false;
      throw err;
    }
  }

  async mark(
    workspaceId: string,
    userId: string,
    entryIds: readonly string[],
    state: EntryState,
  ): Promise<{ marked: number; wereUnread: number }> {
    const results = await Promise.all(
      entryIds.map(async (entryId) => {
        try {
          const out = await this.db.send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: inboxPk(workspaceId, userId), sk: entryId },
              UpdateExpression: 'SET #s = :s, gsi1pk = :g',
              ConditionExpression: 'attribute_exists(pk) AND #s <> :s',
              ExpressionAttributeNames: { '#s': 'state' },
              ExpressionAttributeValues: { ':s': state, ':g': inboxStatePk(workspaceId, userId, state) },
              ReturnValues: 'UPDATED_OLD',
            }),
          );
          return out.Attributes?.state === 'unread' ? 'unread' : 'other';
        } catch (err) {
          if (alreadyThere(err)) return undefined;
          throw err;
        }
      }),
    );
    return { marked: results.filter(Boolean).length, wereUnread: results.filter((r) => r === 'unread').length };
  }

  async markMailed(workspaceId: string, userId: string, entryId: string): Promise<void> {
    await this.db
      .send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: inboxPk(workspaceId, userId), sk: entryId },
          UpdateExpression: 'SET mailed = :t',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':t': true },
        }),
      )
      .catch((err: unknown) => {
        if (!alreadyThere(err)) throw err;
      });
  }

  watchOp(workspaceId: string, taskId: string, choice: WatchChoice, at: string): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: { pk: taskPk(workspaceId, taskId), sk: watchSk(choice.userId), userId: choice.userId, on: choice.on, at },
        },
      },
    };
  }

  reminderOps(before: Task | undefined, next: Task): WriteOp[] {
    const live = (t: Task | undefined): TaskReminder[] => (t && !t.deletedAt ? [...(t.reminders ?? [])] : []);
    const keyOf = (r: TaskReminder) => `${r.reminderId}@${r.at}`;
    const was = new Map(live(before).map((r) => [keyOf(r), r]));
    const now = new Map(live(next).map((r) => [keyOf(r), r]));
    const ops: WriteOp[] = [];
    for (const [k, r] of was) {
      if (now.has(k)) continue;
      ops.push({
        item: {
          Delete: {
            TableName: this.table,
            Key: { pk: reminderMinutePk(minuteOf(r.at)), sk: reminderSk(next.workspaceId, next.taskId, r.reminderId) },
          },
        },
      });
    }
    for (const [k, r] of now) {
      if (was.has(k)) continue;
      ops.push({
        item: {
          Put: {
            TableName: this.table,
            Item: {
              pk: reminderMinutePk(minuteOf(r.at)),
              sk: reminderSk(next.workspaceId, next.taskId, r.reminderId),
              workspaceId: next.workspaceId,
              taskId: next.taskId,
              reminderId: r.reminderId,
              userId: r.userId,
              at: r.at,
              expiresAt: Math.floor(Date.parse(r.at) / 1000) + REMINDER_KEPT_SECONDS,
            },
          },
        },
      });
    }
    return ops;
  }

  async leaseReminder(due: DueReminder, now: Date): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: reminderMinutePk(minuteOf(due.at)), sk: reminderSk(due.workspaceId, due.taskId, due.reminderId) },
          UpdateExpression: 'SET leasedAt = :now',
          ConditionExpression:
            'attribute_exists(pk) AND attribute_not_exists(firedAt) AND (attribute_not_exists(leasedAt) OR leasedAt < :stale)',
          ExpressionAttributeValues: { ':now': now.toISOString(), ':stale': new Date(now.getTime() - REMINDER_LEASE_MS).toISOString() },
        }),
      );
      return true;
    } catch (err) {
      if (alreadyThere(err)) return false;
      throw err;
    }
  }

  async firedReminder(due: DueReminder, now: Date): Promise<void> {
    await this.db
      .send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: reminderMinutePk(minuteOf(due.at)), sk: reminderSk(due.workspaceId, due.taskId, due.reminderId) },
          UpdateExpression: 'SET firedAt = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':now': now.toISOString() },
        }),
      )
      .catch((err: unknown) => {
        if (!alreadyThere(err)) throw err;
      });
  }

  digestOps(
    workspaceId: string,
    userId: string,
    utcHour: string | undefined,
    wasHour: string | undefined,
    lastEntryId?: string,
  ): WriteOp[] {
    const ops: WriteOp[] = [];
    if (wasHour !== undefined && wasHour !== utcHour)
      ops.push({ item: { Delete: { TableName: this.table, Key: { pk: digestHourPk(wasHour), sk: digestSk(workspaceId, userId) } } } });
    if (utcHour !== undefined && utcHour !== wasHour)
      ops.push({
        item: {
          Update: {
            TableName: this.table,
            Key: { pk: digestHourPk(utcHour), sk: digestSk(workspaceId, userId) },
            UpdateExpression: lastEntryId ? 'SET workspaceId = :w, userId = :u, lastEntryId = :l' : 'SET workspaceId = :w, userId = :u',
            ExpressionAttributeValues: { ':w': workspaceId, ':u': userId, ...(lastEntryId ? { ':l': lastEntryId } : {}) },
          },
        },
      });
    return ops;
  }

  async digested(sub: DigestSubscriber, utcHour: string, lastEntryId: string): Promise<void> {
    await this.db
      .send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: digestHourPk(utcHour), sk: digestSk(sub.workspaceId, sub.userId) },
          UpdateExpression: 'SET lastEntryId = :l',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':l': lastEntryId },
        }),
      )
      .catch((err: unknown) => {
        if (!alreadyThere(err)) throw err;
      });
  }

  async setCursor(name: string, value: string): Promise<void> {
    // Forward only: a run that overlapped a later one never takes it back.
    await this.db
      .send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: JOBS_PK, sk: name, value },
          ConditionExpression: 'attribute_not_exists(#v) OR #v < :v',
          ExpressionAttributeNames: { '#v': 'value' },
          ExpressionAttributeValues: { ':v': value },
        }),
      )
      .catch((err: unknown) => {
        if (!alreadyThere(err)) throw err;
      });
  }
}
