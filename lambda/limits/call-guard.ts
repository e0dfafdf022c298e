import type { Principal } from '../vocabulary.js';

/**
 * Admission for tool calls and resource reads (docs/limits.md). `acquire` resolves with the release
 * to call once the answer is built, or throws LimitExceededError (ratelimited / busy) or
 * DependencyUnavailableError when the limits cannot be checked.
 */
export interface CallGuard {
  acquire(principal: Principal): Promise<() => Promise<void>>;
}

/** The release of a call that holds nothing. */
export const noRelease = async (): Promise<void> => {};

/** Both limits switched off (0). */
export const unlimitedGuard: CallGuard = { acquire: async () => noRelease };
