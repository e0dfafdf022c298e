import { randomUUID } from 'node:crypto';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { fromItem, isConditionFailure } from '../../platform/dynamodb.js';
import { EMAIL_SK, emailPk, MEMBER_PREFIX, memberSk, OWNERS_LOCK_SK, WORKSPACE_SK, wsPk } from '../../platform/item-keys.js';
import { commitWrites, type WriteOp, writtenUnlessRefused } from '../../platform/transact.js';
import { CURRENT_LAYOUT, type Member, type MemberRef, type Role, type Status, type Workspace } from '../../vocabulary.js';
import { busyTarget, memberMoved, memberNotFound } from '../model/refusals.js';
import { directoryChangeOp } from './names.js';

/** Workspaces, their members and the e-mail index that maps an identity to a member. */
export interface DirectoryStore {
  getWorkspace(workspaceId: string): Promise<Workspace | undefined>;
  getMember(workspaceId: string, userId: string): Promise<Member | undefined>;
  findMemberByEmail(email: string): Promise<Member | undefined>;
  /** Which member an e-mail belongs to, without reading the member (the gate reads it with the workspace). */
  findMemberRefByEmail(email: string): Promise<MemberRef | undefined>;
  listMembers(workspaceId: string): Promise<Member[]>;
}

/**
 * The directory's writes: the member writer's and the workspace writer's alone (workspace/membership/,
 * through store/writes.ts). Each member write is one all-or-nothing write of the member, its e-mail
 * claim where it changes, the directory's version bump (every instance's names snapshot reads
 * again) and `extra` (the change's activity record).
 */
export interface DirectoryWrites {
  /** Creates the workspace unless it exists; returns false when it already did. */
  createWorkspace(ws: Workspace, extra?: readonly WriteOp[]): Promise<boolean>;
  /**
   * Creates the member and claims its e-mail; false when the e-mail (or the user id) is taken.
   * `lead`: ops that go first in the write (a call's claim, whose refusal must be the one told).
   */
  createMember(member: Member, extra?: readonly WriteOp[], staleClaimOf?: string, lead?: readonly WriteOp[]): Promise<boolean>;
  /** False when the workspace is gone. */
  setWorkspaceKey(workspaceId: string, key: string, pastKeys: readonly string[], extra?: readonly WriteOp[]): Promise<boolean>;
  setWorkspaceStatus(workspaceId: string, status: Status, extra?: readonly WriteOp[]): Promise<boolean>;
  /** False when the member is gone. `credentialsFrom` (enabling again): their credentials from before are dead. */
  setMemberStatus(
    workspaceId: string,
    userId: string,
    status: Status,
    extra?: readonly WriteOp[],
    credentialsFrom?: string,
  ): Promise<boolean>;
  /**
   * Adds a member by e-mail. A claim left behind by a removed member of the same workspace (from
   * before removals released it in the same write) is taken over, so that person can be invited again.
   */
  inviteMember(member: Member, extra?: readonly WriteOp[], lead?: readonly WriteOp[]): Promise<'created' | 'email_taken'>;
  /** Changes the role only if it is still `expectedRole` (ConflictRefusal / NotFoundRefusal otherwise). */
  setMemberRole(workspaceId: string, userId: string, expectedRole: Role, role: Role, extra?: readonly WriteOp[]): Promise<void>;
  /** A member's own settings (time zone, how they are told); refused as not found when the member is gone. */
  setMemberSettings(
    workspaceId: string,
    userId: string,
    settings: Pick<Member, 'timeZone' | 'notify'>,
    extra?: readonly WriteOp[],
  ): Promise<void>;
  /** Deletes the member (if still `expectedRole`) and frees its e-mail. */
  removeMember(member: Member, expectedRole: Role, extra?: readonly WriteOp[]): Promise<void>;
  /**
   * Runs `fn` while holding the workspace's owners lock: every change that could take away an
   * active owner (demoting, removing or disabling one) checks "another active owner remains" and
   * writes under it, so two such changes cannot both pass the check against the same owners.
   */
  withOwnersLock<T>(workspaceId: string, fn: () => Promise<T>): Promise<T>;
}

/** Longest an owner change holds the lock: a few reads and one write. */
const OWNERS_LOCK_MS = 5_000;
/** About 2.5 s of waiting for a busy lock before the change is refused (try again). */
const OWNERS_LOCK_ATTEMPTS = 50;

