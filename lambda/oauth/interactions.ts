import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@aws-lambda-powertools/logger';
import type Provider from 'oidc-provider';
import { ERROR_PAGES } from '../pages/error-pages.js';
import { readForm, redirect, send } from '../pages/responses.js';
import type { KeyRing } from '../platform/key-ring.js';
import { mac, macValid } from '../platform/mac.js';
import { devSignInPage } from '../sign-in/dev-sign-in-page.js';
import { type SignIn, UPSTREAM_CALLBACK_PATH } from '../sign-in/sign-in.js';
import type { PendingSignIn } from '../sign-in/upstream.js';
import { accountIdOf, isScope } from '../vocabulary.js';
import { consentPage } from './pages/consent.js';

export interface InteractionDeps {
  readonly provider: Provider;
  readonly ring: KeyRing;
  readonly signIn: SignIn;
  readonly logger: Logger;
  /** The identity provider's answer to an account-page sign-in (the same callback URL serves both). */
  readonly onAccountReturn: (req: IncomingMessage, res: ServerResponse, url: URL, state: string, pending: PendingSignIn) => Promise<void>;
}

const UID = '([A-Za-z0-9_-]{1,64})';
const ROUTES = {
  show: new RegExp(`^/oauth/interaction/${UID}$`),
  action: new RegExp(`^/oauth/interaction/${UID}/(login|consent|abort)$`),
  returned: new RegExp(`^/oauth/interaction/${UID}/callback$`),
} as const;

/** What the consent prompt still asks for: oidc-provider's missing scopes, on either side. */
interface MissingGrant {
  readonly missingOIDCScope?: string[];
  readonly missingOIDCClaims?: string[];
  readonly missingResourceScopes?: Record<string, string[]>;
}

/** The scopes not yet granted to this app (ours are the library's own scopes too, see provider.ts). */
const stillAsked = (missing: MissingGrant): Set<string> =>
  new Set([...(missing.missingOIDCScope ?? []), ...Object.values(missing.missingResourceScopes ?? {}).flat()]);

/**
 * The pages between the authorization request and the code: sign-in (federated, or the local
 * development one) and consent. oidc-provider owns the protocol; these only decide who the person
 * is and what they allow, and hand that back with `interactionFinished`.
 */
