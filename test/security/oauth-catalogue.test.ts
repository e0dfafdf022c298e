import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, generateKeyPair, SignJWT } from 'jose';
import { DynamoGrantStore } from '../../lambda/auth/grants.js';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { modernCall, startTestServer } from '../helpers/local.js';
import { approve, formValue, pkcePair, startHttpsServer, trustingFetch, UserAgent } from '../helpers/oauth.js';

/**
 * The negative catalogue of the built-in authorization server (issue 12): every attempt is refused
 * and no token comes out of it; no error path sends the browser anywhere the client did not
 * register. Tokens it did issue stop at the MCP endpoint when their grant is gone. The principal
 * cache is off here, so "stops" means the very next call.
 */
const REDIRECT = 'http://127.0.0.1:5555/cb';

let server: LocalServer;
let guarded: LocalServer; // the production metadata-document fetch, SSRF guard and all
let documents: Awaited<ReturnType<typeof startHttpsServer>>;
/** Two registered clients shared by the tests: registrations per address are limited (one test proves it). */
let clients: readonly [string, string];

const docFor = (path: string, overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    client_id: `${documents.origin}${path}`,
    client_name: 'Catalogue client',
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    ...overrides,
  });

before(async () => {
  documents = await startHttpsServer(async (path) => {
    const json = { 'content-type': 'application/json' };
    switch (path) {
      case '/good.json':
        return { status: 200, headers: json, body: docFor(path) };
      case '/mismatch.json':
        return { status: 200, headers: json, body: docFor(path, { client_id: `${documents.origin}/other.json` }) };
      case '/redirect.json':
        return { status: 302, headers: { location: `${documents.origin}/good.json` }, body: '' };
      case '/oversize.json':
        return { status: 200, headers: json, body: docFor(path, { client_name: 'x'.repeat(6 * 1024) }) };
      case '/html.json':
        return { status: 200, headers: { 'content-type': 'text/html' }, body: docFor(path) };
      case '/slow.json':
        await new Promise((resolve) => setTimeout(resolve, 3_500));
        return { status: 200, headers: json, body: docFor(path) };
      default:
        return { status: 404, body: '' };
    }
  });
  [server, guarded] = await Promise.all([
    startTestServer({ DOERS_AUTH_CACHE_SECONDS: '0' }, { oauthFetch: trustingFetch(documents.ca) }),
    startTestServer({ DOERS_AUTH_CACHE_SECONDS: '0' }),
  ]);
});
after(async () => {
  await Promise.all([server.close(), guarded.close()]);
  await documents.close();
});

