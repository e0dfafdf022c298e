import Provider, { type AdapterFactory, type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider';
import { issuedBefore } from '../auth/credential-gate.js';
import type { KeyRing } from '../platform/key-ring.js';
import { signingKeysOf } from '../platform/signing-keys.js';
import { isToolGroupList, memberRefOfAccountId, SCOPES } from '../vocabulary.js';
import type { DirectoryStore } from '../workspace/store/directory-store.js';
import { checkRedirectUris } from './redirect-uris.js';

/** Endpoints under `/oauth/`, so one API Gateway route (`/oauth/{proxy+}`) reaches them all. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/logout',
  pushed_authorization_request: '/oauth/par',
  introspection: '/oauth/introspect',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
} as const;

/** Lifetimes (seconds). An access token is short because only its grant's revocation stops it early. */
export const TOKEN_TTL = {
  accessToken: 15 * 60,
  authorizationCode: 60,
  refreshToken: 30 * 24 * 3600,
  grant: 30 * 24 * 3600,
  interaction: 15 * 60,
  // Within it, another app can be connected without signing in again; short, for shared machines.
  session: 60 * 60,
} as const;

/** Bytes a Client ID Metadata Document may have (the CIMD draft suggests 5 KB). */
export const CLIENT_METADATA_MAX_BYTES = 5 * 1024;

export interface ProviderOptions {
  /** DOERS_PUBLIC_URL: the issuer, and with `/mcp` the one resource tokens are for. */
  readonly publicUrl: string;
  readonly ring: KeyRing;
  readonly adapter: AdapterFactory;
  readonly directory: DirectoryStore;
  /** Renders oidc-provider's own error pages (bad client, bad redirect URI, …) in doers' look. */
  readonly renderError: NonNullable<Configuration['renderError']>;
  /**
   * How metadata documents are fetched. The default is the platform fetch behind oidc-provider's
   * SSRF guard; tests serving a document on loopback over a self-signed certificate pass their own.
   */
  readonly fetch?: typeof globalThis.fetch;
}

/**
 * JSON only: the CIMD draft serves `application/json`, and a document that is not JSON-typed is more
 * likely an HTML page or a redirect target than a client's metadata.
 */
const jsonOnly =
  (inner: typeof globalThis.fetch): typeof globalThis.fetch =>
  async (url, init) => {
    const response = await inner(url, init);
    const type = response.headers.get('content-type') ?? '';
    if (!/^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(type)) {
      await response.body?.cancel();
      throw new Error(`the document is served as "${type}", not JSON`);
    }
    return response;
  };

/**
 * doers' own OAuth 2.1 authorization server: oidc-provider configured for exactly what MCP clients
 * need — authorization code with PKCE S256, refresh tokens that rotate, one resource (the MCP URL),
 * clients by Client ID Metadata Document or Dynamic Client Registration, RFC 7009 revocation.
 */
export const createProvider = async (opts: ProviderOptions): Promise<Provider> => {
  const mcpUrl = `${opts.publicUrl}/mcp`;
  const ownOrigin = new URL(opts.publicUrl).origin;
  const signing = await signingKeysOf(opts.ring);
  const scopes = SCOPES.join(' ');

  const configuration: Configuration = {
    adapter: opts.adapter,
    // The current seed's key signs (first); the previous one still verifies what it signed.
    jwks: { keys: signing.map((k) => k.privateJwk) as NonNullable<Configuration['jwks']>['keys'] },
    cookies: {
      keys: opts.ring.all.map((k) => Buffer.from(k['oauth-cookies']).toString('base64url')),
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
    },
    routes: OAUTH_ROUTES,
    // Ours are also listed as the library's own scopes: registration (RFC 7591) checks a client's
    // `scope` against this list only, and MCP clients register with the resource's scopes.
    scopes: ['openid', ...SCOPES],
    claims: { openid: ['sub'] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    clientAuthMethods: ['none'],
    // A browser-based client (the Inspector) calls the token endpoint from the page it was redirected
    // back to: that origin, one of its own redirect URIs', may; no other.
    clientBasedCORS: (_ctx, origin, client) =>
      origin !== 'null' && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    // Every client of an MCP server is a public client; refresh tokens need no `offline_access`.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // The grant outlives the browser session: it ends with its refresh tokens or a revocation.
    expiresWithSession: async () => false,
    // The grant id travels in the access token, so the MCP function can check it still stands.
    // The grant's id, and the tool groups its resource named (/mcp?tools=a,b): a refresh keeps both.
    extraTokenClaims: async (_ctx, token) => {
      if (!('grantId' in token) || !token.grantId) return undefined;
      const resource = 'resourceServer' in token ? token.resourceServer?.identifier() : undefined;
      const tools = resource ? toolGroupsOf(resource, mcpUrl) : undefined;
      return { gid: token.grantId, ...(tools ? { tools } : {}) };
    },
    findAccount: async (ctx, sub, token) => {
      const ref = memberRefOfAccountId(sub);
      if (!ref) return undefined;
      const member = await opts.directory.getMember(ref.workspaceId, ref.userId);
      if (member?.status !== 'active') return undefined;
      // A refresh under a consent from before the member's access was reset (added back, enabled
      // again) is refused: that app has to be connected again, as the MCP function refuses its tokens.
      const grantId = token && 'grantId' in token ? token.grantId : undefined;
      if (member.credentialsFrom && grantId) {
        const grant = await ctx.oidc.provider.Grant.find(grantId);
        if (!grant || issuedBefore((grant.iat ?? 0) * 1000, member.credentialsFrom, true)) return undefined;
      }
      return { accountId: sub, claims: () => ({ sub }) };
    },
    ttl: {
      AccessToken: TOKEN_TTL.accessToken,
      AuthorizationCode: TOKEN_TTL.authorizationCode,
      RefreshToken: TOKEN_TTL.refreshToken,
      Grant: TOKEN_TTL.grant,
      Interaction: TOKEN_TTL.interaction,
      Session: TOKEN_TTL.session,
      IdToken: TOKEN_TTL.accessToken,
    },
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    renderError: opts.renderError,
    extraClientMetadata: {
      properties: ['redirect_uris'],
      validator: (_ctx, key, value) => {
        if (key !== 'redirect_uris') return;
        const problem = checkRedirectUris(value);
        if (problem) throw new errors.InvalidRedirectUri(problem);
      },
    },
    fetch: jsonOnly(opts.fetch ?? ((url, init) => globalThis.fetch(url, init))),
    fetchResponseBodyLimits: { 'client_id metadata document': CLIENT_METADATA_MAX_BYTES },
    features: {
      devInteractions: { enabled: false },
      // The MCP function checks bearer tokens only; a DPoP-bound token it cannot check is not offered.
      dPoP: { enabled: false },
      // Open registration (RFC 7591) without client management: nothing would use a registration
      // access token, and each one would be a credential stored forever.
      registration: { enabled: true, issueRegistrationAccessToken: false },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // A document is cached as its Cache-Control says, between one minute and one hour.
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02', cacheDuration: { min: 60, max: 3600 } },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => mcpUrl,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          // The endpoint, as a connection's URL may name it: with the tool groups it chose (kept in the grant).
          if (resource !== mcpUrl && toolGroupsOf(resource, mcpUrl) === undefined)
            throw new errors.InvalidTarget(`the only resource here is ${mcpUrl} (with ?tools=a,b naming tool groups, if any)`);
          return {
            scope: scopes,
            audience: mcpUrl,
            accessTokenFormat: 'jwt',
            accessTokenTTL: TOKEN_TTL.accessToken,
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    } as Configuration['features'],
  };

  const provider = new Provider(opts.publicUrl, configuration);
  // Behind API Gateway (or the local adapter), which the caller's own headers never reach unfiltered:
  // the app pins X-Forwarded-Proto/Host to DOERS_PUBLIC_URL before oidc-provider sees a request.
  provider.proxy = true;
  provider.use(async (ctx, next) => {
    // Codes go back in the query only: `form_post` would answer an error with a self-submitting page
    // to the client and `fragment` hides it from the checks below; no MCP client needs either.
    const mode = ctx.path === OAUTH_ROUTES.authorization ? new URLSearchParams(ctx.querystring).get('response_mode') : null;
    if ((mode !== null && mode !== 'query') || (ctx.path === OAUTH_ROUTES.authorization && ctx.method === 'POST')) {
      ctx.status = 400;
      await opts.renderError(
        ctx as unknown as KoaContextWithOIDC,
        { error: 'invalid_request', error_description: 'Authorization requests are GET requests with response_mode query (or none)' },
        undefined as never,
      );
      return;
    }
    // A request without `scope` asks for the default (RFC 6749 §3.3): what the metadata lists, as an
    // MCP client that follows `scopes_supported` would ask; the person sees each and may untick it.
    // (oidc-provider would otherwise end such a request with access_denied after the consent.)
    if (ctx.path === OAUTH_ROUTES.authorization && ctx.method === 'GET') {
      const query = new URLSearchParams(ctx.querystring);
      if (!query.get('scope')) {
        query.set('scope', SCOPES.join(' '));
        ctx.querystring = query.toString();
      }
    }
    await next();
    // The metadata lists the scopes of the one resource, not oidc-provider's own (`openid`).
    if (ctx.path === '/.well-known/oauth-authorization-server' || ctx.path === '/.well-known/openid-configuration') {
      (ctx.body as Record<string, unknown>).scopes_supported = [...SCOPES];
      return;
    }
    // Anyone may register a client with any https redirect URI, so an error sent there before the
    // person has seen a page (a bad parameter, prompt=none) would make doers' domain a redirector to
    // it (RFC 9700 §4.11.2). Errors of the first request are shown on doers' own page instead; after
    // sign-in and consent (the resume path) they go back to the client as usual.
    if (ctx.path === OAUTH_ROUTES.authorization && ctx.status >= 300 && ctx.status < 400) {
      const location = URL.parse(ctx.response.get('location'), opts.publicUrl);
      const params = location ? new URLSearchParams(location.hash.slice(1) || location.search) : undefined;
      if (location && location.origin !== ownOrigin && params?.has('error')) {
        ctx.remove('location');
        ctx.status = 400;
        await opts.renderError(
          ctx as unknown as KoaContextWithOIDC,
          {
            error: params.get('error')!,
            ...(params.get('error_description') ? { error_description: params.get('error_description')! } : {}),
          },
          undefined as never,
        );
      }
    }
  });
  return provider;
};

export type { KoaContextWithOIDC };

/**
 * The tool groups a resource names (exactly `<mcpUrl>?tools=a,b`, known group names, `default` or
 * `all`, and nothing else in it), or undefined.
 */
export const toolGroupsOf = (resource: string, mcpUrl: string): string | undefined => {
  const prefix = `${mcpUrl}?tools=`;
  if (!resource.startsWith(prefix)) return undefined;
  const tools = resource.slice(prefix.length);
  return isToolGroupList(tools) ? tools : undefined;
};
