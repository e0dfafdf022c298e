import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { GrantRecord } from '../lambda/auth/grants.js';
import { OAUTH_SK, oauthPk } from '../lambda/platform/item-keys.js';
import { doorSource } from '../lambda/workspace/activity/records.js';
import { revokeGrant, revokeOrphanGrant } from '../lambda/workspace/membership/credentials.js';
import { OPERATOR } from '../lambda/workspace/membership/rules.js';
import { type Command, emailOf, grantIdOf, memberByEmail, workspaceOf } from './args.js';
import { CliError } from './errors.js';
import type { Target } from './target.js';

/**
 * The apps people connected through the built-in authorization server: listed as an operator
 * recognises them, and revoked (the refresh token at once, access tokens at their next MCP call).
 */

/**
 * A client name is whatever the registrant sent: quoted, with control, format and bidi characters
 * escaped, so it can neither break the one-line-per-grant layout nor disguise itself on a terminal.
 */
const quoted = (text: string): string =>
  JSON.stringify(text).replace(
    /[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** The host of a Client ID Metadata Document client (its client id is the document's https URL). */
const metadataDocumentHost = (clientId: string): string | undefined => {
  if (!clientId.startsWith('https://')) return undefined;
  try {
    return new URL(clientId).host;
  } catch {
    return undefined;
  }
};

/**
 * How `grants` shows a client: a metadata-document client by its (verified) host; a registered one
 * by its id and, while its registration lasts, its `client_name`.
 */
const clientLabel = async (target: Target, clientId: string, now: Date): Promise<string> => {
  const host = metadataDocumentHost(clientId);
  if (host) return host;
  const id = /^[\x21-\x7e]+$/.test(clientId) ? clientId : quoted(clientId);
  const out = await target.db.send(new GetCommand({ TableName: target.table, Key: { pk: oauthPk('Client', clientId), sk: OAUTH_SK } }));
  const item = out.Item;
  if (!item || typeof item.payload !== 'string' || (typeof item.expiresAt === 'number' && item.expiresAt * 1000 <= now.getTime()))
    return id;
  const name = (JSON.parse(item.payload) as { client_name?: unknown }).client_name;
  return typeof name === 'string' && name.trim() ? `${id} ${quoted(name)}` : id;
};

const clientLabels = async (target: Target, grants: readonly GrantRecord[], now: Date): Promise<Map<string, string>> => {
  const ids = [...new Set(grants.map((g) => g.clientId))];
  return new Map(await Promise.all(ids.map(async (id) => [id, await clientLabel(target, id, now)] as const)));
};

const grantsList: Command = {
  options: ['workspace', 'email'],
  async run(o, target, out, now) {
    const member = o.email !== undefined ? await memberByEmail(target, emailOf(o.email)) : undefined;
    const workspaceId = member?.workspaceId ?? workspaceOf(o.workspace, target);
    const [grants, members] = await Promise.all([
      target.grants.list(workspaceId, member?.userId),
      target.directory.listMembers(workspaceId),
    ]);
    const emails = new Map(members.map((m) => [m.userId, m.email]));
    const shown = grants.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    if (!shown.length) out.stderr(`No grants in ${workspaceId}${member ? ` for ${member.email}` : ''}.`);
    const clients = await clientLabels(target, shown, now);
    for (const g of shown) {
      out.stdout(
        [
          g.grantId,
          clients.get(g.clientId)!,
          emails.get(g.userId) ?? g.userId,
          g.scopes.join(' ') || '-',
          `created ${g.createdAt}`,
          `expires ${g.expiresAt ?? 'never'}`,
        ].join('\t'),
      );
    }
  },
};

const grantsRevoke: Command = {
  options: ['grant'],
  async run(o, target, out, now) {
    const id = grantIdOf(o.grant);
    const grant = await target.grants.get(id);
    if (!grant) {
      // A grant no member owns (its account gone) is still deleted: nothing of it may stay usable.
      if (!(await revokeOrphanGrant(target, id))) throw new CliError(`--grant: no grant ${id} in ${target.where}`);
      out.stdout(`Revoked grant ${id}; its refresh token is refused from now on, its access tokens from their next MCP call.`);
      return;
    }
    const app = await clientLabel(target, grant.clientId, now);
    const owner = await target.directory.getMember(grant.workspaceId, grant.userId);
    await revokeGrant(target, OPERATOR, doorSource('admin CLI', OPERATOR, 'grants revoke', now), grant, app, owner);
    const what = ` (${app} for ${owner?.email ?? grant.userId})`;
    out.stdout(`Revoked grant ${id}${what}; its refresh token is refused from now on, its access tokens from their next MCP call.`);
  },
};

export const GRANT_COMMANDS: Readonly<Record<string, Command>> = {
  'grants list': grantsList,
  'grants revoke': grantsRevoke,
};
