import { createHash, randomBytes } from 'node:crypto';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

/**
 * A user agent without a browser: follows the authorization server's redirects by hand, keeps its
 * cookies per origin (paths ignored), and fills in the sign-in and consent forms as a person would.
 * The headless-Chromium test does the same with a real browser; this one lets SDK tests run in
 * milliseconds.
 */
export class UserAgent {
  private readonly jars = new Map<string, Map<string, string>>();

  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    this.jars.set(origin, jar);
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const headers = new Headers(init.headers);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const set of response.headers.getSetCookie()) {
      const [pair = '', ...attrs] = set.split(';');
      const at = pair.indexOf('=');
      const expired = attrs.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired) jar.delete(pair.slice(0, at));
      else jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  }

  /** GETs and follows 30x on the same origin; returns the first answer that is not a local redirect. */
  async follow(url: string | URL, init: RequestInit = {}): Promise<{ response: Response; url: URL }> {
    let current = new URL(url);
    let response = await this.fetch(current, init);
    for (let hops = 0; hops < 10 && response.status >= 300 && response.status < 400; hops++) {
      const next = new URL(response.headers.get('location')!, current);
      if (next.origin !== current.origin) return { response, url: next };
      current = next;
      response = await this.fetch(current);
    }
    return { response, url: current };
  }

  async postForm(url: URL, form: Record<string, string | string[]>): Promise<{ response: Response; url: URL }> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
    return this.follow(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
  }
}

export const formValue = (page: string, name: string): string | undefined => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1];

/** The dev sign-in's button value (the account id) of the member with this e-mail address. */
export const accountButton = (page: string, email: string): string | undefined =>
  new RegExp(`name="account" value="([^"]+)">[^<]*&lt;${email.replace('.', '\\.')}&gt;`).exec(page)?.[1];

export interface ApproveOptions {
  /** Whom to sign in as on the development sign-in (default: the first member listed). */
  readonly email?: string;
  /** Scopes left ticked on the consent page (default: all asked for). */
  readonly scopes?: readonly string[];
  readonly agent?: UserAgent;
}

/**
 * Drives an authorization URL to its end as a person: development sign-in, consent, approve.
 * Returns the URL the authorization server sent the browser back to (the client's redirect URI
 * with `code`, or `error`).
 */
export const approve = async (authorizationUrl: URL | string, opts: ApproveOptions = {}): Promise<URL> => {
  const agent = opts.agent ?? new UserAgent();
  let { response, url } = await agent.follow(authorizationUrl);
  let page = await response.text();
  if (page.includes('Development sign-in')) {
    const account = opts.email ? accountButton(page, opts.email) : formValue(page, 'account');
    if (!account) throw new Error(`no sign-in button for ${opts.email ?? 'any member'}`);
    ({ response, url } = await agent.postForm(new URL(`${url.pathname}/login`, url), { csrf: formValue(page, 'csrf')!, account }));
    if (response.status < 300 || response.status >= 400) page = await response.text();
  }
  if (response.status >= 300 && response.status < 400) return url;
  if (!page.includes('id="approve"')) throw new Error(`expected the consent page, got ${response.status}: ${page.slice(0, 300)}`);
  const asked = [...page.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]!);
  ({ response, url } = await agent.postForm(new URL(`${url.pathname}/consent`, url), {
    csrf: formValue(page, 'csrf')!,
    scope: [...(opts.scopes ?? asked)],
  }));
  if (response.status >= 300 && response.status < 400) return url;
  throw new Error(`consent did not redirect: ${response.status} ${(await response.text()).slice(0, 300)}`);
};

export const pkcePair = (): { verifier: string; challenge: string } => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/**
 * An https server on loopback with a fresh self-signed certificate: where a client's metadata
 * document lives in tests. Its `ca` is what a test-only fetch must trust.
 */
export const startHttpsServer = async (
  handle: (
    path: string,
  ) =>
    | { status: number; headers?: Record<string, string>; body: string }
    | Promise<{ status: number; headers?: Record<string, string>; body: string }>,
): Promise<{ origin: string; ca: string; close(): Promise<void> }> => {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  const server: Server = createHttpsServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    void Promise.resolve(handle(req.url ?? '/')).then((out) => {
      res.writeHead(out.status, out.headers ?? {});
      res.end(out.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: pems.cert,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/**
 * The authorization server's metadata-document fetch for tests: trusts the test's certificate and,
 * unlike the production fetch behind oidc-provider's SSRF guard, may reach loopback. It is handed to
 * `startLocalServer` in code; no configuration can select it.
 */
export const trustingFetch = (ca: string): typeof globalThis.fetch => {
  // The dispatcher class of Node's own fetch (undici is not a dependency of ours); touching
  // `Response` loads it, as oidc-provider does for its SSRF guard.
  void globalThis.Response;
  const Agent = (globalThis as Record<symbol, { constructor: new (opts: unknown) => unknown } | undefined>)[
    Symbol.for('undici.globalDispatcher.1')
  ]!.constructor;
  const dispatcher = new Agent({ connect: { ca } });
  return (url, init) => globalThis.fetch(url, { ...init, dispatcher } as RequestInit);
};
