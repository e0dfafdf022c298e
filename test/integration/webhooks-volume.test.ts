import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_ATTEMPTS, nextTryAt } from '../../lambda/workspace/webhooks/webhook-dispatch.js';
import { at, clock, noticeOf, script, useWebhookWorld, world } from '../helpers/webhook-world.js';

// A webhook's retry schedule walked to its end: the minute job, asleep between the tries, reads
// every minute of the 24 hours on waking (some 1,500 reads). A volume test: `npm test` runs it,
// `npm run test:quick` leaves it out (docs/testing.md, "The fast loop"); webhooks.test.ts has the
// schedule's first steps.

useWebhookWorld();

describe('delivering', () => {
  test('a receiver that keeps failing is tried on the schedule for 24 hours, then kept as failed and counted', async () => {
    const w = await world();
    await w.hook('/dead');
    script.set(
      '/dead',
      Array.from({ length: 20 }, () => ({ status: 500 })),
    );
    const t = clock();
    const dispatch = w.dispatcher();
    const notice = noticeOf('assigned', 'task_d1', t());
    const next = noticeOf('status', 'task_d1', t());

    await dispatch.dispatch(w.workspaceId, [notice, next], t());
    // Walk the schedule: each try lands in the minute nextTryAt names.
    let when = t();
    for (let made = 1; made < MAX_ATTEMPTS; made++) {
      when = nextTryAt(t(), made, when)!;
      await dispatch.retryDue(new Date(when.getTime() + 1_000));
      assert.equal(at('/dead').filter((r) => r.id === notice.id).length, made + 1, `try ${made + 1}`);
    }
    assert.equal(nextTryAt(t(), MAX_ATTEMPTS, when), undefined);
    assert.ok(when.getTime() - t().getTime() <= 24 * 3600_000);

    const [hook] = await w.stores.webhooks.list(w.workspaceId);
    assert.equal(hook!.failedDeliveries, 1);
    assert.equal(hook!.lastFailure?.status, 500);
    // The task's next notice went once the first was given up (and failed its first try in turn).
    assert.equal(at('/dead').filter((r) => r.id === next.id).length, 1);
  });
});
