import type middy from '@middy/core';
import type { Request } from '@middy/core';
import type { Observer } from '../observability/observer.js';
import { errorBody, type ErrorMapper, type MappedError } from './error-mapper.js';
import { jsonResponse, stateOf, type DoersMiddleware } from './request-context.js';

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
      request.response = jsonResponse(mapped.status, errorBody(state.rpcId, mapped.error), { ...mapped.headers, ...state.corsHeaders });
    },
  };
};
