import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { UserAgent } from './oauth.js';

/**
 * A real OpenID provider on loopback for the federated sign-in: oidc-provider itself with its
 * development pages (any login, any password). The login is the e-mail address; one starting with
 * `unverified` comes without `email_verified`. It listens first (doers needs its issuer to start),
 * and is given doers' callback once doers knows its own URL.
 */
export const startUpstream = async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    /** Registers doers' client (`doers`, public, PKCE) with this redirect URI and starts answering. */
    serve(redirectUri: string): void {
      const provider = new Provider(url, {
        clients: [
          {
            client_id: 'doers',
            redirect_uris: [redirectUri],
            token_endpoint_auth_method: 'none',
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        conformIdTokenClaims: false,
        findAccount: (_ctx, sub) => ({
          accountId: sub,
          claims: () => ({ sub, email: sub, email_verified: !sub.startsWith('unverified') }),
        }),
        cookies: { keys: ['upstream-test'] },
      });
      server.on('request', provider.callback());
    },
    close(): void {
      server.closeAllConnections();
      server.close();
    },
  };
};

/**
 * A person at the upstream's pages: from its authorization URL through its login and consent forms
 * to the redirect back (returned, not followed).
 */
export const passUpstream = async (agent: UserAgent, upstreamUrl: string, authorizationUrl: URL, login: string): Promise<URL> => {
  let step = await agent.follow(authorizationUrl);
  for (const form of [{ prompt: 'login', login, password: 'any' }, { prompt: 'consent' }] as Record<string, string>[]) {
    const page = await step.response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (!action) throw new Error(`expected an upstream form, got ${step.response.status}: ${page.slice(0, 200)}`);
    step = await agent.postForm(new URL(action, step.url), form);
    if (step.url.origin !== upstreamUrl) break;
  }
  return step.url;
};
