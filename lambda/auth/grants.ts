import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { batchDelete } from '../platform/batch-writes.js';
import type { ItemKey } from '../platform/dynamodb.js';
import { grantKey, grantsOfUserPrefix, grantsOfWorkspaceGsiPk, modelPrefix, tokensOfGrantGsiPk } from '../platform/item-keys.js';
import { WORKSPACE_TABLE_KEYS } from '../platform/tables.js';
import { commitWrites, type WriteOp } from '../platform/transact.js';
import { memberRefOfAccountId } from '../vocabulary.js';

/** A person's consent to one client, as the account pages and the admin CLI show it. */
export interface GrantRecord {
  readonly grantId: string;
  readonly workspaceId: string;
  readonly userId: string;
  readonly clientId: string;
  /** Every scope granted for any resource, less those the person declined. */
  readonly scopes: string[];
  readonly createdAt: string;
  readonly expiresAt?: string;
  /** The first call of the last day it was used on (ISO). */
  readonly lastUsedAt?: string;
}

export interface GrantStoreOptions {
  /** Epoch milliseconds; tests set it to move time without waiting. */
  readonly now?: () => number;
}

/**
 * Reads oidc-provider's Grant items (written by the adapter) for people rather than for the library:
 * which clients hold a grant, and revoking one with everything issued under it.
 */
/** Connected apps as the account page and the credentials writer read them. */
export interface GrantStore {
  /** The live grants of a workspace, or of one person in it. */
  list(workspaceId: string, userId?: string): Promise<GrantRecord[]>;
  get(grantId: string): Promise<GrantRecord | undefined>;
}

/** A grant's revocation: the credentials writer's alone (workspace/membership/credentials.ts, through store/writes.ts). */
export interface GrantWrites {
  /** Revokes a grant and everything issued under it, with `extra` (its record); false when it was gone already. */
  revoke(grantId: string, extra?: readonly WriteOp[]): Promise<boolean>;
}

export class DynamoGrantStore implements GrantStore, GrantWrites {
  private readonly now: () => number;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    opts: GrantStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The live grants of a workspace, or of one person in it. */
  async list(workspaceId: string, userId?: string): Promise<GrantRecord[]> {
    const out: GrantRecord[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        IndexName: WORKSPACE_TABLE_KEYS.gsi1.indexName,
        KeyConditionExpression: userId === undefined ? 'gsi1pk = :pk' : 'gsi1pk = :pk AND begins_with(gsi1sk, :user)',
        ExpressionAttributeValues: {
          ':pk': grantsOfWorkspaceGsiPk(workspaceId),
          ...(userId === undefined ? {} : { ':user': grantsOfUserPrefix(userId) }),
        },
      },
    );
    for await (const page of pages) {
      for (const item of page.Items ?? []) {
        const record = this.toRecord(item);
        if (record && record.workspaceId === workspaceId && (userId === undefined || record.userId === userId)) out.push(record);
      }
    }
    return out;
  }

  async get(grantId: string): Promise<GrantRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: grantKey(grantId), ConsistentRead: true }));
    return out.Item ? this.toRecord(out.Item) : undefined;
  }

  /**
   * Deletes the grant and every item issued under it, of every model. The tokens go first: if a
   * delete fails, the grant is still listed and the person can revoke again. Returns whether a live
   * grant was there. `extra` (its activity record) is written with the grant's own delete.
   */
  async revoke(grantId: string, extra: readonly WriteOp[] = []): Promise<boolean> {
    const old = await revokeGrant(this.db, this.table, grantId, extra);
    return old !== undefined && !this.expired(old);
  }

  private expired(item: Record<string, unknown>): boolean {
    return typeof item.expiresAt === 'number' && item.expiresAt <= Math.floor(this.now() / 1000);
  }

  /** Undefined for an expired grant (TTL deletes late) or one whose account is not a member's. */
  private toRecord(item: Record<string, unknown>): GrantRecord | undefined {
    if (this.expired(item)) return undefined;
    const payload = JSON.parse(item.payload as string) as GrantPayload;
    const member = typeof payload.accountId === 'string' ? memberRefOfAccountId(payload.accountId) : undefined;
    if (!member || typeof payload.jti !== 'string') return undefined;
    const exp = typeof payload.exp === 'number' ? payload.exp : typeof item.expiresAt === 'number' ? item.expiresAt : undefined;
    return {
      grantId: payload.jti,
      workspaceId: member.workspaceId,
      userId: member.userId,
      clientId: String(payload.clientId ?? ''),
      scopes: grantedScopes(payload),
      createdAt: new Date((payload.iat ?? 0) * 1000).toISOString(),
      ...(exp === undefined ? {} : { expiresAt: new Date(exp * 1000).toISOString() }),
      // Stamped by the MCP function on the first call of each day (auth/access-reader.ts markUsed).
      ...(typeof item.lastUsedAt === 'string' ? { lastUsedAt: item.lastUsedAt } : {}),
    };
  }
}

