import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Adapter, type AdapterFactory, type AdapterPayload, errors } from 'oidc-provider';
import { keysOfGrant, revokeGrant } from '../auth/grants.js';
import { batchDelete } from '../platform/batch-writes.js';
import { type ItemKey, isConditionFailure } from '../platform/dynamodb.js';
import {
  grantOfUserGsiSk,
  grantsOfWorkspaceGsiPk,
  OAUTH_SK,
  oauthPk,
  tokenOfGrantGsiSk,
  tokensOfGrantGsiPk,
  uidGsiPk,
} from '../platform/item-keys.js';
import { WORKSPACE_TABLE_KEYS } from '../platform/tables.js';
import { memberRefOfAccountId } from '../vocabulary.js';

export interface AdapterOptions {
  /** Epoch milliseconds; tests set it to move time without waiting. */
  readonly now?: () => number;
  /** A dynamically registered client unused for this many days disappears (default 30). */
  readonly clientIdleDays?: number;
}

const DAY_SECONDS = 86_400;
/** What is redeemed exactly once: a second redemption is a replay. */
const SINGLE_USE_MODELS = new Set(['AuthorizationCode', 'RefreshToken']);
const DEFAULT_CLIENT_IDLE_DAYS = 30;

/**
 * `adapter` for oidc-provider's configuration. It accepts a class or a plain factory; an arrow
 * function has no prototype, so the library calls it (once per model) instead of `new`-ing it.
 */
export const createAdapterFactory =
  (db: DynamoDBDocumentClient, table: string, opts: AdapterOptions = {}): AdapterFactory =>
  (name: string): Adapter =>
    new DynamoAdapter(name, db, table, opts.now ?? Date.now, (opts.clientIdleDays ?? DEFAULT_CLIENT_IDLE_DAYS) * DAY_SECONDS);

class DynamoAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly nowMs: () => number,
    private readonly clientIdleSeconds: number,
  ) {}

  private nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  private key(id: string): ItemKey {
    return { pk: oauthPk(this.model, id), sk: OAUTH_SK };
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const now = this.nowSeconds();
    // Registered clients carry no lifetime from the library; without one, every client a passing
    // MCP client ever registered would stay forever. They lapse when unused instead (see `find`).
    const idle = this.model === 'Client' && typeof expiresIn !== 'number';
    const expiresAt = typeof expiresIn === 'number' ? now + expiresIn : idle ? now + this.clientIdleSeconds : undefined;
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          ...this.key(id),
          ...this.indexKeys(id, payload),
          model: this.model,
          // A string, not a map: payloads may hold what DynamoDB refuses or changes (empty or
          // `__proto__` keys, deep `claims` nesting, integers past 2^53); JSON round-trips them.
          payload: JSON.stringify(payload),
          ...(expiresAt === undefined ? {} : { expiresAt }),
          ...(idle ? { idleExpiry: true } : {}),
        },
      }),
    );
  }

  private indexKeys(id: string, payload: AdapterPayload): Record<string, string> {
    const k = WORKSPACE_TABLE_KEYS;
    const keys: Record<string, string> = {};
    if (this.model === 'Grant') {
      // A grant whose account is not one of ours still works for the library; it is only unlisted.
      const member = typeof payload.accountId === 'string' ? memberRefOfAccountId(payload.accountId) : undefined;
      if (member) {
        keys[k.gsi1.partitionKey] = grantsOfWorkspaceGsiPk(member.workspaceId);
        keys[k.gsi1.sortKey] = grantOfUserGsiSk(member.userId, id);
      }
    } else if (this.model !== 'Interaction' && typeof payload.grantId === 'string') {
      // Interaction carries the grantId it amends but is not issued under it: the library never
      // revokes it by grant, and deleting it mid-consent would only break the user's sign-in.
      keys[k.gsi1.partitionKey] = tokensOfGrantGsiPk(payload.grantId);
      keys[k.gsi1.sortKey] = tokenOfGrantGsiSk(this.model, id);
    }
    if (typeof payload.uid === 'string') {
      keys[k.gsi2.partitionKey] = uidGsiPk(payload.uid);
      keys[k.gsi2.sortKey] = this.model;
    }
    return keys;
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: this.key(id), ConsistentRead: true }));
    const item = out.Item;
    const now = this.nowSeconds();
    // TTL deletion runs up to days late: an item past its time is gone as far as anyone can tell.
    if (!item || (typeof item.expiresAt === 'number' && item.expiresAt <= now)) return undefined;
    if (item.idleExpiry === true && typeof item.expiresAt === 'number') await this.keepClient(id, item.expiresAt, now);
    const payload = JSON.parse(item.payload as string) as AdapterPayload;
    // Added only when set: the library hashes a client's whole payload to cache it.
    return typeof item.consumed === 'number' ? { ...payload, consumed: item.consumed } : payload;
  }

  /**
   * Pushes an in-use client's expiry forward, at most about once a day: the write is skipped until
   * the fresh window is a day ahead of the stored one, and the condition lets only one of several
   * concurrent finds write. It never resurrects a client deleted meanwhile.
   */
  private async keepClient(id: string, expiresAt: number, now: number): Promise<void> {
    const fresh = now + this.clientIdleSeconds;
    if (fresh - expiresAt <= DAY_SECONDS) return;
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: this.key(id),
          UpdateExpression: 'SET expiresAt = :fresh',
          ConditionExpression: 'attribute_exists(pk) AND expiresAt < :stale',
          ExpressionAttributeValues: { ':fresh': fresh, ':stale': fresh - DAY_SECONDS },
        }),
      );
    } catch {
      // The client was found and is valid now; a missed extension is retried by the next find.
    }
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    // The index is eventually consistent: it may still list a session destroyed (or rotated to a
    // new id) a moment ago. It only names candidates; each is read again, consistently.
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: WORKSPACE_TABLE_KEYS.gsi2.indexName,
        KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk = :model',
        ExpressionAttributeValues: { ':pk': uidGsiPk(uid), ':model': this.model },
        ProjectionExpression: 'pk',
      }),
    );
    const prefix = oauthPk(this.model, '');
    for (const item of out.Items ?? []) {
      const found = await this.find((item.pk as string).slice(prefix.length));
      if (found) return found;
    }
    return undefined;
  }

  /** Only the device flow looks codes up by user code, and it is not enabled. */
  async findByUserCode(_userCode: string): Promise<AdapterPayload | undefined> {
    return undefined;
  }

  async consume(id: string): Promise<void> {
    // A code or refresh token is spent once, atomically: of two requests redeeming the same one at
    // the same moment only one passes. The library's own "already consumed?" check reads before
    // this write, so without the condition both could.
    const singleUse = SINGLE_USE_MODELS.has(this.model);
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: this.key(id),
          // CONSUMED is a reserved word in expressions.
          UpdateExpression: 'SET #consumed = :now',
          ConditionExpression: singleUse ? 'attribute_exists(pk) AND attribute_not_exists(#consumed)' : 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#consumed': 'consumed' },
          ExpressionAttributeValues: { ':now': this.nowSeconds() },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // The library consumes what it has just found; gone since means revoked meanwhile, and the
      // code or token must not be honoured as if consumption had been recorded. Spent by a
      // concurrent request: a replay, answered as the library answers a sequential one — the
      // whole grant is revoked and the request refused.
      const grantId = await this.grantIdOf(id);
      if (singleUse && grantId) await revokeGrant(this.db, this.table, grantId);
      throw new errors.InvalidGrant(`${this.model === 'AuthorizationCode' ? 'authorization code' : 'refresh token'} already consumed`);
    }
  }

  private async grantIdOf(id: string): Promise<string | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: this.key(id), ConsistentRead: true }));
    const payload = typeof out.Item?.payload === 'string' ? (JSON.parse(out.Item.payload) as { grantId?: unknown }) : undefined;
    return typeof payload?.grantId === 'string' ? payload.grantId : undefined;
  }

  async destroy(id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: this.key(id) }));
  }

  /**
   * Deletes this model's items issued under the grant; the library calls it once per token model.
   * A token written in the last moment may not be in the index yet, but every use of a token also
   * loads its Grant, which the revocation deletes too.
   */
  async revokeByGrantId(grantId: string): Promise<void> {
    await batchDelete(this.db, this.table, await keysOfGrant(this.db, this.table, grantId, this.model));
  }
}
