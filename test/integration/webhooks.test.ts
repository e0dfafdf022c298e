import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ToolRefusal } from '../../lambda/errors.js';

import { addWebhook, listWebhooks, MAX_WEBHOOKS, removeWebhook, testWebhook } from '../../lambda/workspace/webhooks/webhook-writer.js';
import { at, clock, delivered, MINUTE, noticeOf, origin, script, secrets, useWebhookWorld, world } from '../helpers/webhook-world.js';

// Outbound webhooks end to end below the notifier: the writer (rights, limit, record) and the
// dispatcher (signing, once per notice, retries by the minute job under a clock the test moves,
// order per task, the rate, the timeout, Slack's body) against the embedded DynamoDB, each test on
// a DynamoDB of its own, delivering to a receiver on 127.0.0.1 that verifies every signature it gets
// with the standardwebhooks package, as a receiver would (test/helpers/webhook-world.ts). The retry
// schedule walked to its end over 24 hours is a volume test of its own (webhooks-volume.test.ts).

useWebhookWorld();

const refusalOf = async (p: Promise<unknown>): Promise<ToolRefusal> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ToolRefusal, String(err));
    return err;
  }
  assert.fail('expected a refusal');
};

// ---- adding and removing -----------------------------------------------------------------------------

describe('adding and removing webhooks', () => {
  test('an admin adds one: its secret once, masked in the list, a record of kind workspace without the secret', async () => {
    const w = await world();
    const { webhook, record } = await addWebhook(
      await w.ctx('admin'),
      { url: `${origin()}/a`, events: ['assigned', 'completed'] },
      { allowLoopback: true },
    );

    assert.match(webhook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(webhook.events, ['assigned', 'completed']);
    assert.equal(webhook.format, 'standard');
    const [listed] = await listWebhooks(w.stores, (await w.ctx('admin')).caller);
    assert.equal(listed!.webhookId, webhook.webhookId);
    assert.equal(listed!.secret, `whsec_…${webhook.secret.slice(-4)}`);
    assert.equal(record.kind, 'workspace');
    assert.equal(record.action, 'created');
    assert.equal(record.targetId, webhook.webhookId);
    const stored = await w.stores.activity.get(w.workspaceId, record.activityId);
    assert.ok(stored, 'the record was written');
    assert.ok(!JSON.stringify(stored).includes(webhook.secret), 'the record holds no secret');
  });

  test('members and viewers may not add, remove, list or test; nothing is written', async () => {
    const w = await world();
    const id = await w.hook('/roles');
    const dispatch = w.dispatcher();
    for (const role of ['member', 'viewer'] as const) {
      const ctx = await w.ctx(role);
      assert.equal((await refusalOf(addWebhook(ctx, { url: `${origin()}/x` }, { allowLoopback: true }))).reason, 'role');
      assert.equal((await refusalOf(removeWebhook(ctx, id))).reason, 'role');
      assert.equal((await refusalOf(listWebhooks(w.stores, ctx.caller))).reason, 'role');
      assert.equal((await refusalOf(testWebhook(ctx.caller, dispatch, id, new Date()))).reason, 'role');
    }
    assert.equal((await w.stores.webhooks.list(w.workspaceId)).length, 1);
    const ws = (await w.ctx('owner')).caller;
    const history = await w.stores.activity.list(ws, { includeTeam: true, kind: 'workspace' }, 50, new Date());
    assert.deepEqual(
      history.records.filter((r) => r.targetId === id).map((r) => r.action),
      ['created'],
      'only the add was recorded',
    );
    assert.equal(at('/roles').length, 0, 'no test delivery was sent');
  });

  test(`at most ${MAX_WEBHOOKS} a workspace: the next is refused as a limit and written nowhere; a removal makes room`, async () => {
    const w = await world();
    const ids: string[] = [];
    for (let i = 0; i < MAX_WEBHOOKS; i++) ids.push(await w.hook(`/limit/${i}`));

    const refusal = await refusalOf(addWebhook(await w.ctx('owner'), { url: `${origin()}/limit/11` }, { allowLoopback: true }));

    assert.equal(refusal.reason, 'limit');
    assert.equal(refusal.data.most, MAX_WEBHOOKS);
    assert.equal((await w.items('HOOK#')).length, MAX_WEBHOOKS);
    const { record } = await removeWebhook(await w.ctx('admin'), ids[0]!);
    assert.equal(record.action, 'removed');
    assert.equal((await w.stores.webhooks.list(w.workspaceId)).length, MAX_WEBHOOKS - 1);
    await w.hook('/limit/again');
    assert.equal((await w.stores.webhooks.list(w.workspaceId)).length, MAX_WEBHOOKS);
    // Ten at once from nine: the count item lets exactly one of them land.
    await removeWebhook(await w.ctx('owner'), ids[1]!);
    const owner = await w.ctx('owner');
    const raced = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => addWebhook(owner, { url: `${origin()}/race/${i}` }, { allowLoopback: true })),
    );
    assert.equal(raced.filter((r) => r.status === 'fulfilled').length, 1);
    assert.equal((await w.stores.webhooks.list(w.workspaceId)).length, MAX_WEBHOOKS);
  });

  test('unknown events and formats, and a URL the guard refuses, are named and write nothing', async () => {
    const w = await world();
    const owner = await w.ctx('owner');
    const events = await refusalOf(addWebhook(owner, { url: `${origin()}/e`, events: ['assigned', 'exploded'] }, { allowLoopback: true }));
    assert.equal(events.reason, 'invalid-argument');
    assert.deepEqual(events.data.unknown, ['exploded']);
    const format = await refusalOf(addWebhook(owner, { url: `${origin()}/e`, format: 'xml' }, { allowLoopback: true }));
    assert.equal(format.data.param, 'format');
    const loopback = await refusalOf(addWebhook(owner, { url: `${origin()}/e` }, { allowLoopback: false }));
    const { problem, ...typed } = loopback.data;
    assert.deepEqual(typed, { param: 'url', cause: 'forbidden-address', addressClass: 'loopback' });
    assert.equal(loopback.message, `url: ${problem}`, 'the problem, as the account page shows it beside its field');
    assert.equal((await w.items('HOOK')).length, 0, 'neither a webhook nor its count');
  });

  test('removing one that is not there is not found', async () => {
    const w = await world();
    assert.equal((await refusalOf(removeWebhook(await w.ctx('owner'), 'hook_0000'))).reason, 'not-found');
  });
});