/** The part of oidc-provider's Grant payload read here. */
interface GrantPayload {
  readonly jti?: unknown;
  readonly accountId?: unknown;
  readonly clientId?: unknown;
  readonly iat?: number;
  readonly exp?: unknown;
  /** resource indicator → space-separated scopes */
  readonly resources?: Record<string, unknown>;
  readonly rejected?: { readonly resources?: Record<string, unknown> };
}

const words = (value: unknown): string[] => (typeof value === 'string' ? value.split(' ').filter(Boolean) : []);

/** As the library reads a grant: per resource, the scopes given less those rejected; then the union. */
const grantedScopes = (payload: GrantPayload): string[] => {
  const scopes = new Set<string>();
  for (const [resource, given] of Object.entries(payload.resources ?? {})) {
    const rejected = new Set(words(payload.rejected?.resources?.[resource]));
    for (const scope of words(given)) if (!rejected.has(scope)) scopes.add(scope);
  }
  return [...scopes].sort();
};

/** Keys of the items issued under a grant: of one model, or of all when `model` is omitted. */
export const keysOfGrant = async (db: DynamoDBDocumentClient, table: string, grantId: string, model?: string): Promise<ItemKey[]> => {
  const keys: ItemKey[] = [];
  const pages = paginateQuery(
    { client: db },
    {
      TableName: table,
      IndexName: WORKSPACE_TABLE_KEYS.gsi1.indexName,
      KeyConditionExpression: model === undefined ? 'gsi1pk = :pk' : 'gsi1pk = :pk AND begins_with(gsi1sk, :model)',
      ExpressionAttributeValues: { ':pk': tokensOfGrantGsiPk(grantId), ...(model === undefined ? {} : { ':model': modelPrefix(model) }) },
      ProjectionExpression: 'pk, sk',
    },
  );
  for await (const page of pages) for (const item of page.Items ?? []) keys.push({ pk: item.pk as string, sk: item.sk as string });
  return keys;
};

/**
 * Deletes a grant and every token issued under it, of every model; returns the grant item as it was
 * (undefined when there was none). The tokens go first: if a delete fails, the grant is still there
 * and the revocation can be made again. With `extra` (an activity record) the grant's own delete and
 * `extra` are one all-or-nothing write; the grant is what the MCP function checks, so it is the revocation.
 */
export const revokeGrant = async (
  db: DynamoDBDocumentClient,
  table: string,
  grantId: string,
  extra: readonly WriteOp[] = [],
): Promise<Record<string, unknown> | undefined> => {
  await batchDelete(db, table, await keysOfGrant(db, table, grantId));
  if (!extra.length) {
    const out = await db.send(new DeleteCommand({ TableName: table, Key: grantKey(grantId), ReturnValues: 'ALL_OLD' }));
    return out.Attributes;
  }
  let old: Record<string, unknown> | undefined;
  const gone = new Error('gone');
  try {
    old = (await db.send(new GetCommand({ TableName: table, Key: grantKey(grantId), ConsistentRead: true }))).Item;
    if (!old) return undefined;
    await commitWrites(db, [
      {
        item: { Delete: { TableName: table, Key: grantKey(grantId), ConditionExpression: 'attribute_exists(pk)' } },
        refused: () => {
          throw gone;
        },
      },
      ...extra,
    ]);
  } catch (err) {
    if (err === gone) return undefined;
    throw err;
  }
  return old;
};
