import { type DynamoDBDocumentClient, GetCommand, paginateQuery, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ACTIVITY_PREFIX, activityOfActorGsiPk, activityOfTargetGsiPk, activitySk, wsPk } from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import { type ActivityKind, type ActivityRecord, activityIdBound, TEAM_KINDS } from '../model/activity.js';
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
}

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
  recordOp(record: ActivityRecord): WriteOp;
  /** Marks `record` undone by `undoId`, refused when something else undid it first. */
  markUndoneOp(record: ActivityRecord, undoId: string, at: string): WriteOp;
  get(workspaceId: string, activityId: string): Promise<ActivityRecord | undefined>;
  /** Newest first. */
  list(workspaceId: string, query: ActivityQuery, limit: number, now: Date, after?: string): Promise<ActivityPage>;
  /** The records of a bulk call's items (`act_….01` …), in order. */
  itemsOfCall(workspaceId: string, callId: string): Promise<ActivityRecord[]>;
  /** The target's records after `afterId`, oldest first: what a conflicting undo names. */
  laterOnTarget(workspaceId: string, record: ActivityRecord, limit: number): Promise<ActivityRecord[]>;
}

/** The index partition a record's target lives in: a comment's is its task's. */
export const targetPartition = (r: Pick<ActivityRecord, 'workspaceId' | 'kind' | 'targetId' | 'taskId'>): string =>
  r.kind === 'comment' || r.kind === 'task'
    ? activityOfTargetGsiPk(r.workspaceId, 'task', r.taskId ?? r.targetId)
    : activityOfTargetGsiPk(r.workspaceId, r.kind, r.targetId);

const DAY_SECONDS = 86_400;
/** A filtered page reads this many records per request, since many may not match. */
const FILTERED_READ = 200;
/** Requests one page may take before it is answered short, with a cursor to go on. */
const MAX_REQUESTS_PER_PAGE = 4;

const toRecord = (item: Record<string, unknown>): ActivityRecord => {
  const { pk: _p, sk: _s, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, clientSearch: _e, ...rest } = item;
  return rest as unknown as ActivityRecord;
};

/**
 * Records live in the workspace partition under `ACT#<id>` (the whole history, newest last) and in
 * gsi1 by target and gsi2 by actor. A query reads one of the three, picked by its narrowest filter;
 * the others become a filter expression (docs/workspace.md says which combinations cost more).
 */
