import { type DynamoDBDocumentClient, paginateQuery, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent } from '../../platform/dynamodb.js';
import {
  ACTIVITY_PREFIX,
  activityOfActorGsiPk,
  activityOfKindGsiPk,
  activityOfProjectGsiPk,
  activityOfTargetGsiPk,
  activityPk,
  activityShardPks,
  activitySk,
  wsPk,
} from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import { type ActivityKind, type ActivityRecord, activityIdBound, TEAM_KINDS } from '../model/activity.js';
import type { WorkspaceRef } from '../model/caller.js';
import { undoneMeanwhile } from '../model/refusals.js';

/** What `activity_list` asks for; every condition must hold, an absent one does not filter. */
export interface ActivityQuery {
  readonly taskId?: string;
  readonly projectId?: string;
  readonly actorId?: string;
  /** Lower case: a part of the client's name. */
  readonly client?: string;
  readonly kind?: ActivityKind;
  readonly sinceMs?: number;
  readonly untilMs?: number;
  /** Member, token and workspace records too (the caller holds `team:read`). */
  readonly includeTeam: boolean;
  /** Only member, token and workspace records (the account page's list for admins). */
  readonly onlyTeam?: boolean;
  /** Who reads: another member's private saved views are not in their history (their names and queries are the owner's). */
  readonly readerId?: string;
}

/** A record of a saved view its reader may not see: a private one of someone else. */
export const privateToAnother = (r: ActivityRecord, readerId: string | undefined): boolean =>
  readerId !== undefined &&
  r.kind === 'view' &&
  r.actorId !== readerId &&
  (r.after as { shared?: unknown } | undefined)?.shared !== true &&
  (r.before as { shared?: unknown } | undefined)?.shared !== true;

export interface ActivityPage {
  readonly records: readonly ActivityRecord[];
  /** Where the next page starts (exclusive), present when more may follow. */
  readonly next?: string;
}

export interface ActivityStore {
  /** How long records (and what undo keeps) last: `DOERS_ACTIVITY_DAYS`. */
  readonly retentionDays: number;
  /** Epoch seconds when a record written now expires, and with it what undo keeps. */
  expiresAtFor(now: Date): number;
  get(workspaceId: string, activityId: string): Promise<ActivityRecord | undefined>;
  /** Newest first. */
  list(ws: WorkspaceRef, query: ActivityQuery, limit: number, now: Date, after?: string): Promise<ActivityPage>;
  /** The records of a bulk call's items (`act_….01` …), in order. */
  itemsOfCall(ws: WorkspaceRef, callId: string): Promise<ActivityRecord[]>;
  /**
   * The workspace's records after `afterId` and before `beforeId`, oldest first, at most `limit`
   * (the local notifier's poll: every shard read from where it left off).
   */
  since(workspaceId: string, afterId: string, beforeId: string, limit: number): Promise<ActivityRecord[]>;
  /** The target's records after `afterId`, oldest first: what a conflicting undo names. */
  laterOnTarget(workspaceId: string, record: ActivityRecord, limit: number): Promise<ActivityRecord[]>;
}

/**
 * A change's record, written in the change's own transaction by its writer (store/writes.ts).
 */
export interface ActivityWrites {
  recordOp(record: ActivityRecord): WriteOp;
  /** Marks `record` undone by `undoId`, refused when something else undid it first. */
  markUndoneOp(record: ActivityRecord, undoId: string, at: string): WriteOp;
}

/** The index partition a record's target lives in: a comment's and an attachment's is its task's. */
export const targetPartition = (r: Pick<ActivityRecord, 'workspaceId' | 'kind' | 'targetId' | 'taskId'>): string =>
  r.kind === 'comment' || r.kind === 'task' || r.kind === 'attachment'
    ? activityOfTargetGsiPk(r.workspaceId, 'task', r.taskId ?? r.targetId)
    : activityOfTargetGsiPk(r.workspaceId, r.kind, r.targetId);

/** Kinds whose records are a task's (its own, its comments', its files'): indexed by their project. */
const TASK_KINDS: ReadonlySet<ActivityKind> = new Set(['task', 'comment', 'attachment']);

/** The record's entry in the history's third index: by project for a task's, by kind for the rest. */
export const indexPartition = (r: Pick<ActivityRecord, 'workspaceId' | 'kind' | 'projectId'>): string =>
  TASK_KINDS.has(r.kind) ? activityOfProjectGsiPk(r.workspaceId, r.projectId) : activityOfKindGsiPk(r.workspaceId, r.kind);

