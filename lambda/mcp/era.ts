import { HeaderMismatchError, InvalidParamsError, UnsupportedVersionError } from '../errors.js';
import type { ClientInfo } from '../vocabulary.js';
import type { JsonRpcRequest } from './jsonrpc.js';
import { HEADERLESS_VERSION, isKnownVersion, META, MODERN_VERSION, PROTOCOL_VERSIONS } from './protocol.js';
import type { ClientCapabilities, RequestMeta } from './types.js';

export interface TransportHeaders {
  readonly protocolVersion: string | undefined;
  readonly method: string | undefined;
  readonly name: string | undefined;
  /** Not a header: the URL's `tools` parameter (the tool groups a connection chose), where there is one. */
  readonly tools?: string | undefined;
}

/** The header version alone: unknown (or older than 2025-03-26) is -32022 before anything else. */
export const checkHeaderVersion = (headerVersion: string | undefined): void => {
  if (headerVersion !== undefined && !isKnownVersion(headerVersion)) throw new UnsupportedVersionError(headerVersion, PROTOCOL_VERSIONS);
};

const asObject = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * Which era a request speaks and what it says about its client (docs/protocol.md "Which era").
 * Modern (2026-07-28) if the header says so or `_meta` carries a revision; then the header is
 * required and must agree, and `_meta` must carry version and capabilities.
 */
export const resolveRequestMeta = (req: JsonRpcRequest, headers: TransportHeaders): RequestMeta => {
  const meta = asObject(req.params._meta);
  const bodyVersion = meta?.[META.protocolVersion];
  const headerVersion = headers.protocolVersion;

  if (bodyVersion !== undefined) {
    if (typeof bodyVersion !== 'string') throw new InvalidParamsError(`_meta["${META.protocolVersion}"] must be a string`, { status: 400 });
    if (headerVersion === undefined) {
      throw new HeaderMismatchError(`The body names protocol version ${bodyVersion} but the MCP-Protocol-Version header is missing`);
    }
    if (headerVersion !== bodyVersion) {
      throw new HeaderMismatchError(`MCP-Protocol-Version header ${headerVersion} does not match _meta protocol version ${bodyVersion}`);
    }
    if (!isKnownVersion(bodyVersion)) throw new UnsupportedVersionError(bodyVersion, PROTOCOL_VERSIONS);
  }

  const version = isKnownVersion(headerVersion) ? headerVersion : HEADERLESS_VERSION;
  const modern = version === MODERN_VERSION;
  const clientInfo = asObject(meta?.[META.clientInfo]) as ClientInfo | undefined;

  if (!modern) {
    const caps = asObject(meta?.[META.clientCapabilities]) ?? asObject(req.params.capabilities) ?? {};
    const info = clientInfo ?? (req.method === 'initialize' ? (asObject(req.params.clientInfo) as ClientInfo | undefined) : undefined);
    return { era: { version, modern }, clientCapabilities: caps as ClientCapabilities, clientInfo: info };
  }

  if (bodyVersion === undefined) {
    throw new InvalidParamsError(`params._meta["${META.protocolVersion}"] is required on ${MODERN_VERSION}`, { status: 400 });
  }
  const caps = asObject(meta?.[META.clientCapabilities]);
  if (!caps) throw new InvalidParamsError(`params._meta["${META.clientCapabilities}"] is required on ${MODERN_VERSION}`, { status: 400 });
  return { era: { version, modern }, clientCapabilities: caps, clientInfo };
};

/** Methods whose `Mcp-Name` header carries a value from params. */
const NAME_PARAM: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  // The tasks extension: a task's requests name it, so a router can send them where it lives.
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/**
 * `Mcp-Method` / `Mcp-Name` (SEP-2243): required on 2026-07-28; on the handshake era checked only
 * where a client sends them. A header that disagrees with the body is -32020.
 */
export const checkStandardHeaders = (req: JsonRpcRequest, headers: TransportHeaders, modern: boolean): void => {
  if (headers.method === undefined) {
    if (modern) throw new HeaderMismatchError('The Mcp-Method header is required');
  } else if (headers.method !== req.method) {
    throw new HeaderMismatchError(`Mcp-Method header ${headers.method} does not match the body's method ${req.method}`);
  }
  // Own keys only: a method named `constructor` has no name parameter (see ownEntry in dispatcher.ts).
  const param = Object.hasOwn(NAME_PARAM, req.method) ? NAME_PARAM[req.method] : undefined;
  if (!param) return;
  const value = req.params[param];
  if (headers.name === undefined) {
    if (modern) throw new HeaderMismatchError(`The Mcp-Name header is required on ${req.method}`);
    return;
  }
  if (decodeHeaderValue(headers.name) !== value) {
    throw new HeaderMismatchError(`Mcp-Name header does not match the body's ${param}`);
  }
};

/** SEP-2243 lets a client send a non-ASCII value as `=?base64?…?=`. */
const decodeHeaderValue = (value: string): string => {
  const m = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(value);
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8') : value;
};
