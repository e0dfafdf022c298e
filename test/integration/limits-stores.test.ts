import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { AdmissionLimiter } from '../../lambda/limits/admission.js';
import { ensureTables } from '../../lambda/local/bootstrap.js';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { startFaultProxy } from '../helpers/limits-harness.js';

// The limits item on the embedded DynamoDB with a clock the test sets, so expiry, windows and
// tidying are checked exactly, without waiting for time to pass.

const config = loadConfig({});
let dynamo: EmbeddedDynamo;
let db: DynamoDBDocumentClient;
/** The same store seen through a hop that can hold the limits item's reads. */
let proxy: Awaited<ReturnType<typeof startFaultProxy>>;
let proxied: DynamoDBDocumentClient;
before(async () => {
  dynamo = await startEmbeddedDynamo(':memory:');
  db = createDocumentClient({ endpoint: dynamo.endpoint });
  await ensureTables(db, config);
  proxy = await startFaultProxy(dynamo.endpoint, [config.tables.limits]);
  proxied = createDocumentClient({ endpoint: proxy.endpoint });
});
after(async () => {
  db.destroy();
  proxied.destroy();
  await proxy.close();
  await dynamo.close();
});

const itemOf = async (table: string, pk: string) =>
  (await db.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item;

const admission = (opts: { max?: number; calls?: number; windowSeconds?: number }, client = db) =>
  new AdmissionLimiter(client, config.tables.limits, {
    calls: opts.calls ?? 0,
    windowSeconds: opts.windowSeconds ?? 60,
    maxConcurrent: opts.max ?? 0,
    functionTimeoutSeconds: 1,
  });

describe('concurrency leases', () => {
  // Function timeout 1 s: buckets of 2 s, a dead lease counts at most 4 s.
  const limiter = (max: number) => admission({ max });
  const G = 2_000;
  const k = 900_000_000; // a bucket number; times below are k*G + offset
  const at = (bucket: number, offsetMs = 0) => bucket * G + offsetMs;

  test('states its bound: two buckets of function timeout + 1 s', () => {
    const l = limiter(1);
    assert.equal(l.bucketSeconds, 2);
    assert.equal(l.boundSeconds, 4);
  });

  test('a lease never given back counts through its own bucket and the next, and no longer', async () => {
    // Arrange
    const l = limiter(1);
    const subject = 'ws#dead-holder';
    assert.equal((await l.acquire(subject, at(k, 1_900))).granted, true); // the holder dies here

    // Act
    const sameBucket = await l.acquire(subject, at(k, 1_999));
    const nextBucketEnd = await l.acquire(subject, at(k + 1, 1_999));
    const twoBucketsLater = await l.acquire(subject, at(k + 2));

    // Assert
    assert.equal(sameBucket.granted, false);
    assert.equal(nextBucketEnd.granted, false);
    assert.equal(twoBucketsLater.granted, true);
  });

  test('a lease given back frees its place at once, in its bucket and in the next', async () => {
    const l = limiter(1);
    const subject = 'ws#released';
    const first = await l.acquire(subject, at(k, 1_500));
    assert.ok(first.granted);

    await first.release();

    assert.equal((await l.acquire(subject, at(k, 1_600))).granted, true);
    const later = await limiter(2).acquire(subject, at(k + 1, 100));
    assert.equal(later.granted, true, 'only the second lease still counts in the next bucket');
  });

  test('a clock one bucket behind is refused while a lease taken in the next bucket is live', async () => {
    const l = limiter(4);
    const subject = 'ws#skew';
    assert.ok((await l.acquire(subject, at(k + 1, 10))).granted);

    const lagging = await l.acquire(subject, at(k, 1_990));

    assert.equal(lagging.granted, false);
  });

  test('every lease item carries expiresAt, one bucket after its last counter stops counting', async () => {
    const subject = 'ws#ttl';
    const lease = await limiter(1).acquire(subject, at(k, 10));
    assert.ok(lease.granted);

    const item = await itemOf(config.tables.limits, subject);

    assert.equal(item?.expiresAt, ((k + 3) * G) / 1000);
  });

  test('a release after the item expired does not bring it back without expiresAt', async () => {
    const subject = 'ws#expired';
    const lease = await limiter(1).acquire(subject, at(k, 10));
    assert.ok(lease.granted);
    await db.send(new DeleteCommand({ TableName: config.tables.limits, Key: { pk: subject } })); // as TTL would

    await lease.release();

    assert.equal(await itemOf(config.tables.limits, subject), undefined);
  });

  test('a release drops the counters of buckets no instance consults any more', async () => {
    // Arrange: a lease in bucket k, given back, leaves counters n<k> and n<k+1> at 0.
    const l = limiter(1);
    const subject = 'ws#tidy';
    const old = await l.acquire(subject, at(k, 10));
    assert.ok(old.granted);
    await old.release();

    // Act
    const recent = await l.acquire(subject, at(k + 5, 10));
    assert.ok(recent.granted);
    await recent.release();

    // Assert
    const item = await itemOf(config.tables.limits, subject);
    assert.deepEqual(Object.keys(item ?? {}).sort(), ['expiresAt', `n${k + 5}`, `n${k + 6}`, 'pk']);
  });
});

describe('rate windows', () => {
  const W = 60;
  const windowStart = 29_000_000 * W; // seconds, window-aligned
  const rateOnly = (calls: number) => admission({ calls, windowSeconds: W });

  test('grants exactly `calls` permits per window, then says how long until the window ends', async () => {
    const rate = rateOnly(3);
    const subject = 'ws#rate';
    const nowMs = (windowStart + 10) * 1000 + 400;

    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await rate.acquire(subject, nowMs));

    assert.deepEqual(
      decisions.map((d) => d.granted),
      [true, true, true, false],
    );
    assert.deepEqual(decisions[3], { granted: false, reason: 'ratelimited', retryAfterSeconds: 50 });
  });

  test("the next window starts with every permit free; its writes keep the ended window's counter, the window after drops it", async () => {
    // Arrange
    const rate = rateOnly(1);
    const subject = 'ws#next-window';
    assert.equal((await rate.acquire(subject, (windowStart + 59) * 1000)).granted, true);
    const lastSecond = await rate.acquire(subject, (windowStart + 59) * 1000 + 900);

    // Act
    const nextWindow = await rate.acquire(subject, (windowStart + W) * 1000);
    const kept = await itemOf(config.tables.limits, subject);
    const windowAfter = await rate.acquire(subject, (windowStart + 2 * W) * 1000);

    // Assert: a refusal's reason may be read a few seconds after its write (a store that does not
    // return the item), so the counter it reads must still be there.
    assert.deepEqual(lastSecond, { granted: false, reason: 'ratelimited', retryAfterSeconds: 1 });
    assert.equal(nextWindow.granted, true);
    assert.deepEqual(kept, { pk: subject, [`r${windowStart}`]: 1, [`r${windowStart + W}`]: 1, expiresAt: windowStart + 2 * W + 6 });
    assert.equal(windowAfter.granted, true);
    assert.deepEqual(await itemOf(config.tables.limits, subject), {
      pk: subject,
      [`r${windowStart + W}`]: 1,
      [`r${windowStart + 2 * W}`]: 1,
      expiresAt: windowStart + 3 * W + 6,
    });
  });

  test('with 1 s windows the counters of the 6 windows that ended last are kept: as long as a reason read may trail its write', async () => {
    const rate = admission({ calls: 1, windowSeconds: 1 });
    const subject = 'ws#short-windows';
    for (let s = 0; s < 10; s++) assert.equal((await rate.acquire(subject, (windowStart + s) * 1000)).granted, true);

    const item = await itemOf(config.tables.limits, subject);

    assert.deepEqual(
      Object.keys(item ?? {})
        .filter((k) => k.startsWith('r'))
        .sort(),
      [3, 4, 5, 6, 7, 8, 9].map((s) => `r${windowStart + s}`).sort(),
    );
  });

  test('the item carries expiresAt: the end of its window and the seconds a reason read may trail it', async () => {
    await rateOnly(5).acquire('ws#rate-ttl', (windowStart + 1) * 1000);

    const item = await itemOf(config.tables.limits, 'ws#rate-ttl');

    assert.deepEqual(item, { pk: 'ws#rate-ttl', [`r${windowStart}`]: 1, expiresAt: windowStart + W + 6 });
  });
});

