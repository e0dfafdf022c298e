import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type Provider from 'oidc-provider';
import { createAccountRoutes } from '../account/routes.js';
import { createSessionStore } from '../account/session.js';
import { DynamoTokenStore } from '../auth/personal-tokens.js';
import { html } from '../pages/html.js';
import { page } from '../pages/layout.js';
import type { Config } from '../platform/config.js';
import type { KeySource } from '../platform/keys.js';
import { type DirectoryStore, DynamoDirectoryStore } from '../workspace/directory-store.js';
import { createAdapterFactory } from './dynamodb-adapter.js';
import { DynamoGrantStore } from './grant-store.js';
import { createInteractions } from './interactions.js';
import { createProvider, OAUTH_ROUTES } from './provider.js';
import { takeRegistrationPermit } from './registration-limit.js';
import { createSignIn, type DevMember, UPSTREAM_CALLBACK_PATH } from './sign-in.js';
import { createUpstreamSignIn } from './upstream-sign-in.js';

export interface OAuthRuntime {
  readonly config: Config;
  readonly db: DynamoDBDocumentClient;
  readonly keys: KeySource;
  readonly logger: Logger;
  /** The sign-in client's secret, read by the caller (Secrets Manager in Lambda). */
  readonly signInClientSecret?: string;
  /** The local server's development sign-in; never set in Lambda. */
  readonly devMembers?: (directory: DirectoryStore) => Promise<readonly DevMember[]>;
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

/** Paths this function answers; everything else under the API belongs to the MCP function. */
export const isOAuthPath = (path: string): boolean =>
  path.startsWith('/oauth/') || path === '/account' || path.startsWith('/account/') || path === '/.well-known/oauth-authorization-server';

/**
 * The authorization server's composition root, run once per cold start: the key ring is loaded
 * first (the signing and cookie keys come from it), then oidc-provider, the sign-in and the pages.
 */
export const createOAuthApp = async (rt: OAuthRuntime): Promise<OAuthApp> => {
  const { config } = rt;
  const publicUrl = new URL(config.publicUrl);
  const table = config.tables.workspace;
  const ring = await rt.keys();
  const directory = new DynamoDirectoryStore(rt.db, table);
  const adapter = createAdapterFactory(rt.db, table);
  const provider = await createProvider({
    publicUrl: config.publicUrl,
    ring,
    adapter,
    directory,
    ...(rt.fetch ? { fetch: rt.fetch } : {}),
    // oidc-provider's own error page (unknown client, redirect URI not registered, …): never a
    // redirect to an unverified URI, just the error in doers' page shell.
    renderError: async (ctx, out) => {
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
    publicUrl: config.publicUrl,
    sessions: createSessionStore(ring, publicUrl.protocol === 'https:'),
    signIn,
    directory,
    tokens: new DynamoTokenStore(rt.db, table, rt.keys),
    grants: new DynamoGrantStore(rt.db, table),
    adapter,
    logger: rt.logger,
  });
  const interactions = createInteractions({
    provider,
    ring,
    signIn,
    logger: rt.logger,
    onAccountReturn: (req, res, url, state, pending) => account.upstreamReturned(req, res, url, state, pending),
  });
  const providerListener = provider.callback();

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    // URLs, cookies' Secure flag and redirects follow DOERS_PUBLIC_URL, never a header a caller sent.
    req.headers['x-forwarded-proto'] = publicUrl.protocol.slice(0, -1);
    req.headers['x-forwarded-host'] = publicUrl.host;
    delete req.headers.forwarded;
    // Koa takes a TLS socket as https before any header; serverless-http's stand-in socket says it is
    // one, the local adapter's is not. Either way the scheme is the public URL's.
    (req.socket as { encrypted?: boolean }).encrypted = publicUrl.protocol === 'https:';
    const url = new URL(req.url ?? '/', config.publicUrl);
    void (async () => {
      if (await interactions.handle(req, res, url)) return;
      if (await account.handle(req, res, url)) return;
      if (!isProviderPath(url.pathname)) {
        res.writeHead(404, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify({ error: 'not_found', error_description: `There is no ${url.pathname} here` }));
        return;
      }
      if (req.method === 'POST' && url.pathname === OAUTH_ROUTES.registration) {
        if (Number(req.headers['content-length'] ?? 0) > MAX_REGISTRATION_BYTES) {
          res.writeHead(413, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          res.end(
            JSON.stringify({
              error: 'invalid_client_metadata',
              error_description: `The registration is larger than ${MAX_REGISTRATION_BYTES} bytes`,
            }),
          );
          return;
        }
        // The address API Gateway saw (serverless-http puts it on the socket), not X-Forwarded-For.
        const wait = await takeRegistrationPermit(rt.db, table, req.socket.remoteAddress ?? 'unknown');
        if (wait > 0) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(wait), 'cache-control': 'no-store' });
          res.end(
            JSON.stringify({
              error: 'temporarily_unavailable',
              error_description: `Too many client registrations from this address; try again in ${wait} seconds`,
            }),
          );
          return;
        }
      }
      providerListener(req, res);
    })().catch((err: unknown) => {
      rt.logger.error('OAuth request failed', { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify({ error: 'server_error', error_description: 'The request could not be completed' }));
      }
    });
  };
  return { provider, listener };
};
