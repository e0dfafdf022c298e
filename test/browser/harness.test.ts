import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { withPage } from '../helpers/browser.js';

const CSP = "default-src 'none'; form-action 'self'; frame-ancestors 'none'";

// The inline script would rename the field if it ran; the CSP forbids it, so the form posts as written.
const FORM_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>harness form</title></head>
<body>
  <form method="post" action="/submit">
    <input type="hidden" name="origin" value="server">
    <label>Task <input name="task" id="task"></label>
    <button type="submit" id="send">Send</button>
  </form>
  <script>document.querySelector('input[name=origin]').value = 'script';</script>
</body></html>`;

const DONE_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>done</title></head><body><h1 id="done">Received</h1></body></html>`;

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A tiny form site on 127.0.0.1:0 that sends the strict CSP on every response and records POSTs. */
const startFormServer = async () => {
  const posts: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('content-security-policy', CSP);
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (req.method === 'POST' && req.url === '/submit') {
        posts.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.end(DONE_PAGE);
      } else if (req.method === 'GET' && req.url === '/') {
        res.end(FORM_PAGE);
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    posts,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
};

describe('browser harness', () => {
  test('headless Chromium loads a strict-CSP page and submits its form without JavaScript', async (t) => {
    // Arrange
    const site = await startFormServer();
    t.after(site.close);

    // Act
    const seen = await withPage(
      async (page) => {
        const response = await page.goto(`${site.url}/`, { waitUntil: 'load' });
        const cspSent = response?.headers()['content-security-policy'];
        await page.type('#task', 'write the report');
        const [afterSubmit] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#send')]);
        return {
          cspSent,
          status: afterSubmit?.status(),
          finalUrl: page.url(),
          heading: await page.$eval('#done', (el) => el.textContent),
        };
      },
      { viewport: { width: 800, height: 600 } },
    );

    // Assert
    assert.equal(seen.cspSent, CSP);
    assert.equal(seen.status, 200);
    assert.equal(seen.finalUrl, `${site.url}/submit`);
    assert.equal(seen.heading, 'Received');
    assert.equal(site.posts.length, 1);
    const [post] = site.posts;
    assert.equal(post?.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(post?.body)), { origin: 'server', task: 'write the report' });
  });
});
