import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { KoaContextWithOIDC, default as Provider } from 'oidc-provider';
import { createAccountRoutes } from './account/routes.js';
import { createSessionStore } from './account/session.js';
import { createAdapterFactory } from './oauth/dynamodb-adapter.js';
import { createInteractions } from './oauth/interactions.js';
import { createProvider, OAUTH_ROUTES } from './oauth/provider.js';
import { takeRegistrationPermit } from './oauth/registration-limit.js';
import { isUnavailable, mapJsonError, mapPageError } from './pages/error-mapper.js';
import { html } from './pages/html.js';
import { page } from './pages/layout.js';
import { send, sendJson } from './pages/responses.js';
import type { Config } from './platform/config.js';
import type { KeySource } from './platform/key-ring.js';
import { createSignIn, type DevMember, UPSTREAM_CALLBACK_PATH } from './sign-in/sign-in.js';
import { createUpstreamSignIn } from './sign-in/upstream.js';
import { createWorkspaceStores } from './workspace/store/create-stores.js';
import type { DirectoryStore } from './workspace/store/directory-store.js';
import type { VetSettings } from './workspace/webhooks/webhook-writer.js';

export interface OAuthRuntime {
  readonly config: Config;
  readonly db: DynamoDBDocumentClient;
  readonly keys: KeySource;
  readonly logger: Logger;
  /** The sign-in client's secret, read by the caller (Secrets Manager in Lambda). */
  readonly signInClientSecret?: string;
  /** The local server's development sign-in; never set in Lambda. */
  readonly devMembers?: (directory: DirectoryStore) => Promise<readonly DevMember[]>;
  /**
   * The local server's webhook vetting (loopback receivers allowed, as its notifier's); never set in
   * Lambda, where the account page adds webhooks to public https addresses only.
   */
  readonly webhookVet?: VetSettings;
  /** Tests only: how Client ID Metadata Documents are fetched (see provider.ts). */
  readonly fetch?: typeof globalThis.fetch;
}

