import { WriteNotConfirmed } from '../../platform/transact.js';
import { unconfirmed } from '../model/refusals.js';

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
