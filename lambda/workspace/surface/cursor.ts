import type { KeyRing } from '../../platform/key-ring.js';
import { openBound, signBound } from '../../platform/signed-token.js';
import { cursorNotValid } from '../model/refusals.js';

/**
 * List cursors: opaque signed tokens (platform/signed-token.ts) carrying where the page ended, bound
 * to the question: tool, workspace, user and every argument except `cursor` and `limit`. Replayed on
 * another tool, other arguments, another user, after the key ring lost its key, or from an earlier
 * format, a cursor is refused with a tool error naming `cursor`.
 */
const AUDIENCE = 'doers:cursor';
/** Bumped when the position format changes, so a cursor of an earlier version is refused. */
const FORMAT = 2;

export interface CursorBinding {
  readonly tool: string;
  readonly workspaceId: string;
  readonly userId: string;
  /** The parsed arguments; `cursor` and `limit` are left out here, so callers pass them all. */
  readonly args: Readonly<Record<string, unknown>>;
}

const options = (b: CursorBinding) => {
  const { cursor: _c, limit: _l, ...question } = b.args;
  return { purpose: 'cursor' as const, audience: AUDIENCE, binding: [FORMAT, b.tool, b.workspaceId, b.userId, question] };
};

export const signCursor = (keys: KeyRing, binding: CursorBinding, position: unknown): Promise<string> =>
  signBound(keys, options(binding), position);

/** The position a cursor carries; `isPosition` checks its shape (a signed cursor of another list is refused too). */
export const openCursor = async <P>(
  keys: KeyRing,
  binding: CursorBinding,
  cursor: string,
  isPosition: (value: unknown) => value is P,
): Promise<P> => {
  const opened = await openBound(keys, options(binding), cursor);
  if (opened && isPosition(opened.payload)) return opened.payload;
  throw cursorNotValid(binding.tool);
};