export class DynamoDirectoryStore implements DirectoryStore, DirectoryWrites {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** This instance's names snapshot of a workspace, dropped after a member write (names.ts). */
    private readonly forget: (workspaceId: string) => void = () => {},
  ) {}

  async getWorkspace(workspaceId: string): Promise<Workspace | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK }, ConsistentRead: true }),
    );
    return out.Item ? fromItem<Workspace>(out.Item) : undefined;
  }

  async getMember(workspaceId: string, userId: string): Promise<Member | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: memberSk(userId) }, ConsistentRead: true }),
    );
    return out.Item ? fromItem<Member>(out.Item) : undefined;
  }

  async findMemberRefByEmail(email: string): Promise<MemberRef | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: { pk: emailPk(email), sk: EMAIL_SK }, ConsistentRead: true }),
    );
    const item = out.Item as MemberRef | undefined;
    return item ? { workspaceId: item.workspaceId, userId: item.userId } : undefined;
  }

  async findMemberByEmail(email: string): Promise<Member | undefined> {
    const ref = await this.findMemberRefByEmail(email);
    return ref ? this.getMember(ref.workspaceId, ref.userId) : undefined;
  }

  async listMembers(workspaceId: string): Promise<Member[]> {
    const items: Member[] = [];
    const pages = paginateQuery(
      { client: this.db },
      {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':p': MEMBER_PREFIX },
        // Strongly consistent: the last-owner check reads what was just written.
        ConsistentRead: true,
      },
    );
    for await (const page of pages) for (const item of page.Items ?? []) items.push(fromItem<Member>(item));
    return items;
  }

  async createWorkspace(ws: Workspace, extra: readonly WriteOp[] = []): Promise<boolean> {
    return writtenUnlessRefused((exists) =>
      commitWrites(this.db, [
        {
          item: {
            Put: {
              TableName: this.table,
              // A new workspace starts in the current layout, its history indexed: nothing of it needs migrating.
              Item: { pk: wsPk(ws.workspaceId), sk: WORKSPACE_SK, layout: CURRENT_LAYOUT, activityIndexed: true, ...ws },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          refused: exists,
        },
        ...extra,
      ]),
    );
  }

  async setWorkspaceKey(workspaceId: string, key: string, pastKeys: readonly string[], extra: readonly WriteOp[] = []): Promise<boolean> {
    return writtenUnlessRefused((gone) =>
      commitWrites(this.db, [
        {
          item: {
            Update: {
              TableName: this.table,
              Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
              UpdateExpression: 'SET #k = :k, pastKeys = :past',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#k': 'key' },
              ExpressionAttributeValues: { ':k': key, ':past': pastKeys },
            },
          },
          refused: gone,
        },
        ...extra,
      ]),
    );
  }

  async createMember(
    member: Member,
    extra: readonly WriteOp[] = [],
    staleClaimOf?: string,
    lead: readonly WriteOp[] = [],
  ): Promise<boolean> {
    const email = member.email.toLowerCase();
    return writtenUnlessRefused((taken) =>
      this.write(member.workspaceId, [
        ...lead,
        {
          item: {
            Put: {
              TableName: this.table,
              Item: { pk: emailPk(email), sk: EMAIL_SK, workspaceId: member.workspaceId, userId: member.userId },
              ...(staleClaimOf === undefined
                ? { ConditionExpression: 'attribute_not_exists(pk)' }
                : {
                    ConditionExpression: 'attribute_not_exists(pk) OR userId = :stale',
                    ExpressionAttributeValues: { ':stale': staleClaimOf },
                  }),
            },
          },
          refused: taken,
        },
        {
          item: {
            Put: {
              TableName: this.table,
              Item: { pk: wsPk(member.workspaceId), sk: memberSk(member.userId), ...member, email },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          refused: taken,
        },
        ...extra,
      ]),
    );
  }

  async setWorkspaceStatus(workspaceId: string, status: Status, extra: readonly WriteOp[] = []): Promise<boolean> {
    // The workspace item is read with every credential anyway: no directory version to raise.
    return this.setStatus(workspaceId, { pk: wsPk(workspaceId), sk: WORKSPACE_SK }, status, extra, false);
  }

  async setMemberStatus(
    workspaceId: string,
    userId: string,
    status: Status,
    extra: readonly WriteOp[] = [],
    credentialsFrom?: string,
  ): Promise<boolean> {
    return this.setStatus(workspaceId, { pk: wsPk(workspaceId), sk: memberSk(userId) }, status, extra, true, credentialsFrom);
  }

  async inviteMember(member: Member, extra: readonly WriteOp[] = [], lead: readonly WriteOp[] = []): Promise<'created' | 'email_taken'> {
    if (await this.createMember(member, extra, undefined, lead)) return 'created';
    const claim = (
      await this.db.send(new GetCommand({ TableName: this.table, Key: { pk: emailPk(member.email), sk: EMAIL_SK }, ConsistentRead: true }))
    ).Item as { workspaceId: string; userId: string } | undefined;
    if (!claim || claim.workspaceId !== member.workspaceId || (await this.getMember(claim.workspaceId, claim.userId))) return 'email_taken';
    // The claim of a member whose removal stopped half way (before removals freed it in the same
    // write): nobody holds it, so this invitation takes it over, if it is still that one.
    return (await this.createMember(member, extra, claim.userId, lead)) ? 'created' : 'email_taken';
  }

  async setMemberRole(workspaceId: string, userId: string, expectedRole: Role, role: Role, extra: readonly WriteOp[] = []): Promise<void> {
    await this.write(workspaceId, [
      {
        item: {
          Update: {
            TableName: this.table,
            Key: { pk: wsPk(workspaceId), sk: memberSk(userId) },
            UpdateExpression: 'SET #r = :r',
            ConditionExpression: 'attribute_exists(pk) AND #r = :expected',
            ExpressionAttributeNames: { '#r': 'role' },
            ExpressionAttributeValues: { ':r': role, ':expected': expectedRole },
          },
        },
        refused: (current) => memberRefusal(userId, expectedRole, current),
      },
      ...extra,
    ]);
  }

  async setMemberSettings(
    workspaceId: string,
    userId: string,
    settings: Pick<Member, 'timeZone' | 'notify'>,
    extra: readonly WriteOp[] = [],
  ): Promise<void> {
    await this.write(workspaceId, [
      {
        item: {
          Update: {
            TableName: this.table,
            Key: { pk: wsPk(workspaceId), sk: memberSk(userId) },
            UpdateExpression: settings.notify ? 'SET #z = :z, #n = :n' : 'SET #z = :z REMOVE #n',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#z': 'timeZone', '#n': 'notify' },
            ExpressionAttributeValues: { ':z': settings.timeZone, ...(settings.notify ? { ':n': settings.notify } : {}) },
          },
        },
        refused: () => {
          throw memberNotFound(userId);
        },
      },
      ...extra,
    ]);
  }

  async removeMember(member: Member, expectedRole: Role, extra: readonly WriteOp[] = []): Promise<void> {
    await this.write(member.workspaceId, [
      {
        item: {
          Delete: {
            TableName: this.table,
            Key: { pk: wsPk(member.workspaceId), sk: memberSk(member.userId) },
            ConditionExpression: 'attribute_exists(pk) AND #r = :expected',
            ExpressionAttributeNames: { '#r': 'role' },
            ExpressionAttributeValues: { ':expected': expectedRole },
          },
        },
        refused: (current) => memberRefusal(member.userId, expectedRole, current),
      },
      {
        // Only this member's claim is freed; none there (a legacy half removal) is fine too.
        item: {
          Delete: {
            TableName: this.table,
            Key: { pk: emailPk(member.email), sk: EMAIL_SK },
            ConditionExpression: 'attribute_not_exists(pk) OR userId = :u',
            ExpressionAttributeValues: { ':u': member.userId },
          },
        },
      },
      ...extra,
    ]);
  }

  async withOwnersLock<T>(workspaceId: string, fn: () => Promise<T>): Promise<T> {
    const key = { pk: wsPk(workspaceId), sk: OWNERS_LOCK_SK };
    const lockId = randomUUID();
    for (let attempt = 0; ; attempt++) {
      const now = Date.now();
      try {
        await this.db.send(
          new PutCommand({
            TableName: this.table,
            // A holder that dies (timeout, crash) blocks the owners' changes for OWNERS_LOCK_MS at most.
            Item: { ...key, lockId, lockedUntil: now + OWNERS_LOCK_MS, expiresAt: Math.ceil((now + OWNERS_LOCK_MS) / 1000) + 60 },
            ConditionExpression: 'attribute_not_exists(pk) OR lockedUntil < :now',
            ExpressionAttributeValues: { ':now': now },
          }),
        );
        break;
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
        if (attempt >= OWNERS_LOCK_ATTEMPTS) {
          throw busyTarget("this workspace's owners (another change to them is in progress)");
        }
        await new Promise((resolve) => setTimeout(resolve, 25 + Math.random() * 50));
      }
    }
    try {
      return await fn();
    } finally {
      await this.db
        .send(
          new DeleteCommand({
            TableName: this.table,
            Key: key,
            ConditionExpression: 'lockId = :id',
            ExpressionAttributeValues: { ':id': lockId },
          }),
        )
        .catch(() => undefined); // taken over after expiry, or a fault: it expires by itself
    }
  }

  /** One all-or-nothing write of `ops` with the directory's version bump, then this instance forgets its snapshot. */
  private async write(workspaceId: string, ops: readonly WriteOp[]): Promise<void> {
    await commitWrites(this.db, [...ops, directoryChangeOp(this.table, workspaceId)]);
    this.forget(workspaceId);
  }

  private async setStatus(
    workspaceId: string,
    key: { pk: string; sk: string },
    status: Status,
    extra: readonly WriteOp[],
    announce = true,
    credentialsFrom?: string,
  ): Promise<boolean> {
    const write = (ops: readonly WriteOp[]) => (announce ? this.write(workspaceId, ops) : commitWrites(this.db, ops));
    return writtenUnlessRefused((gone) =>
      write([
        {
          item: {
            Update: {
              TableName: this.table,
              Key: key,
              UpdateExpression: credentialsFrom ? 'SET #s = :s, credentialsFrom = :from' : 'SET #s = :s',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':s': status, ...(credentialsFrom ? { ':from': credentialsFrom } : {}) },
            },
          },
          refused: gone,
        },
        ...extra,
      ]),
    );
  }
}

const memberRefusal = (userId: string, expectedRole: Role, current: Record<string, unknown> | undefined): never => {
  if (!current) throw memberNotFound(userId);
  throw memberMoved(userId, String(current.role), expectedRole);
};
