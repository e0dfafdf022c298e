import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'puppeteer-core';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { screenshot, withPage } from '../helpers/browser.js';
import { callTool, startTestServer } from '../helpers/local.js';
import { pkcePair } from '../helpers/oauth.js';

/**
 * The sign-in and consent pages in headless Chromium, as a person meets them when an assistant
 * connects: JavaScript off (the pages must not need it), the development sign-in, the consent page
 * (kept as docs/screenshots for docs/clients.md, at desktop and phone width), approve or deny. The
 * client's redirect URI is answered by the test inside the browser (request interception), as an
 * assistant's loopback listener would.
 */
const REDIRECT = 'http://127.0.0.1:8090/callback';

/** The part of an input element these tests read (the project compiles without the DOM library). */
interface Checkbox {
  readonly value: string;
  readonly checked: boolean;
}

let server: LocalServer;
let clientId: string;

before(async () => {
  server = await startTestServer();
  const res = await fetch(`${server.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Example assistant', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  clientId = ((await res.json()) as { client_id: string }).client_id;
});
after(() => server.close());

const authorizeUrl = (challenge: string, scope = 'tasks:read tasks:write team:read'): string => {
  const url = new URL(`${server.url}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope,
    resource: server.mcpUrl,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'browser',
  })) {
    url.searchParams.set(k, v);
  }
  return url.href;
};

/** Answers the client's redirect URI inside the browser and reports the URL it was sent to. */
const catchRedirect = async (page: Page): Promise<() => URL | undefined> => {
  let caught: URL | undefined;
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    if (request.url().startsWith(REDIRECT)) {
      caught = new URL(request.url());
      void request.respond({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Connected</title><h1>Connected</h1>' });
    } else void request.continue();
  });
  return () => caught;
};

const signInAsOwner = async (page: Page): Promise<void> => {
  await page.waitForSelector('h1');
  assert.equal(await page.$eval('h1', (h) => h.textContent), 'Development sign-in');
  const button = await page.$$eval(
    'button[name=account]',
    (buttons, email) => buttons.findIndex((b) => b.textContent!.includes(`<${email}>`)),
    DEMO_OWNER.email,
  );
  assert.ok(button >= 0, 'the owner is offered');
  await Promise.all([page.waitForNavigation(), page.$$('button[name=account]').then((b) => b[button]!.click())]);
};

describe('sign-in and consent in a real browser, JavaScript off', () => {
  test('sign in, untick a scope, approve: the client gets a code whose token has only what was left ticked', async () => {
    const pkce = pkcePair();
    const back = await withPage(async (page) => {
      // Arrange
      await page.setJavaScriptEnabled(false);
      const redirected = await catchRedirect(page);
      await page.goto(authorizeUrl(pkce.challenge));
      await screenshot(page, 'sign-in');
      await signInAsOwner(page);

      // Act: the consent page, as shipped, then as a person changes it.
      await page.waitForSelector('#approve');
      const shown = {
        client: await page.$eval('#client-name', (e) => e.textContent),
        unverified: (await page.$('#client-unverified')) !== null,
        person: await page.$eval('#person', (e) => e.textContent),
        workspace: await page.$eval('#workspace', (e) => e.textContent),
        redirectHost: await page.$eval('#redirect-host', (e) => e.textContent),
        scopes: await page.$$eval('input[name=scope]', (inputs) =>
          inputs.map((i) => [(i as unknown as Checkbox).value, (i as unknown as Checkbox).checked]),
        ),
        labelled: await page.$$eval('input[type=checkbox]', (inputs) => inputs.every((i) => i.closest('label') !== null)),
      };
      await screenshot(page, 'consent');
      await page.setViewport({ width: 390, height: 844, isMobile: true });
      await screenshot(page, 'consent-phone');
      await page.setViewport({ width: 1280, height: 900 });
      await page.click('input[value="tasks:write"]');
      await Promise.all([page.waitForNavigation(), page.click('#approve')]);

      // Assert (what the page showed)
      assert.deepEqual(shown, {
        client: 'Example assistant',
        unverified: true,
        person: `${DEMO_OWNER.name} <${DEMO_OWNER.email}>`,
        workspace: 'Demo workspace',
        redirectHost: '127.0.0.1:8090',
        scopes: [
          ['tasks:read', true],
          ['tasks:write', true],
          ['team:read', true],
        ],
        labelled: true,
      });
      return redirected();
    });

    // Assert (what the client got)
    assert.ok(back, 'the browser was sent to the client');
    assert.equal(back.searchParams.get('state'), 'browser');
    const tokens = (await (
      await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: back.searchParams.get('code')!,
          redirect_uri: REDIRECT,
          client_id: clientId,
          code_verifier: pkce.verifier,
        }).toString(),
      })
    ).json()) as { access_token: string; scope: string };
    assert.equal(tokens.scope, 'tasks:read team:read');
    const me = await callTool(server, 'me_get', {}, tokens.access_token);
    assert.equal(me.structuredContent.email, DEMO_OWNER.email);
  });

  test('deny sends the client access_denied and no code', async () => {
    const back = await withPage(async (page) => {
      // Arrange
      await page.setJavaScriptEnabled(false);
      const redirected = await catchRedirect(page);
      await page.goto(authorizeUrl(pkcePair().challenge));
      await signInAsOwner(page);
      await page.waitForSelector('#deny');
      // Act
      await Promise.all([page.waitForNavigation(), page.click('#deny')]);
      return redirected();
    });

    // Assert
    assert.equal(back?.searchParams.get('error'), 'access_denied');
    assert.equal(back?.searchParams.get('code'), null);
  });

  test('the consent page works from the keyboard alone', async () => {
    const back = await withPage(async (page) => {
      // Arrange
      const redirected = await catchRedirect(page);
      await page.goto(authorizeUrl(pkcePair().challenge, 'tasks:read'));
      await signInAsOwner(page);
      await page.waitForSelector('#approve');
      // Act: Tab to the first control (the scope), on to Allow, and press Enter.
      const order: string[] = [];
      for (let i = 0; i < 2; i++) {
        await page.keyboard.press('Tab');
        order.push(
          await page.evaluate(() => {
            const active = (globalThis as unknown as { document: { activeElement: (Checkbox & { id: string }) | null } }).document
              .activeElement;
            return active?.id || active?.value || '';
          }),
        );
      }
      await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
      return { order, back: redirected() };
    });

    // Assert
    assert.deepEqual(back.order, ['tasks:read', 'approve']);
    assert.ok(back.back?.searchParams.get('code'));
  });
});
