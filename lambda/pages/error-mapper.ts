import {
  ConflictRefusal,
  DependencyUnavailableError,
  InvalidArgumentRefusal,
  NotFoundRefusal,
  RoleTooLowRefusal,
  ToolRefusal,
} from '../errors.js';
import { isTransientDynamoError } from '../platform/dynamodb.js';
import { ERROR_PAGES, UNAVAILABLE_RETRY_AFTER_SECONDS } from './error-pages.js';
import { messagePage, type Page } from './layout.js';

/**
 * The one place where the authorization server's function turns an error into an answer, as
 * http/error-mapper.ts is for the MCP function: a page for the browser routes (sign-in, consent,
 * account), an OAuth error document for the JSON endpoints. Throttling or an unreachable DynamoDB
 * is 503 with Retry-After, never 500; an unexpected failure is 500 without internals. `log` says
 * how the caller logs the cause.
 */
export interface MappedPageError {
  readonly page: Page;
  readonly log: 'error' | 'warn' | 'none';
}

export interface MappedJsonError {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: { readonly error: string; readonly error_description: string };
  readonly log: 'error' | 'warn' | 'none';
}

/**
 * DynamoDB (or another AWS service) throttling or out of reach: the SDK's errors carry `$metadata`,
 * which tells them from, say, a client's metadata document that timed out (refused as the client's
 * fault, not ours).
 */
const isAwsTransient = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && '$metadata' in err && isTransientDynamoError(err);

/** A dependency that should be retried, not given up on. */
export const isUnavailable = (err: unknown): boolean =>
  err instanceof DependencyUnavailableError || isAwsTransient(err) || (err instanceof Error && isAwsTransient(err.cause));

/** The HTTP status of a domain refusal shown on a page (the member rules, a token that is not yours). */
export const refusalStatus = (err: ToolRefusal): 400 | 403 | 404 | 409 =>
  err instanceof NotFoundRefusal ? 404 : err instanceof RoleTooLowRefusal ? 403 : err instanceof ConflictRefusal ? 409 : 400;

export const mapPageError = (err: unknown): MappedPageError => {
  if (isUnavailable(err)) return { page: ERROR_PAGES.unavailable(), log: 'warn' };
  // oidc-provider: the interaction's cookie or record is gone (expired, another browser).
  if ((err as { name?: unknown } | null)?.name === 'SessionNotFound') return { page: ERROR_PAGES.expired(), log: 'none' };
  if (err instanceof ToolRefusal) {
    const status = refusalStatus(err);
    const title = err instanceof InvalidArgumentRefusal ? 'This cannot be done' : status === 404 ? 'Not found' : 'Refused';
    return { page: messagePage(title, err.message, status), log: 'none' };
  }
  return { page: ERROR_PAGES.failed(), log: 'error' };
};

export const mapJsonError = (err: unknown): MappedJsonError =>
  isUnavailable(err)
    ? {
        status: 503,
        headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
        // RFC 6749's own code for "try again later" (§4.1.2.1); a client retries rather than restarting sign-in.
        body: { error: 'temporarily_unavailable', error_description: 'The authorization server cannot answer right now; retry shortly' },
        log: 'warn',
      }
    : { status: 500, headers: {}, body: { error: 'server_error', error_description: 'The request could not be completed' }, log: 'error' };
