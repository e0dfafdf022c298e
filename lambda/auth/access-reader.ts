import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent, fromItem, type ItemKey } from '../platform/dynamodb.js';
import type { MemberRef } from '../workspace/directory-store.js';
import { TOKEN_SK, WORKSPACE_SK, memberSk, tokenPk, wsPk } from '../workspace/keys.js';
import type { Member, Workspace } from '../workspace/model.js';
import type { PersonalTokenRecord } from './personal-tokens.js';

/** What one credential read returns: whichever of the asked-for items exist. */
export interface AccessItems {
  /** The token record found under the first hash that has one (hashes are tried current key first). */
  readonly token?: PersonalTokenRecord;
  readonly member?: Member;
  readonly workspace?: Workspace;
}

/**
 * The reads of the credential check (DESIGN.md §4: at most one round trip on a warm instance). A
 * token's record, its member and the member's workspace come back from one strongly consistent
 * BatchGetItem, so the user's and workspace's status are fresh without a second request.
 */
export interface AccessReader {
  read(query: { readonly tokenHashes?: readonly string[]; readonly member?: MemberRef }): Promise<AccessItems>;
}

export class DynamoAccessReader implements AccessReader {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async read(query: { readonly tokenHashes?: readonly string[]; readonly member?: MemberRef }): Promise<AccessItems> {
    const tokenKeys = (query.tokenHashes ?? []).map((h): ItemKey => ({ pk: tokenPk(h), sk: TOKEN_SK }));
    const ref = query.member;
    const keys = [...tokenKeys, ...(ref ? [{ pk: wsPk(ref.workspaceId), sk: memberSk(ref.userId) }, { pk: wsPk(ref.workspaceId), sk: WORKSPACE_SK }] : [])];
    if (keys.length === 0) return {};
    const items = await batchGetConsistent(this.db, this.table, keys);
    const find = (key: ItemKey) => items.find((i) => i.pk === key.pk && i.sk === key.sk);
    // BatchGetItem answers in no particular order: the current key's hash wins over the previous one's.
    const token = tokenKeys.map(find).find((i) => i !== undefined);
    const member = ref ? find({ pk: wsPk(ref.workspaceId), sk: memberSk(ref.userId) }) : undefined;
    const workspace = ref ? find({ pk: wsPk(ref.workspaceId), sk: WORKSPACE_SK }) : undefined;
    return {
      ...(token ? { token: fromItem<PersonalTokenRecord>(token) } : {}),
      ...(member ? { member: fromItem<Member>(member) } : {}),
      ...(workspace ? { workspace: fromItem<Workspace>(workspace) } : {}),
    };
  }
}
