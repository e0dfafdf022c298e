import { metadataPath, rootMetadataPath } from '../auth/challenge.js';
import type { JsonRpcId } from '../errors.js';
import { MethodNotAllowedError, NotFoundRouteError, PayloadTooLargeError } from '../errors.js';
import { type DoersMiddleware, type HttpEvent, type Route, stateOf } from './request-context.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The one exception to the 1 MiB: a tools/call of attachment_add carries its file as base64 (4 MB
 * decoded at most, DOERS_ATTACHMENT_MAX_MB), so its body may be this large; Lambda takes 6 MB a
 * request, event and headers included. Any other body above 1 MiB is 413 as before.
 */
export const MAX_ATTACHMENT_BODY_BYTES = 6 * 1024 * 1024 - 64 * 1024;

export const decodeBody = (event: HttpEvent): string =>
  !event.body ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;

/** The body's size as sent, base64 counted decoded. */
const bodyBytes = (event: HttpEvent): number => (event.body ? Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : 0);

/**
 * Before the credential is looked at, a body over 1 MiB is let on only when its start says it is an
 * attachment_add call (its `Mcp-Name` header, or the name within its first 4 KB): nothing larger than
 * 1 MiB is parsed for a caller not yet known. After the credential, the parsed request must be one
 * tools/call of attachment_add ({@link largeBodyFits}), or it is 413 all the same.
 */
const mayCarryAttachment = (event: HttpEvent): boolean => {
  if (event.headers['mcp-name'] === 'attachment_add') return true;
  const start = event.body
    ? event.isBase64Encoded
      ? Buffer.from(event.body.slice(0, 5464), 'base64').toString('utf8')
      : event.body.slice(0, 4096)
    : '';
  return start.includes('"attachment_add"');
};

/** Over the limit its request may be: every request's 1 MiB, an attachment's larger one. */
const tooLarge = (event: HttpEvent): boolean => {
  const size = bodyBytes(event);
  return size > MAX_BODY_BYTES && (size > MAX_ATTACHMENT_BODY_BYTES || !mayCarryAttachment(event));
};

/** After parsing: a body over 1 MiB is one tools/call of attachment_add, or it is refused with 413. */
export const largeBodyFits = (event: HttpEvent, value: unknown): void => {
  if (bodyBytes(event) <= MAX_BODY_BYTES) return;
  const v = value as { method?: unknown; params?: { name?: unknown } } | null;
  const one = typeof v === 'object' && v !== null && !Array.isArray(v) && v.method === 'tools/call' && v.params?.name === 'attachment_add';
  if (!one) throw new PayloadTooLargeError(MAX_BODY_BYTES);
};

/** The route a path names: `/mcp` and `/mcp/` are one; the metadata document has two paths. */
const routeOf = (path: string): Route | undefined =>
  path === '/mcp' || path === '/mcp/' ? 'mcp' : path === metadataPath || path === rootMetadataPath ? 'metadata' : undefined;

const ALLOW: Readonly<Record<Route, string>> = { mcp: 'POST, OPTIONS', metadata: 'GET, OPTIONS' };

/** The verbs a path takes (its `Allow`), or undefined for a path that is not served. */
export const allowedVerbs = (path: string): string | undefined => {
  const route = routeOf(path);
  return route && ALLOW[route];
};

/**
 * The JSON-RPC id of a request refused before the dispatcher read it (origin, credential, a
 * dependency down), so the client can match the error to its request. Only for a body the
 * dispatcher would have read: within the size limit, JSON, one request object with a valid id.
 */
export const readableRequestId = (event: HttpEvent): JsonRpcId | undefined => {
  if (routeOf(event.rawPath) !== 'mcp' || !event.body || bodyBytes(event) > MAX_BODY_BYTES) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(decodeBody(event));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { id } = value as { id?: unknown };
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
};

/**
 * HTTP shape of a request before anyone looks at credentials or JSON: which route, which verb,
 * how big. `/mcp` and `/mcp/` are one route.
 */
export const transportMiddleware = (): DoersMiddleware => ({
  before: (request) => {
    const { event } = request;
    const state = stateOf(request);
    const verb = event.requestContext.http.method;
    const route = routeOf(event.rawPath);
    if (route === undefined) throw new NotFoundRouteError(event.rawPath);
    state.route = route;
    if (route === 'mcp') {
      if (verb !== 'POST') throw new MethodNotAllowedError(verb, ALLOW.mcp);
      if (tooLarge(event))
        throw new PayloadTooLargeError(bodyBytes(event) > MAX_ATTACHMENT_BODY_BYTES ? MAX_ATTACHMENT_BODY_BYTES : MAX_BODY_BYTES);
    } else {
      state.meterMethod = 'metadata';
      if (verb !== 'GET' && verb !== 'HEAD') throw new MethodNotAllowedError(verb, ALLOW.metadata);
    }
  },
});
