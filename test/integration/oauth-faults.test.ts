import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { type DynamoProxy, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { formValue, pkcePair, UserAgent } from '../helpers/oauth.js';

// The authorization server's function and the account page under a throttled DynamoDB (the fault
// proxy the MCP tests use): every page answers 503 with Retry-After and a page that says to try
// again, the token endpoint an OAuth `temporarily_unavailable` document; never a 500. Once DynamoDB
// answers again, the same step works.

let proxied: Awaited<ReturnType<typeof startProxiedServer>>;
let server: LocalServer;
let proxy: DynamoProxy;
const REDIRECT = 'http://127.0.0.1:5555/cb';

before(async () => {
  proxied = await startProxiedServer();
  ({ server, proxy } = proxied);
});
after(() => proxied.close());
beforeEach(() => {
  proxy.mode = 'pass';
});

const register = async (): Promise<string> => {
  const res = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Faults' }),
  });
  return ((await res.json()) as { client_id: string }).client_id;
};

const authorizeUrl = (clientId: string, challenge: string): URL => {
  const url = new URL(`${server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'tasks:read',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  return url;
};

const assertBusyPage = async (response: Response, what: string) => {
  const body = await response.text();
  assert.equal(response.status, 503, `${what}: ${body.slice(0, 200)}`);
  assert.equal(response.headers.get('retry-after'), '1', what);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/, what);
  assert.match(body, /Try again in a moment/, what);
  assert.doesNotMatch(body, /ThrottlingException|Rate of requests|at async/, `${what}: no internals`);
};

/** Signs in on the development sign-in and returns the consent page's URL and body. */
const toConsent = async (agent: UserAgent, url: URL) => {
  let { response, url: at } = await agent.follow(url);
  const signIn = await response.text();
  ({ response, url: at } = await agent.postForm(new URL(`${at.pathname}/login`, at), {
    csrf: formValue(signIn, 'csrf')!,
    account: formValue(signIn, 'account')!,
  }));
  return { url: at, page: await response.text() };
};

describe('a throttled DynamoDB behind the authorization server', () => {
  test('the authorization request and the sign-in page answer 503 with Retry-After, and work once DynamoDB does', async () => {
    // Arrange
    const clientId = await register();
    const url = authorizeUrl(clientId, pkcePair().challenge);
    const agent = new UserAgent();

    // Act: the first request (the library reads the client)
    proxy.mode = 'throttle';
    const refused = await agent.fetch(url);
    await assertBusyPage(refused, 'authorization request');

    // Act: the sign-in page of an interaction that exists (its record is read)
    proxy.mode = 'pass';
    const started = await agent.fetch(url);
    const interaction = new URL(started.headers.get('location')!, server.url);
    proxy.mode = 'throttle';
    await assertBusyPage(await agent.fetch(interaction), 'sign-in page');

    // Assert: the same page works again
    proxy.mode = 'pass';
    const again = await agent.fetch(interaction);
    assert.equal(again.status, 200);
    assert.match(await again.text(), /Development sign-in/);
  });

  test('approving on the consent page answers 503 and grants nothing; approving again works', async () => {
    // Arrange
    const clientId = await register();
    const agent = new UserAgent();
    const consent = await toConsent(agent, authorizeUrl(clientId, pkcePair().challenge));
    assert.match(consent.page, /id="approve"/);

    // Act
    proxy.mode = 'throttle';
    const body = new URLSearchParams({ csrf: formValue(consent.page, 'csrf')!, scope: 'tasks:read' }).toString();
    const post = () =>
      agent.fetch(new URL(`${consent.url.pathname}/consent`, consent.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    const refused = await post();

    // Assert
    await assertBusyPage(refused, 'consent');
    proxy.mode = 'pass';
    const approved = await post();
    assert.equal(approved.status, 303);
  });

  test('the token endpoint answers 503 temporarily_unavailable with Retry-After; the code still works afterwards', async () => {
    // Arrange: a code, as a client gets it
    const clientId = await register();
    const pkce = pkcePair();
    const agent = new UserAgent();
    const consent = await toConsent(agent, authorizeUrl(clientId, pkce.challenge));
    const { url: back } = await agent.postForm(new URL(`${consent.url.pathname}/consent`, consent.url), {
      csrf: formValue(consent.page, 'csrf')!,
      scope: 'tasks:read',
    });
    const code = back.searchParams.get('code')!;
    const redeem = () =>
      fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: clientId,
          code_verifier: pkce.verifier,
        }).toString(),
      });

    // Act
    proxy.mode = 'throttle';
    const refused = await redeem();

    // Assert
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.deepEqual(await refused.json(), {
      error: 'temporarily_unavailable',
      error_description: 'The authorization server cannot answer right now; retry shortly',
    });
    proxy.mode = 'pass';
    const tokens = await redeem();
    assert.equal(tokens.status, 200, await tokens.clone().text());
    assert.ok(((await tokens.json()) as { access_token?: string }).access_token);
  });

  test('the account page and its sign-in answer 503 with Retry-After', async () => {
    // Arrange: signed in on the account page
    const agent = new UserAgent();
    const { response } = await agent.follow(`${server.url}/account/sign-in`);
    const signIn = await response.text();
    const signedIn = await agent.postForm(new URL(`${server.url}/account/sign-in`), {
      csrf: formValue(signIn, 'csrf')!,
      account: formValue(signIn, 'account')!,
    });
    assert.equal(signedIn.response.status, 200);

    // Act
    proxy.mode = 'throttle';
    const page = await agent.fetch(`${server.url}/account`);
    const signInPage = await agent.fetch(`${server.url}/account/sign-in`);

    // Assert
    await assertBusyPage(page, 'account page');
    await assertBusyPage(signInPage, 'account sign-in');
  });

  test('a registration while the registration counter is throttled answers 503 temporarily_unavailable', async () => {
    // Act
    proxy.mode = 'throttle';
    const res = await fetch(`${server.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });

    // Assert
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '1');
    assert.equal(((await res.json()) as { error: string }).error, 'temporarily_unavailable');
  });
});
