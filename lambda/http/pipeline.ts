import middy from '@middy/core';
import type { App } from '../app.js';
import { parseStrictJson } from '../mcp/jsonrpc.js';
import { authMiddleware } from './auth.js';
import { errorHandlerMiddleware, requestMeterPlugin } from './error-handler.js';
import type { MappedError } from './error-mapper.js';
import { originMiddleware } from './origin.js';
import { type DoersContext, emptyResponse, type HttpEvent, type HttpResult, header, jsonResponse, stateOf } from './request-context.js';
import { decodeBody, transportMiddleware } from './transport.js';

/** An unexpected failure at ERROR with its stack (the caller sees only "Internal error"); a 503 at WARN. */
const logMapped = (app: App, mapped: MappedError, err: unknown): void => {
  if (mapped.unexpected) app.logger.error('Unexpected failure', err as Error);
  else if (mapped.status === 503) app.logger.warn('A dependency could not answer; answered 503', err as Error);
};

/** The innermost step: the metadata document, or one POST body through the JSON-RPC dispatcher. */
const route =
  (app: App) =>
  async (event: HttpEvent, context: DoersContext): Promise<HttpResult> => {
    const state = stateOf({ context });
    if (state.route === 'metadata') return jsonResponse(200, app.metadata);

    const value = parseStrictJson(decodeBody(event));
    const outcome = await app.dispatch(
      value,
      {
        protocolVersion: header(event, 'mcp-protocol-version'),
        method: header(event, 'mcp-method'),
        name: header(event, 'mcp-name'),
      },
      state.principal!,
      {
        onRequestId: (id) => {
          if (id !== undefined) state.rpcId = id;
        },
        onMethod: (method) => {
          state.meterMethod = method;
        },
        mapBatchError: (err) => {
          const mapped = app.mapError(err);
          logMapped(app, mapped, err);
          return mapped.error;
        },
      },
    );
    return outcome.body === undefined
      ? emptyResponse(outcome.status, outcome.headers ?? {})
      : jsonResponse(outcome.status, outcome.body, outcome.headers ?? {});
  };

/**
 * The handler Lambda runs and the local server runs: errors (outermost, the only place that builds
 * error responses), origin, transport, auth, then the dispatcher.
 */
export const buildHandler = (app: App) =>
  middy<HttpEvent, HttpResult, Error, DoersContext>(route(app), requestMeterPlugin(app.observer))
    .use(
      errorHandlerMiddleware({
        mapError: app.mapError,
        observer: app.observer,
        log: (mapped, err) => logMapped(app, mapped, err),
      }),
    )
    .use(originMiddleware({ allowedOrigins: app.config.allowedOrigins, loopbackHostOnly: app.loopbackHostOnly }))
    .use(transportMiddleware())
    .use(authMiddleware(app.gate));
