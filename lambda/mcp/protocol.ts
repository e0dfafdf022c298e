import { PROTOCOL_VERSIONS, type ProtocolVersion } from '../platform/config.js';
import { VIEW_MIME_TYPE } from '../views/links.js';

export type { ProtocolVersion };
export { PROTOCOL_VERSIONS };

export const MODERN_VERSION: ProtocolVersion = '2026-07-28';
/** What an `initialize` asking for an unknown revision is answered with. */
export const HANDSHAKE_DEFAULT_VERSION: ProtocolVersion = '2025-11-25';
/** A request with neither header nor `_meta` revision speaks this (the 2025 transport rule). */
export const HEADERLESS_VERSION: ProtocolVersion = '2025-03-26';

export const isKnownVersion = (v: unknown): v is ProtocolVersion =>
  typeof v === 'string' && (PROTOCOL_VERSIONS as readonly string[]).includes(v);

export const SERVER_INFO = { name: 'doers', title: 'doers', version: '2.0.0' } as const;

/**
 * tools, resources, prompts only: no logging, completions, subscriptions or listChanged; and the MCP
 * Apps extension (apps protocol 2026-01-26): views a host renders beside tool results (lambda/views/).
 * A client without the extension ignores it and the tools' `_meta.ui`.
 */
export const SERVER_CAPABILITIES = {
  tools: {},
  resources: {},
  prompts: {},
  extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [VIEW_MIME_TYPE] } },
} as const;

/** The tasks extension (lambda/mcp/tasks.ts): long work a call answers with a task's handle. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * What server/discover advertises (2026-07-28): the above and the tasks extension, which exists only
 * on that revision (a client declares it on each request's own capabilities).
 */
export const MODERN_CAPABILITIES = {
  ...SERVER_CAPABILITIES,
  extensions: { ...SERVER_CAPABILITIES.extensions, [TASKS_EXTENSION]: {} },
} as const;

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/**
 * Cache hints (2026-07-28). Lists change only with a deployment or a different token, so clients may
 * keep them five minutes; a read reflects live data and is stale at once. Always `private`: every
 * answer depends on the token's scopes.
 */
export const CACHE_HINTS = {
  'server/discover': 300_000,
  'tools/list': 300_000,
  'prompts/list': 300_000,
  'resources/list': 300_000,
  'resources/templates/list': 300_000,
  'resources/read': 0,
} as const satisfies Record<string, number>;

export const INSTRUCTIONS = [
  "doers is the team's task workspace. Call me_get first: it names the user, their role and time zone,",
  "and today's date there. Dates and repeat rules may be given in words ('next friday 3pm', 'every monday'): the tools read",
  "them in the user's time zone and say what they read, so never convert a date yourself.",
  'Search, then read: tasks_search returns summaries with identifiers, task_get the whole task.',
  'Lists are paged: pass nextCursor back as cursor with the same other arguments, or narrow the query.',
  "Updates take the task's current version; a conflict means someone else changed it: read it again.",
].join(' ');
