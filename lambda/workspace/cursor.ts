import { createHash } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { InvalidArgumentRefusal } from '../errors.js';
import type { KeyRing } from '../platform/keys.js';

/**
 * List cursors: an opaque HS256 JWS (jose) signed with the ring's 'cursor' key, carrying where the
 * page ended and a fingerprint of the question: tool, workspace, user and every argument except
 * `cursor` and `limit`. Replayed on another tool, other arguments, another user, after the key ring
 * lost its key, or from an earlier format, it is refused with a tool error naming `cursor`.
 */
const AUDIENCE = 'doers:cursor';
/** Bumped when the position format changes, so a cursor of an earlier version is refused. */
const FORMAT = 1;

export interface CursorBinding {
  readonly tool: string;
  readonly workspaceId: string;
  readonly userId: string;
  /** The parsed arguments; `cursor` and `limit` are left out here, so callers pass them all. */
  readonly args: Readonly<Record<string, unknown>>;
}

const stable = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, stable(v)]),
    );
  }
  return value;
};

const fingerprint = (b: CursorBinding): string => {
  const { cursor: _c, limit: _l, ...question } = b.args;
  return createHash('sha256')
    .update(JSON.stringify([FORMAT, b.tool, b.workspaceId, b.userId, stable(question)]))
    .digest('base64url');
};

export const signCursor = async (keys: KeyRing, binding: CursorBinding, position: unknown): Promise<string> =>
  new SignJWT({ p: position, b: fingerprint(binding) })
    .setProtectedHeader({ alg: 'HS256' })
    .setAudience(AUDIENCE)
    .sign(keys.current.cursor);

/** The position a cursor carries; `isPosition` checks its shape (a signed cursor of another list is refused too). */
export const openCursor = async <P>(
  keys: KeyRing,
  binding: CursorBinding,
  cursor: string,
  isPosition: (value: unknown) => value is P,
): Promise<P> => {
  const expected = fingerprint(binding);
  for (const k of keys.all) {
    try {
      const { payload } = await jwtVerify(cursor, k.cursor, { algorithms: ['HS256'], audience: AUDIENCE });
      if (payload.b === expected && isPosition(payload.p)) return payload.p;
      break;
    } catch {
      // the previous key of the ring, if any, may have signed it
    }
  }
  throw new InvalidArgumentRefusal(
    `cursor: not valid for this call. A cursor only continues the list of the same tool with the same arguments (apart from limit); ` +
      `call ${binding.tool} again without cursor to start over.`,
  );
};
