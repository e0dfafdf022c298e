/**
 * Item keys of the authorization server's records in the single workspace table. Every oidc-provider
 * model instance is one item under its own `OAUTH#` partition; the two indexes answer the lookups the
 * library and the account pages make by something other than the id.
 */
export const oauthPk = (model: string, id: string): string => `OAUTH#${model}#${id}`;
export const OAUTH_SK = 'OAUTH';
/** A grant's item: what the MCP function reads with the member, and what a revocation deletes last. */
export const grantKey = (grantId: string): { pk: string; sk: string } => ({ pk: oauthPk('Grant', grantId), sk: OAUTH_SK });

/** gsi1 partition holding every token issued under one grant (revocation by grant). */
export const tokensOfGrantGsiPk = (grantId: string): string => `OAUTH#GRANT#${grantId}`;
/** Model first, so one model's tokens of a grant are a key range: oidc-provider revokes model by model. */
export const tokenOfGrantGsiSk = (model: string, id: string): string => `${model}#${id}`;
export const modelPrefix = (model: string): string => `${model}#`;

/** gsi2 partition of the items carrying a `uid` (Session, Interaction); the sort key is the model. */
export const uidGsiPk = (uid: string): string => `OAUTH#UID#${uid}`;

/** gsi1 partition holding the grants of one workspace, one person's grants being a key range. */
export const grantsOfWorkspaceGsiPk = (workspaceId: string): string => `WS#${workspaceId}#GRANTS`;
/**
 * The user id is encoded so that one person's prefix cannot also match another's: with ids `a` and
 * `a#b`, a raw `a#` prefix would list both.
 */
export const grantsOfUserPrefix = (userId: string): string => `${encodeURIComponent(userId)}#`;
export const grantOfUserGsiSk = (userId: string, grantId: string): string => `${grantsOfUserPrefix(userId)}${grantId}`;

export interface MemberRef {
  readonly workspaceId: string;
  readonly userId: string;
}

/**
 * oidc-provider knows an account by one string; ours is a member of a workspace. Each part is
 * encoded, so a `/` inside an id cannot move the boundary between them.
 */
export const accountIdOf = ({ workspaceId, userId }: MemberRef): string =>
  `${encodeURIComponent(workspaceId)}/${encodeURIComponent(userId)}`;

/**
 * The member an accountId names, or undefined when it is not one `accountIdOf` could have made
 * (only the canonical encoding is accepted, so one member never has two account ids).
 */
export const memberRefOfAccountId = (accountId: string): MemberRef | undefined => {
  const parts = accountId.split('/');
  if (parts.length !== 2) return undefined;
  const [ws, user] = parts as [string, string];
  if (!ws || !user) return undefined;
  let ref: MemberRef;
  try {
    ref = { workspaceId: decodeURIComponent(ws), userId: decodeURIComponent(user) };
  } catch {
    return undefined;
  }
  return accountIdOf(ref) === accountId ? ref : undefined;
};
