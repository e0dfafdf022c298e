import { bearerChallenge, metadataUrl } from '../auth/challenge.js';
import { DependencyUnavailableError, DoersError, InsufficientScopeError, type JsonRpcId, UnauthenticatedError } from '../errors.js';
import type { RefusalReason } from '../observability/observer.js';
import { isTransientDynamoError } from '../platform/dynamodb.js';

export interface MappedError {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly error: { code: number; message: string; data?: unknown };
  readonly refusal: RefusalReason | undefined;
  /** Unexpected: log it with its stack. */
  readonly unexpected: boolean;
}

/**
 * The one place an error becomes HTTP status, headers and a JSON-RPC error (like middy's
 * http-error-handler with its `expose` rule): a 5xx never carries the error's own message.
 */
export const createErrorMapper = (opts: {
  publicUrl: string;
  scopesSupported: readonly string[];
  advertise?: (scope: string) => string;
}) => {
  const advertise = opts.advertise ?? ((scope: string) => scope);
  const resourceMetadata = metadataUrl(opts.publicUrl);
  const map = (err: unknown): MappedError => {
    if (!(err instanceof DoersError)) {
      // DynamoDB throttling or out of reach inside a tool or a read: the caller should retry, not give up.
      if (isTransientDynamoError(err)) return map(new DependencyUnavailableError('dynamodb', 1, err));
      return { status: 500, headers: {}, error: { code: -32603, message: 'Internal error' }, refusal: undefined, unexpected: true };
    }
    const headers: Record<string, string> = { ...err.headers };
    if (err instanceof UnauthenticatedError) {
      headers['www-authenticate'] = bearerChallenge({
        ...(err.invalidToken ? { error: 'invalid_token' as const, errorDescription: err.message } : {}),
        scope: opts.scopesSupported.join(' '),
        resourceMetadata,
      });
    } else if (err instanceof InsufficientScopeError) {
      // Granted ∪ required: a client that re-authorizes with exactly this keeps what it had (step-up).
      const scope = [...new Set([...err.grantedScopes, err.requiredScope])].map(advertise).join(' ');
      headers['www-authenticate'] = bearerChallenge({ error: 'insufficient_scope', scope, resourceMetadata });
    }
    const message = err.expose ? err.message : 'Internal error';
    return {
      status: err.status,
      headers,
      error: { code: err.rpcCode, message, ...(err.data === undefined ? {} : { data: err.data }) },
      refusal: refusalOf(err),
      unexpected: err.status >= 500 && err.status !== 503,
    };
  };
  return map;
};

export type ErrorMapper = ReturnType<typeof createErrorMapper>;

const refusalOf = (err: DoersError): RefusalReason | undefined => {
  switch (err.code) {
    case 'ERR_UNAUTHENTICATED':
      return 'unauthenticated';
    case 'ERR_USER_NOT_ALLOWED':
      return 'forbidden';
    case 'ERR_INSUFFICIENT_SCOPE':
      return 'insufficient_scope';
    case 'ERR_RATE_LIMITED':
      return 'ratelimited';
    case 'ERR_BUSY':
      return 'busy';
    case 'ERR_ORIGIN_NOT_ALLOWED':
      return 'origin';
    default:
      return err.status === 400 || err.status === 405 || err.status === 413 ? 'bad_request' : undefined;
  }
};

export const errorBody = (id: JsonRpcId | undefined, error: MappedError['error']) => ({ jsonrpc: '2.0' as const, id: id ?? null, error });
