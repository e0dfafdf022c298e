const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Where an authorization code may be sent: https anywhere, or http on this machine's loopback only
 * (a desktop or CLI client's one-shot listener, RFC 8252 §7.3). Anything else — `javascript:`, a
 * custom scheme, plain http to a host on the network — could hand the code to someone else.
 * Returns what is wrong, or undefined.
 */
export const checkRedirectUris = (value: unknown): string | undefined => {
  if (!Array.isArray(value) || value.length === 0) return 'redirect_uris must be a non-empty array of URLs';
  for (const uri of value) {
    const parsed = typeof uri === 'string' ? URL.parse(uri) : null;
    if (!parsed) return 'redirect_uris must only contain URLs';
    if (parsed.protocol === 'https:') continue;
    if (parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname)) continue;
    return `redirect_uris may only use https, or http on a loopback address (${parsed.protocol}//${parsed.host} is neither)`;
  }
  return undefined;
};
