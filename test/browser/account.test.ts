import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Page } from 'puppeteer-core';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { DynamoWebhookStore } from '../../lambda/workspace/store/webhook-store.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { screenshot, withPage } from '../helpers/browser.js';
import { modernCall, startTestServer } from '../helpers/local.js';
import { approve, pkcePair } from '../helpers/oauth.js';

/**
 * The account page in headless Chromium with JavaScript off (it must not need it): the development
 * sign-in, personal access tokens made and revoked and used by the official SDK client, connected
 * apps revoked, a viewer's scope ceiling, an admin disabling a member, an admin's webhooks. The principal cache is off,
 * so "refused" means the very next call.
 */
let server: LocalServer;

before(async () => {
  server = await startTestServer({ DOERS_AUTH_CACHE_SECONDS: '0' });
});
after(() => server.close());

const PEOPLE = {
  owner: DEMO_OWNER.email,
  admin: 'grace@example.com',
  member: 'alan@example.com',
  viewer: 'katherine@example.com',
} as const;

/** Opens /account, meets the sign-in, picks the member with this e-mail, lands on the account page. */
const signIn = async (page: Page, email: string): Promise<void> => {
  await page.goto(`${server.url}/account`);
  assert.equal(new URL(page.url()).pathname, '/account/sign-in');
  const index = await page.$$eval(
    'button[name=account]',
    (buttons, e) => buttons.findIndex((b) => b.textContent!.includes(`<${e}>`)),
    email,
  );
  assert.ok(index >= 0, `${email} is offered`);
  await Promise.all([page.waitForNavigation(), page.$$('button[name=account]').then((b) => b[index]!.click())]);
  assert.equal(new URL(page.url()).pathname, '/account');
};

/** Clicks the form button in the table row that has this data attribute value. */
const clickInRow = async (page: Page, attribute: string, value: string, label: string): Promise<void> => {
  const button = await page.$(`tr[${attribute}="${value}"] button[aria-label^="${label}"]`);
  assert.ok(button, `a ${label} button in the row ${attribute}=${value}`);
  await Promise.all([page.waitForNavigation(), button.click()]);
};

const sdkMe = async (token: string): Promise<string> => {
  const client = new Client({ name: 'account-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  try {
    const result = await client.callTool({ name: 'me_get', arguments: {} });
    return (result.content as { text: string }[])[0]!.text;
  } finally {
    await client.close();
  }
};

const mcpStatus = async (token: string) => (await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} }, { token })).status;