/** The read units one page of the history may spend, as every other read (docs/workspace.md, "Access patterns"). */
const PAGE_READ_UNITS = 50;

const DAY_SECONDS = 86_400;
/** A filtered page reads this many records per request, since many may not match. */
const FILTERED_READ = 200;
/** Requests one page may take before it is answered short, with a cursor to go on. */
const MAX_REQUESTS_PER_PAGE = 8;
/** Records the first request of a page asks for: what the next ones ask is sized by what these cost. */
const FIRST_READ = 25;

/** Where each record read was found (layout 1 kept them all in the workspace partition): what marking it undone writes to. */
const locations = new WeakMap<ActivityRecord, string>();

/** A record from its item, as a query or the table's stream gives it (the notifier reads the stream). */
export const recordOfItem = (item: Record<string, unknown>): ActivityRecord => toRecord(item);

const toRecord = (item: Record<string, unknown>): ActivityRecord => {
  const { pk, sk: _s, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, clientSearch: _e, ...rest } = item;
  const record = rest as unknown as ActivityRecord;
  locations.set(record, String(pk));
  return record;
};

/** A bulk call's items share the call's id (`act_….07`), and so its partition. */
const callIdOf = (activityId: string): string => activityId.split('.')[0]!;
const homeOf = (workspaceId: string, activityId: string): string => activityPk(workspaceId, callIdOf(activityId));

/** The partitions a workspace's records are in: four, and the workspace's own while it is not migrated. */
const partitionsOf = (ws: WorkspaceRef): string[] => [
  ...activityShardPks(ws.workspaceId),
  ...(ws.layout === 2 && !ws.migrating ? [] : [wsPk(ws.workspaceId)]),
];

/**
 * Records live in four partitions by the call that made them (`WS#<ws>#R<n>`, `ACT#<id>`: the whole
 * history is their merge, newest first) and in gsi1 by target and gsi2 by actor. A query reads one
 * of those, picked by its narrowest filter; the others become a filter expression (docs/workspace.md
 * says which combinations cost more). Layout 1 kept them in the workspace partition: read too until
 * the workspace is migrated (the migration moves them).
 */