// ---- delivering ----------------------------------------------------------------------------------------

describe('delivering', () => {
  test('each notice of a kind the webhook takes is delivered once, signed, with the notice as its data', async () => {
    const w = await world();
    await w.hook('/once', { events: ['assigned', 'completed'] });
    const now = clock();
    const dispatch = w.dispatcher();
    const notices = [
      noticeOf('assigned', 'task_a1', now()),
      noticeOf('comment', 'task_a1', now()),
      noticeOf('completed', 'task_b1', now()),
    ];

    await dispatch.dispatch(w.workspaceId, notices, now());
    await dispatch.dispatch(w.workspaceId, notices, now(1_000)); // a stream's redelivery
    await dispatch.retryDue(now(MINUTE));
    await dispatch.retryDue(now(2 * MINUTE));

    const got = at('/once');
    assert.deepEqual(
      got.map((r) => r.id),
      [notices[0]!.id, notices[2]!.id],
    );
    const body = JSON.parse(got[0]!.body);
    assert.deepEqual(body, { type: 'task.assigned', timestamp: notices[0]!.at, data: notices[0] });
    assert.equal(got[0]!.headers['content-type'], 'application/json');
    assert.match(String(got[0]!.headers['webhook-signature']), /^v1,/);
  });

  test('a delivery answered 500 is tried again by the minute job the next minute, and arrives once', async () => {
    const w = await world();
    const id = await w.hook('/retry');
    script.set('/retry', [{ status: 500 }]);
    const now = clock();
    const dispatch = w.dispatcher();
    const notice = noticeOf('assigned', 'task_r1', now());

    await dispatch.dispatch(w.workspaceId, [notice], now());
    assert.equal(at('/retry').length, 1);
    await dispatch.retryDue(now(5_000)); // not due yet: nothing
    assert.equal(at('/retry').length, 1);
    const [failing] = await w.stores.webhooks.list(w.workspaceId);
    assert.equal(failing!.lastFailure?.cause, 'status');
    assert.equal(failing!.lastFailure?.status, 500);
    assert.equal(failing!.failedDeliveries ?? 0, 0);

    await dispatch.retryDue(now(MINUTE + 1_000));
    await dispatch.retryDue(now(2 * MINUTE));
    await dispatch.dispatch(w.workspaceId, [notice], now(3 * MINUTE)); // redelivered after it arrived: not again

    assert.deepEqual(
      at('/retry').map((r) => [r.id, r.status]),
      [
        [notice.id, 500],
        [notice.id, 200],
      ],
    );
    assert.equal(new Set(delivered('/retry').map((r) => r.id)).size, delivered('/retry').length);
    assert.equal(id, failing!.webhookId);
  });

  test("a task's later notice waits behind its earlier one still pending; another task's goes at once", async () => {
    const w = await world();
    await w.hook('/order');
    script.set('/order', [{ status: 503 }]);
    const now = clock();
    const dispatch = w.dispatcher();
    const a1 = noticeOf('assigned', 'task_oa', now());
    const a2 = noticeOf('status', 'task_oa', now());
    const b1 = noticeOf('assigned', 'task_ob', now());

    await dispatch.dispatch(w.workspaceId, [a1], now());
    await dispatch.dispatch(w.workspaceId, [a2, b1], now(2_000));
    assert.deepEqual(
      at('/order').map((r) => r.id),
      [a1.id, b1.id],
      'a2 waits behind a1',
    );

    await dispatch.retryDue(now(MINUTE + 1_000));

    assert.deepEqual(
      delivered('/order').map((r) => r.id),
      [b1.id, a1.id, a2.id],
    );
    await dispatch.retryDue(now(3 * MINUTE));
    assert.equal(at('/order').length, 4, 'nothing more');
  });

  test('a receiver that does not answer in time is cut at the timeout and tried again later', async () => {
    const w = await world();
    const id = await w.hook('/slow');
    script.set('/slow', [{ delayMs: 3_000 }, { delayMs: 3_000 }]);
    const dispatch = w.dispatcher({ timeoutMs: 300 });
    const now = clock();

    const started = Date.now();
    const outcome = await testWebhook((await w.ctx('admin')).caller, dispatch, id, now());
    const took = Date.now() - started;
    await dispatch.dispatch(w.workspaceId, [noticeOf('assigned', 'task_s1', now())], now());

    assert.deepEqual(outcome, { ok: false, retryable: true, cause: 'timeout' });
    assert.ok(took < 1_500, `cut after ${took} ms`);
    const [hook] = await w.stores.webhooks.list(w.workspaceId);
    assert.equal(hook!.lastFailure?.cause, 'timeout');
    await dispatch.retryDue(now(MINUTE + 1_000));
    await dispatch.retryDue(now(3 * MINUTE));
    // The test, the cut first try, the retry answered at once; nothing after it.
    assert.equal(at('/slow').length, 3);
    assert.equal((await w.stores.webhooks.list(w.workspaceId))[0]!.failedDeliveries ?? 0, 0);
  });

  test('a host name is resolved once per try and the connection goes to that address, the Host header naming the name', async () => {
    const w = await world();
    const port = new URL(origin()).port;
    const names: string[] = [];
    const resolve = async (host: string) => {
      names.push(host);
      return [{ address: '127.0.0.1', family: 4 as const }];
    };
    const { webhook } = await addWebhook(
      await w.ctx('owner'),
      { url: `http://receiver.hooks.test:${port}/pinned` },
      { allowLoopback: true, resolve },
    );
    secrets.set('/pinned', webhook.secret);
    const now = clock();

    // No DNS answers here: the request can only have reached the receiver through the vetted address.
    await w.dispatcher({ resolve }).dispatch(w.workspaceId, [noticeOf('assigned', 'task_p1', now())], now());

    assert.equal(delivered('/pinned').length, 1);
    assert.equal(at('/pinned')[0]!.headers.host, `receiver.hooks.test:${port}`);
    assert.deepEqual(names, ['receiver.hooks.test', 'receiver.hooks.test'], 'once at add, once at the try');
  });

  test('the slack format posts {text} with the summary, escaped as Slack reads it', async () => {
    const w = await world();
    await w.hook('/slack', { format: 'slack' });
    const now = clock();
    const notice = noticeOf('completed', 'task_k1', now(), 'Ada completed HOOK-01 "<b>Q3 & Q4</b>"');

    await w.dispatcher().dispatch(w.workspaceId, [notice], now());

    const [got] = at('/slack');
    assert.deepEqual(JSON.parse(got!.body), { text: 'Ada completed HOOK-01 "&lt;b&gt;Q3 &amp; Q4&lt;/b&gt;"' });
    assert.equal(got!.id, notice.id);
  });

  test("over the workspace's rate a delivery is put off to the next minute, not dropped", async () => {
    const w = await world();
    await w.hook('/rate');
    const now = clock();
    const dispatch = w.dispatcher({ ratePerMinute: 2 });
    const notices = ['task_q1', 'task_q2', 'task_q3'].map((t) => noticeOf('assigned', t, now()));

    await dispatch.dispatch(w.workspaceId, notices, now());
    assert.equal(at('/rate').length, 2);
    await dispatch.retryDue(now(MINUTE));

    assert.deepEqual(
      at('/rate').map((r) => r.id),
      notices.map((n) => n.id),
    );
  });
});
