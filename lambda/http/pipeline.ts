import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { CredentialGate } from '../auth/credential-gate.js';
import type { Dispatch } from '../mcp/dispatcher.js';
import { parseStrictJson } from '../mcp/jsonrpc.js';
import type { Observer } from '../observability/observer.js';
import { authMiddleware } from './auth.js';
import { errorHandlerMiddleware, requestMeterPlugin } from './error-handler.js';
import type { ErrorMapper, MappedError } from './error-mapper.js';
import { originMiddleware } from './origin.js';
import { type DoersContext, emptyResponse, type HttpEvent, type HttpResult, header, jsonResponse, stateOf } from './request-context.js';
import { decodeBody, largeBodyFits, transportMiddleware } from './transport.js';

/** What the pipeline needs of the MCP function's composition root (app.ts builds it). */
export interface HttpApp {
  readonly allowedOrigins: ReadonlySet<string>;
  readonly logger: Logger;
  readonly observer: Observer;
  readonly gate: CredentialGate;
  readonly mapError: ErrorMapper;
  readonly dispatch: Dispatch;
  readonly metadata: unknown;
  /** The local server answers 403 to a Host that is not loopback (DNS-rebinding protection). */
  readonly loopbackHostOnly: boolean;
}

/** An unexpected failure at ERROR with its stack (the caller sees only "Internal error"); a 503 at WARN. */
const logMapped = (app: HttpApp, mapped: MappedError, err: unknown): void => {
  if (mapped.unexpected) app.logger.error('Unexpected failure', err as Error);
  else if (mapped.status === 503) app.logger.warn('A dependency could not answer; answered 503', err as Error);
};

/** The URL's `tools` parameter (`/mcp?tools=a,b`; given twice, both). */
const toolsParam = (event: HttpEvent): string | undefined => {
  const given = new URLSearchParams(event.rawQueryString ?? '').getAll('tools');
  return given.length ? given.join(',') : undefined;
};

/** The innermost step: the metadata document, or one POST body through the JSON-RPC dispatcher. */
const route =
  (app: HttpApp) =>
  async (event: HttpEvent, context: DoersContext): Promise<HttpResult> => {
    const state = stateOf({ context });
    if (state.route === 'metadata') return jsonResponse(200, app.metadata);

    const value = parseStrictJson(decodeBody(event));
    largeBodyFits(event, value);
    const outcome = await app.dispatch(
      value,
      {
        protocolVersion: header(event, 'mcp-protocol-version'),
        method: header(event, 'mcp-method'),
        name: header(event, 'mcp-name'),
        tools: toolsParam(event),
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
export const buildHandler = (app: HttpApp) =>
  middy<HttpEvent, HttpResult, Error, DoersContext>(route(app), requestMeterPlugin(app.observer))
    .use(
      errorHandlerMiddleware({
        mapError: app.mapError,
        observer: app.observer,
        log: (mapped, err) => logMapped(app, mapped, err),
      }),
    )
    // Every log line of an invocation carries its Lambda request id (audit lines included).
    .use(injectLambdaContext(app.logger))
    .use(originMiddleware({ allowedOrigins: app.allowedOrigins, loopbackHostOnly: app.loopbackHostOnly }))
    .use(transportMiddleware())
    .use(authMiddleware(app.gate));
