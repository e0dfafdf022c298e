import { InvalidRequestError, type JsonRpcId, MethodNotFoundError } from '../errors.js';
import type { Principal } from '../vocabulary.js';
import { checkHeaderVersion, checkStandardHeaders, resolveRequestMeta, type TransportHeaders } from './era.js';
import { idOf, toMessage } from './jsonrpc.js';
import { COMMON_METHODS, HANDSHAKE_METHODS, type McpApp, type MethodResult, MODERN_METHODS } from './methods.js';
import { CACHE_HINTS, HEADERLESS_VERSION, META, SERVER_INFO } from './protocol.js';

/** What one POST body produces: a JSON body, or nothing (202) when it held only notifications. */
export interface DispatchOutcome {
  readonly body?: unknown;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface DispatchHooks {
  /** Called once the id of a single message is known, so the one error mapper can echo it. */
  onRequestId(id: JsonRpcId | undefined): void;
  /** Called with the method name for the Requests meter. */
  onMethod(method: string): void;
  /** Maps an error inside a batch element to its JSON-RPC error (the same mapper as for singles). */
  mapBatchError(err: unknown): { code: number; message: string; data?: unknown };
}

const KNOWN_METHODS = new Set([...Object.keys(COMMON_METHODS), ...Object.keys(HANDSHAKE_METHODS), ...Object.keys(MODERN_METHODS)]);

/**
 * A table's own entry only: the method name comes from the client, and `constructor`, `toString`
 * or `__proto__` would otherwise find Object.prototype's members and call them as methods.
 */
const ownEntry = <T>(table: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;

/** A fixed set for the Requests meter: nothing a client makes up becomes a dimension value. */
export const meterMethodOf = (method: string): string =>
  KNOWN_METHODS.has(method) ? method : method.startsWith('notifications/') ? 'notification' : 'other';

/**
 * JSON-RPC over one POST, by era (docs/protocol.md). Errors are thrown, never shaped here: the error
 * middleware maps them, with the id recorded through `hooks.onRequestId`.
 */
/** One POST body in, its answer out: what the HTTP pipeline calls once the credential is checked. */
export type Dispatch = (
  value: unknown,
  headers: TransportHeaders,
  principal: Principal,
  hooks: DispatchHooks,
  now?: Date,
) => Promise<DispatchOutcome>;

export const createDispatcher = <S>(app: McpApp<S>): Dispatch => {
  const single = async (
    value: unknown,
    headers: TransportHeaders,
    principal: Principal,
    hooks: DispatchHooks,
    now: Date,
  ): Promise<DispatchOutcome> => {
    const parsed = toMessage(value);
    if (parsed.kind === 'response') return { status: 202 };
    const req = parsed.message;
    hooks.onMethod(meterMethodOf(req.method));

    const meta = resolveRequestMeta(req, headers);
    const { modern } = meta.era;
    const method = ownEntry(COMMON_METHODS, req.method) ?? ownEntry(modern ? MODERN_METHODS : HANDSHAKE_METHODS, req.method);
    const isNotification = req.id === undefined;
    if (!method && !isNotification) {
      // 2026-07-28 answers an unknown (or removed) method with 404, before the header checks (the
      // SDK's validation ladder); the handshake era answers in-band.
      throw new MethodNotFoundError(req.method, { status: modern ? 404 : 200 });
    }
    checkStandardHeaders(req, headers, modern);
    if (isNotification) return { status: 202 };
    // A group the URL names that does not exist is refused on every request, so the mistake shows at once.
    // The URL's choice, or else the one a connected app's grant keeps.
    const tools = app.tools.select(headers.tools ?? principal.toolGroups);

    const out: MethodResult = await method!(app as McpApp<unknown>, { req, meta, principal, now, tools });
    const result =
      modern && !out.shaped ? modernEnvelope(req.method, out.result, out.ttlMs) : modern ? withServerInfo(out.result) : out.result;
    return { status: 200, body: { jsonrpc: '2.0', id: req.id, result }, ...(out.headers ? { headers: out.headers } : {}) };
  };

  return async (
    value: unknown,
    headers: TransportHeaders,
    principal: Principal,
    hooks: DispatchHooks,
    now = new Date(),
  ): Promise<DispatchOutcome> => {
    // The id first: an unsupported header version is refused before parsing, yet still echoes it.
    if (!Array.isArray(value)) hooks.onRequestId(idOf(value));
    checkHeaderVersion(headers.protocolVersion);
    if (!Array.isArray(value)) return single(value, headers, principal, hooks, now);

    // Batches existed only in 2025-03-26 (also what a request without a version header speaks).
    hooks.onMethod('batch');
    if ((headers.protocolVersion ?? HEADERLESS_VERSION) !== HEADERLESS_VERSION) {
      throw new InvalidRequestError(`Batches are not part of protocol version ${headers.protocolVersion}`);
    }
    if (value.length === 0) throw new InvalidRequestError('Invalid request: empty batch');
    const answers: unknown[] = [];
    for (const element of value) {
      try {
        const out = await single(element, headers, principal, { ...hooks, onMethod: () => {} }, now);
        if (out.body !== undefined) answers.push(out.body);
      } catch (err) {
        answers.push({ jsonrpc: '2.0', id: idOf(element) ?? null, error: hooks.mapBatchError(err) });
      }
    }
    return answers.length === 0 ? { status: 202 } : { status: 200, body: answers };
  };
};

const withServerInfo = (result: Record<string, unknown>): Record<string, unknown> => ({
  ...result,
  _meta: { ...(result._meta as Record<string, unknown> | undefined), [META.serverInfo]: SERVER_INFO },
});

const modernEnvelope = (method: string, result: Record<string, unknown>, ttlMs?: number): Record<string, unknown> => {
  const ttl = ttlMs ?? (CACHE_HINTS as Record<string, number | undefined>)[method];
  return withServerInfo({ resultType: 'complete', ...result, ...(ttl === undefined ? {} : { ttlMs: ttl, cacheScope: 'private' }) });
};
