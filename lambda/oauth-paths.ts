/**
 * Paths the authorization server's function answers; everything else under the API belongs to the
 * MCP function. Apart from the server itself so that a router (the local server) can tell the two
 * apart without loading oidc-provider.
 */
export const isOAuthPath = (path: string): boolean =>
  path.startsWith('/oauth/') || path === '/account' || path.startsWith('/account/') || path === '/.well-known/oauth-authorization-server';
