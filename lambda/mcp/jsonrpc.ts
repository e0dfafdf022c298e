import * as z from 'zod/mini';
import '../platform/zod-locale.js';
import { InvalidRequestError, type JsonRpcId, ParseError } from '../errors.js';

/**
 * Strict JSON (JSON.parse refuses single quotes, unquoted names, comments and trailing data) and
 * the JSON-RPC 2.0 envelope. MCP params are always an object.
 */
export const parseStrictJson = (body: string): unknown => {
  if (body.trim() === '') throw new ParseError('Parse error: the body is empty');
  try {
    return JSON.parse(body);
  } catch {
    throw new ParseError();
  }
};

// z.number() refuses NaN and the infinities, so an id is always a finite number.
const id = z.union([z.string(), z.number()]);
const params = z.record(z.string(), z.unknown());

const requestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.optional(id),
  method: z.string().check(z.minLength(1)),
  params: z.optional(params),
});

const responseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([id, z.null()]),
  result: z.optional(z.unknown()),
  error: z.optional(z.unknown()),
});

export interface JsonRpcRequest {
  readonly id?: JsonRpcId;
  readonly method: string;
  readonly params: Record<string, unknown>;
}

export type JsonRpcMessage = { readonly kind: 'request'; readonly message: JsonRpcRequest } | { readonly kind: 'response' };

/** Classifies one message; anything that is not JSON-RPC 2.0 is -32600 (with its id when it had one). */
export const toMessage = (value: unknown): JsonRpcMessage => {
  const req = z.safeParse(requestSchema, value);
  if (req.success) {
    const { id: reqId, method, params: p } = req.data;
    return { kind: 'request', message: { ...(reqId === undefined ? {} : { id: reqId }), method, params: p ?? {} } };
  }
  const res = z.safeParse(responseSchema, value);
  if (res.success && ('result' in (value as object) || 'error' in (value as object))) return { kind: 'response' };
  throw new InvalidRequestError(
    `Invalid request: not a JSON-RPC 2.0 message (${req.error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ')})`,
  );
};

/** The id of a message that failed validation, so the error can still name it. */
export const idOf = (value: unknown): JsonRpcId | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const candidate = (value as { id?: unknown }).id;
  return typeof candidate === 'string' || (typeof candidate === 'number' && Number.isFinite(candidate)) ? candidate : undefined;
};
