/**
 * Typed errors with stable codes. Lower layers throw these; `http/error-mapper.ts` is the one place
 * that turns them into an HTTP status, headers and a JSON-RPC error. `expose` says whether the
 * message may reach the caller (never for 5xx, which answer a fixed text).
 */
export type JsonRpcId = string | number;

/**
 * What the network says when a dependency (DynamoDB, S3) is out of reach: error names and codes of
 * the SDK's HTTP handler and of Node's sockets. Each store adds its service's own throttling names;
 * every one of them is answered 503 with Retry-After, never 500.
 */
export const NETWORK_FAILURES: ReadonlySet<string> = new Set([
  'TimeoutError',
  'RequestTimeout',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export interface ProtocolErrorOptions {
  readonly status?: number;
  readonly data?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

export abstract class DoersError extends Error {
  /** Stable, greppable identifier, e.g. for log filters and alarms. */
  abstract readonly code: string;
  readonly status: number;
  readonly rpcCode: number;
  readonly data: unknown;
  readonly headers: Readonly<Record<string, string>>;

  constructor(message: string, rpcCode: number, defaultStatus: number, options: ProtocolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.rpcCode = rpcCode;
    this.status = options.status ?? defaultStatus;
    this.data = options.data;
    this.headers = options.headers ?? {};
  }

  get expose(): boolean {
    return this.status < 500;
  }
}

// ---- JSON-RPC / transport ----------------------------------------------------------------------

export class ParseError extends DoersError {
  readonly code = 'ERR_PARSE';
  constructor(message = 'Parse error: the body is not strict JSON', options?: ProtocolErrorOptions) {
    super(message, -32700, 400, options);
  }
}

export class InvalidRequestError extends DoersError {
  readonly code = 'ERR_INVALID_REQUEST';
  constructor(message: string, options?: ProtocolErrorOptions) {
    super(message, -32600, 400, options);
  }
}

export class MethodNotFoundError extends DoersError {
  readonly code = 'ERR_METHOD_NOT_FOUND';
  constructor(method: string, options?: ProtocolErrorOptions) {
    super(`Method not found: ${method}`, -32601, 200, options);
  }
}

export class InvalidParamsError extends DoersError {
  readonly code = 'ERR_INVALID_PARAMS';
  constructor(message: string, options?: ProtocolErrorOptions) {
    super(message, -32602, 200, options);
  }
}

/** An unknown resource URI: -32602 on 2026-07-28, -32002 before; `data.uri` on both. */
export class ResourceNotFoundError extends DoersError {
  readonly code = 'ERR_RESOURCE_NOT_FOUND';
  readonly uri: string;
  constructor(uri: string, legacyCode: boolean) {
    super(`Resource not found: ${uri}`, legacyCode ? -32002 : -32602, 200, { data: { uri } });
    this.uri = uri;
  }
}

export class HeaderMismatchError extends DoersError {
  readonly code = 'ERR_HEADER_MISMATCH';
  constructor(message: string, options?: ProtocolErrorOptions) {
    super(message, -32020, 400, options);
  }
}

export class MissingCapabilityError extends DoersError {
  readonly code = 'ERR_MISSING_CAPABILITY';
  constructor(requiredCapabilities: Record<string, unknown>, options?: ProtocolErrorOptions & { readonly message?: string }) {
    super(
      options?.message ?? `The client lacks a capability this request needs: ${Object.keys(requiredCapabilities).join(', ')}`,
      -32021,
      200,
      {
        ...options,
        data: { requiredCapabilities },
      },
    );
  }
}

export class UnsupportedVersionError extends DoersError {
  readonly code = 'ERR_UNSUPPORTED_VERSION';
  constructor(requested: string, supported: readonly string[]) {
    super(`Unsupported protocol version: ${requested}`, -32022, 400, { data: { supported, requested } });
  }
}

export class MethodNotAllowedError extends DoersError {
  readonly code = 'ERR_METHOD_NOT_ALLOWED';
  constructor(method: string, allow = 'POST, OPTIONS') {
    super(`HTTP method ${method} is not allowed here; use ${allow.split(',')[0]}`, -32600, 405, {
      headers: { allow },
    });
  }
}

export class NotFoundRouteError extends DoersError {
  readonly code = 'ERR_ROUTE_NOT_FOUND';
  constructor(path: string) {
    super(`Nothing is served at ${path}; the MCP endpoint is /mcp`, -32600, 404);
  }
}

export class PayloadTooLargeError extends DoersError {
  readonly code = 'ERR_PAYLOAD_TOO_LARGE';
  constructor(limitBytes: number) {
    super(`The body is larger than ${limitBytes} bytes`, -32600, 413);
  }
}

export class OriginNotAllowedError extends DoersError {
  readonly code = 'ERR_ORIGIN_NOT_ALLOWED';
  constructor(what: 'Origin' | 'Host') {
    super(`${what} not allowed`, -32600, 403);
  }
}

// ---- credentials -------------------------------------------------------------------------------

/** 401 with a challenge; `invalidToken` when a token was presented and refused. */
export class UnauthenticatedError extends DoersError {
  readonly code = 'ERR_UNAUTHENTICATED';
  readonly invalidToken: boolean;
  constructor(message: string, invalidToken: boolean, options?: ProtocolErrorOptions) {
    super(message, -32001, 401, options);
    this.invalidToken = invalidToken;
  }
}

export class InsufficientScopeError extends DoersError {
  readonly code = 'ERR_INSUFFICIENT_SCOPE';
  readonly requiredScope: string;
  /** What the token already holds: the challenge asks for these plus the required one. */
  readonly grantedScopes: readonly string[];
  constructor(
    requiredScope: string,
    what: string,
    grantedScopes: readonly string[],
    /** The member's role, when the token carries the scope and the role is what cuts it. */
    cutByRole?: string,
  ) {
    super(
      cutByRole
        ? `${what} needs the scope ${requiredScope}; this token carries it, but a ${cutByRole} cannot use it ` +
            `(a ${cutByRole}'s tokens act with ${grantedScopes.join(', ') || 'no scope'}): the role, not the token, is why`
        : `${what} needs the scope ${requiredScope}, which this token does not carry`,
      -32003,
      403,
    );
    this.requiredScope = requiredScope;
    this.grantedScopes = grantedScopes;
  }
}

export class UserNotAllowedError extends DoersError {
  readonly code = 'ERR_USER_NOT_ALLOWED';
  constructor() {
    super('The user may not use the MCP endpoint.', -32600, 403);
  }
}

/** A dependency (DynamoDB, JWKS, Secrets Manager) cannot answer now: 503, never 500. */
export class DependencyUnavailableError extends DoersError {
  readonly code = 'ERR_DEPENDENCY_UNAVAILABLE';
  readonly dependency: string;
  constructor(dependency: string, retryAfterSeconds: number, cause?: unknown) {
    super('The service cannot check this request right now; retry shortly', -32000, 503, {
      headers: { 'retry-after': String(retryAfterSeconds) },
      cause,
    });
    this.dependency = dependency;
  }
  override get expose(): boolean {
    return true; // a fixed text without internals
  }
}

// ---- limits ------------------------------------------------------------------------------------

export class LimitExceededError extends DoersError {
  readonly code: 'ERR_RATE_LIMITED' | 'ERR_BUSY';
  readonly retryAfterSeconds: number;
  constructor(kind: 'ratelimited' | 'busy', retryAfterSeconds: number) {
    super(
      kind === 'ratelimited'
        ? `Rate limit reached: retry after ${retryAfterSeconds} s`
        : `Too many calls in flight for this user: retry after ${retryAfterSeconds} s`,
      -32000,
      429,
      { headers: { 'retry-after': String(retryAfterSeconds) } },
    );
    this.code = kind === 'ratelimited' ? 'ERR_RATE_LIMITED' : 'ERR_BUSY';
    this.retryAfterSeconds = retryAfterSeconds;
  }
  get outcome(): 'ratelimited' | 'busy' {
    return this.code === 'ERR_RATE_LIMITED' ? 'ratelimited' : 'busy';
  }
}

// ---- domain refusals: tool errors (isError results), never protocol errors ---------------------

/**
 * Why a change or a read was refused, for code to decide by (never by the message's words): a retry
 * that re-reads after `links-moved`, a bulk item's status, an undo that names the later changes.
 * The words a caller reads are made in one place (workspace/model/refusals.ts).
 */
export type RefusalReason =
  /** A value that is not accepted as given (the message names the argument). */
  | 'invalid-argument'
  | 'not-found'
  /** It was deleted and is kept for undo. */
  | 'deleted'
  /** The caller's role (now) does not allow it. */
  | 'role'
  /** The target is at another version than the one given or read. */
  | 'version-conflict'
  /** Tasks linked to the target changed while the change was being written. */
  | 'links-moved'
  /** The change to undo was undone by someone else meanwhile. */
  | 'undone-meanwhile'
  /** Undo: the target changed after the change to undo (data: the later changes). */
  | 'changed-since'
  /** A bound: links, items per call, sizes, the cost ceiling of one call. */
  | 'limit'
  /** The workspace would lose its last active owner. */
  | 'last-owner'
  /** An e-mail address, id or name is someone else's. */
  | 'taken'
  /** The change cannot be undone by its nature (a revoked credential, an operator's switch). */
  | 'not-undoable'
  /** The data moved while the change was being written (nothing was written). */
  | 'race'
  /** Another change of the same kind holds the target now (the owners lock); try again shortly. */
  | 'busy'
  /** DynamoDB did not confirm the write: it may or may not have happened. */
  | 'unconfirmed'
  /** The same call (same caller, tool and arguments) is being made right now: call again shortly for its answer. */
  | 'in-progress'
  /** The same call was made a moment ago and its answer was lost: nothing was written again. */
  | 'made-already'
  /** The workspace's data is being brought to a new layout (npm run admin -- migrate); reads work. */
  | 'upgrading'
  /** The tool runs only as a task of the tasks extension, which this client cannot follow on this revision. */
  | 'needs-extension'
  | 'conflict';

export abstract class ToolRefusal extends Error {
  abstract readonly code: string;
  readonly reason: RefusalReason;
  /** What a caller needs to act on it: the current version, the later changes, the limit. */
  readonly data: Readonly<Record<string, unknown>>;
  constructor(message: string, reason: RefusalReason, data: Readonly<Record<string, unknown>> = {}) {
    super(message);
    this.name = new.target.name;
    this.reason = reason;
    this.data = data;
  }
}

export class NotFoundRefusal extends ToolRefusal {
  readonly code = 'ERR_NOT_FOUND';
  constructor(message: string, reason: 'not-found' | 'deleted' = 'not-found', data?: Readonly<Record<string, unknown>>) {
    super(message, reason, data);
  }
}
export class RoleTooLowRefusal extends ToolRefusal {
  readonly code = 'ERR_ROLE_TOO_LOW';
  constructor(message: string, data?: Readonly<Record<string, unknown>>) {
    super(message, 'role', data);
  }
}
export class ConflictRefusal extends ToolRefusal {
  readonly code = 'ERR_CONFLICT';
  constructor(
    message: string,
    reason: Exclude<RefusalReason, 'invalid-argument' | 'not-found' | 'deleted' | 'role' | 'limit' | 'not-undoable'> = 'conflict',
    data?: Readonly<Record<string, unknown>>,
  ) {
    super(message, reason, data);
  }
}
export class NeedsExtensionRefusal extends ToolRefusal {
  readonly code = 'ERR_NEEDS_EXTENSION';
  constructor(message: string, data?: Readonly<Record<string, unknown>>) {
    super(message, 'needs-extension', data);
  }
}
export class InvalidArgumentRefusal extends ToolRefusal {
  readonly code = 'ERR_INVALID_ARGUMENT';
  constructor(
    message: string,
    reason: 'invalid-argument' | 'limit' | 'not-undoable' = 'invalid-argument',
    data?: Readonly<Record<string, unknown>>,
  ) {
    super(message, reason, data);
  }
}
