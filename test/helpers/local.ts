import { type LocalServer, type LocalServerOptions, startLocalServer } from '../../lambda/local/server.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { RecordingObserver } from './recording-observer.js';

/**
 * A local server on an ephemeral port over an in-memory embedded DynamoDB: the same handler Lambda
 * runs. `env` takes the configuration contract's names. Its notifier does not poll: a test that
 * needs people told drains it (`server.notifier.drain()`), so no answer depends on when a poll ran.
 */
export const startTestServer = async (env: Record<string, string> = {}, opts: LocalServerOptions = {}): Promise<LocalServer> =>
  startLocalServer(loadConfig({ PORT: '0', DOERS_DATA_DIR: ':memory:', ...env }), {
    timeZone: 'UTC',
    observer: new RecordingObserver(),
    notifierPolls: false,
    ...opts,
  });

export const MODERN = '2026-07-28';

export const modernMeta = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'doers-tests', version: '1.0.0' },
  ...extra,
});

export interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** Parsed JSON body, or undefined when empty. */
  readonly json: any;
}

/** One raw POST, nothing added: for the transport rules themselves. */
export const post = async (url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
};

let nextId = 1;

/** A 2026-07-28 request with the headers and `_meta` that revision requires. */
export const modernCall = (
  server: LocalServer,
  method: string,
  params: Record<string, unknown> = {},
  opts: { token?: string; headers?: Record<string, string>; query?: string; meta?: Record<string, unknown> } = {},
) => {
  const name = method === 'resources/read' ? params.uri : method === 'tools/call' || method === 'prompts/get' ? params.name : undefined;
  return post(
    urlOf(server, opts.query),
    { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: modernMeta(opts.meta) } },
    {
      authorization: `Bearer ${opts.token ?? server.token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
      ...opts.headers,
    },
  );
};

/**
 * The endpoint with its query: every tool group unless a test names its own (`''`: the bare `/mcp`,
 * which lists the default groups; docs/clients.md, "Tool groups").
 */
export const urlOf = (server: LocalServer, query = 'tools=all'): string => (query ? `${server.mcpUrl}?${query}` : server.mcpUrl);

/** A handshake-era request (2025-11-25 by default). */
export const legacyCall = (
  server: LocalServer,
  method: string,
  params: Record<string, unknown> = {},
  opts: { token?: string; version?: string; headers?: Record<string, string>; query?: string } = {},
) =>
  post(
    urlOf(server, opts.query),
    { jsonrpc: '2.0', id: nextId++, method, params },
    { authorization: `Bearer ${opts.token ?? server.token}`, 'mcp-protocol-version': opts.version ?? '2025-11-25', ...opts.headers },
  );

/** Calls a tool on 2026-07-28 and returns the JSON-RPC result (throws on a protocol error). */
export const callTool = async (server: LocalServer, name: string, args: Record<string, unknown> = {}, token?: string) => {
  const res = await modernCall(server, 'tools/call', { name, arguments: args }, token ? { token } : {});
  if (res.json?.error) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.json.error)}`);
  return res.json.result as { content: { type: string; text: string }[]; structuredContent?: any; isError: boolean };
};
