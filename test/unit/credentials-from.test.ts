import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { issuedBefore } from '../../lambda/auth/credential-gate.js';

// A member whose access starts afresh (enabled again, added back) gets `credentialsFrom`; every
// credential issued before it is dead. Tokens of the built-in authorization server and JWTs say when
// they were issued only to the second (`iat`), so a reset and a consent in one second cannot be told
// apart: such a credential counts as from before, and its person signs in again.

describe('credentials issued before a reset', () => {
  const reset = '2026-12-02T10:00:00.400Z';

  test('a time to the millisecond is compared as it is', () => {
    assert.equal(issuedBefore(Date.parse('2026-12-02T10:00:00.399Z'), reset, false), true);
    assert.equal(issuedBefore(Date.parse('2026-12-02T10:00:00.400Z'), reset, false), false);
  });

  test("a whole second within the reset's own second counts as before it, the next one as after", () => {
    // An access token issued at 10:00:00.100 and one at 10:00:00.900 both carry iat 10:00:00.
    assert.equal(issuedBefore(Date.parse('2026-12-02T10:00:00Z'), reset, true), true);
    assert.equal(issuedBefore(Date.parse('2026-12-02T09:59:59Z'), reset, true), true);
    assert.equal(issuedBefore(Date.parse('2026-12-02T10:00:01Z'), reset, true), false);
  });
});
