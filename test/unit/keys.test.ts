import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cachedKeySource, keyRingFromSeeds, type KeyRing } from '../../lambda/platform/keys.js';

const SEED_A = 'a'.repeat(40);
const SEED_B = 'b'.repeat(40);

describe('key ring', () => {
  test('each purpose gets its own key, and the previous seed still verifies', () => {
    const ring = keyRingFromSeeds(SEED_B, SEED_A);
    assert.notDeepEqual(ring.current['token-hash'], ring.current.cursor);
    assert.equal(ring.all.length, 2);
    assert.deepEqual(ring.all[1]!.cursor, keyRingFromSeeds(SEED_A).current.cursor);
  });

  test('a cached source reloads after its max age and keeps the old ring when a refresh fails', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 0 });
    const answers: Array<KeyRing | Error> = [keyRingFromSeeds(SEED_A), new Error('secrets manager down'), keyRingFromSeeds(SEED_B)];
    let loads = 0;
    const source = cachedKeySource(async () => {
      const next = answers[loads++]!;
      if (next instanceof Error) throw next;
      return next;
    }, 1000);

    const first = await source();
    t.mock.timers.tick(500);
    assert.equal(await source(), first);
    t.mock.timers.tick(600);
    assert.equal(await source(), first, 'a failed refresh serves the ring it had');
    t.mock.timers.tick(1001);
    const rotated = await source();

    assert.equal(loads, 3);
    assert.deepEqual(rotated.current.cursor, keyRingFromSeeds(SEED_B).current.cursor);
  });

  test('a failed first load is retried on the next call', async () => {
    let loads = 0;
    const source = cachedKeySource(async () => {
      loads += 1;
      if (loads === 1) throw new Error('not yet');
      return keyRingFromSeeds(SEED_A);
    });
    await assert.rejects(source());
    await source();
    assert.equal(loads, 2);
  });
});
