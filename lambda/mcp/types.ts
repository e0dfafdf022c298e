import type { ProtocolVersion } from '../platform/config.js';
import type { ClientInfo } from '../vocabulary.js';

export type { JsonRpcId } from '../errors.js';

/** The two ways of speaking on /mcp (docs/protocol.md). */
export interface Era {
  readonly version: ProtocolVersion;
  /** 2026-07-28: stateless, `_meta` on every request, `resultType`, cache hints. */
  readonly modern: boolean;
}

export type ClientCapabilities = Record<string, unknown>;

export type ContentBlock = Record<string, unknown> & { type: string };

/** What a request knows about its caller's protocol side. */
export interface RequestMeta {
  readonly era: Era;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo: ClientInfo | undefined;
}
