import { randomBytes } from 'node:crypto';
import { Html, html } from './html.js';

/** A rendered page: status, headers (security headers included) and body. */
export interface Page {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface PageOptions {
  readonly title: string;
  readonly status?: number;
  /**
   * Origins a form on the page may end up at. Browsers apply `form-action` to the redirects after a
   * submission too, and approving sends the browser on to the client's redirect URI.
   */
  readonly formTargets?: readonly string[];
  /**
   * A small script that only enhances the page (a copy button): it runs by nonce, and the page
   * works the same without it.
   */
  readonly script?: string;
  /** A wider column, for tables. */
  readonly wide?: boolean;
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1a1a1a;--bg:#fff;--muted:#555;--line:#d0d0d0;--accent:#0b57d0;--accent-fg:#fff;--warn:#8a4b00;--warn-bg:#fff4e0}
@media (prefers-color-scheme:dark){:root{--fg:#ececec;--bg:#151515;--muted:#b0b0b0;--line:#3a3a3a;--accent:#8ab4f8;--accent-fg:#0d1b2e;--warn:#ffcc80;--warn-bg:#3a2a10}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:34rem;margin:0 auto;padding:2rem 1.25rem}
h1{font-size:1.4rem;margin:0 0 1rem}
p,ul,fieldset{margin:0 0 1rem}
.muted{color:var(--muted)}
.badge{display:inline-block;padding:0 .4rem;border-radius:.3rem;font-size:.85rem;background:var(--warn-bg);color:var(--warn)}
.notice{padding:.75rem 1rem;border-radius:.4rem;background:var(--warn-bg);color:var(--warn)}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:0 0 1rem}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
fieldset{border:1px solid var(--line);border-radius:.4rem;padding:.75rem 1rem}
legend{padding:0 .25rem;font-weight:600}
label{display:flex;gap:.6rem;align-items:flex-start;padding:.35rem 0;cursor:pointer}
input[type=checkbox]{flex:none;width:1.2rem;height:1.2rem;margin-top:.15rem}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
button{font:inherit;padding:.6rem 1.2rem;border-radius:.4rem;border:1px solid var(--line);background:var(--bg);color:var(--fg);cursor:pointer;min-height:2.75rem}
button.primary{background:var(--accent);color:var(--accent-fg);border-color:var(--accent)}
button:focus-visible,input:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
ul.members{list-style:none;padding:0}ul.members li{margin:0 0 .5rem}ul.members button{width:100%;text-align:left}
main.wide{max-width:56rem}
header.account{display:flex;justify-content:space-between;align-items:flex-start;gap:1rem;flex-wrap:wrap;margin:0 0 1.5rem}
header.account p{margin:0}
section{margin:0 0 2.25rem}
h2{font-size:1.15rem;margin:0 0 .75rem}
table{width:100%;border-collapse:collapse;margin:0 0 1rem;font-size:.95rem}
th,td{text-align:left;padding:.5rem .5rem .5rem 0;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600}
td form{margin:0}
td button{padding:.3rem .8rem;min-height:2.25rem}
.field{display:block;margin:0 0 .75rem}
.field>span{display:block;font-weight:600;margin:0 0 .25rem}
input[type=text],select,textarea{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:.4rem;padding:.5rem;width:100%;max-width:28rem}
textarea{max-width:none;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9rem}
.done{padding:.75rem 1rem;border-radius:.4rem;border:1px solid var(--accent);margin:0 0 1.5rem}
.secret{padding:1rem;border:2px solid var(--accent);border-radius:.4rem;margin:0 0 1.5rem}
@media (max-width:40rem){table.stack thead{display:none}table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.5rem 0}table.stack td{display:block;border:0;padding:.15rem 0}table.stack td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}}
`;

/**
 * The page shell and its headers: no script unless the page brings one (by nonce), one stylesheet, nothing
 * loaded from elsewhere, never framed (clickjacking a consent button), never cached, no referrer
 * (the URL holds an interaction id).
 */
export const page = (opts: PageOptions, content: Html): Page => {
  const nonce = randomBytes(16).toString('base64');
  const formAction = ["'self'", ...(opts.formTargets ?? [])].join(' ');
  return {
    status: opts.status ?? 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}';${opts.script ? ` script-src 'nonce-${nonce}';` : ''} img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
    body: html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · doers</title>
<style nonce="${nonce}">${new Html(STYLE)}</style>
</head>
<body>
<main${opts.wide ? html` class="wide"` : ''}>
${content}
</main>
${opts.script ? html`<script nonce="${nonce}">${new Html(opts.script)}</script>` : ''}
</body>
</html>
`.value,
  };
};

/** A page that only says something (an error, a refusal, a dead end). */
export const messagePage = (title: string, message: string, status: number): Page =>
  page({ title, status }, html`<h1>${title}</h1><p>${message}</p>`);
