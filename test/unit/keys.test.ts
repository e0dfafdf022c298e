import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cachedKeySource, type KeyRing, keyRingFromSeeds } from '../../lambda/platform/key-ring.js';

const SEED_A = 'a'.repeat(40);
const SEED_B = 'b'.repeat(40);

describe('key ring', () => {
  test('each purpose gets its own key, and the previous seed still verifies', () => {
    const ring = keyRingFromSeeds(SEED_B, SEED_A);
    assert.notDeepEqual(ring.current['token-hash'], ring.current.cursor);
    assert.equal(ring.all.length, 2);
    assert.deepEqual(ring.all[1]!.cursor, keyRingFromSeeds(SEED_A).current.cursor);
  });

  test('after its max age a cached source refreshes in the background and keeps the old ring when that fails', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 0 });
    const answers: Array<KeyRing | Error> = [keyRingFromSeeds(SEED_A), new Error('secrets manager down'), keyRingFromSeeds(SEED_B)];
    let loads = 0;
    const source = cachedKeySource(async () => {
      const next = answers[loads++]!;
      if (next instanceof Error) throw next;
      return next;
    }, 1000);
    const settle = () => new Promise((resolve) => setImmediate(resolve));

    const first = await source();
    t.mock.timers.tick(500);
    assert.equal(await source(), first, 'fresh: no load');
    t.mock.timers.tick(600);
    assert.equal(await source(), first, 'stale: answered at once while refreshing');
    await settle();
    assert.equal(await source(), first, 'a failed refresh keeps the ring it had');
    t.mock.timers.tick(1001);
    await source();
    await settle();
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