const register = async (target: LocalServer, metadata: Record<string, unknown>) => {
  const res = await fetch(`${target.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Catalogue client', ...metadata }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
};

const registerOk = async (): Promise<string> => {
  const { status, body } = await register(server, {});
  assert.equal(status, 201, JSON.stringify(body));
  return body.client_id!;
};
const newClient = async (): Promise<string> => {
  clients ??= [await registerOk(), await registerOk()];
  return clients[0];
};

const authorizeUrl = (clientId: string, params: Record<string, string | undefined> = {}, target = server): URL => {
  const url = new URL(`${target.url}/oauth/authorize`);
  const all: Record<string, string | undefined> = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'tasks:read tasks:write',
    resource: target.mcpUrl,
    state: 'catalogue',
    code_challenge_method: 'S256',
    ...params,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v);
  return url;
};

const tokenRequest = async (form: Record<string, string>, target = server) => {
  const res = await fetch(`${target.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
};

/** A whole authorization as a person would do it: code, then tokens. */
const authorize = async (clientId: string, opts: { scopes?: string[] } = {}) => {
  const pkce = pkcePair();
  const back = await approve(authorizeUrl(clientId, { code_challenge: pkce.challenge }), {
    email: DEMO_OWNER.email,
    ...(opts.scopes ? { scopes: opts.scopes } : {}),
  });
  const code = back.searchParams.get('code');
  assert.ok(code, `no code in ${back.href}`);
  const tokens = await tokenRequest({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    client_id: clientId,
    code_verifier: pkce.verifier,
    resource: server.mcpUrl,
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  return { code, pkce, tokens: tokens.body };
};

const mcpStatus = async (token: string) => (await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token })).status;

/** An authorization request refused before any page: no redirect anywhere, the error on our page. */
const assertRefusedOnPage = async (url: URL, expected: RegExp) => {
  const res = await fetch(url, { redirect: 'manual' });
  const body = await res.text();
  assert.equal(res.status, 400, body.slice(0, 200));
  assert.equal(res.headers.get('location'), null);
  assert.match(body, expected);
  assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
};

describe('redirect URIs are matched exactly', () => {
  for (const [label, uri] of [
    ['another path', 'http://127.0.0.1:5555/cb/extra'],
    ['an added query', 'http://127.0.0.1:5555/cb?next=https://evil.example'],
    ['another port', 'http://127.0.0.1:5556/cb'],
    ['another host', 'https://evil.example/cb'],
  ] as const) {
    test(`a redirect_uri with ${label} is refused on our page, never followed`, async () => {
      // Arrange
      const client = await newClient();
      // Act + Assert
      await assertRefusedOnPage(authorizeUrl(client, { redirect_uri: uri, code_challenge: pkcePair().challenge }), /redirect_uri/);
    });
  }

  test("an unknown client with an attacker's redirect_uri gets our error page, no redirect", async () => {
    await assertRefusedOnPage(
      authorizeUrl('no-such-client', { redirect_uri: 'https://evil.example/cb', code_challenge: pkcePair().challenge }),
      /client/i,
    );
  });
});

describe('PKCE S256 is required', () => {
  test('an authorization request without a code challenge is refused', async () => {
    await assertRefusedOnPage(authorizeUrl(await newClient(), { code_challenge_method: undefined }), /PKCE/);
  });

  test('the plain method is refused', async () => {
    const { verifier } = pkcePair();
    await assertRefusedOnPage(
      authorizeUrl(await newClient(), { code_challenge: verifier, code_challenge_method: 'plain' }),
      /code_challenge_method/,
    );
  });

  test('a code redeemed with the wrong verifier gives no token', async () => {
    // Arrange
    const client = await newClient();
    const back = await approve(authorizeUrl(client, { code_challenge: pkcePair().challenge }), { email: DEMO_OWNER.email });
    // Act
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: client,
      code_verifier: pkcePair().verifier,
    });
    // Assert
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_grant');
    assert.equal(res.body.access_token, undefined);
  });
});

describe('authorization codes', () => {
  test('a code used twice is refused the second time and revokes the grant: the first token stops', async () => {
    // Arrange
    const client = await newClient();
    const { code, pkce, tokens } = await authorize(client);
    assert.equal(await mcpStatus(tokens.access_token!), 200);
    // Act
    const replay = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: client,
      code_verifier: pkce.verifier,
    });
    // Assert
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, 'invalid_grant');
    assert.equal(await mcpStatus(tokens.access_token!), 401);
  });

  test('two redemptions of one code at the same moment: at most one token', async () => {
    // Arrange
    const client = await newClient();
    const pkce = pkcePair();
    const back = await approve(authorizeUrl(client, { code_challenge: pkce.challenge }), { email: DEMO_OWNER.email });
    const form = {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: client,
      code_verifier: pkce.verifier,
    };
    // Act
    const answers = await Promise.all([tokenRequest(form), tokenRequest(form), tokenRequest(form)]);
    // Assert
    const issued = answers.filter((a) => a.status === 200);
    assert.ok(issued.length <= 1, `${issued.length} tokens for one code`);
    for (const a of answers.filter((x) => x.status !== 200)) assert.equal(a.body.error, 'invalid_grant');
  });

  test('a code of another client is refused', async () => {
    // Arrange
    await newClient();
    const [owner, thief] = clients;
    const pkce = pkcePair();
    const back = await approve(authorizeUrl(owner, { code_challenge: pkce.challenge }), { email: DEMO_OWNER.email });
    // Act
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: thief,
      code_verifier: pkce.verifier,
    });
    // Assert
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_grant');
  });
});

