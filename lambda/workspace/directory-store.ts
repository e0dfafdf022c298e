import { randomUUID } from 'node:crypto';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand, PutCommand, paginateQuery, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictRefusal, NotFoundRefusal } from '../errors.js';
import { fromItem, isConditionFailure } from '../platform/dynamodb.js';
import { EMAIL_SK, emailPk, MEMBER_PREFIX, memberSk, OWNERS_LOCK_SK, WORKSPACE_SK, wsPk } from '../platform/item-keys.js';
import type { Member, MemberRef, Role, Status, Workspace } from '../vocabulary.js';
import { conditionally } from './item-support.js';

/** Workspaces, their members and the e-mail index that maps an identity to a member. */
export interface DirectoryStore {
  getWorkspace(workspaceId: string): Promise<Workspace | undefined>;
  getMember(workspaceId: string, userId: string): Promise<Member | undefined>;
  findMemberByEmail(email: string): Promise<Member | undefined>;
  /** Which member an e-mail belongs to, without reading the member (the gate reads it with the workspace). */
  findMemberRefByEmail(email: string): Promise<MemberRef | undefined>;
  listMembers(workspaceId: string): Promise<Member[]>;
  /** Creates the workspace unless it exists; returns false when it already did. */
  createWorkspace(ws: Workspace): Promise<boolean>;
  /** Creates the member and claims its e-mail; returns false when the e-mail is taken. */
  createMember(member: Member): Promise<boolean>;
  setWorkspaceStatus(workspaceId: string, status: Status): Promise<boolean>;
  setMemberStatus(workspaceId: string, userId: string, status: Status): Promise<boolean>;
  /**
   * Adds a member by e-mail. A claim left behind by a removed member of the same workspace is
   * cleared first, so a removed person can be invited again (under a new user id).
   */
  inviteMember(member: Member): Promise<'created' | 'email_taken'>;
  /** Changes the role only if it is still `expectedRole` (ConflictRefusal / NotFoundRefusal otherwise). */
  setMemberRole(workspaceId: string, userId: string, expectedRole: Role, role: Role): Promise<Member>;
  /** Deletes the member (if still `expectedRole`), then frees its e-mail. */
  removeMember(workspaceId: string, userId: string, expectedRole: Role): Promise<void>;
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

export class DynamoDirectoryStore implements DirectoryStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** Announces a member or project write, so cached directory snapshots are read again. */
    private readonly changed: (workspaceId: string) => Promise<void> = async () => {},
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

  async createWorkspace(ws: Workspace): Promise<boolean> {
    return this.putIfAbsent({ pk: wsPk(ws.workspaceId), sk: WORKSPACE_SK, ...ws });
  }

  async createMember(member: Member): Promise<boolean> {
    // The e-mail claim goes first: it is the uniqueness guard. Without transactions (dynalite has
    // none), a member item is only written once its e-mail is ours, so no two members share one.
    const claimed = await this.putIfAbsent({
      pk: emailPk(member.email),
      sk: EMAIL_SK,
      workspaceId: member.workspaceId,
      userId: member.userId,
    });
    if (!claimed) {
      const existing = await this.findMemberByEmail(member.email);
      if (existing) return false;
      // A claim left by an interrupted create of this same member: finish it.
      const ref = await this.db.send(new GetCommand({ TableName: this.table, Key: { pk: emailPk(member.email), sk: EMAIL_SK } }));
      if (ref.Item?.userId !== member.userId) return false;
    }
    try {
      await this.putIfAbsent({ pk: wsPk(member.workspaceId), sk: memberSk(member.userId), ...member, email: member.email.toLowerCase() });
    } catch (err) {
      // Give the claim back (only if it is still this member's), so a retry is not refused forever.
      if (claimed) {
        await this.db
          .send(
            new DeleteCommand({
              TableName: this.table,
              Key: { pk: emailPk(member.email), sk: EMAIL_SK },
              ConditionExpression: 'userId = :u',
              ExpressionAttributeValues: { ':u': member.userId },
            }),
          )
          .catch(() => undefined);
      }
      throw err;
    }
    await this.changed(member.workspaceId);
    return claimed;
  }

