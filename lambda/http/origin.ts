import { OriginNotAllowedError } from '../errors.js';
import { isLoopbackOrigin } from '../platform/config.js';
import { type DoersMiddleware, emptyResponse, header, stateOf } from './request-context.js';
import { allowedVerbs } from './transport.js';

export interface OriginOptions {
  readonly allowedOrigins: ReadonlySet<string>;
  /** Local server only: answer 403 to a Host that is not loopback (DNS-rebinding protection). */
  readonly loopbackHostOnly: boolean;
}

const ALLOW_HEADERS = 'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name';
const EXPOSE_HEADERS = 'WWW-Authenticate, Retry-After';

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i;
/** Whether a Host header names this machine (the local server's DNS-rebinding check). */
export const isLoopbackHost = (host: string | undefined): boolean => LOOPBACK_HOST.test(host ?? '');

/**
 * Origin allow-list and CORS, done by the function (API-level CORS stays off so a disallowed
 * Origin still gets its 403, also on OPTIONS). Native clients send no Origin and pass.
 */
export const originMiddleware = (opts: OriginOptions): DoersMiddleware => ({
  before: (request) => {
    const { event } = request;
    if (opts.loopbackHostOnly && !isLoopbackHost(header(event, 'host'))) throw new OriginNotAllowedError('Host');

    const origin = header(event, 'origin');
    const state = stateOf(request);
    if (origin !== undefined) {
      const normalized = origin.toLowerCase();
      if (!opts.allowedOrigins.has(normalized) && !isLoopbackOrigin(normalized)) throw new OriginNotAllowedError('Origin');
      state.corsHeaders = { 'access-control-allow-origin': origin, vary: 'Origin', 'access-control-expose-headers': EXPOSE_HEADERS };
    }
    // A preflight is answered for a served path with that path's verbs; any other path goes on to
    // the transport step and its 404.
    const allow = allowedVerbs(event.rawPath);
    if (event.requestContext.http.method === 'OPTIONS' && allow !== undefined) {
      state.meterMethod = 'preflight';
      return emptyResponse(204, {
        ...state.corsHeaders,
        allow,
        ...(origin === undefined
          ? {}
          : { 'access-control-allow-methods': allow, 'access-control-allow-headers': ALLOW_HEADERS, 'access-control-max-age': '600' }),
      });
    }
    return undefined;
  },
  after: (request) => {
    const { corsHeaders } = stateOf(request);
    if (request.response) request.response.headers = { ...request.response.headers, ...corsHeaders };
  },
});