export class DynamoActivityStore implements ActivityStore, ActivityWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    readonly retentionDays: number,
  ) {}

  expiresAtFor(now: Date): number {
    return Math.floor(now.getTime() / 1000) + this.retentionDays * DAY_SECONDS;
  }

  async since(workspaceId: string, afterId: string, beforeId: string, limit: number): Promise<ActivityRecord[]> {
    const pages = await Promise.all(
      activityShardPks(workspaceId).map((pk) =>
        this.db.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :p AND sk BETWEEN :a AND :b',
            ExpressionAttributeValues: { ':p': pk, ':a': activitySk(`${afterId}\u0000`), ':b': activitySk(beforeId) },
            ConsistentRead: true,
            Limit: limit,
          }),
        ),
      ),
    );
    return pages
      .flatMap((p) => (p.Items ?? []).map(toRecord))
      .sort((a, b) => (a.activityId < b.activityId ? -1 : 1))
      .slice(0, limit);
  }

  recordOp(record: ActivityRecord): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: {
            pk: homeOf(record.workspaceId, record.activityId),
            sk: activitySk(record.activityId),
            gsi1pk: targetPartition(record),
            gsi1sk: record.activityId,
            gsi2pk: activityOfActorGsiPk(record.workspaceId, record.actorId),
            gsi2sk: record.activityId,
            gsi3pk: indexPartition(record),
            gsi3sk: record.activityId,
            clientSearch: record.client.toLowerCase(),
            ...record,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      // By target (gsi1), by actor (gsi2), by project or kind (gsi3).
      indexEntries: 3,
    };
  }

  markUndoneOp(record: ActivityRecord, undoId: string, at: string): WriteOp {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: locations.get(record) ?? homeOf(record.workspaceId, record.activityId), sk: activitySk(record.activityId) },
          UpdateExpression: 'SET undoneBy = :u, undoneAt = :at',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(undoneBy)',
          ExpressionAttributeValues: { ':u': undoId, ':at': at },
        },
      },
      refused: (current) => {
        throw undoneMeanwhile(record.activityId, current?.undoneBy === undefined ? undefined : String(current.undoneBy));
      },
    };
  }

  async get(workspaceId: string, activityId: string): Promise<ActivityRecord | undefined> {
    // Its home, and where layout 1 kept it: one read either way.
    const items = await batchGetConsistent(this.db, this.table, [
      { pk: homeOf(workspaceId, activityId), sk: activitySk(activityId) },
      { pk: wsPk(workspaceId), sk: activitySk(activityId) },
    ]);
    return items[0] ? toRecord(items[0]) : undefined;
  }

  async list(ws: WorkspaceRef, q: ActivityQuery, limit: number, now: Date, after?: string): Promise<ActivityPage> {
    const workspaceId = ws.workspaceId;
    const nowSeconds = Math.floor(now.getTime() / 1000);
    // Records older than the retention have expired (TTL may not have removed them yet): the key
    // range starts after them, so they cost nothing to skip.
    const oldest = now.getTime() - this.retentionDays * DAY_SECONDS * 1000;
    const lo = activityIdBound(Math.max(q.sinceMs ?? 0, oldest), 'low');
    // A page goes on at the last record of the one before (inclusive: that one is left out).
    const hi = after ?? activityIdBound(q.untilMs ?? now.getTime() + DAY_SECONDS * 1000, 'high');
    if (lo > hi) return { records: [] };

    // The index by project and kind holds every record of a workspace made (or migrated) since it came.
    const indexed = !!ws.activityIndexed && ws.layout === 2 && !ws.migrating;
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const filters: string[] = [];
    const equals = (attr: string, value: string) => {
      names[`#${attr}`] = attr;
      values[`:${attr}`] = value;
      filters.push(`#${attr} = :${attr}`);
    };
    type Source = Pick<QueryCommandInput, 'IndexName' | 'KeyConditionExpression'> & { values: Record<string, unknown>; onMain: boolean };
    /** One index partition's records between the bounds (the sort key of each index is the activity id). */
    const onIndex = (index: 'gsi1' | 'gsi2' | 'gsi3', pk: string): Source => ({
      IndexName: index,
      KeyConditionExpression: `${index}pk = :gpk AND ${index}sk BETWEEN :lo AND :hi`,
      values: { ':gpk': pk, ':lo': lo, ':hi': hi },
      onMain: false,
    });
    let sources: Source[];
    if (q.taskId !== undefined) {
      sources = [onIndex('gsi1', activityOfTargetGsiPk(workspaceId, 'task', q.taskId))];
      if (q.actorId !== undefined) equals('actorId', q.actorId);
    } else if (q.actorId !== undefined) {
      sources = [onIndex('gsi2', activityOfActorGsiPk(workspaceId, q.actorId))];
    } else if (indexed && q.projectId !== undefined) {
      // A project's history: its tasks' records (with their comments' and files') and, unless the
      // kind says otherwise, the project's own.
      sources = [];
      if (q.kind === undefined || TASK_KINDS.has(q.kind)) sources.push(onIndex('gsi3', activityOfProjectGsiPk(workspaceId, q.projectId)));
      if (q.kind === undefined || q.kind === 'project')
        sources.push(onIndex('gsi1', activityOfTargetGsiPk(workspaceId, 'project', q.projectId)));
      if (!sources.length) return { records: [] };
    } else if (indexed && q.kind !== undefined && !TASK_KINDS.has(q.kind)) {
      sources = [onIndex('gsi3', activityOfKindGsiPk(workspaceId, q.kind))];
    } else {
      // The whole history: every partition's range, merged newest first.
      sources = partitionsOf(ws).map((pk) => ({
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
        values: { ':pk': pk, ':lo': `${ACTIVITY_PREFIX}${lo}`, ':hi': `${ACTIVITY_PREFIX}${hi}` },
        onMain: true,
      }));
    }
    // What the index read says already is no filter: a filter makes each request read more.
    const byIndex = sources.some((s) => s.IndexName === 'gsi3');
    if (q.kind !== undefined && !(byIndex && q.projectId === undefined)) equals('kind', q.kind);
    if (q.projectId !== undefined && !byIndex) equals('projectId', q.projectId);
    if (q.client !== undefined) {
      names['#clientSearch'] = 'clientSearch';
      values[':client'] = q.client;
      filters.push('contains(#clientSearch, :client)');
    }
    if (q.onlyTeam && q.kind === undefined) {
      names['#kind'] = 'kind';
      const team = [...TEAM_KINDS].map((k, i) => {
        values[`:team${i}`] = k;
        return `:team${i}`;
      });
      filters.push(`#kind IN (${team.join(', ')})`);
    } else if (!q.includeTeam && q.taskId === undefined && q.kind === undefined && !byIndex) {
      names['#kind'] = 'kind';
      const hidden = [...TEAM_KINDS].map((k, i) => {
        values[`:team${i}`] = k;
        return `:team${i}`;
      });
      filters.push(`NOT (#kind IN (${hidden.join(', ')}))`);
    }

    const read = await Promise.all(
      sources.map(async (source) => {
        const found: ActivityRecord[] = [];
        let startKey: Record<string, unknown> | undefined;
        let units = 0;
        const budget = PAGE_READ_UNITS / sources.length;
        // A few records first (a record with long notes is many KB), then as many as the units left
        // hold at the size seen, more per request while a filter matches few.
        let ask = Math.min(limit + 2, FIRST_READ);
        let scanned = 0;
        for (let request = 0; request < MAX_REQUESTS_PER_PAGE && found.length <= limit && units < budget; request++) {
          const out = await this.db.send(
            new QueryCommand({
              TableName: this.table,
              ...(source.IndexName ? { IndexName: source.IndexName } : {}),
              KeyConditionExpression: source.KeyConditionExpression,
              ...(filters.length ? { FilterExpression: filters.join(' AND ') } : {}),
              ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
              ExpressionAttributeValues: { ...values, ...source.values },
              ScanIndexForward: false,
              ExclusiveStartKey: startKey,
              ReturnConsumedCapacity: 'TOTAL',
              Limit: filters.length ? ask : Math.min(ask, limit + 2 - found.length),
            }),
          );
          units += out.ConsumedCapacity?.CapacityUnits ?? (out.ScannedCount ?? 0) * 0.5;
          scanned += out.ScannedCount ?? 0;
          const room = Math.floor((budget - units) / Math.max(units / Math.max(scanned, 1), 0.01));
          ask = Math.max(1, Math.min(filters.length ? Math.min(FILTERED_READ, ask * 4) : limit + 2, room));
          for (const item of out.Items ?? []) {
            const record = toRecord(item);
            if (record.expiresAt <= nowSeconds || record.activityId === after || privateToAnother(record, q.readerId)) continue;
            found.push(record);
            if (found.length > limit) break;
          }
          startKey = out.LastEvaluatedKey;
          if (!startKey) return { found, stoppedAt: undefined };
        }
        if (found.length > limit || !startKey) return { found, stoppedAt: undefined };
        // This source took its share of requests: nothing is known below the last record it read.
        const k = startKey as Record<string, string>;
        return { found, stoppedAt: source.onMain ? k.sk!.slice(ACTIVITY_PREFIX.length) : (k.gsi1sk ?? k.gsi2sk ?? k.gsi3sk) };
      }),
    );
    const stops = read.map((r) => r.stoppedAt).filter((x): x is string => x !== undefined);
    const bound = stops.length ? stops.sort().at(-1)! : undefined;
    const merged = read
      .flatMap((r) => r.found)
      .filter((r) => bound === undefined || r.activityId >= bound)
      .sort((a, b) => (a.activityId < b.activityId ? 1 : -1));
    if (merged.length > limit) return page(merged, limit);
    // The page took its share of requests: it ends short, and goes on after the last record read.
    return { records: merged, ...(bound ? { next: bound } : {}) };
  }

  async itemsOfCall(ws: WorkspaceRef, callId: string): Promise<ActivityRecord[]> {
    // Every page: one call's records are at most 50, but with long notes they fill more than the
    // 1 MB a Query answers at once.
    const records: ActivityRecord[] = [];
    for (const pk of [homeOf(ws.workspaceId, callId), ...(ws.layout === 2 && !ws.migrating ? [] : [wsPk(ws.workspaceId)])]) {
      for await (const page of paginateQuery(
        { client: this.db },
        {
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :call)',
          ExpressionAttributeValues: { ':pk': pk, ':call': `${activitySk(callId)}.` },
          ConsistentRead: true,
        },
      ))
        records.push(...(page.Items ?? []).map(toRecord));
    }
    return records.sort((a, b) => (a.activityId < b.activityId ? -1 : 1));
  }

  async laterOnTarget(workspaceId: string, record: ActivityRecord, limit: number): Promise<ActivityRecord[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :gpk AND gsi1sk > :after',
        ExpressionAttributeValues: { ':gpk': targetPartition({ ...record, workspaceId }), ':after': record.activityId },
        Limit: 50,
      }),
    );
    // A task's partition also holds its comments' records: only the target's own count.
    return (out.Items ?? [])
      .map(toRecord)
      .filter((r) => r.targetId === record.targetId)
      .slice(0, limit);
  }
}

const page = (found: ActivityRecord[], limit: number): ActivityPage => {
  const records = found.slice(0, limit);
  return { records, ...(found.length > limit ? { next: records.at(-1)!.activityId } : {}) };
};
