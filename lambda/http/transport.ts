import { MethodNotAllowedError, NotFoundRouteError, PayloadTooLargeError } from '../errors.js';
import { metadataPath, rootMetadataPath } from '../auth/challenge.js';
import type { JsonRpcId } from '../errors.js';
import { stateOf, type DoersMiddleware, type HttpEvent } from './request-context.js';

export const MAX_BODY_BYTES = 1024 * 1024;

export const decodeBody = (event: HttpEvent): string =>
  !event.body ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;

/**
 * The JSON-RPC id of a request refused before the dispatcher read it (origin, credential, a
 * dependency down), so the client can match the error to its request. Only for a body the
 * dispatcher would have read: within the size limit, JSON, one request object with a valid id.
 */
export const readableRequestId = (event: HttpEvent): JsonRpcId | undefined => {
  const path = event.rawPath;
  if ((path !== '/mcp' && path !== '/mcp/') || !event.body) return undefined;
  if (Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') > MAX_BODY_BYTES) return undefined;
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
 * The verbs a path takes (its `Allow`), or undefined for a path that is not served: `/mcp` and
 * `/mcp/` are one route; the metadata document is read-only.
 */
export const allowedVerbs = (path: string): string | undefined =>
  path === '/mcp' || path === '/mcp/' ? 'POST, OPTIONS' : path === metadataPath || path === rootMetadataPath ? 'GET, OPTIONS' : undefined;

/**
 * HTTP shape of a request before anyone looks at credentials or JSON: which route, which verb,
 * how big. `/mcp` and `/mcp/` are one route.
 */
export const transportMiddleware = (): DoersMiddleware => ({
  before: (request) => {
    const { event } = request;
    const state = stateOf(request);
    const verb = event.requestContext.http.method;
    const path = event.rawPath;
    if (path === '/mcp' || path === '/mcp/') {
      state.route = 'mcp';
      if (verb !== 'POST') throw new MethodNotAllowedError(verb);
      const size = event.body ? Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : 0;
      if (size > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
    } else if (path === metadataPath || path === rootMetadataPath) {
      state.route = 'metadata';
      state.meterMethod = 'metadata';
      if (verb !== 'GET' && verb !== 'HEAD') throw new MethodNotAllowedError(verb, 'GET, OPTIONS');
    } else {
      throw new NotFoundRouteError(path);
    }
  },
});
