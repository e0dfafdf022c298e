/**
 * RFC 9728 protected-resource metadata. `resource` is exactly `${DOERS_PUBLIC_URL}/mcp`, taken from
 * configuration and never from a forwarded header a caller could forge.
 */
export const protectedResourceMetadata = (opts: {
  publicUrl: string;
  authorizationServers: readonly string[];
  scopesSupported: readonly string[];
}) => ({
  resource: `${opts.publicUrl}/mcp`,
  authorization_servers: opts.authorizationServers,
  scopes_supported: opts.scopesSupported,
  bearer_methods_supported: ['header'],
  resource_name: 'doers',
});
