import { createHash } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { InvalidParamsError } from '../errors.js';
import type { KeyRing } from '../platform/keys.js';

/**
 * `requestState` of a multi round-trip request (SEP-2322) travels through the client, so it is
 * signed (HS256 JWS via jose) and bound to the workspace, the user, the tool or prompt and the arguments: a
 * state that was tampered with, expired, or replayed on another call is refused with -32602.
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

const fingerprint = (b: StateBinding): string =>
  createHash('sha256')
    .update(JSON.stringify([b.workspaceId, b.userId, b.target, b.args ?? {}]))
    .digest('base64url');

export const signRequestState = async (keys: KeyRing, binding: StateBinding, state: unknown, now: Date): Promise<string> =>
  new SignJWT({ s: state ?? null, b: fingerprint(binding) })
    .setProtectedHeader({ alg: 'HS256' })
    .setAudience(AUDIENCE)
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .setExpirationTime(Math.floor(now.getTime() / 1000) + TTL_SECONDS)
    .sign(keys.current['request-state']);

export const verifyRequestState = async (keys: KeyRing, binding: StateBinding, token: string, now: Date): Promise<unknown> => {
  for (const k of keys.all) {
    try {
      const { payload } = await jwtVerify(token, k['request-state'], { algorithms: ['HS256'], audience: AUDIENCE, currentDate: now });
      if (payload.b !== fingerprint(binding)) break;
      return payload.s;
    } catch {
      // try the previous key, if any
    }
  }
  throw new InvalidParamsError('requestState is not valid for this request (tampered, expired or from another call)');
};
