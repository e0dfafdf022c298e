import { WriteNotConfirmed, type WriteOp } from '../../platform/transact.js';
import { unconfirmed } from '../model/refusals.js';
import type { WriteContext } from './stores.js';

/**
 * Runs a write; one DynamoDB never confirmed (transact.ts resolved what it could under the same
 * token) becomes the refusal that says so and how to check (`check`), instead of a 500: the change
 * may have been written.
 */
export const confirmedOr = async <T>(check: string, write: () => Promise<T>): Promise<T> => {
  try {
    return await write();
  } catch (err) {
    if (err instanceof WriteNotConfirmed) throw unconfirmed(check);
    throw err;
  }
};

/**
 * The call's claim (store/call-claims.ts), where it has one not landed yet, to go first in the write
 * whose first record is `recordId`; `write` sends the ops it is given. A write DynamoDB did not
 * confirm is confirmed by its claim where the claim can be read; otherwise it is refused as
 * unconfirmed, naming how to check (`check`).
 */
export const writeClaimed = async <T>(
  ctx: Pick<WriteContext, 'claim'>,
  recordId: string,
  check: string,
  write: (claim: readonly WriteOp[]) => Promise<T>,
): Promise<T | undefined> => {
  const claim = ctx.claim?.op(recordId);
  let out: T | undefined;
  try {
    out = await write(claim ? [claim] : []);
  } catch (err) {
    if (!(err instanceof WriteNotConfirmed)) throw err;
    if (!claim || !(await ctx.claim!.confirm(recordId))) throw unconfirmed(check, !!claim);
  }
  if (claim) ctx.claim!.landed(recordId);
  return out;
};
