import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent, fromItem, type ItemKey } from '../platform/dynamodb.js';
import { grantKey, memberSk, OAUTH_SK, oauthPk, TOKEN_SK, tokenPk, WORKSPACE_SK, wsPk } from '../platform/item-keys.js';
import type { Member, MemberRef, Workspace } from '../vocabulary.js';
import type { PersonalTokenRecord } from './personal-tokens.js';

/** What the MCP function needs of a built-in authorization server's grant: that it still stands, and whose it is. */
export interface GrantRecord {
  readonly accountId: string;
  readonly clientId: string;
  /** When the person consented (epoch seconds). */
  readonly issuedAt?: number;
  /** Epoch seconds. */
  readonly expiresAt?: number;
  readonly lastUsedAt?: string;
}

/** What one credential read returns: whichever of the asked-for items exist. */
export interface AccessItems {
  /** The token record found under the first hash that has one (hashes are tried current key first). */
  readonly token?: PersonalTokenRecord;
  /** Where that record is stored (for `markUsed`). */
  readonly tokenKey?: ItemKey;
  readonly member?: Member;
  readonly workspace?: Workspace;
  /** The grant an access token of the built-in authorization server was issued under. */
  readonly grant?: GrantRecord;
  /** The name its client registered with (Dynamic Client Registration), when it has one. */
  readonly clientName?: string;
}

export interface AccessQuery {
  readonly tokenHashes?: readonly string[];
  readonly member?: MemberRef;
  readonly grantId?: string;
  /** The client a built-in access token names: its registration is read with the grant, for its name. */
  readonly clientId?: string;
}

/**
 * The reads of the credential check (docs/auth.md: at most one round trip on a warm instance). A
 * token's record, its member and the member's workspace come back from one strongly consistent
 * BatchGetItem, so the user's and workspace's status are fresh without a second request.
 */
export interface AccessReader {
  read(query: AccessQuery): Promise<AccessItems>;
  /**
   * Records that a token or grant was used today. People see "last used" on the account page; a
   * write per call would double what a call costs, so the stamp moves at most once a day: the
   * verifier calls this only when the stamp it just read is from an earlier day, and the condition
   * keeps concurrent first calls of the day to one write.
   */
  markUsed(key: ItemKey, now: Date): Promise<void>;
}

/** Whether a last-used stamp read with the credential is from before today (UTC). */
export const usedBeforeToday = (lastUsedAt: string | undefined, now: Date): boolean =>
  lastUsedAt === undefined || lastUsedAt.slice(0, 10) < now.toISOString().slice(0, 10);

export class DynamoAccessReader implements AccessReader {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async read(query: AccessQuery): Promise<AccessItems> {
    const tokenKeys = (query.tokenHashes ?? []).map((h): ItemKey => ({ pk: tokenPk(h), sk: TOKEN_SK }));
    const ref = query.member;
    const grantItemKey: ItemKey | undefined = query.grantId ? grantKey(query.grantId) : undefined;
    const clientItemKey: ItemKey | undefined = query.clientId ? { pk: oauthPk('Client', query.clientId), sk: OAUTH_SK } : undefined;
    const keys = [
      ...tokenKeys,
      ...(ref
        ? [
            { pk: wsPk(ref.workspaceId), sk: memberSk(ref.userId) },
            { pk: wsPk(ref.workspaceId), sk: WORKSPACE_SK },
          ]
        : []),
      ...(grantItemKey ? [grantItemKey] : []),
      ...(clientItemKey ? [clientItemKey] : []),
    ];
    if (keys.length === 0) return {};
    const items = await batchGetConsistent(this.db, this.table, keys);
    const find = (key: ItemKey) => items.find((i) => i.pk === key.pk && i.sk === key.sk);
    // BatchGetItem answers in no particular order: the current key's hash wins over the previous one's.
    const tokenKey = tokenKeys.find((k) => find(k) !== undefined);
    const token = tokenKey ? find(tokenKey) : undefined;
    const member = ref ? find({ pk: wsPk(ref.workspaceId), sk: memberSk(ref.userId) }) : undefined;
    const workspace = ref ? find({ pk: wsPk(ref.workspaceId), sk: WORKSPACE_SK }) : undefined;
    const grant = grantItemKey ? find(grantItemKey) : undefined;
    const client = clientItemKey ? find(clientItemKey) : undefined;
    const clientName = client ? clientNameOf(client) : undefined;
    return {
      ...(clientName ? { clientName } : {}),
      ...(grant ? { grant: grantRecordOf(grant) } : {}),
      ...(token && tokenKey ? { token: fromItem<PersonalTokenRecord>(token), tokenKey } : {}),
      ...(member ? { member: fromItem<Member>(member) } : {}),
      ...(workspace ? { workspace: fromItem<Workspace>(workspace) } : {}),
    };
  }

  async markUsed(key: ItemKey, now: Date): Promise<void> {
    const at = now.toISOString();
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: 'SET lastUsedAt = :at',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(lastUsedAt) OR lastUsedAt < :today)',
          ExpressionAttributeValues: { ':at': at, ':today': at.slice(0, 10) },
        }),
      );
    } catch {
      // Another call stamped it first, it was just revoked, or DynamoDB is busy: a stamp missed is
      // made by the next call, and a valid call is never refused for want of it.
    }
  }
}

const clientNameOf = (item: Record<string, unknown>): string | undefined => {
  try {
    const name = (JSON.parse(String(item.payload)) as { client_name?: unknown }).client_name;
    return typeof name === 'string' && name.trim() ? name.trim() : undefined;
  } catch {
    return undefined;
  }
};

const grantRecordOf = (item: Record<string, unknown>): GrantRecord => {
  // oidc-provider's payload is kept as JSON text (see oauth/dynamodb-adapter.ts).
  const payload = JSON.parse(String(item.payload)) as { accountId?: unknown; clientId?: unknown; iat?: unknown };
  return {
    accountId: typeof payload.accountId === 'string' ? payload.accountId : '',
    clientId: typeof payload.clientId === 'string' ? payload.clientId : '',
    ...(typeof payload.iat === 'number' ? { issuedAt: payload.iat } : {}),
    ...(typeof item.expiresAt === 'number' ? { expiresAt: item.expiresAt } : {}),
    ...(typeof item.lastUsedAt === 'string' ? { lastUsedAt: item.lastUsedAt } : {}),
  };
};