describe('refresh tokens rotate; a spent one revokes the grant', () => {
  test('reusing a spent refresh token is refused and stops the newest access token too', async () => {
    // Arrange
    const client = await newClient();
    const { tokens } = await authorize(client);
    const rotated = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client });
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.refresh_token, tokens.refresh_token);
    assert.equal(await mcpStatus(rotated.body.access_token!), 200);
    // Act
    const replay = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client });
    // Assert
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, 'invalid_grant');
    assert.equal(await mcpStatus(rotated.body.access_token!), 401);
    const again = await tokenRequest({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token!, client_id: client });
    assert.equal(again.body.error, 'invalid_grant');
  });

  test('a refresh cannot widen the scope that was granted', async () => {
    // Arrange: the person unticked tasks:write on the consent page.
    const client = await newClient();
    const { tokens } = await authorize(client, { scopes: ['tasks:read'] });
    assert.equal(decodeJwt(tokens.access_token!).scope, 'tasks:read');
    // Act
    const res = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: client,
      scope: 'tasks:read tasks:write',
    });
    // Assert
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_scope');
  });
});

describe('the resource is the MCP URL and nothing else', () => {
  test('an authorization request for another resource is refused', async () => {
    await assertRefusedOnPage(
      authorizeUrl(await newClient(), { resource: 'https://evil.example/mcp', code_challenge: pkcePair().challenge }),
      /resource/,
    );
  });

  test('a token request for another resource is refused', async () => {
    // Arrange
    const client = await newClient();
    const pkce = pkcePair();
    const back = await approve(authorizeUrl(client, { code_challenge: pkce.challenge }), { email: DEMO_OWNER.email });
    // Act
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: client,
      code_verifier: pkce.verifier,
      resource: 'https://evil.example/mcp',
    });
    // Assert
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_target');
  });

  test('issued access tokens name the MCP URL as audience and are refused by it when tampered with', async () => {
    // Arrange
    const { tokens } = await authorize(await newClient());
    const claims = decodeJwt(tokens.access_token!);
    const { privateKey } = await generateKeyPair('ES256');
    const [header] = tokens.access_token!.split('.');
    const kid = JSON.parse(Buffer.from(header!, 'base64url').toString()).kid as string;
    const forge = (extra: Record<string, unknown>, typ = 'at+jwt') =>
      new SignJWT({ ...claims, ...extra }).setProtectedHeader({ alg: 'ES256', typ, kid }).sign(privateKey);
    // Act + Assert
    assert.equal(claims.aud, server.mcpUrl);
    assert.equal(await mcpStatus(await forge({})), 401, 'signed with another key under the right kid');
    const [h, , s] = tokens.access_token!.split('.');
    const widened = Buffer.from(JSON.stringify({ ...claims, scope: 'tasks:read tasks:write team:admin' })).toString('base64url');
    assert.equal(await mcpStatus(`${h}.${widened}.${s}`), 401, 'payload changed after signing');
  });
});

