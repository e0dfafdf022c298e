import assert from 'node:assert/strict';
import { DoersError } from '../../lambda/errors.js';

/** The typed protocol error a call rejects with; fails the test when it resolves or throws anything else. */
export const rejection = async (p: Promise<unknown>): Promise<DoersError> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof DoersError, String(err));
    return err;
  }
  assert.fail('expected a rejection');
};
