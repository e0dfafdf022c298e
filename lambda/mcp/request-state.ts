import { InvalidParamsError } from '../errors.js';
import type { KeyRing } from '../platform/key-ring.js';
import { openBound, signBound } from '../platform/signed-token.js';

/**
 * `requestState` of a multi round-trip request (SEP-2322) travels through the client, so it is a
 * signed token (platform/signed-token.ts) bound to the workspace, the user, the tool or prompt and
 * the arguments: a state that was tampered with, expired, or replayed on another call is refused
 * with -32602.
 */
const TTL_SECONDS = 15 * 60;
const AUDIENCE = 'doers:request-state';

export interface StateBinding {
  /** A user id names a member within one workspace only; the same id elsewhere is someone else. */
  readonly workspaceId: string;
  readonly userId: string;
  /** The tool's name, or `prompt:<name>` (tool names cannot hold a colon). */
  readonly target: string;
  readonly args: unknown;
}

const options = (b: StateBinding, now: Date) => ({
  purpose: 'request-state' as const,
  audience: AUDIENCE,
  binding: [b.workspaceId, b.userId, b.target, b.args ?? {}],
  ttlSeconds: TTL_SECONDS,
  now,
});

export const signRequestState = (keys: KeyRing, binding: StateBinding, state: unknown, now: Date): Promise<string> =>
  signBound(keys, options(binding, now), state);

export const verifyRequestState = async (keys: KeyRing, binding: StateBinding, token: string, now: Date): Promise<unknown> => {
  const opened = await openBound(keys, options(binding, now), token);
  if (!opened) throw new InvalidParamsError('requestState is not valid for this request (tampered, expired or from another call)');
  return opened.payload;
};