describe('Client ID Metadata Documents are fetched with limits', () => {
  test('a good document is accepted (the control for the cases below)', async () => {
    const res = await fetch(authorizeUrl(`${documents.origin}/good.json`, { code_challenge: pkcePair().challenge }), {
      redirect: 'manual',
    });
    assert.equal(res.status, 303);
    assert.match(res.headers.get('location') ?? '', /^\/oauth\/interaction\//);
  });

  for (const [label, path] of [
    ['whose client_id is not its URL', '/mismatch.json'],
    ['answered with a redirect', '/redirect.json'],
    ['larger than 5 KB', '/oversize.json'],
    ['not served as JSON', '/html.json'],
    ['slower than 2.5 s', '/slow.json'],
  ] as const) {
    test(`a document ${label} is refused, nothing redirected`, async () => {
      await assertRefusedOnPage(authorizeUrl(`${documents.origin}${path}`, { code_challenge: pkcePair().challenge }), /client/i);
    });
  }

  test('a document on a private or loopback address is not fetched by the deployed fetch', async () => {
    // Arrange: the same document, but the server uses the production fetch behind the SSRF guard.
    const url = authorizeUrl(`${documents.origin}/good.json`, { code_challenge: pkcePair().challenge }, guarded);
    // Act + Assert
    await assertRefusedOnPage(url, /client/i);
  });

  test('a plain-http document URL is not a client id', async () => {
    await assertRefusedOnPage(authorizeUrl(`http://127.0.0.1:9/client.json`, { code_challenge: pkcePair().challenge }), /client/i);
  });
});

describe('Dynamic Client Registration', () => {
  for (const [label, uri] of [
    ['a javascript: URI', 'javascript:alert(1)'],
    ['plain http to a host on the network', 'http://evil.example/cb'],
    ['a custom scheme', 'doers-evil://cb'],
  ] as const) {
    test(`a redirect URI with ${label} is refused`, async () => {
      const { status, body } = await register(server, { redirect_uris: [uri] });
      assert.equal(status, 400);
      assert.match(body.error!, /invalid_redirect_uri|invalid_client_metadata/);
    });
  }

  test('https and loopback http redirect URIs are accepted', async () => {
    const { status } = await register(server, {
      redirect_uris: ['https://app.example/cb', 'http://localhost:33418/callback', 'http://[::1]:8080/cb'],
    });
    assert.equal(status, 201);
  });

  for (const path of ['/oauth/register/', '/oauth/REGISTER', '/oauth/Register', '/oauth/register/.', '/oauth/reg']) {
    test(`${path} is not another way to register (404)`, async () => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
      assert.equal(res.status, 404);
    });
  }

  test('a registration larger than 8 KB is refused (413) and not stored', async () => {
    const { status, body } = await register(server, { client_name: 'x'.repeat(9 * 1024) });
    assert.equal(status, 413);
    assert.equal(body.client_id, undefined);
  });

  test('one address may register only so many clients per hour', async () => {
    // Arrange: a server of its own, so the other tests' registrations do not count.
    const fresh = await startTestServer();
    try {
      // Act
      const answers: number[] = [];
      for (let i = 0; i < 21; i++) answers.push((await register(fresh, {})).status);
      const refused = await fetch(`${fresh.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
      // Assert
      assert.deepEqual(answers.slice(0, 20), Array(20).fill(201));
      assert.equal(answers[20], 429);
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
    } finally {
      await fresh.close();
    }
  });
});

describe('the consent form', () => {
  const toConsent = async () => {
    const agent = new UserAgent();
    let { response, url } = await agent.follow(authorizeUrl(await newClient(), { code_challenge: pkcePair().challenge }));
    const signIn = await response.text();
    const account = /name="account" value="([^"]+)"/.exec(signIn)![1]!;
    ({ response, url } = await agent.postForm(new URL(`${url.pathname}/login`, url), { csrf: formValue(signIn, 'csrf')!, account }));
    return { agent, url, page: await response.text() };
  };

  for (const [label, csrf] of [
    ['without its CSRF token', undefined],
    ["with another interaction's token", 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ] as const) {
    test(`approving ${label} is refused and issues no code`, async () => {
      // Arrange
      const { agent, url, page } = await toConsent();
      assert.match(page, /id="approve"/);
      // Act
      const { response } = await agent.postForm(new URL(`${url.pathname}/consent`, url), {
        ...(csrf ? { csrf } : {}),
        scope: 'tasks:read',
      });
      // Assert
      assert.equal(response.status, 403);
      assert.equal(response.headers.get('location'), null);
    });
  }

  test('the sign-in form without its CSRF token is refused', async () => {
    const agent = new UserAgent();
    const { response, url } = await agent.follow(authorizeUrl(await newClient(), { code_challenge: pkcePair().challenge }));
    const page = await response.text();
    const res = await agent.postForm(new URL(`${url.pathname}/login`, url), { account: /name="account" value="([^"]+)"/.exec(page)![1]! });
    assert.equal(res.response.status, 403);
  });

  test('a request without scope asks for the default, every scope the metadata lists, each to untick', async () => {
    // Arrange
    const agent = new UserAgent();
    const signIn = await agent.follow(authorizeUrl(await newClient(), { scope: undefined, code_challenge: pkcePair().challenge }));
    const signInPage = await signIn.response.text();
    // Act
    const consent = await agent.postForm(new URL(`${signIn.url.pathname}/login`, signIn.url), {
      csrf: formValue(signInPage, 'csrf')!,
      account: /name="account" value="([^"]+)"/.exec(signInPage)![1]!,
    });
    // Assert
    assert.deepEqual(
      [...(await consent.response.text()).matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]),
      ['tasks:read', 'tasks:write', 'team:read', 'team:admin'],
    );
  });

  test('scopes the app already holds are shown as already allowed, not as choices', async () => {
    // Arrange: a first consent with tasks:read, in this browser.
    const agent = new UserAgent();
    const client = await newClient();
    await approve(authorizeUrl(client, { scope: 'tasks:read', code_challenge: pkcePair().challenge }), { agent, email: DEMO_OWNER.email });
    // Act: the same app asks for more.
    const { response } = await agent.follow(authorizeUrl(client, { scope: 'tasks:read team:read', code_challenge: pkcePair().challenge }));
    const page = await response.text();
    // Assert
    assert.deepEqual(
      [...page.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]),
      ['team:read'],
    );
    assert.match(page, /id="already-allowed">Already allowed: Read tasks/);
  });

  test('denying sends access_denied to the client, no code', async () => {
    // Arrange
    const { agent, url, page } = await toConsent();
    // Act
    const { response, url: back } = await agent.postForm(new URL(`${url.pathname}/abort`, url), { csrf: formValue(page, 'csrf')! });
    // Assert
    assert.equal(response.status, 303);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('code'), null);
  });

  test('the pages cannot be framed and run no script', async () => {
    const { agent, url } = await toConsent();
    const res = await agent.fetch(url);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /script-src/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });
});

describe('error paths never redirect off-site', () => {
  test("a client registered with an attacker's https URI gets no redirect there from an error before any page (prompt=none, bad parameters)", async () => {
    // Arrange: open registration lets anyone name any https redirect URI.
    const evil = 'https://evil.example/phish';
    const { body } = await register(server, { redirect_uris: [evil] });
    const url = (extra: Record<string, string | undefined>) =>
      authorizeUrl(body.client_id!, { redirect_uri: evil, code_challenge: pkcePair().challenge, ...extra });
    // Act + Assert
    await assertRefusedOnPage(url({ prompt: 'none' }), /authentication is required/);
    await assertRefusedOnPage(url({ scope: 'tasks:read', code_challenge_method: 'plain' }), /code_challenge_method/);
  });

  for (const mode of ['form_post', 'fragment', 'web_message']) {
    test(`response_mode=${mode} is refused on our page`, async () => {
      await assertRefusedOnPage(
        authorizeUrl(await newClient(), { code_challenge: pkcePair().challenge, response_mode: mode }),
        /response_mode/,
      );
    });
  }

  test('an authorization request by POST is refused on our page', async () => {
    const res = await fetch(`${server.url}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: authorizeUrl(await newClient(), { code_challenge: pkcePair().challenge }).search.slice(1),
    });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('location'), null);
  });

  for (const path of [
    '/oauth/interaction/not-an-interaction',
    '/oauth/interaction/not-an-interaction/callback?state=x&code=y',
    '/oauth/callback?state=forged&code=y',
    '/oauth/callback?error=access_denied&state=forged&redirect_uri=https://evil.example',
  ]) {
    test(`GET ${path} answers with our page`, async () => {
      const res = await fetch(`${server.url}${path}`, { redirect: 'manual' });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get('location'), null);
    });
  }
});

