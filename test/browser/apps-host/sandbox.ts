/**
 * The harness's sandbox proxy (apps protocol 2026-01-26, "Sandbox proxy"): a page on its own
 * origin, served with the view's CSP as a header (test/helpers/apps-host.ts), that loads the view's
 * HTML into an inner iframe and relays messages between the host page and the view, checking who
 * sent each. The inner document is written by this page, so it lives under this page's CSP.
 */
const PROXY_READY = 'ui/notifications/sandbox-proxy-ready';
const RESOURCE_READY = 'ui/notifications/sandbox-resource-ready';

const host = new URL(document.referrer).origin;
const own = location.origin;
if (host === own) throw new Error('the sandbox must have an origin of its own');

const inner = document.createElement('iframe');
inner.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
inner.title = 'MCP Apps view';
document.body.append(inner);

window.addEventListener('message', (event) => {
  if (event.source === window.parent) {
    if (event.origin !== host) return;
    if (event.data?.method === RESOURCE_READY) {
      const doc = inner.contentDocument!;
      doc.open();
      doc.write(String(event.data.params?.html ?? ''));
      doc.close();
    } else if (!String(event.data?.method ?? '').startsWith('ui/notifications/sandbox-')) {
      inner.contentWindow?.postMessage(event.data, own);
    }
  } else if (event.source === inner.contentWindow) {
    if (event.origin !== own) return;
    window.parent.postMessage(event.data, host);
  }
});

window.parent.postMessage({ jsonrpc: '2.0', method: PROXY_READY, params: {} }, host);
