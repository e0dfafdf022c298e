/**
 * The harness's host page: what a web host such as claude.ai does with a doers view, with the
 * official pieces. The official 2026-07-28 client (`@modelcontextprotocol/client`, declaring the
 * MCP Apps extension) talks to the server; the official `AppBridge` talks to the view through the
 * sandbox proxy on a second origin (sandbox.ts). `harness.show()` runs one tool call as a host
 * would: read the tool's `ui://` resource, load it, hand the view the tool's input and result, and
 * let the view call tools through the bridge. The test drives it through `window.harness`.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AppBridge,
  getToolUiResourceUri,
  type McpUiHostContext,
  type McpUiResourceCsp,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
} from '@modelcontextprotocol/ext-apps/app-bridge';

interface HarnessConfig {
  readonly mcpUrl: string;
  readonly token: string;
  readonly sandboxUrl: string;
}

export interface ShowOptions {
  readonly tool: string;
  readonly args?: Record<string, unknown>;
  readonly theme?: 'light' | 'dark';
}

export interface Shown {
  readonly uri: string;
  readonly mimeType: string | undefined;
  readonly csp: McpUiResourceCsp | undefined;
  readonly prefersBorder: boolean | undefined;
}

const config = (window as unknown as { HARNESS: HarnessConfig }).HARNESS;
const HOST_INFO = { name: 'doers-apps-harness', version: '1.0.0' };

/** What the views told the model, newest last (the host keeps only the last, as the spec allows). */
const modelContext: string[] = [];

let connected: Promise<Client> | undefined;
const client = (): Promise<Client> => {
  connected ??= (async () => {
    const c = new Client(HOST_INFO, {
      capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [RESOURCE_MIME_TYPE] } } },
      versionNegotiation: { mode: 'auto' },
    });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(config.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${config.token}` } } }),
    );
    return c;
  })();
  return connected;
};

let bridge: AppBridge | undefined;

const show = async (opts: ShowOptions): Promise<Shown> => {
  const mcp = await client();
  const theme = opts.theme ?? 'light';
  document.documentElement.dataset.theme = theme;
  const { tools } = await mcp.listTools();
  const tool = tools.find((t) => t.name === opts.tool);
  const uri = tool && getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${opts.tool} has no view`);
  const content = (await mcp.readResource({ uri })).contents[0] as { mimeType?: string; text?: string; _meta?: Record<string, any> };
  if (content.mimeType !== RESOURCE_MIME_TYPE || typeof content.text !== 'string') throw new Error(`${uri} is not an MCP Apps view`);
  const ui = content._meta?.ui as { csp?: McpUiResourceCsp; prefersBorder?: boolean } | undefined;

  await bridge?.teardownResource({ reason: 'next view' }).catch(() => undefined);
  const slot = document.getElementById('slot')!;
  const frame = document.createElement('iframe');
  frame.id = 'view-frame';
  frame.title = `${opts.tool} view`;
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  frame.className = ui?.prefersBorder ? 'bordered' : '';
  slot.replaceChildren(frame);

  const context: McpUiHostContext = {
    theme,
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    containerDimensions: { maxHeight: 4000 },
    locale: 'en-GB',
    timeZone: 'UTC',
    platform: 'web',
    styles: { variables: { '--font-sans': 'system-ui, sans-serif' } as never },
  };
  bridge = new AppBridge(
    mcp,
    HOST_INFO,
    { serverTools: {}, serverResources: {}, updateModelContext: { text: {} }, logging: {} },
    { hostContext: context },
  );
  bridge.onupdatemodelcontext = async (params) => {
    const text = (params.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    modelContext.push(text);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) frame.style.height = `${height}px`;
  };
  const initialized = new Promise<void>((resolve) => {
    bridge!.oninitialized = () => resolve();
  });
  const proxyReady = new Promise<void>((resolve) => {
    const listener = (event: MessageEvent) => {
      if (event.source === frame.contentWindow && event.data?.method === 'ui/notifications/sandbox-proxy-ready') {
        window.removeEventListener('message', listener);
        resolve();
      }
    };
    window.addEventListener('message', listener);
  });
  const sandbox = new URL(config.sandboxUrl);
  sandbox.searchParams.set('csp', JSON.stringify(ui?.csp ?? {}));
  frame.src = sandbox.href;
  await proxyReady;
  await bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  await bridge.sendSandboxResourceReady({ html: content.text, ...(ui?.csp ? { csp: ui.csp } : {}) });
  await initialized;

  const args = opts.args ?? {};
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(await mcp.callTool({ name: opts.tool, arguments: args }));
  return { uri, mimeType: content.mimeType, csp: ui?.csp, prefersBorder: ui?.prefersBorder };
};

/** A theme change while the view is open, as a host sends it when the user switches. */
const setTheme = async (theme: 'light' | 'dark'): Promise<void> => {
  document.documentElement.dataset.theme = theme;
  await bridge?.sendHostContextChange({ theme });
};

(window as unknown as { harness: unknown }).harness = { show, setTheme, modelContext: () => [...modelContext] };
