import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { callTool, startTestServer } from '../helpers/local.js';
import { formValue, pkcePair, UserAgent } from '../helpers/oauth.js';
import { passUpstream, startUpstream } from '../helpers/upstream.js';

/**
 * Sign-in federated to a real OpenID provider on loopback — oidc-provider itself, with its
 * development login (any login, any password; the login is the e-mail address, and one starting
 * with `unverified` comes without `email_verified`). doers runs with DOERS_SIGNIN_ISSUER pointing at
 * it, exactly as the stack points at Cognito: openid-client, code + PKCE + state + nonce.
 */
const REDIRECT = 'http://127.0.0.1:5555/cb';

let upstream: Awaited<ReturnType<typeof startUpstream>>;
let upstreamUrl: string;
let server: LocalServer;

before(async () => {
  // The two servers must know each other's URLs: the upstream listens first, doers starts with its
  // issuer, then the upstream gets doers' callback as its client's redirect URI.
  upstream = await startUpstream();
  upstreamUrl = upstream.url;
  server = await startTestServer({ DOERS_SIGNIN_ISSUER: upstreamUrl, DOERS_SIGNIN_CLIENT_ID: 'doers', DOERS_AUTH_CACHE_SECONDS: '0' });
  upstream.serve(`${server.url}/oauth/callback`);
});
after(async () => {
  await server.close();
  upstream.close();
});

const authorizeUrl = (clientId: string, challenge: string): URL => {
  const url = new URL(`${server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'tasks:read',
    resource: server.mcpUrl,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's',
  })) {
    url.searchParams.set(k, v);
  }
  return url;
};

const registerClient = async (): Promise<string> => {
  const res = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Federated test client' }),
  });
  return ((await res.json()) as { client_id: string }).client_id;
};

/**
 * From doers' authorization URL through the upstream's login and consent and back to doers:
 * returns doers' answer to the identity provider's redirect (after its own internal redirects).
 */
const signInUpstream = async (agent: UserAgent, start: URL, login: string) => {
  const toUpstream = await agent.follow(start);
  assert.equal(toUpstream.url.origin, upstreamUrl, 'doers sends the person to the identity provider');
  assert.equal(toUpstream.url.searchParams.get('code_challenge_method'), 'S256');
  assert.ok(toUpstream.url.searchParams.get('nonce'));
  const back = await passUpstream(agent, upstreamUrl, toUpstream.url, login);
  assert.equal(back.origin, server.url, 'the identity provider sends the person back to doers');
  return agent.follow(back);
};

describe("sign-in through the operator's OpenID provider", () => {
  test('a member signs in upstream, approves, and the token acts as that member', async () => {
    // Arrange
    const client = await registerClient();
    const agent = new UserAgent();
    const pkce = pkcePair();

    // Act
    const { response, url } = await signInUpstream(agent, authorizeUrl(client, pkce.challenge), DEMO_OWNER.email);
    const consent = await response.text();
    const back = await agent.postForm(new URL(`${url.pathname}/consent`, url), { csrf: formValue(consent, 'csrf')!, scope: 'tasks:read' });
    const tokens = (await (
      await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: back.url.searchParams.get('code')!,
          redirect_uri: REDIRECT,
          client_id: client,
          code_verifier: pkce.verifier,
        }).toString(),
      })
    ).json()) as { access_token: string };
    const me = await callTool(server, 'me_get', {}, tokens.access_token);

    // Assert
    assert.match(consent, new RegExp(`id="person">${DEMO_OWNER.name} &lt;${DEMO_OWNER.email}&gt;`));
    assert.equal(me.structuredContent.email, DEMO_OWNER.email);
    assert.equal(me.structuredContent.workspace.workspaceId, DEMO_WORKSPACE_ID);
  });

  for (const [label, login, status, message] of [
    ['an address that is no member', 'stranger@example.com', 403, /not an active member/],
    ['an address the provider has not verified', 'unverified@example.com', 400, /has not verified/],
  ] as const) {
    test(`${label} gets a clear page and no code`, async () => {
      // Act
      const { response, url } = await signInUpstream(new UserAgent(), authorizeUrl(await registerClient(), pkcePair().challenge), login);
      const page = await response.text();
      // Assert
      assert.equal(response.status, status);
      assert.match(page, message);
      // The page is doers' own (the upstream's code is in its URL), never the client's redirect URI.
      assert.equal(url.origin, server.url);
      assert.equal(response.headers.get('location'), null);
    });
  }

  test('a disabled member gets the same page and no code', async () => {
    // Arrange: grace is an active admin of the demo workspace; disable her first.
    const grace = await server.app.services.directory.findMemberByEmail('grace@example.com');
    await writesOf(server.app.services).directory.setMemberStatus(grace!.workspaceId, grace!.userId, 'disabled');
    try {
      // Act
      const { response } = await signInUpstream(
        new UserAgent(),
        authorizeUrl(await registerClient(), pkcePair().challenge),
        'grace@example.com',
      );
      // Assert
      assert.equal(response.status, 403);
      assert.match(await response.text(), /not an active member/);
    } finally {
      await writesOf(server.app.services).directory.setMemberStatus(grace!.workspaceId, grace!.userId, 'active');
    }
  });

  test("the identity provider's answer is good once: replaying its redirect is refused", async () => {
    // Arrange: capture the redirect from the upstream back to doers.
    const agent = new UserAgent();
    const toUpstream = await agent.follow(authorizeUrl(await registerClient(), pkcePair().challenge));
    const callback = await passUpstream(agent, upstreamUrl, toUpstream.url, DEMO_OWNER.email);
    const first = await agent.follow(callback);
    assert.equal(first.response.status, 200);

    // Act
    const replay = await agent.follow(callback);

    // Assert
    assert.equal(replay.response.status, 400);
    assert.match(await replay.response.text(), /expired/);
  });

  test('the account page signs in through the identity provider too; its answer counts only in the browser that started it', async () => {
    // Arrange: the owner starts signing in to the account page and comes back from the provider.
    const owner = new UserAgent();
    const toUpstream = await owner.follow(`${server.url}/account`);
    assert.equal(toUpstream.url.origin, upstreamUrl);
    const callback = await passUpstream(owner, upstreamUrl, toUpstream.url, DEMO_OWNER.email);

    // Act: someone else's browser opens that redirect first (login CSRF), then the owner's does.
    const stranger = await new UserAgent().fetch(callback);
    const mine = await owner.follow(callback);

    // Assert
    assert.equal(stranger.status, 400);
    assert.equal(
      stranger.headers.getSetCookie().some((c) => c.startsWith('doers-account=')),
      false,
      'no session for the other browser',
    );
    assert.equal(mine.response.status, 200);
    assert.match(await mine.response.text(), new RegExp(`id="who">${DEMO_OWNER.name}`));
  });
});
