import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ROUND_TRIP_DEADLINE_MS } from '../../lambda/limits/round-trip.js';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { LIMITS_FIXTURES, PROBE_RESOURCE_URI } from '../helpers/limits-fixtures.js';
import { kindOf, startFaultProxy, windowAwayFromBoundary } from '../helpers/limits-harness.js';
import { modernCall, type RawResponse, startTestServer } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';

// docs/limits.md faults: when DynamoDB throttles or cannot be reached while the limits are checked,
// the caller gets 503 with Retry-After, quickly, never 500 and never a wait without end.

const LIMITS_TABLE = 'doers-limits';

let dynamo: EmbeddedDynamo;
let proxy: Awaited<ReturnType<typeof startFaultProxy>>;
let server: LocalServer;
before(async () => {
  dynamo = await startEmbeddedDynamo(':memory:');
  proxy = await startFaultProxy(dynamo.endpoint, [LIMITS_TABLE]);
  server = await startTestServer(
    {
      DOERS_DYNAMODB_ENDPOINT: proxy.endpoint,
      DOERS_RATE_LIMIT_CALLS: '100',
      DOERS_RATE_LIMIT_WINDOW_SECONDS: String(windowAwayFromBoundary(60)),
      DOERS_MAX_CONCURRENT_CALLS: '1',
      DOERS_LIMITS_TABLE: LIMITS_TABLE,
    },
    { fixtures: LIMITS_FIXTURES, observer: new RecordingObserver() },
  );
});
after(async () => {
  await server?.close();
  await proxy?.close();
  await dynamo?.close();
});

const probe = (): Promise<RawResponse> => modernCall(server, 'tools/call', { name: 'limits_probe', arguments: { sleepMs: 0 } });
const read = (): Promise<RawResponse> => modernCall(server, 'resources/read', { uri: PROBE_RESOURCE_URI });

const assertUnavailable = (res: RawResponse): void => {
  assert.equal(res.status, 503, res.text);
  assert.equal(res.headers.get('retry-after'), '1');
  assert.equal(res.json.error.code, -32000);
  assert.equal(res.json.error.message, 'The service cannot check this request right now; retry shortly');
};

describe('DynamoDB faults while the limits are checked', () => {
  test('when DynamoDB throttles, a tool call gets 503 with Retry-After after the SDK gave up retrying, and calls pass again once it recovers', async () => {
    // Arrange
    proxy.setMode('throttle-limits');

    // Act
    const call = await probe();
    const injected = proxy.injected;
    proxy.setMode('pass');
    const recovered = await probe();

    // Assert
    assertUnavailable(call);
    assert.ok(injected >= 2, `throttled attempts: ${injected}`);
    assert.equal(kindOf(recovered), 'ok', recovered.text);
  });

  test('when DynamoDB drops the connection, a tool call and a read get 503 with Retry-After', async () => {
    // Arrange
    proxy.setMode('reset-limits');

    // Act
    const call = await probe();
    const reading = await read();
    const injected = proxy.injected;
    proxy.setMode('pass');
    const recovered = await read();

    // Assert
    assertUnavailable(call);
    assertUnavailable(reading);
    assert.ok(injected >= 2, `dropped connections: ${injected}`);
    assert.equal(recovered.status, 200, recovered.text);
  });

  test(`when DynamoDB does not answer at all, the call gets 503 after about ${ROUND_TRIP_DEADLINE_MS} ms, not a wait without end`, async () => {
    // Arrange
    proxy.setMode('hang-limits');
    const started = Date.now();

    // Act
    const call = await probe();
    const elapsed = Date.now() - started;
    proxy.setMode('pass');

    // Assert
    assertUnavailable(call);
    assert.ok(elapsed >= ROUND_TRIP_DEADLINE_MS - 100 && elapsed < ROUND_TRIP_DEADLINE_MS + 2_500, `answered after ${elapsed} ms`);
  });

  test('a lease that cannot be given back does not fail the call that was answered; it keeps counting instead', async () => {
    // Arrange
    proxy.setMode('reset-release');

    // Act
    const answered = await probe();
    const injected = proxy.injected;
    proxy.setMode('pass');
    const next = await probe();

    // Assert
    assert.equal(kindOf(answered), 'ok', answered.text);
    assert.ok(injected >= 1, 'the give-back never reached DynamoDB');
    assert.equal(kindOf(next), 'busy', 'the lease that was not given back still counts (until its bound)');
  });
});
