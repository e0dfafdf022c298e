import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Adapter, AdapterFactory } from 'oidc-provider';
import { INBOX_KINDS } from '../delivery/notice.js';
import { ToolRefusal } from '../errors.js';
import { refusalStatus } from '../pages/error-mapper.js';
import { ERROR_PAGES } from '../pages/error-pages.js';
import { messagePage } from '../pages/layout.js';
import { readForm, redirect, send } from '../pages/responses.js';
import { devSignInPage } from '../sign-in/dev-sign-in-page.js';
import type { ActiveMember, SignIn } from '../sign-in/sign-in.js';
import type { PendingSignIn } from '../sign-in/upstream.js';
import { accountIdOf, isScope, type Member, roleAtLeast, scopesForRole } from '../vocabulary.js';
import { doorSource } from '../workspace/activity/records.js';
import { describeChange, whenPhrase } from '../workspace/activity/render.js';
import { mintToken, revokeGrant, revokeToken } from '../workspace/membership/credentials.js';
import { changeStatus } from '../workspace/membership/members.js';
import { OPERATOR } from '../workspace/membership/rules.js';
import type { ActivityRecord } from '../workspace/model/activity.js';
import { callerOf } from '../workspace/model/caller.js';
import type { WorkspaceStores } from '../workspace/store/stores.js';
import { WEBHOOK_FORMATS, type Webhook } from '../workspace/store/webhook-store.js';
import { addWebhook, listWebhooks, removeWebhook, type VetSettings } from '../workspace/webhooks/webhook-writer.js';
import type { AccountSession, SessionStore } from './session.js';
import {
  type AccountView,
  accountPage,
  type ChangeRow,
  TOKEN_EXPIRY_DAYS,
  type WebhookRow,
  type WebhooksView,
} from './templates/account-page.js';

/** The workspace as the activity's reads need it (its layout: where its records are). */
const refOf = (w: { readonly workspaceId: string; readonly layout?: number; readonly migrating?: string }) => ({
  workspaceId: w.workspaceId,
  layout: w.layout ?? 1,
  ...(w.migrating ? { migrating: true } : {}),
});

/** Every door's stores with their write side (oauth-app.ts passes them): the writers the page calls take them whole. */
export interface AccountDeps extends WorkspaceStores {
  readonly publicUrl: string;
  readonly sessions: SessionStore;
  readonly signIn: SignIn;
  readonly adapter: AdapterFactory;
  /**
   * How a webhook's URL is vetted from this page: the local server allows loopback receivers (as its
   * notifier does, lambda/local/server.ts); in Lambda only public https addresses.
   */
  readonly webhookVet: VetSettings;
  readonly logger: Logger;
  readonly now?: () => Date;
}

/** What each action says when it is done (shown once, after the redirect). */
const NOTICES = {
  'token-revoked': 'The token was revoked; its next call is refused.',
  'app-revoked': 'The app was disconnected; its next call is refused.',
  'member-disabled':
    'The member was disabled; their tokens and apps are refused from their next call, and stay dead if they are enabled again.',
  'member-enabled': 'The member was enabled.',
  'webhook-removed': 'The webhook was removed; deliveries still waiting for it are dropped.',
  'signed-out': 'You are signed out.',
} as const;

const MAX_LABEL_LENGTH = 100;

/** The webhook form's fields, as the writer's refusals name them (`data.param`, model/refusals.ts). */
const FORM_FIELDS = ['url', 'events', 'format'] as const;

/** A webhook as the section lists it (secret masked already): who added it by name, the operator as such. */
const webhookRow = (w: Webhook, members: readonly Member[]): WebhookRow => ({
  webhookId: w.webhookId,
  url: w.url,
  events: w.events.length === INBOX_KINDS.length ? 'all' : w.events,
  format: w.format,
  maskedSecret: w.secret,
  createdAt: w.createdAt,
  createdBy: w.createdBy === OPERATOR.userId ? OPERATOR.name : (members.find((m) => m.userId === w.createdBy)?.name ?? 'a former member'),
  ...(w.lastFailure
    ? {
        lastFailure: {
          at: w.lastFailure.at,
          cause: w.lastFailure.cause,
          ...(w.lastFailure.status !== undefined ? { status: w.lastFailure.status } : {}),
        },
      }
    : {}),
  failedDeliveries: w.failedDeliveries ?? 0,
});