export const createInteractions = (deps: InteractionDeps) => {
  const { provider, signIn } = deps;

  // Forms carry a MAC of their interaction id: a page on another site cannot know it, and it is
  // good for this interaction only. (SameSite=Lax cookies already keep a cross-site post sessionless.)
  const csrfFor = (uid: string): string => mac(deps.ring.current.csrf, uid);
  const csrfValid = (uid: string, token: string | null): boolean => macValid(deps.ring, 'csrf', uid, token);

  const redirectOrigin = (params: Record<string, unknown>): string[] => {
    const uri = typeof params.redirect_uri === 'string' ? URL.parse(params.redirect_uri) : null;
    return uri ? [uri.origin] : [];
  };

  const requestedScopes = (params: Record<string, unknown>): string[] =>
    typeof params.scope === 'string' ? [...new Set(params.scope.split(' ').filter(isScope))] : [];

  const show = async (req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> => {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) return send(res, ERROR_PAGES.expired());
    const params = details.params as Record<string, unknown>;
    if (details.prompt.name === 'login') {
      if (signIn.upstream) return redirect(res, await signIn.begin(uid));
      if (signIn.devMembers) {
        const members = await signIn.devMembers();
        return send(
          res,
          devSignInPage({
            action: `/oauth/interaction/${uid}/login`,
            cancel: `/oauth/interaction/${uid}/abort`,
            csrf: csrfFor(uid),
            formTargets: redirectOrigin(params),
            members,
          }),
        );
      }
      return send(res, ERROR_PAGES.signInUnavailable());
    }

    const accountId = details.session?.accountId ?? '';
    const who = await signIn.activeMember(accountId);
    if (!who) return send(res, ERROR_PAGES.notAllowed('This account'));
    const client = await provider.Client.find(String(params.client_id));
    if (!client) return send(res, ERROR_PAGES.expired());
    const cimd = (client as unknown as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument === true;
    const requested = requestedScopes(params);
    // Scopes this app already holds from an earlier consent are shown as such, not as choices:
    // unticking one here would not take it back (the account page does that).
    const asked = stillAsked(details.prompt.details as MissingGrant);
    return send(
      res,
      consentPage({
        uid,
        csrf: csrfFor(uid),
        clientName: client.clientName ?? client.clientId,
        verifiedDomain: cimd ? new URL(client.clientId).host : undefined,
        redirectUri: String(params.redirect_uri),
        person: { name: who.member.name, email: who.member.email },
        workspaceName: who.workspace.name,
        scopes: requested.filter((scope) => asked.has(scope)),
        alreadyAllowed: requested.filter((scope) => !asked.has(scope)),
      }),
    );
  };

  const act = async (req: IncomingMessage, res: ServerResponse, uid: string, action: string): Promise<void> => {
    const form = await readForm(req);
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) return send(res, ERROR_PAGES.expired());
    if (!form || !csrfValid(uid, form.get('csrf'))) {
      return send(res, ERROR_PAGES.formExpired('Go back to the app and start connecting again.'));
    }

    if (action === 'abort') {
      deps.logger.info('Authorization denied', { clientId: String(details.params.client_id), step: details.prompt.name });
      return provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The person did not allow the request' },
        { mergeWithLastSubmission: false },
      );
    }

    if (action === 'login') {
      const chosen = form.get('account') ?? '';
      const who = details.prompt.name === 'login' ? await signIn.devChoice(chosen) : undefined;
      if (!who) return send(res, ERROR_PAGES.notAllowed('That account'));
      deps.logger.info('Signed in', { accountId: chosen, via: 'development sign-in', for: 'authorization' });
      return provider.interactionFinished(req, res, { login: { accountId: chosen } }, { mergeWithLastSubmission: false });
    }

    // consent
    if (details.prompt.name !== 'consent') return send(res, ERROR_PAGES.expired());
    const accountId = details.session?.accountId ?? '';
    if (!(await signIn.activeMember(accountId))) return send(res, ERROR_PAGES.notAllowed('This account'));
    const params = details.params as Record<string, unknown>;
    const chosen: ReadonlySet<string> = new Set(form.getAll('scope').filter(isScope));
    const grant =
      (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
      new provider.Grant({ accountId, clientId: String(params.client_id) });
    const missing = details.prompt.details as MissingGrant;
    // The resource's scopes are the library's own scopes too (provider.ts): what is unticked is
    // refused on both sides, or the token would carry it anyway.
    const oidcScopes = missing.missingOIDCScope ?? [];
    const oidcAllowed = oidcScopes.filter((s) => !isScope(s) || chosen.has(s));
    const oidcRefused = oidcScopes.filter((s) => isScope(s) && !chosen.has(s));
    if (oidcAllowed.length) grant.addOIDCScope(oidcAllowed.join(' '));
    if (oidcRefused.length) grant.rejectOIDCScope(oidcRefused.join(' '));
    if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      // A scope left unticked is rejected, not just left out: otherwise consent would be asked again.
      const allowed = scopes.filter((s) => chosen.has(s));
      const refused = scopes.filter((s) => !chosen.has(s));
      if (allowed.length) grant.addResourceScope(resource, allowed.join(' '));
      if (refused.length) grant.rejectResourceScope(resource, refused.join(' '));
    }
    const grantId = await grant.save();
    deps.logger.info('Consent granted', {
      accountId,
      clientId: String(params.client_id),
      grantId,
      scopes: [...chosen],
      refused: [...stillAsked(missing)].filter((s) => isScope(s) && !chosen.has(s)),
    });
    return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  };

  /** The identity provider's redirect: only `state` says which sign-in it belongs to. */
  const upstreamReturned = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const state = url.searchParams.get('state') ?? '';
    const pending = await signIn.pendingOf(state);
    if (!pending) return send(res, ERROR_PAGES.expired());
    if (!pending.uid) return deps.onAccountReturn(req, res, url, state, pending);
    // The interaction cookie is scoped to the interaction's path, so the code is redeemed there.
    return redirect(res, `/oauth/interaction/${pending.uid}/callback${url.search}`);
  };

  const finishUpstream = async (req: IncomingMessage, res: ServerResponse, uid: string, url: URL): Promise<void> => {
    const details = await provider.interactionDetails(req, res);
    const state = url.searchParams.get('state') ?? '';
    const pending = await signIn.pendingOf(state);
    if (details.uid !== uid || !pending || pending.uid !== uid || !signIn.upstream) return send(res, ERROR_PAGES.expired());
    const who = await signIn.finish(url, state, pending);
    if (!('member' in who)) return send(res, who);
    deps.logger.info('Signed in', { accountId: accountIdOf(who.member), via: 'identity provider', for: 'authorization' });
    return provider.interactionFinished(req, res, { login: { accountId: accountIdOf(who.member) } }, { mergeWithLastSubmission: false });
  };

  return {
    /**
     * Handles the request when it is one of the interaction routes; false otherwise. Errors go to the
     * function's one mapper (pages/error-mapper.ts), which the caller applies.
     */
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
      const method = req.method ?? 'GET';
      const path = url.pathname;
      if (method === 'GET' && path === UPSTREAM_CALLBACK_PATH) {
        await upstreamReturned(req, res, url);
        return true;
      }
      const shown = method === 'GET' ? ROUTES.show.exec(path) : null;
      if (shown) {
        await show(req, res, shown[1]!);
        return true;
      }
      const acted = method === 'POST' ? ROUTES.action.exec(path) : null;
      if (acted) {
        await act(req, res, acted[1]!, acted[2]!);
        return true;
      }
      const returned = method === 'GET' ? ROUTES.returned.exec(path) : null;
      if (returned) {
        await finishUpstream(req, res, returned[1]!, url);
        return true;
      }
      return false;
    },
  };
};