export interface OAuthApp {
  readonly provider: Provider;
  /** node:http request listener: the Lambda handler wraps it, the local server calls it. */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * The library's endpoints this server offers, byte for byte. oidc-provider's router would also take
 * other spellings (`/oauth/register/`, `/oauth/REGISTER`), which would slip past the checks below
 * that match one path; anything else under `/oauth/` is 404 before it reaches the library.
 */
const PROVIDER_PATHS = new Set<string>([
  OAUTH_ROUTES.authorization,
  OAUTH_ROUTES.token,
  OAUTH_ROUTES.registration,
  OAUTH_ROUTES.revocation,
  OAUTH_ROUTES.jwks,
]);
/** The authorization endpoint's resume path after an interaction (`/oauth/authorize/<uid>`). */
const RESUME_PATH = /^\/oauth\/authorize\/[A-Za-z0-9_-]{1,64}$/;
const isProviderPath = (path: string): boolean =>
  PROVIDER_PATHS.has(path) || RESUME_PATH.test(path) || path === '/.well-known/oauth-authorization-server';

/** A registration is a few hundred bytes of JSON; this bounds what one can make the table keep. */
export const MAX_REGISTRATION_BYTES = 8 * 1024;

/** The sign-in and consent pages, and the identity provider's return to them. */
const isInteractionPath = (path: string): boolean => path.startsWith('/oauth/interaction/') || path === UPSTREAM_CALLBACK_PATH;

export { isOAuthPath } from './oauth-paths.js';

/**
 * The authorization server's composition root, run once per cold start: the key ring is loaded
 * first (the signing and cookie keys come from it), then oidc-provider, the sign-in and the pages.
 */
export const createOAuthApp = async (rt: OAuthRuntime): Promise<OAuthApp> => {
  const { config } = rt;
  const publicUrl = new URL(config.publicUrl);
  const table = config.tables.workspace;
  const ring = await rt.keys();
  // The same stores as every door's, with their write side: the account page changes things through the writers.
  const stores = createWorkspaceStores(rt.db, table, rt.keys, config.activityDays);
  const { directory } = stores;
  const adapter = createAdapterFactory(rt.db, table);
  const provider = await createProvider({
    publicUrl: config.publicUrl,
    ring,
    adapter,
    directory,
    ...(rt.fetch ? { fetch: rt.fetch } : {}),
    // oidc-provider's own error page (unknown client, redirect URI not registered, …): never a
    // redirect to an unverified URI, just the error in doers' page shell.
    renderError: async (ctx, out, error) => {
      // DynamoDB throttling or out of reach behind the library: the one mapper's 503 page.
      if (error && isUnavailable(error)) {
        const mapped = mapPageError(error);
        logMapped(mapped.log, error);
        ctx.status = mapped.page.status;
        for (const [k, v] of Object.entries(mapped.page.headers)) ctx.set(k, v);
        ctx.body = mapped.page.body;
        return;
      }
      const p = page(
        { title: 'This request cannot be completed', status: ctx.status },
        html`<h1>This request cannot be completed</h1><p id="error">${String(out.error_description ?? out.error ?? 'The request is not valid.')}</p><p class="muted">Go back to the app and try connecting again.</p>`,
      );
      for (const [k, v] of Object.entries(p.headers)) ctx.set(k, v);
      ctx.body = p.body;
    },
  });
  // A development sign-in is only ever offered on a loopback URL without an upstream provider.
  const loopback = publicUrl.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(publicUrl.hostname);
  const signIn = createSignIn({
    publicUrl: config.publicUrl,
    directory,
    adapter,
    logger: rt.logger,
    ...(config.signIn
      ? {
          upstream: createUpstreamSignIn(
            { ...config.signIn, ...(rt.signInClientSecret ? { clientSecret: rt.signInClientSecret } : {}) },
            `${config.publicUrl}${UPSTREAM_CALLBACK_PATH}`,
          ),
        }
      : rt.devMembers && loopback
        ? { devMembers: () => rt.devMembers!(directory) }
        : {}),
  });
  const account = createAccountRoutes({
    ...stores,
    publicUrl: config.publicUrl,
    sessions: createSessionStore(ring, publicUrl.protocol === 'https:'),
    signIn,
    adapter,
    logger: rt.logger,
    webhookVet: rt.webhookVet ?? { allowLoopback: false },
  });
  const interactions = createInteractions({
    provider,
    ring,
    signIn,
    logger: rt.logger,
    onAccountReturn: (req, res, url, state, pending) => account.upstreamReturned(req, res, url, state, pending),
  });
  // The library answers its JSON endpoints' failures itself (500 server_error); a throttled or
  // unreachable DynamoDB is rewritten to the one mapper's 503 temporarily_unavailable before it is sent.
  provider.on('server_error', (ctx: KoaContextWithOIDC, error: unknown) => {
    if (!isUnavailable(error) || typeof ctx.body !== 'object' || ctx.body === null) return;
    const mapped = mapJsonError(error);
    logMapped(mapped.log, error);
    ctx.status = mapped.status;
    for (const [k, v] of Object.entries(mapped.headers)) ctx.set(k, v);
    ctx.body = mapped.body;
  });
  const providerListener = provider.callback();

  /** The cause of a 5xx is logged (the answer never carries it). */
  function logMapped(level: 'error' | 'warn' | 'none', err: unknown): void {
    if (level === 'none') return;
    const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (level === 'error') rt.logger.error('Authorization server request failed', { error });
    else rt.logger.warn('A dependency could not answer; answered 503', { error });
  }

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    // URLs, cookies' Secure flag and redirects follow DOERS_PUBLIC_URL, never a header a caller sent.
    req.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
    req.headers['x-forwarded-host'] = publicUrl.host;
    delete req.headers.forwarded;
    // Koa takes a TLS socket as https before any header; serverless-http's stand-in socket says it is
    // one, the local adapter's is not. Either way the scheme is the public URL's.
    (req.socket as { encrypted?: boolean }).encrypted = publicUrl.protocol === 'https:';
    const url = new URL(req.url ?? '/', config.publicUrl);
    // Pages of our own (sign-in, consent, account) fail with a page; the rest with an OAuth error document.
    const browserRoute = isInteractionPath(url.pathname) || url.pathname === '/account' || url.pathname.startsWith('/account/');
    void (async () => {
      if (await interactions.handle(req, res, url)) return;
      if (await account.handle(req, res, url)) return;
      if (!isProviderPath(url.pathname)) {
        return sendJson(res, 404, { error: 'not_found', error_description: `There is no ${url.pathname} here` });
      }
      if (req.method === 'POST' && url.pathname === OAUTH_ROUTES.registration) {
        if (Number(req.headers['content-length'] ?? 0) > MAX_REGISTRATION_BYTES) {
          return sendJson(res, 413, {
            error: 'invalid_client_metadata',
            error_description: `The registration is larger than ${MAX_REGISTRATION_BYTES} bytes`,
          });
        }
        // The address API Gateway saw (serverless-http puts it on the socket), not X-Forwarded-For.
        const wait = await takeRegistrationPermit(rt.db, table, req.socket.remoteAddress ?? 'unknown');
        if (wait > 0) {
          return sendJson(
            res,
            429,
            {
              error: 'temporarily_unavailable',
              error_description: `Too many client registrations from this address; try again in ${wait} seconds`,
            },
            { 'retry-after': String(wait) },
          );
        }
      }
      providerListener(req, res);
    })().catch((err: unknown) => {
      if (!browserRoute) {
        const mapped = mapJsonError(err);
        logMapped(mapped.log, err);
        if (!res.headersSent) sendJson(res, mapped.status, mapped.body, mapped.headers);
      } else {
        const mapped = mapPageError(err);
        logMapped(mapped.log, err);
        if (!res.headersSent) send(res, mapped.page);
      }
    });
  };
  return { provider, listener };
};