/** Changes shown per list on the page. */
const RECENT_CHANGES = 10;
const NO_NAMES = { members: new Map(), projects: new Map() } as const;

/** oidc-provider's sign-in session cookie and its signature. */
const PROVIDER_SESSION_COOKIES = ['_session', '_session.sig'] as const;

/** An id from the path, or undefined when it is not valid percent-encoding (then: 404). */
const idFrom = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
};

const ROUTES = {
  tokenRevoke: /^\/account\/tokens\/([^/]{1,200})\/revoke$/,
  appRevoke: /^\/account\/apps\/([^/]{1,200})\/revoke$/,
  memberStatus: /^\/account\/members\/([^/]{1,200})\/(disable|enable)$/,
  webhookRemove: /^\/account\/webhooks\/([^/]{1,200})\/remove$/,
} as const;

/**
 * `/account`: a person's own page on the authorization server's function. Signed in through the
 * same sign-in as an authorization (the operator's identity provider, or locally the development
 * one), it lists and makes personal access tokens (the admin CLI's store and token format), lists
 * and revokes connected apps (OAuth grants), and lets admins and owners disable or enable members
 * and add and remove the workspace's webhooks (through the webhook writer, as the admin CLI does).
 */
export const createAccountRoutes = (deps: AccountDeps) => {
  const now = deps.now ?? (() => new Date());
  const clients: Adapter = deps.adapter('Client');

  /** The signed-in, still-active member of this request, read fresh on every page. */
  const signedIn = async (req: IncomingMessage) => {
    const session = deps.sessions.read(req.headers.cookie, now());
    const who = session ? await deps.signIn.activeMember(session.accountId) : undefined;
    return session && who ? { session, ...who } : undefined;
  };

  const appName = async (clientId: string): Promise<{ name: string; verifiedDomain: string | undefined }> => {
    // A metadata-document client is its URL: its host is what the person can check.
    const url = /^https:\/\//.test(clientId) ? URL.parse(clientId) : null;
    if (url) return { name: url.host, verifiedDomain: url.host };
    const registered = (await clients.find(clientId)) as { client_name?: string } | undefined;
    return { name: registered?.client_name ?? clientId, verifiedDomain: undefined };
  };

  const view = async (
    who: ActiveMember & { session: AccountSession },
    extra: Partial<AccountView> = {},
    hooks: Pick<WebhooksView, 'created' | 'refused'> = {},
  ): Promise<AccountView> => {
    const { member, workspace } = who;
    const at = now();
    const admin = roleAtLeast(member.role, 'admin');
    const [tokens, grants, members, mine, team, webhooks] = await Promise.all([
      deps.tokens.list(member.workspaceId),
      deps.grants.list(member.workspaceId, member.userId),
      admin ? deps.directory.listMembers(member.workspaceId) : Promise.resolve(undefined),
      deps.activity.list(refOf(workspace), { actorId: member.userId, includeTeam: true }, RECENT_CHANGES, at),
      admin ? deps.activity.list(refOf(workspace), { includeTeam: true, onlyTeam: true }, RECENT_CHANGES, at) : undefined,
      admin ? listWebhooks(deps, member) : undefined,
    ]);
    // Names of the workspace's people and projects are not needed here: a record carries its target's label.
    const rows = (records: readonly ActivityRecord[]): ChangeRow[] =>
      records.map((r) => ({
        activityId: r.activityId,
        when: whenPhrase(r.at, at, member.timeZone),
        who: r.actorName,
        client: r.client,
        summary: describeChange(r, NO_NAMES),
      }));
    const apps = await Promise.all(
      grants
        .filter((g) => !member.credentialsFrom || g.createdAt >= member.credentialsFrom)
        .map(async (g) => ({
          grantId: g.grantId,
          ...(await appName(g.clientId)),
          scopes: g.scopes,
          createdAt: g.createdAt,
          ...(g.lastUsedAt ? { lastUsedAt: g.lastUsedAt } : {}),
        })),
    );
    return {
      csrf: deps.sessions.csrf(who.session),
      me: { name: member.name, email: member.email, role: member.role },
      workspaceName: workspace.name,
      mcpUrl: `${deps.publicUrl}/mcp`,
      tokens: tokens
        // A token from before the member's credentials started afresh (enabled again, added back) is dead.
        .filter((t) => t.userId === member.userId && !t.revokedAt && (!member.credentialsFrom || t.createdAt >= member.credentialsFrom))
        .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1))
        .map((t) => ({
          tokenId: t.tokenId,
          label: t.label,
          scopes: t.scopes,
          createdAt: t.createdAt,
          ...(t.expiresAt !== undefined ? { expiresAt: new Date(t.expiresAt * 1000).toISOString() } : {}),
          ...(t.lastUsedAt ? { lastUsedAt: t.lastUsedAt } : {}),
          expired: t.expiresAt !== undefined && t.expiresAt * 1000 <= at.getTime(),
        })),
      grantableScopes: scopesForRole(member.role),
      apps,
      myChanges: rows(mine.records),
      ...(team ? { teamChanges: rows(team.records) } : {}),
      ...(webhooks
        ? {
            webhooks: {
              rows: webhooks.map((w) => webhookRow(w, members ?? [])),
              kinds: INBOX_KINDS,
              formats: WEBHOOK_FORMATS,
              ...hooks,
            },
          }
        : {}),
      ...(members
        ? {
            members: [...members]
              .sort((a, b) => a.name.localeCompare(b.name))
              .map((m) => ({
                userId: m.userId,
                name: m.name,
                email: m.email,
                role: m.role,
                status: m.status,
                changeable: m.userId !== member.userId && (m.role !== 'owner' || member.role === 'owner'),
              })),
          }
        : {}),
      ...extra,
    };
  };

  /** The change's context as the webhook writer takes it: this member, of the workspace as read, through this page. */
  const webhookContext = ({ member, workspace }: ActiveMember, action: string) => ({
    stores: deps,
    caller: callerOf(workspace, member),
    source: doorSource('account page', member, action, now()),
  });

  const showSignIn = async (res: ServerResponse): Promise<void> => {
    if (deps.signIn.upstream) {
      // The provider's answer will count only in this browser (see PendingSignIn.binding).
      const form = deps.sessions.signInForm();
      return redirect(res, await deps.signIn.begin(undefined, form.csrf), { 'set-cookie': form.cookie });
    }
    if (deps.signIn.devMembers) {
      const members = await deps.signIn.devMembers();
      const form = deps.sessions.signInForm();
      const p = devSignInPage({
        action: '/account/sign-in',
        csrf: form.csrf,
        formTargets: [],
        members,
      });
      return send(res, p, { 'set-cookie': form.cookie });
    }
    return send(res, ERROR_PAGES.signInUnavailable());
  };

  const startSession = (res: ServerResponse, member: Member, via: string): void => {
    deps.logger.info('Signed in', { accountId: accountIdOf(member), via, for: 'account page' });
    redirect(res, '/account', { 'set-cookie': deps.sessions.start(accountIdOf(member), now()) });
  };

  const formExpired = () => ERROR_PAGES.formExpired('Open your account page again and retry.');

  const act = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const form = await readForm(req);
    const who = await signedIn(req);
    if (!who) return redirect(res, '/account/sign-in');
    if (!form || !deps.sessions.csrfValid(who.session, form.get('csrf'))) return send(res, formExpired());
    const { member } = who;

    if (path === '/account/sign-out') {
      // Also the authorization server's sign-in session, so the next app connected here asks again.
      return redirect(res, `/account/signed-out`, {
        'set-cookie': [deps.sessions.end(), ...PROVIDER_SESSION_COOKIES.map((c) => `${c}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax`)],
      });
    }

    if (path === '/account/tokens') {
      const label = (form.get('label') ?? '').trim();
      const days = Number(form.get('days'));
      const scopes = [...new Set(form.getAll('scope'))];
      const problem =
        !label || label.length > MAX_LABEL_LENGTH
          ? `The label must be 1 to ${MAX_LABEL_LENGTH} characters.`
          : !(TOKEN_EXPIRY_DAYS as readonly number[]).includes(days)
            ? `The expiry must be one of ${TOKEN_EXPIRY_DAYS.join(', ')} days.`
            : scopes.find((s) => !isScope(s))
              ? `As ${member.role} you can give a token only these scopes: ${scopesForRole(member.role).join(', ')}.`
              : undefined;
      const refused = async (text: string) =>
        send(res, { ...accountPage(await view(who, { error: `The token was not created: ${text}` })), status: 400 });
      if (problem) return refused(problem);
      const at = now();
      let minted: Awaited<ReturnType<typeof mintToken>>;
      try {
        minted = await mintToken(deps, member, doorSource('account page', member, 'create token', at), member, {
          label,
          scopes: scopes.filter(isScope),
          expiresAt: Math.floor(at.getTime() / 1000) + days * 86_400,
        });
      } catch (err) {
        // Scopes above the role: the page offers none, so only a forged form gets here.
        if (err instanceof ToolRefusal && err.reason === 'role')
          return refused(`As ${member.role} you can give a token only these scopes: ${scopesForRole(member.role).join(', ')}.`);
        throw err;
      }
      const { token: made, secret } = minted;
      // The secret goes out in this answer's body only: not in a URL, not in a log line.
      deps.logger.info('Personal access token created', {
        accountId: accountIdOf(member),
        tokenId: made.tokenId,
        scopes: made.scopes,
        days,
      });
      return send(res, accountPage(await view(who, { created: { label, secret } })));
    }

    if (path === '/account/webhooks') {
      const url = (form.get('url') ?? '').trim();
      const events = [...new Set(form.getAll('event'))];
      const format = form.get('format') ?? 'standard';
      let added: Awaited<ReturnType<typeof addWebhook>>;
      try {
        // The writer checks the rights (a member's or viewer's forged form is refused there), the
        // events, the format and the URL (address-guard.ts), and writes nothing when it refuses.
        added = await addWebhook(webhookContext(who, 'add webhook'), { url, events, format }, deps.webhookVet);
      } catch (err) {
        if (!(err instanceof ToolRefusal)) throw err;
        const status = refusalStatus(err);
        const field = FORM_FIELDS.find((f) => f === err.data.param);
        // The section is an admin's; anyone else sees the refusal where every refusal of the page goes.
        if (!roleAtLeast(member.role, 'admin')) return send(res, { ...accountPage(await view(who, { error: err.message })), status });
        // Beside its field, the refusal's own problem (its data); anything else whole.
        const text = field && typeof err.data.problem === 'string' ? err.data.problem : err.message;
        return send(res, {
          ...accountPage(await view(who, {}, { refused: { text, url, events, format, ...(field ? { field } : {}) } })),
          status,
        });
      }
      const { webhook } = added;
      // The secret goes out in this answer's body only: not in a URL, not in a log line.
      deps.logger.info('Webhook added', {
        accountId: accountIdOf(member),
        webhookId: webhook.webhookId,
        host: new URL(webhook.url).host,
        events: webhook.events,
        format: webhook.format,
      });
      return send(res, accountPage(await view(who, {}, { created: { url: webhook.url, secret: webhook.secret } })));
    }

    const notFound = () => send(res, ERROR_PAGES.notFound());

    const tokenRevoke = ROUTES.tokenRevoke.exec(path);
    if (tokenRevoke) {
      const tokenId = idFrom(tokenRevoke[1]!);
      if (tokenId === undefined) return notFound();
      const mine = (await deps.tokens.list(member.workspaceId)).find(
        (t) => t.tokenId === tokenId && t.userId === member.userId && !t.revokedAt,
      );
      if (!mine) return send(res, ERROR_PAGES.notFound('Token not found', 'You have no such token; it may have been revoked already.'));
      await revokeToken(deps, member, doorSource('account page', member, 'revoke token', now()), mine, member);
      deps.logger.info('Personal access token revoked', { accountId: accountIdOf(member), tokenId });
      return redirect(res, '/account?done=token-revoked');
    }

    const appRevoke = ROUTES.appRevoke.exec(path);
    if (appRevoke) {
      const grantId = idFrom(appRevoke[1]!);
      if (grantId === undefined) return notFound();
      const grant = await deps.grants.get(grantId);
      if (!grant || grant.workspaceId !== member.workspaceId || grant.userId !== member.userId) {
        return send(
          res,
          ERROR_PAGES.notFound('App not found', 'No such app is connected to your account; it may have been disconnected already.'),
        );
      }
      const app = await appName(grant.clientId);
      await revokeGrant(deps, member, doorSource('account page', member, 'disconnect app', now()), grant, app.name, member);
      deps.logger.info('Connected app revoked', { accountId: accountIdOf(member), grantId, clientId: grant.clientId });
      return redirect(res, '/account?done=app-revoked');
    }

    const memberStatus = ROUTES.memberStatus.exec(path);
    if (memberStatus) {
      const userId = idFrom(memberStatus[1]!);
      if (userId === undefined) return notFound();
      const action = memberStatus[2] === 'disable' ? 'disable' : 'enable';
      try {
        const { member: changed } = await changeStatus(
          deps,
          member,
          doorSource('account page', member, `${action} member`, now()),
          member.workspaceId,
          userId,
          action === 'disable' ? 'disabled' : 'active',
        );
        deps.logger.info('Member status changed', { by: accountIdOf(member), member: accountIdOf(changed), status: changed.status });
      } catch (err) {
        // A refusal of the membership rules is shown on the page itself, with what to do instead.
        if (!(err instanceof ToolRefusal)) throw err;
        const p = accountPage(await view(who, { error: err.message }));
        return send(res, { ...p, status: refusalStatus(err) });
      }
      return redirect(res, `/account?done=member-${action}d`);
    }

    const webhookRemove = ROUTES.webhookRemove.exec(path);
    if (webhookRemove) {
      const webhookId = idFrom(webhookRemove[1]!);
      if (webhookId === undefined) return notFound();
      try {
        await removeWebhook(webhookContext(who, 'remove webhook'), webhookId);
      } catch (err) {
        // Not an admin, or gone already (removed from another page or the CLI): said on the page.
        if (!(err instanceof ToolRefusal)) throw err;
        return send(res, { ...accountPage(await view(who, { error: err.message })), status: refusalStatus(err) });
      }
      deps.logger.info('Webhook removed', { accountId: accountIdOf(member), webhookId });
      return redirect(res, '/account?done=webhook-removed');
    }

    return notFound();
  };

  return {
    /** The identity provider's answer to an account sign-in (routed here from /oauth/callback). */
    async upstreamReturned(req: IncomingMessage, res: ServerResponse, url: URL, state: string, pending: PendingSignIn): Promise<void> {
      if (!deps.sessions.signInFormValid(req.headers.cookie, pending.binding)) return send(res, ERROR_PAGES.expired());
      const who = await deps.signIn.finish(url, state, pending);
      if (!('member' in who)) return send(res, who);
      return startSession(res, who.member, 'identity provider');
    },

    /**
     * Handles `/account` and below; false for any other path. Errors go to the function's one mapper
     * (pages/error-mapper.ts), which the caller applies.
     */
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
      const path = url.pathname;
      if (path !== '/account' && !path.startsWith('/account/')) return false;
      const method = req.method ?? 'GET';
      if (method === 'GET' && path === '/account') {
        const who = await signedIn(req);
        if (!who) {
          redirect(res, '/account/sign-in');
          return true;
        }
        const done = url.searchParams.get('done') as keyof typeof NOTICES | null;
        send(res, accountPage(await view(who, done && done in NOTICES ? { notice: NOTICES[done] } : {})));
      } else if (method === 'GET' && path === '/account/sign-in') await showSignIn(res);
      else if (method === 'GET' && path === '/account/signed-out') {
        send(res, messagePage('Signed out', `${NOTICES['signed-out']} Sign in again at ${deps.publicUrl}/account.`, 200));
      } else if (method === 'POST' && path === '/account/sign-in') {
        const form = await readForm(req);
        if (!form || !deps.sessions.signInFormValid(req.headers.cookie, form.get('csrf'))) send(res, formExpired());
        else {
          const who = await deps.signIn.devChoice(form.get('account') ?? '');
          if (!who) send(res, ERROR_PAGES.notAllowed('That account'));
          else startSession(res, who.member, 'development sign-in');
        }
      } else if (method === 'POST') await act(req, res, path);
      else send(res, ERROR_PAGES.notFound());
      return true;
    },
  };
};