describe('the account page over plain HTTP', () => {
  /** Signs in to the account page with the development sign-in; returns the agent and the page's CSRF token. */
  const signedIn = async () => {
    const agent = new UserAgent();
    const form = await agent.follow(`${server.url}/account`);
    const page = await form.response.text();
    await agent.postForm(new URL('/account/sign-in', server.url), {
      csrf: formValue(page, 'csrf')!,
      account: /name="account" value="([^"]+)"/.exec(page)![1]!,
    });
    const account = await agent.fetch(`${server.url}/account`);
    return { agent, csrf: formValue(await account.text(), 'csrf')! };
  };

  test('an id that is not valid percent-encoding is 404, not 500', async () => {
    const { agent, csrf } = await signedIn();
    for (const path of ['/account/tokens/%E0%A4%A/revoke', '/account/apps/%/revoke', '/account/members/%ZZ/disable']) {
      const res = await agent.fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf }).toString(),
      });
      assert.equal(res.status, 404, path);
    }
  });

  test("signing out ends the account session and the authorization server's sign-in session", async () => {
    const { agent, csrf } = await signedIn();
    const res = await agent.fetch(`${server.url}/account/sign-out`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf }).toString(),
    });
    const cleared = res.headers
      .getSetCookie()
      .filter((c) => /Max-Age=0/.test(c))
      .map((c) => c.slice(0, c.indexOf('=')));
    assert.equal(res.status, 303);
    assert.deepEqual(cleared.sort(), ['_session', '_session.sig', 'doers-account']);
    assert.equal((await agent.fetch(`${server.url}/account`)).headers.get('location'), '/account/sign-in');
  });
});

