import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DeleteCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { AdmissionLimiter } from '../../lambda/limits/admission.js';
import { ensureTables } from '../../lambda/local/bootstrap.js';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';

// The limits item on the embedded DynamoDB with a clock the test sets, so expiry, windows and
// tidying are checked exactly, without waiting for time to pass.

const config = loadConfig({});
let dynamo: EmbeddedDynamo;
let db: DynamoDBDocumentClient;
before(async () => {
  dynamo = await startEmbeddedDynamo(':memory:');
  db = createDocumentClient({ endpoint: dynamo.endpoint });
  await ensureTables(db, config);
});
after(async () => {
  db.destroy();
  await dynamo.close();
});

const itemOf = async (table: string, pk: string) =>
  (await db.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item;

const admission = (opts: { max?: number; calls?: number; windowSeconds?: number }) =>
  new AdmissionLimiter(db, config.tables.limits, {
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

  test('the next window starts with every permit free, and its write drops the old counter', async () => {
    const rate = rateOnly(1);
    const subject = 'ws#next-window';
    assert.equal((await rate.acquire(subject, (windowStart + 59) * 1000)).granted, true);
    const lastSecond = await rate.acquire(subject, (windowStart + 59) * 1000 + 900);

    const nextWindow = await rate.acquire(subject, (windowStart + W) * 1000);

    assert.deepEqual(lastSecond, { granted: false, reason: 'ratelimited', retryAfterSeconds: 1 });
    assert.equal(nextWindow.granted, true);
    assert.deepEqual(await itemOf(config.tables.limits, subject), {
      pk: subject,
      [`r${windowStart + W}`]: 1,
      expiresAt: windowStart + 2 * W,
    });
  });

  test('the item carries expiresAt: the end of its window', async () => {
    await rateOnly(5).acquire('ws#rate-ttl', (windowStart + 1) * 1000);

    const item = await itemOf(config.tables.limits, 'ws#rate-ttl');

    assert.deepEqual(item, { pk: 'ws#rate-ttl', [`r${windowStart}`]: 1, expiresAt: windowStart + W });
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

  test('a release drops rate counters of windows that have ended', async () => {
    const limits = both();
    const subject = 'ws#tidy-windows';
    const old = await limits.acquire(subject, (windowStart + 5) * 1000);
    assert.ok(old.granted);
    await old.release();

    const recent = await limits.acquire(subject, (windowStart + 3 * W + 5) * 1000);
    assert.ok(recent.granted);
    await recent.release();

    const item = await itemOf(config.tables.limits, subject);
    assert.deepEqual(
      Object.keys(item ?? {}).filter((k) => k.startsWith('r')),
      [`r${windowStart + 3 * W}`],
    );
  });
});
