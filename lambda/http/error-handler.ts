import type { Observer } from '../observability/observer.js';
import { errorBody, type ErrorMapper } from './error-mapper.js';
import { jsonResponse, stateOf, type DoersMiddleware, type DoersRequest } from './request-context.js';

export interface ErrorHandlerOptions {
  readonly mapError: ErrorMapper;
  readonly observer: Observer;
  /** Logs an unexpected error with its stack; the caller only ever sees "Internal error". */
  readonly logUnexpected: (err: unknown) => void;
  /** Logs a dependency that could not answer (503) at warn level. */
  readonly logUnavailable: (err: unknown) => void;
}

/**
 * Outermost middleware: the only place that builds error responses. It also closes every request
 * for the Requests meter, so the status counted is the one the client got.
 */
export const errorHandlerMiddleware = (opts: ErrorHandlerOptions): DoersMiddleware => {
  const finish = (request: DoersRequest): void => {
    const state = stateOf(request);
    opts.observer.request({ method: state.meterMethod, status: request.response?.statusCode ?? 500 });
  };
  return {
    after: finish,
    onError: (request) => {
      const state = stateOf(request);
      const mapped = opts.mapError(request.error);
      if (mapped.unexpected) opts.logUnexpected(request.error);
      else if (mapped.status === 503) opts.logUnavailable(request.error);
      if (mapped.refusal) opts.observer.refusal(mapped.refusal);
      request.response = jsonResponse(mapped.status, errorBody(state.rpcId, mapped.error), { ...mapped.headers, ...state.corsHeaders });
      finish(request);
    },
  };
};
