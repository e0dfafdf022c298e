import type { PersonalTokenRecord } from '../lambda/auth/personal-tokens.js';
import { ToolRefusal } from '../lambda/errors.js';
import { doorSource } from '../lambda/workspace/activity/records.js';
import { mintToken, revokeToken } from '../lambda/workspace/membership/credentials.js';
import { OPERATOR } from '../lambda/workspace/membership/rules.js';
import { type Command, emailOf, expiryOf, memberByEmail, required, scopesOf, workspaceOf } from './args.js';
import { CliError, usage } from './errors.js';

/** Personal access tokens: minted (the secret shown once), listed, revoked. */

const tokenStatus = (t: PersonalTokenRecord, now: Date): string =>
  t.revokedAt ? `revoked ${t.revokedAt}` : t.expiresAt !== undefined && t.expiresAt * 1000 <= now.getTime() ? 'expired' : 'active';

const tokenCreate: Command = {
  options: ['email', 'scopes', 'expires-in', 'label'],
  async run(o, target, out, now) {
    const email = emailOf(o.email);
    const scopes = scopesOf(o.scopes);
    const expiresAt = expiryOf(o['expires-in'], now);
    const member = await memberByEmail(target, email);
    let minted: Awaited<ReturnType<typeof mintToken>>;
    try {
      minted = await mintToken(target, OPERATOR, doorSource('admin CLI', OPERATOR, 'token create', now), member, {
        label: o.label?.trim() || `admin cli ${now.toISOString().slice(0, 10)}`,
        scopes,
        expiresAt,
      });
    } catch (err) {
      if (err instanceof ToolRefusal) throw new CliError(`--${err.message}`);
      throw err;
    }
    const { token: record, secret } = minted;
    out.stderr(
      `Token ${record.tokenId} for ${email}, scopes ${scopes.join(' ')}, ` +
        `${expiresAt === undefined ? 'never expires' : `expires ${new Date(expiresAt * 1000).toISOString()}`}. ` +
        'The secret below is shown once and stored nowhere:',
    );
    out.stdout(secret);
  },
};

const tokenList: Command = {
  options: ['email', 'workspace'],
  async run(o, target, out, now) {
    const member = o.email !== undefined ? await memberByEmail(target, emailOf(o.email)) : undefined;
    const workspaceId = member?.workspaceId ?? workspaceOf(o.workspace, target);
    const [tokens, members] = await Promise.all([target.tokens.list(workspaceId), target.directory.listMembers(workspaceId)]);
    const emails = new Map(members.map((m) => [m.userId, m.email]));
    const shown = tokens.filter((t) => !member || t.userId === member.userId).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    if (!shown.length) out.stderr(`No tokens in ${workspaceId}${member ? ` for ${member.email}` : ''}.`);
    for (const t of shown) {
      const expires = t.expiresAt === undefined ? 'never' : new Date(t.expiresAt * 1000).toISOString();
      out.stdout(
        [
          t.tokenId,
          emails.get(t.userId) ?? t.userId,
          t.scopes.join(' ') || '-',
          `expires ${expires}`,
          tokenStatus(t, now),
          JSON.stringify(t.label),
        ].join('\t'),
      );
    }
  },
};

const tokenRevoke: Command = {
  options: ['id', 'workspace'],
  async run(o, target, out, now) {
    const id = required(o.id, 'id');
    if (!/^tok_[A-Za-z0-9]+$/.test(id)) throw usage(`--id: "${id}" is not a token id (tok_…, see token list)`);
    const workspaceId = workspaceOf(o.workspace, target);
    const token = (await target.tokens.list(workspaceId)).find((t) => t.tokenId === id);
    if (!token) throw new CliError(`--id: no token ${id} in workspace ${workspaceId}`);
    const owner = await target.directory.getMember(workspaceId, token.userId);
    const revoked = await revokeToken(target, OPERATOR, doorSource('admin CLI', OPERATOR, 'token revoke', now), token, owner);
    out.stdout(revoked.record ? `Revoked ${id}; it is refused from the next request on.` : `${id} was revoked already.`);
  },
};

export const TOKEN_COMMANDS: Readonly<Record<string, Command>> = {
  'token create': tokenCreate,
  'token list': tokenList,
  'token revoke': tokenRevoke,
};
