import type middy from '@middy/core';
import type { Request } from '@middy/core';
import { ParseError } from '../errors.js';
import type { Observer } from '../observability/observer.js';
import { type ErrorMapper, errorBody, type MappedError } from './error-mapper.js';
import { type DoersMiddleware, jsonResponse, stateOf } from './request-context.js';
import { readableRequestId } from './transport.js';

export interface ErrorHandlerOptions {
  readonly mapError: ErrorMapper;
  readonly observer: Observer;
  /** Logs what the mapping says is worth logging (unexpected: ERROR with stack; 503: WARN). */
  readonly log: (mapped: MappedError, err: unknown) => void;
}

/**
 * Counts every request once with the status the client got, early answers (preflights) included:
 * a middy plugin hook, since an early response skips every middleware's `after`.
 */
export const requestMeterPlugin = (observer: Observer): middy.PluginObject => ({
  requestEnd: (request: Request): void => {
    observer.request({ method: stateOf(request).meterMethod, status: request.response?.statusCode ?? 500 });
  },
});

/** Outermost middleware: the only place that builds error responses. */
export const errorHandlerMiddleware = (opts: ErrorHandlerOptions): DoersMiddleware => {
  return {
    onError: (request) => {
      const state = stateOf(request);
      const mapped = opts.mapError(request.error);
      opts.log(mapped, request.error);
      if (mapped.refusal) opts.observer.refusal(mapped.refusal);
      // Refused before the dispatcher read the body: its id, where the body has a readable one.
      const id = state.rpcId ?? (request.error instanceof ParseError ? undefined : readableRequestId(request.event));
      request.response = jsonResponse(mapped.status, errorBody(id, mapped.error), { ...mapped.headers, ...state.corsHeaders });
    },
  };
};
