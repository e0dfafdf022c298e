import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { type DynamoDBDocumentClient, GetCommand, paginateQuery, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { fromItem } from '../platform/dynamodb.js';
import { TOKEN_SK, tokenPk, tokensOfWorkspaceGsiPk } from '../platform/item-keys.js';
import type { KeyRing } from '../platform/key-ring.js';
import { commitWrites, type WriteOp, writtenUnlessRefused } from '../platform/transact.js';
import type { Scope } from '../vocabulary.js';

export const PAT_PREFIX = 'doers_pat_';

/** What is stored for a personal access token: never the secret, only its keyed hash. */
export interface PersonalTokenRecord {
  readonly tokenId: string;
  readonly workspaceId: string;
  readonly userId: string;
  readonly scopes: readonly Scope[];
  readonly label: string;
  readonly createdAt: string;
  /** Epoch seconds; also the table's TTL attribute, so expired tokens eventually disappear. */
  readonly expiresAt?: number;
  readonly revokedAt?: string;
  /** The day (ISO timestamp of the first call that day) it was last used; see access-reader.ts `markUsed`. */
  readonly lastUsedAt?: string;
}

export const generateTokenSecret = (): string => `${PAT_PREFIX}${randomBytes(32).toString('base64url')}`;

/** A token's id (`tok_` and 16 hex digits): what lists and revocations name it by, never its secret. */
export const newTokenId = (): string => `tok_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

export const hashToken = (key: Uint8Array, secret: string): string => createHmac('sha256', key).update(secret).digest('base64url');

/**
 * A secret's hash under every key of the ring, current first: after a rotation a token may be
 * hashed under the previous key, so every key is tried at once.
 */
export const tokenHashes = (ring: KeyRing, secret: string): string[] => ring.all.map((k) => hashToken(k['token-hash'], secret));

export interface TokenStore {
  /** Looks a presented secret up under every key of the ring (current first). */
  find(secret: string): Promise<PersonalTokenRecord | undefined>;
  list(workspaceId: string): Promise<PersonalTokenRecord[]>;
}

/**
 * A token's writes: the credentials writer's alone (workspace/membership/credentials.ts, through store/writes.ts).
 */
export interface TokenWrites {
  /**
   * Registers a secret, with `extra` (its activity record) in the same write; idempotent for the same
   * secret (the local dev token on every start), which then writes nothing.
   */
  register(
    secret: string,
    record: Omit<PersonalTokenRecord, 'tokenId'> & { tokenId?: string },
    extra?: readonly WriteOp[],
  ): Promise<PersonalTokenRecord>;
  /**
   * Revokes a token of the workspace with `extra` in the same write: `revoked` once this call
   * revoked it, `already` when it was revoked before (nothing, not even `extra`, is written),
   * `missing` when there is no such token.
   */
  revoke(workspaceId: string, tokenId: string, at: string, extra?: readonly WriteOp[]): Promise<'revoked' | 'already' | 'missing'>;
}

export class DynamoTokenStore implements TokenStore, TokenWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly keys: () => Promise<KeyRing>,
  ) {}

  async find(secret: string): Promise<PersonalTokenRecord | undefined> {
    const found = await Promise.all(
      tokenHashes(await this.keys(), secret).map((hash) =>
        this.db.send(new GetCommand({ TableName: this.table, Key: { pk: tokenPk(hash), sk: TOKEN_SK }, ConsistentRead: true })),
      ),
    );
    const item = found.find((out) => out.Item)?.Item;
    return item ? toRecord(item) : undefined;
  }

  async register(
    secret: string,
    record: Omit<PersonalTokenRecord, 'tokenId'> & { tokenId?: string },
    extra: readonly WriteOp[] = [],
  ): Promise<PersonalTokenRecord> {
    const ring = await this.keys();
    const full: PersonalTokenRecord = { ...record, tokenId: record.tokenId ?? newTokenId() };
    const written = await writtenUnlessRefused((known) =>
      commitWrites(this.db, [
        {
          item: {
            Put: {
              TableName: this.table,
              Item: {
                pk: tokenPk(hashToken(ring.current['token-hash'], secret)),
                sk: TOKEN_SK,
                gsi1pk: tokensOfWorkspaceGsiPk(full.workspaceId),
                gsi1sk: full.tokenId,
                ...full,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          refused: known,
        },
        ...extra,
      ]),
    );
    if (written) return full;
    const existing = await this.find(secret);
    if (!existing) throw new Error('a token secret collided with another token');
    return existing;
  }

  async list(workspaceId: string): Promise<PersonalTokenRecord[]> {
    const out: PersonalTokenRecord[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': tokensOfWorkspaceGsiPk(workspaceId) },
      },
    );
    for await (const page of pages) out.push(...(page.Items ?? []).map(toRecord));
    return out;
  }

  async revoke(
    workspaceId: string,
    tokenId: string,
    at: string,
    extra: readonly WriteOp[] = [],
  ): Promise<'revoked' | 'already' | 'missing'> {
    const page = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :id',
        ExpressionAttributeValues: { ':pk': tokensOfWorkspaceGsiPk(workspaceId), ':id': tokenId },
      }),
    );
    const item = page.Items?.[0];
    if (!item) return 'missing';
    if (item.revokedAt) return 'already';
    const revokedMeanwhile = new Error('revoked');
    const gone = new Error('gone');
    try {
      await commitWrites(this.db, [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: { pk: item.pk, sk: item.sk },
              UpdateExpression: 'SET revokedAt = :at',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
              ExpressionAttributeValues: { ':at': at },
            },
          },
          // Revoked by someone else meanwhile: it is revoked, and their record says so.
          refused: (current) => {
            throw current?.revokedAt ? revokedMeanwhile : gone;
          },
        },
        ...extra,
      ]);
    } catch (err) {
      if (err === gone) return 'missing';
      if (err === revokedMeanwhile) return 'already';
      throw err;
    }
    return 'revoked';
  }
}

const toRecord = (item: Record<string, unknown>): PersonalTokenRecord => fromItem<PersonalTokenRecord>(item);