export class DynamoActivityStore implements ActivityStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    readonly retentionDays: number,
  ) {}

  expiresAtFor(now: Date): number {
    return Math.floor(now.getTime() / 1000) + this.retentionDays * DAY_SECONDS;
  }

  recordOp(record: ActivityRecord): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: {
            pk: wsPk(record.workspaceId),
            sk: activitySk(record.activityId),
            gsi1pk: targetPartition(record),
            gsi1sk: record.activityId,
            gsi2pk: activityOfActorGsiPk(record.workspaceId, record.actorId),
            gsi2sk: record.activityId,
            clientSearch: record.client.toLowerCase(),
            ...record,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    };
  }

  markUndoneOp(record: ActivityRecord, undoId: string, at: string): WriteOp {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(record.workspaceId), sk: activitySk(record.activityId) },
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
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: activitySk(activityId) }, ConsistentRead: true }),
    );
    return out.Item ? toRecord(out.Item) : undefined;
  }

  async list(workspaceId: string, q: ActivityQuery, limit: number, now: Date, after?: string): Promise<ActivityPage> {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    // Records older than the retention have expired (TTL may not have removed them yet): the key
    // range starts after them, so they cost nothing to skip.
    const oldest = now.getTime() - this.retentionDays * DAY_SECONDS * 1000;
    const lo = activityIdBound(Math.max(q.sinceMs ?? 0, oldest), 'low');
    const hi = activityIdBound(q.untilMs ?? now.getTime() + DAY_SECONDS * 1000, 'high');
    if (lo > hi) return { records: [] };

    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const filters: string[] = [];
    const equals = (attr: string, value: string) => {
      names[`#${attr}`] = attr;
      values[`:${attr}`] = value;
      filters.push(`#${attr} = :${attr}`);
    };
    let source: Pick<QueryCommandInput, 'IndexName' | 'KeyConditionExpression'> & { key: (id: string) => Record<string, string> };
    if (q.taskId !== undefined) {
      const gpk = activityOfTargetGsiPk(workspaceId, 'task', q.taskId);
      values[':gpk'] = gpk;
      source = {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :gpk AND gsi1sk BETWEEN :lo AND :hi',
        key: (id) => ({ pk: wsPk(workspaceId), sk: activitySk(id), gsi1pk: gpk, gsi1sk: id }),
      };
      if (q.actorId !== undefined) equals('actorId', q.actorId);
    } else if (q.actorId !== undefined) {
      const gpk = activityOfActorGsiPk(workspaceId, q.actorId);
      values[':gpk'] = gpk;
      source = {
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :gpk AND gsi2sk BETWEEN :lo AND :hi',
        key: (id) => ({ pk: wsPk(workspaceId), sk: activitySk(id), gsi2pk: gpk, gsi2sk: id }),
      };
    } else {
      values[':pk'] = wsPk(workspaceId);
      source = {
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
        key: (id) => ({ pk: wsPk(workspaceId), sk: activitySk(id) }),
      };
    }
    const onMain = source.IndexName === undefined;
    values[':lo'] = onMain ? `${ACTIVITY_PREFIX}${lo}` : lo;
    values[':hi'] = onMain ? `${ACTIVITY_PREFIX}${hi}` : hi;
    if (q.kind !== undefined) equals('kind', q.kind);
    if (q.projectId !== undefined) equals('projectId', q.projectId);
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
    } else if (!q.includeTeam && q.taskId === undefined && q.kind === undefined) {
      names['#kind'] = 'kind';
      const hidden = [...TEAM_KINDS].map((k, i) => {
        values[`:team${i}`] = k;
        return `:team${i}`;
      });
      filters.push(`NOT (#kind IN (${hidden.join(', ')}))`);
    }

    const found: ActivityRecord[] = [];
    let startKey: Record<string, string> | undefined = after ? source.key(after) : undefined;
    let lastRead: string | undefined;
    for (let request = 0; request < MAX_REQUESTS_PER_PAGE && found.length <= limit; request++) {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          ...(source.IndexName ? { IndexName: source.IndexName } : {}),
          KeyConditionExpression: source.KeyConditionExpression,
          ...(filters.length ? { FilterExpression: filters.join(' AND '), ExpressionAttributeNames: names } : {}),
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          ExclusiveStartKey: startKey,
          Limit: filters.length ? FILTERED_READ : limit + 1 - found.length,
        }),
      );
      for (const item of out.Items ?? []) {
        const record = toRecord(item);
        if (record.expiresAt <= nowSeconds) continue;
        found.push(record);
        if (found.length > limit) break;
      }
      const evaluated = out.LastEvaluatedKey as Record<string, string> | undefined;
      if (!evaluated) return page(found, limit);
      startKey = evaluated;
      lastRead = onMain ? evaluated.sk!.slice(ACTIVITY_PREFIX.length) : (evaluated.gsi1sk ?? evaluated.gsi2sk);
    }
    if (found.length > limit) return page(found, limit);
    // The page took its share of requests: it ends short, and goes on after the last record read.
    return { records: found, ...(lastRead ? { next: lastRead } : {}) };
  }

  async itemsOfCall(workspaceId: string, callId: string): Promise<ActivityRecord[]> {
    // Every page: one call's records are at most 50, but with long notes they fill more than the
    // 1 MB a Query answers at once.
    const records: ActivityRecord[] = [];
    for await (const page of paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :call)',
        ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':call': `${activitySk(callId)}.` },
        ConsistentRead: true,
      },
    ))
      records.push(...(page.Items ?? []).map(toRecord));
    return records;
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