  async setWorkspaceStatus(workspaceId: string, status: Status): Promise<boolean> {
    return this.setStatus({ pk: wsPk(workspaceId), sk: WORKSPACE_SK }, status);
  }

  async setMemberStatus(workspaceId: string, userId: string, status: Status): Promise<boolean> {
    const done = await this.setStatus({ pk: wsPk(workspaceId), sk: memberSk(userId) }, status);
    if (done) await this.changed(workspaceId);
    return done;
  }

  async inviteMember(member: Member): Promise<'created' | 'email_taken'> {
    if (await this.createMember(member)) return 'created';
    const claimKey = { pk: emailPk(member.email), sk: EMAIL_SK };
    const claim = (await this.db.send(new GetCommand({ TableName: this.table, Key: claimKey, ConsistentRead: true }))).Item as
      | { workspaceId: string; userId: string }
      | undefined;
    if (!claim || claim.workspaceId !== member.workspaceId || (await this.getMember(claim.workspaceId, claim.userId))) return 'email_taken';
    // The claim of a member whose removal stopped half way: nobody holds it, so it is released.
    const released = await conditionally(
      async () => {
        await this.db.send(
          new DeleteCommand({
            TableName: this.table,
            Key: claimKey,
            ConditionExpression: 'userId = :u',
            ExpressionAttributeValues: { ':u': claim.userId },
          }),
        );
        return true;
      },
      async () => false,
    );
    return released && (await this.createMember(member)) ? 'created' : 'email_taken';
  }

  async setMemberRole(workspaceId: string, userId: string, expectedRole: Role, role: Role): Promise<Member> {
    const out = await conditionally(
      () =>
        this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: wsPk(workspaceId), sk: memberSk(userId) },
            UpdateExpression: 'SET #r = :r',
            ConditionExpression: 'attribute_exists(pk) AND #r = :expected',
            ExpressionAttributeNames: { '#r': 'role' },
            ExpressionAttributeValues: { ':r': role, ':expected': expectedRole },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      () => this.memberRefusal(workspaceId, userId, expectedRole),
    );
    await this.changed(workspaceId);
    return fromItem<Member>(out.Attributes!);
  }

  async removeMember(workspaceId: string, userId: string, expectedRole: Role): Promise<void> {
    const out = await conditionally(
      () =>
        this.db.send(
          new DeleteCommand({
            TableName: this.table,
            Key: { pk: wsPk(workspaceId), sk: memberSk(userId) },
            ConditionExpression: 'attribute_exists(pk) AND #r = :expected',
            ExpressionAttributeNames: { '#r': 'role' },
            ExpressionAttributeValues: { ':expected': expectedRole },
            ReturnValues: 'ALL_OLD',
          }),
        ),
      () => this.memberRefusal(workspaceId, userId, expectedRole),
    );
    await this.changed(workspaceId);
    const email = (out.Attributes as Member | undefined)?.email;
    if (!email) return;
    // Only this member's claim is released; if this step fails, inviteMember releases it later.
    await conditionally(
      () =>
        this.db.send(
          new DeleteCommand({
            TableName: this.table,
            Key: { pk: emailPk(email), sk: EMAIL_SK },
            ConditionExpression: 'userId = :u',
            ExpressionAttributeValues: { ':u': userId },
          }),
        ),
      async () => undefined,
    );
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
          throw new ConflictRefusal("Conflict: another change to this workspace's owners is in progress; try again in a few seconds.");
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

  private async memberRefusal(workspaceId: string, userId: string, expectedRole: Role): Promise<never> {
    const current = await this.getMember(workspaceId, userId);
    if (!current) throw new NotFoundRefusal(`Member ${userId} was not found in this workspace`);
    throw new ConflictRefusal(
      `Conflict: member ${userId} is now ${current.role}, no longer ${expectedRole}; someone changed it. Read members_list and retry.`,
    );
  }

  private async setStatus(key: { pk: string; sk: string }, status: Status): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: 'SET #s = :s',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':s': status },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  private async putIfAbsent(item: Record<string, unknown>): Promise<boolean> {
    try {
      await this.db.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }
}