describe('the development sign-in', () => {
  test('is not offered when the public URL is not loopback, even by the local server', async () => {
    // Arrange: the same code with a deployed-looking public URL and no identity provider configured.
    const remote = await startTestServer({ DOERS_PUBLIC_URL: 'https://doers.example' });
    try {
      const { body } = await register(remote, {});
      const agent = new UserAgent();
      // Act
      const interaction = await agent.follow(
        authorizeUrl(body.client_id!, { code_challenge: pkcePair().challenge, resource: 'https://doers.example/mcp' }, remote),
      );
      const page = await interaction.response.text();
      const account = await fetch(`${remote.url}/account/sign-in`, { redirect: 'manual' });
      // Assert
      assert.equal(interaction.response.status, 503, page.slice(0, 200));
      assert.doesNotMatch(page, /Development sign-in|name="account"/);
      assert.equal(account.status, 503);
    } finally {
      await remote.close();
    }
  });
});

describe('the local server', () => {
  test('answers the sign-in and account pages to loopback hosts only (DNS rebinding)', async () => {
    for (const path of ['/account/sign-in', '/account', '/oauth/register', '/.well-known/oauth-authorization-server']) {
      // fetch will not send a forged Host; node:http will.
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${server.url}${path}`, { headers: { host: 'evil.example:1234' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 403, path);
    }
  });
});

describe('forged forwarding headers', () => {
  test('change none of the URLs the authorization server advertises or redirects to', async () => {
    // Arrange
    const forged = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', forwarded: 'host=evil.example;proto=https' };
    // Act
    const meta = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`, { headers: forged })).json()) as Record<
      string,
      string
    >;
    const authz = await fetch(authorizeUrl(await newClient(), { code_challenge: pkcePair().challenge }), {
      headers: forged,
      redirect: 'manual',
    });
    // Assert
    assert.equal(meta.issuer, server.url);
    for (const key of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint', 'jwks_uri']) {
      assert.ok(meta[key]!.startsWith(`${server.url}/oauth/`), `${key}: ${meta[key]}`);
    }
    assert.doesNotMatch(authz.headers.get('location') ?? '', /evil\.example/);
    assert.doesNotMatch(authz.headers.get('set-cookie') ?? '', /secure/i, 'cookies follow the public URL (http here), not a forged proto');
  });
});

describe('revoking a grant', () => {
  test('stops its access token at the MCP endpoint and its refresh token at the token endpoint', async () => {
    // Arrange
    const client = await newClient();
    const { tokens } = await authorize(client);
    const grantId = decodeJwt(tokens.access_token!).gid as string;
    const store = new DynamoGrantStore(createDocumentClient({ endpoint: server.dynamodbEndpoint }), server.app.config.tables.workspace);
    assert.equal(await mcpStatus(tokens.access_token!), 200);
    // Act
    assert.equal(await store.revoke(grantId), true);
    // Assert
    assert.equal(await mcpStatus(tokens.access_token!), 401);
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: client });
    assert.equal(refresh.body.error, 'invalid_grant');
  });

  test('through the revocation endpoint (RFC 7009) with the refresh token', async () => {
    // Arrange
    const client = await newClient();
    const { tokens } = await authorize(client);
    // Act
    const res = await fetch(`${server.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token!, client_id: client }).toString(),
    });
    // Assert
    assert.equal(res.status, 200);
    assert.equal(await mcpStatus(tokens.access_token!), 401);
  });
});