describe('the account page', () => {
  test('sign in, create a token, use it with the SDK client, revoke it: its next call is refused', async () => {
    await withPage(async (page) => {
      // Arrange
      await page.setJavaScriptEnabled(false);
      await signIn(page, PEOPLE.owner);
      const cookies = await page.cookies();
      const session = cookies.find((c) => c.name === 'doers-account')!;

      // Act: make a token with the default (read) scopes and 30 days.
      await page.type('#label', 'Browser test token');
      await Promise.all([page.waitForNavigation(), page.click('#create')]);
      const secret = await page.$eval('#secret', (t) => (t as unknown as { value: string }).value);
      const command = await page.$eval('#command', (t) => (t as unknown as { value: string }).value);
      const me = await sdkMe(secret);
      await page.goto(`${server.url}/account`);
      const row = await page.$eval('#tokens tbody tr', (r) => ({ id: r.getAttribute('data-token'), text: r.textContent }));
      await clickInRow(page, 'data-token', row.id!, 'Revoke');
      const notice = await page.$eval('#notice', (n) => n.textContent);
      const changes = await page.$$eval('#my-changes tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));

      // Assert
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Lax');
      assert.equal(session.secure, false, 'loopback http: not Secure (it is __Host- and Secure on https)');
      assert.ok(session.expires > Date.now() / 1000 && session.expires <= Date.now() / 1000 + 31 * 60, 'a short life');
      assert.match(secret, /^doers_pat_/);
      assert.equal(command, `claude mcp add --transport http doers ${server.mcpUrl} --header "Authorization: Bearer ${secret}"`);
      assert.match(me, new RegExp(`${DEMO_OWNER.name}.*owner`));
      assert.match(row.text!, /Browser test token.*tasks:read, team:read/);
      assert.match(notice!, /revoked/);
      assert.equal(await mcpStatus(secret), 401);
      assert.doesNotMatch(page.url(), /doers_pat_/);
      // Both changes are in the activity record, newest first, through this page.
      assert.match(changes[0]!, /account page.*revoked token 'Browser test token'.*act_/);
      assert.match(changes[1]!, /account page.*made token 'Browser test token'.*act_/);
      assert.doesNotMatch(changes.join('\n'), /doers_pat_/, 'never the secret');
    });
  });

  test('an app connected through OAuth is listed under connected apps; revoking it refuses its next call', async () => {
    // Arrange: an assistant connects as the owner (registration, sign-in, consent, token).
    const redirect = 'http://127.0.0.1:5555/cb';
    const { client_id: clientId } = (await (
      await fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Example assistant', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
      })
    ).json()) as { client_id: string };
    const pkce = pkcePair();
    const authorize = new URL(`${server.url}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: redirect,
      scope: 'tasks:read',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(k, v);
    const back = await approve(authorize, { email: PEOPLE.owner });
    const { access_token: accessToken } = (await (
      await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: back.searchParams.get('code')!,
          redirect_uri: redirect,
          client_id: clientId,
          code_verifier: pkce.verifier,
        }).toString(),
      })
    ).json()) as { access_token: string };
    assert.equal(await mcpStatus(accessToken), 200);

    await withPage(async (page) => {
      await page.setJavaScriptEnabled(false);
      await signIn(page, PEOPLE.owner);
      const app = await page.$eval('#apps tbody tr', (r) => ({ id: r.getAttribute('data-grant'), text: r.textContent }));

      // Act
      await screenshot(page, 'account');
      await page.setViewport({ width: 390, height: 844, isMobile: true });
      await screenshot(page, 'account-phone');
      await clickInRow(page, 'data-grant', app.id!, 'Revoke');

      // Assert
      assert.match(app.text!, /Example assistant.*unverified.*tasks:read/);
      assert.match(app.text!, new RegExp(new Date().toISOString().slice(0, 10)), 'last used today (its first call stamped it)');
      assert.match(await page.$eval('#notice', (n) => n.textContent!), /disconnected/);
      assert.equal(await page.$('#apps'), null);
    });
    assert.equal(await mcpStatus(accessToken), 401);
  });

  test('a viewer is offered only read scopes, and a forged form asking for tasks:write makes no token', async () => {
    await withPage(async (page) => {
      // Arrange
      await page.setJavaScriptEnabled(false);
      await signIn(page, PEOPLE.viewer);
      const offered = await page.$$eval('#create-token input[name=scope]', (inputs) =>
        inputs.map((i) => (i as unknown as { value: string }).value),
      );
      const csrf = await page.$eval('#create-token input[name=csrf]', (i) => (i as unknown as { value: string }).value);
      const cookie = (await page.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');

      // Act: the same form, posted with a scope the page did not offer.
      const forged = await fetch(`${server.url}/account/tokens`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams([
          ['csrf', csrf],
          ['label', 'forged'],
          ['days', '30'],
          ['scope', 'tasks:read'],
          ['scope', 'tasks:write'],
        ]).toString(),
      });
      const body = await forged.text();
      await page.reload();

      // Assert
      assert.deepEqual(offered, ['tasks:read', 'team:read']);
      assert.equal(forged.status, 400);
      assert.match(body, /As viewer you can give a token only these scopes: tasks:read, team:read/);
      assert.doesNotMatch(body, /doers_pat_/);
      assert.equal(await page.$('#tokens'), null, 'no token was made');
    });
  });

  test('an admin disables a member, whose next call is refused, and cannot touch an owner', async () => {
    // Arrange: the member has a working token.
    const alan = await server.app.services.directory.findMemberByEmail(PEOPLE.member);
    const secret = generateTokenSecret();
    await writesOf(server.app.services).tokens.register(secret, {
      workspaceId: DEMO_WORKSPACE_ID,
      userId: alan!.userId,
      scopes: ['tasks:read'],
      label: 'alan',
      createdAt: new Date().toISOString(),
    });
    assert.equal(await mcpStatus(secret), 200);

    await withPage(async (page) => {
      await page.setJavaScriptEnabled(false);
      await signIn(page, PEOPLE.admin);
      const ownerRow = await page.$eval(`tr[data-member="${DEMO_OWNER.userId}"]`, (r) => r.querySelector('button') === null);

      // Act
      await clickInRow(page, 'data-member', alan!.userId, 'Disable');

      // Assert
      assert.equal(ownerRow, true, 'an admin is offered no button on an owner');
      assert.match(await page.$eval(`tr[data-member="${alan!.userId}"]`, (r) => r.textContent!), /disabled/);
      assert.equal(await mcpStatus(secret), 403);
      assert.match(await page.$eval('#team-changes tbody tr', (r) => r.textContent!), new RegExp(`account page.*disabled ${alan!.name}`));

      // And back, so the member can work again; the token from before stays dead (a disabled member's
      // credentials never come back by enabling them: they make new ones).
      await clickInRow(page, 'data-member', alan!.userId, 'Enable');
      assert.match(await page.$eval(`tr[data-member="${alan!.userId}"]`, (r) => r.textContent!), /active/);
      assert.equal(await mcpStatus(secret), 401);
    });
  });

  test('an admin adds a webhook, sees its secret once, is refused a metadata address, and removes it', async () => {
    // Arrange: a receiver on this machine (the local server allows loopback receivers, as its notifier does).
    const receiver = createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      await withPage(async (page) => {
        await page.setJavaScriptEnabled(false);
        await signIn(page, PEOPLE.admin);
        const rowsOf = () => page.$$eval('#webhooks tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));

        // Act: add one for two kinds, in Slack's format.
        await page.type('#webhook-url', hookUrl);
        await page.click('input[name=event][value=assigned]');
        await page.click('input[name=event][value=completed]');
        await page.select('#webhook-format', 'slack');
        await Promise.all([page.waitForNavigation(), page.click('#add-webhook-button')]);
        const secret = await page.$eval('#webhook-secret', (t) => (t as unknown as { value: string }).value);
        const added = await rowsOf();
        // A delivery given up, as the dispatcher notes it (webhook-dispatch.ts): the list shows it.
        const store = server.app.services.webhooks;
        assert.ok(store instanceof DynamoWebhookStore);
        const hookId = await page.$eval('#webhooks tbody tr', (r) => r.getAttribute('data-webhook')!);
        const failure = { at: '2026-03-04T05:06:07.000Z', cause: 'http-status', status: 502, noticeId: 'n1' };
        await store.noteFailure(DEMO_WORKSPACE_ID, hookId, failure, true);
        await page.goto(`${server.url}/account`);
        const later = await page.content();
        const failed = await rowsOf();
        const change = await page.$eval('#my-changes tbody tr', (r) => r.textContent!);

        // Assert: the secret once, then only its last four characters.
        assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
        assert.equal(added.length, 1);
        assert.match(added[0]!, new RegExp(`${hookUrl}.*assigned, completed.*slack.*whsec_….*by Grace Hopper.*none`));
        assert.ok(added[0]!.includes(`whsec_…${secret.slice(-4)}`), 'the masked secret ends as the secret does');
        assert.ok(!later.includes(secret.slice(6)), 'the secret is not shown again');
        assert.match(failed[0]!, /last 2026-03-04 05:06 UTC: http-status \(HTTP 502\); 1 delivery given up/);
        assert.match(change, /account page.*added the webhook to 127\.0\.0\.1/);

        // Act: an https URL to the cloud's metadata address.
        await page.type('#webhook-url', 'https://169.254.169.254/latest/meta-data/');
        await Promise.all([page.waitForNavigation(), page.click('#add-webhook-button')]);
        const error = await page.$eval('#webhook-error', (e) => e.textContent!);
        const invalid = await page.$eval('#webhook-url', (i) => i.getAttribute('aria-invalid'));
        const afterRefusal = await rowsOf();

        // Assert
        assert.match(error, /not added\. URL: reaches an address webhooks may not reach \(a metadata address\).*Nothing was written/);
        assert.equal(invalid, 'true');
        assert.equal(afterRefusal.length, 1, 'nothing listed for the refused URL');
        assert.doesNotMatch(afterRefusal.join(), /169\.254/);

        // Act: remove it.
        await clickInRow(page, 'data-webhook', hookId, 'Remove');

        // Assert
        assert.match(await page.$eval('#notice', (n) => n.textContent!), /webhook was removed/);
        assert.equal(await page.$('#webhooks'), null);
        assert.ok(await page.$('#no-webhooks'));
      });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  test('members and viewers see no members or webhooks section; forms without their CSRF token are refused', async () => {
    await withPage(async (page) => {
      await signIn(page, PEOPLE.member);
      const members = await page.$('#members');
      const webhooks = await page.$('#webhooks-section');
      const csrf = await page.$eval('#create-token input[name=csrf]', (i) => (i as unknown as { value: string }).value);
      const cookie = (await page.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
      const post = (path: string, form: Record<string, string>) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          body: new URLSearchParams(form).toString(),
        });
      const res = await post('/account/tokens', { label: 'no csrf', days: '30', scope: 'tasks:read' });
      // The section's form, posted by a member with their own valid CSRF token: the writer's rights check refuses it.
      const forged = await post('/account/webhooks', { csrf, url: 'https://hooks.example.com/doers' });
      const forgedBody = await forged.text();
      assert.equal(members, null);
      assert.equal(webhooks, null);
      assert.equal(res.status, 403);
      assert.equal(forged.status, 403);
      assert.match(forgedBody, /id="error"[^>]*>Refused, role too low: managing webhooks needs the role admin/);
      assert.equal((await server.app.services.webhooks.list(DEMO_WORKSPACE_ID)).length, 0, 'nothing was written');
    });
  });

  test('the page is not frameable, runs no script but the copy button, and works at phone width', async () => {
    await withPage(
      async (page) => {
        await signIn(page, PEOPLE.owner);
        const res = await page.goto(`${server.url}/account`);
        const csp = res!.headers()['content-security-policy'] ?? '';
        const overflow = await page.evaluate(() => {
          const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document
            .documentElement;
          return d.scrollWidth - d.clientWidth;
        });
        assert.match(csp, /frame-ancestors 'none'/);
        assert.doesNotMatch(csp, /script-src/, 'no script on the page without a new token');
        assert.equal(res!.headers()['x-frame-options'], 'DENY');
        assert.ok(overflow <= 0, `no sideways scrolling at 390 px (${overflow} px)`);
      },
      { viewport: { width: 390, height: 844 } },
    );
  });
});