describe('both limits in one write', () => {
  const W = 60;
  const windowStart = 29_000_100 * W;
  const both = () => admission({ calls: 2, windowSeconds: W, max: 1 });

  test('a busy call takes no permit: once the lease is back, the permits are all still there', async () => {
    const limits = both();
    const subject = 'ws#busy-no-permit';
    const nowMs = (windowStart + 5) * 1000;
    const first = await limits.acquire(subject, nowMs);
    assert.ok(first.granted);

    const busy = await limits.acquire(subject, nowMs + 10);
    await first.release();
    const second = await limits.acquire(subject, nowMs + 20);

    assert.deepEqual(busy, { granted: false, reason: 'busy', retryAfterSeconds: 1 });
    assert.ok(second.granted, 'the busy call did not use up the second permit');
  });

  test('a rate-limited call holds no lease', async () => {
    const limits = admission({ calls: 1, windowSeconds: W, max: 2 });
    const subject = 'ws#limited-no-lease';
    const nowMs = (windowStart + 5) * 1000;
    const first = await limits.acquire(subject, nowMs);
    assert.ok(first.granted);

    const limited = await limits.acquire(subject, nowMs + 10);

    assert.equal(limited.granted, false);
    assert.equal(!limited.granted && limited.reason, 'ratelimited');
    const item = await itemOf(config.tables.limits, subject);
    const bucket = Math.floor(nowMs / 1000 / 2);
    assert.equal(item?.[`n${bucket}`], 1, 'only the admitted call holds a lease');
  });

  test('a release drops rate counters of windows that ended before the last one', async () => {
    const limits = both();
    const subject = 'ws#tidy-windows';
    const old = await limits.acquire(subject, (windowStart + 5) * 1000);
    assert.ok(old.granted);
    await old.release();

    const previous = await limits.acquire(subject, (windowStart + 3 * W + 5) * 1000);
    assert.ok(previous.granted);
    await previous.release();

    const recent = await limits.acquire(subject, (windowStart + 4 * W + 5) * 1000);
    assert.ok(recent.granted);
    await recent.release();

    const item = await itemOf(config.tables.limits, subject);
    assert.deepEqual(
      Object.keys(item ?? {})
        .filter((k) => k.startsWith('r'))
        .sort(),
      [`r${windowStart + 3 * W}`, `r${windowStart + 4 * W}`],
    );
  });
});

