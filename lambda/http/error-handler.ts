import type { Observer } from '../observability/observer.js';
import { errorBody, type ErrorMapper, type MappedError } from './error-mapper.js';
import { jsonResponse, stateOf, type DoersMiddleware, type DoersRequest } from './request-context.js';

export interface ErrorHandlerOptions {
  readonly mapError: ErrorMapper;
  readonly observer: Observer;
  /** Logs what the mapping says is worth logging (unexpected: ERROR with stack; 503: WARN). */
  readonly log: (mapped: MappedError, err: unknown) => void;
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
      opts.log(mapped, request.error);
      if (mapped.refusal) opts.observer.refusal(mapped.refusal);
      request.response = jsonResponse(mapped.status, errorBody(state.rpcId, mapped.error), { ...mapped.headers, ...state.corsHeaders });
      finish(request);
    },
  };
};
