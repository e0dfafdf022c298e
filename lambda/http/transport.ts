import { MethodNotAllowedError, NotFoundRouteError, PayloadTooLargeError } from '../errors.js';
import { metadataPath } from '../auth/challenge.js';
import { stateOf, type DoersMiddleware } from './request-context.js';

export const MAX_BODY_BYTES = 1024 * 1024;

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
    } else if (path === metadataPath) {
      state.route = 'metadata';
      state.meterMethod = 'metadata';
      if (verb !== 'GET' && verb !== 'HEAD') throw new MethodNotAllowedError(verb, 'GET, OPTIONS');
    } else {
      throw new NotFoundRouteError(path);
    }
  },
});