describe('the reason of a refusal on a store that does not return the item with it (dynalite)', () => {
  const W = 60;
  const windowStart = 29_000_200 * W;
  const nowMs = (windowStart + 20) * 1000;

  /**
   * One call holds the only lease; a second one is refused. Should the refusal read the item, its
   * read is held until the first call has given its lease back: the worst interleaving there is.
   */
  const refusedWhileLeaseComesBack = async (opts: { max: number; calls?: number }, subject: string) => {
    const holder = await admission({ ...opts, windowSeconds: W }).acquire(subject, nowMs);
    assert.ok(holder.granted, 'the first call holds the lease');
    const start = proxy.operations.length;
    proxy.setMode('hold-limit-reads');
    try {
      const refusing = admission({ ...opts, windowSeconds: W }, proxied).acquire(subject, nowMs + 10);
      const first = await Promise.race([refusing.then(() => 'answered'), proxy.readHeld().then(() => 'reading')]);
      await holder.release();
      if (first === 'reading') proxy.releaseHeld();
      const refused = await refusing;
      return { refused, operations: proxy.operations.slice(start) };
    } finally {
      proxy.setMode('pass');
    }
  };

  test('with the concurrency bound alone, a refusal is busy with Retry-After 1, decided without a read', async () => {
    const { refused, operations } = await refusedWhileLeaseComesBack({ max: 1 }, 'ws#bound-alone');

    assert.deepEqual(refused, { granted: false, reason: 'busy', retryAfterSeconds: 1 });
    assert.deepEqual(operations, ['UpdateItem']);
  });

  test("with the rate limit alone, a refusal names the seconds to the window's end, decided without a read", async () => {
    const limits = admission({ calls: 1, windowSeconds: W }, proxied);
    assert.ok((await limits.acquire('ws#rate-alone', nowMs)).granted);
    const start = proxy.operations.length;

    const refused = await limits.acquire('ws#rate-alone', nowMs + 10);

    assert.deepEqual(refused, { granted: false, reason: 'ratelimited', retryAfterSeconds: 40 });
    assert.deepEqual(proxy.operations.slice(start), ['UpdateItem']);
  });

  test('with both limits and permits left, a refusal is busy even when the lease is back before its reason is read', async () => {
    const { refused, operations } = await refusedWhileLeaseComesBack({ max: 1, calls: 30 }, 'ws#both-permits-left');

    assert.deepEqual(refused, { granted: false, reason: 'busy', retryAfterSeconds: 1 });
    assert.deepEqual(operations, ['UpdateItem', 'GetItem']);
  });

  test("with both limits reached, a refusal names the rate limit and the seconds to the window's end", async () => {
    const { refused, operations } = await refusedWhileLeaseComesBack({ max: 1, calls: 1 }, 'ws#both-reached');

    assert.deepEqual(refused, { granted: false, reason: 'ratelimited', retryAfterSeconds: 40 });
    assert.deepEqual(operations, ['UpdateItem', 'GetItem']);
  });
});
