import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { ROOT } from './lambda-bundle.js';

/**
 * The MCP Apps harness's two origins, as a web host must have them (apps protocol 2026-01-26,
 * "Sandbox proxy"): the host page on one loopback port (test/browser/apps-host/host.ts, holding the
 * token and the official client and AppBridge), the sandbox proxy on another
 * (test/browser/apps-host/sandbox.ts), served with the CSP the spec builds from the view's
 * `_meta.ui.csp`, as a header the view cannot loosen.
 */

export interface ViewCsp {
  readonly connectDomains?: readonly string[];
  readonly resourceDomains?: readonly string[];
  readonly frameDomains?: readonly string[];
  readonly baseUriDomains?: readonly string[];
}

/** The spec's construction ("Content Security Policy Enforcement"), with `connect-src` not even `'self'`: a view talks only through the host. */
export const viewCspHeader = (csp: ViewCsp = {}): string => {
  const res = (csp.resourceDomains ?? []).join(' ');
  const list = (...parts: string[]) => parts.filter(Boolean).join(' ');
  return [
    "default-src 'none'",
    `script-src ${list("'self' 'unsafe-inline'", res)}`,
    `style-src ${list("'self' 'unsafe-inline'", res)}`,
    `connect-src ${list(...(csp.connectDomains ?? [])) || "'none'"}`,
    `img-src ${list("'self' data:", res)}`,
    `font-src ${list("'self'", res)}`,
    `media-src ${list("'self' data:", res)}`,
    `frame-src ${list(...(csp.frameDomains ?? [])) || "'none'"}`,
    "object-src 'none'",
    `base-uri ${list(...(csp.baseUriDomains ?? [])) || "'self'"}`,
  ].join('; ');
};

const bundle = async (file: string): Promise<string> => {
  const out = await build({
    entryPoints: [join(ROOT, 'test/browser/apps-host', file)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text.replace(/<\/(script)/gi, '<\\/$1');
};

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const HOST_STYLE = `
  :root { color-scheme: light; font: 14px system-ui, sans-serif; background: #fafafa; color: #18181b; }
  :root[data-theme=dark] { color-scheme: dark; background: #111113; color: #f4f4f5; }
  body { margin: 0; padding: 16px; }
  .turn { max-width: 880px; margin: 0 auto; }
  .bubble { margin: 0 0 12px; opacity: .75 }
  iframe { display: block; width: 100%; height: 120px; border: 0; border-radius: 12px; background: transparent; }
  iframe.bordered { border: 1px solid #d4d4d8; }
  :root[data-theme=dark] iframe.bordered { border-color: #3f3f46; }
`;

export interface AppsHost {
  /** The host page; open it, then drive `window.harness`. */
  readonly url: string;
  readonly sandboxOrigin: string;
  /** The CSP headers the sandbox answered with, in order. */
  readonly cspSent: string[];
  close(): Promise<void>;
}

export const startAppsHost = async (mcpUrl: string, token: string): Promise<AppsHost> => {
  const [hostJs, sandboxJs] = await Promise.all([bundle('host.ts'), bundle('sandbox.ts')]);
  const cspSent: string[] = [];

  const sandboxServer = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    if (req.method !== 'GET' || url.pathname !== '/sandbox.html') {
      res.statusCode = 404;
      res.end();
      return;
    }
    let csp: ViewCsp = {};
    try {
      csp = JSON.parse(url.searchParams.get('csp') ?? '{}') as ViewCsp;
    } catch {
      // a malformed policy is the strictest one
    }
    const header = viewCspHeader(csp);
    cspSent.push(header);
    res.setHeader('content-security-policy', header);
    res.setHeader('cache-control', 'no-store');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>sandbox</title><style>html,body{margin:0;height:100%;background:transparent}iframe{border:0;width:100%;height:100%;display:block}</style></head><body><script>${sandboxJs}</script></body></html>`,
    );
  });
  const sandboxOrigin = await listen(sandboxServer);

  const hostServer = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '/') !== '/') {
      res.statusCode = 404;
      res.end();
      return;
    }
    const config = JSON.stringify({ mcpUrl, token, sandboxUrl: `${sandboxOrigin}/sandbox.html` }).replace(/</g, '\\u003c');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>doers views harness</title><style>${HOST_STYLE}</style></head><body><div class="turn"><p class="bubble" id="bubble">doers</p><div id="slot"></div></div><script>window.HARNESS=${config}</script><script>${hostJs}</script></body></html>`,
    );
  });
  const url = await listen(hostServer);

  const close = (s: Server) => new Promise<void>((ok) => s.close(() => ok()));
  return { url, sandboxOrigin, cspSent, close: async () => void (await Promise.all([close(hostServer), close(sandboxServer)])) };
};
