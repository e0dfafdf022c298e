import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DeleteCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ensureTables } from '../../lambda/local/bootstrap.js';
import { startEmbeddedDynamo, type EmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { ConcurrencyLimiter } from '../../lambda/limits/concurrency-limiter.js';
import { RateLimiter } from '../../lambda/limits/rate-limiter.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';

// The two limit stores on the embedded DynamoDB with a clock the test sets, so expiry, windows and
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

const itemOf = async (table: string, pk: string) => (await db.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item;

describe('ConcurrencyLimiter', () => {
  // Function timeout 1 s: buckets of 2 s, a dead lease counts at most 4 s.
  const limiter = (max: number) => new ConcurrencyLimiter(db, config.tables.leases, max, 1);
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

    const item = await itemOf(config.tables.leases, subject);

    assert.equal(item?.expiresAt, ((k + 3) * G) / 1000);
  });

  test('a release after the item expired does not bring it back without expiresAt', async () => {
    const subject = 'ws#expired';
    const lease = await limiter(1).acquire(subject, at(k, 10));
    assert.ok(lease.granted);
    await db.send(new DeleteCommand({ TableName: config.tables.leases, Key: { pk: subject } })); // as TTL would

    await lease.release();

    assert.equal(await itemOf(config.tables.leases, subject), undefined);
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
    const item = await itemOf(config.tables.leases, subject);
    assert.deepEqual(Object.keys(item ?? {}).sort(), ['expiresAt', `n${k + 5}`, `n${k + 6}`, 'pk']);
  });
});

describe('RateLimiter', () => {
  const W = 60;
  const windowStart = 29_000_000 * W; // seconds, window-aligned

  test('grants exactly `calls` permits per window, then says how long until the window ends', async () => {
    const rate = new RateLimiter(db, config.tables.rateLimits, 3, W);
    const subject = 'ws#rate';
    const nowMs = (windowStart + 10) * 1000 + 400;

    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await rate.take(subject, nowMs));

    assert.deepEqual(
      decisions.map((d) => d.granted),
      [true, true, true, false],
    );
    assert.deepEqual(decisions[3], { granted: false, retryAfterSeconds: 50 });
  });

  test('the next window starts with every permit free', async () => {
    const rate = new RateLimiter(db, config.tables.rateLimits, 1, W);
    const subject = 'ws#next-window';
    assert.equal((await rate.take(subject, (windowStart + 59) * 1000)).granted, true);
    const lastSecond = await rate.take(subject, (windowStart + 59) * 1000 + 900);

    const nextWindow = await rate.take(subject, (windowStart + W) * 1000);

    assert.deepEqual(lastSecond, { granted: false, retryAfterSeconds: 1 });
    assert.equal(nextWindow.granted, true);
  });

  test('every window item carries expiresAt: the end of its window', async () => {
    const rate = new RateLimiter(db, config.tables.rateLimits, 5, W);
    await rate.take('ws#rate-ttl', (windowStart + 1) * 1000);

    const item = await itemOf(config.tables.rateLimits, `ws#rate-ttl#${windowStart}`);

    assert.deepEqual(item, { pk: `ws#rate-ttl#${windowStart}`, count: 1, expiresAt: windowStart + W });
  });
});
