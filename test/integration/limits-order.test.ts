import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@aws-lambda-powertools/logger';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import { createLimitsGuard } from '../../lambda/limits/limits-guard.js';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import type { Principal, Scope } from '../../lambda/vocabulary.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { LIMITS_FIXTURES, PROBE_RESOURCE_URI } from '../helpers/limits-fixtures.js';
import { kindOf, peakOverlap, windowAwayFromBoundary } from '../helpers/limits-harness.js';
import { legacyCall, modernCall, type RawResponse, startTestServer } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';

// docs/limits.md in one server: what takes a permit, what does not, and how each refusal is answered.

interface Limited {
  readonly server: LocalServer;
  readonly observer: RecordingObserver;
}

const startLimited = async (env: Record<string, string>): Promise<Limited> => {
  const observer = new RecordingObserver();
  const server = await startTestServer(
    { DOERS_RATE_LIMIT_WINDOW_SECONDS: String(windowAwayFromBoundary(60)), DOERS_MAX_CONCURRENT_CALLS: '0', ...env },
    { fixtures: LIMITS_FIXTURES, observer },
  );
  return { server, observer };
};

const tokenWith = async (server: LocalServer, scopes: Scope[]): Promise<string> => {
  const secret = generateTokenSecret();
  await writesOf(server.app.services).tokens.register(secret, {
    workspaceId: DEMO_WORKSPACE_ID,
    userId: DEMO_OWNER.userId,
    scopes,
    label: scopes.join(' '),
    createdAt: new Date().toISOString(),
  });
  return secret;
};

const probe = (server: LocalServer, sleepMs = 0): Promise<RawResponse> =>
  modernCall(server, 'tools/call', { name: 'limits_probe', arguments: { sleepMs } });
const read = (server: LocalServer, uri = PROBE_RESOURCE_URI): Promise<RawResponse> => modernCall(server, 'resources/read', { uri });

const assertRateLimitedRead = (res: RawResponse, retryAfter?: string): void => {
  assert.equal(res.status, 429, res.text);
  assert.equal(res.json.error.code, -32000);
  const header = res.headers.get('retry-after');
  assert.ok(header !== null && Number(header) >= 1, `Retry-After ${header}`);
  if (retryAfter) assert.equal(header, retryAfter);
};

describe('what takes a rate permit (2 per window)', () => {
  let limited: Limited;
  before(async () => {
    limited = await startLimited({ DOERS_RATE_LIMIT_CALLS: '2' });
  });
  after(() => limited.server.close());

  test('invalid arguments and a missing scope consume no permit; the two valid calls do, the third is refused', async () => {
    // Arrange
    const { server, observer } = limited;
    const readOnly = await tokenWith(server, ['tasks:read']);

    // Act
    const invalidModern = await Promise.all(
      [1, 2, 3].map(() => modernCall(server, 'tools/call', { name: 'limits_scoped_echo', arguments: {} })),
    );
    const invalidLegacy = await Promise.all(
      [1, 2].map(() => legacyCall(server, 'tools/call', { name: 'limits_scoped_echo', arguments: { text: 1 } }, { version: '2025-06-18' })),
    );
    const denied = await Promise.all(
      [1, 2, 3].map(() => modernCall(server, 'tools/call', { name: 'limits_scoped_echo', arguments: { text: 'hi' } }, { token: readOnly })),
    );
    const first = await modernCall(server, 'tools/call', { name: 'limits_scoped_echo', arguments: { text: 'hi' } });
    const second = await modernCall(server, 'tools/call', { name: 'me_get', arguments: {} });
    const third = await probe(server);

    // Assert
    for (const res of invalidModern) assert.equal(res.json.result.isError, true, res.text);
    for (const res of invalidLegacy) assert.equal(res.json.error.code, -32602, res.text);
    for (const res of denied) assert.equal(res.status, 403, res.text);
    assert.equal(kindOf(first), 'ok', first.text);
    assert.equal(kindOf(second), 'ok', second.text);
    assert.equal(kindOf(third), 'ratelimited', third.text);
    assert.equal(third.status, 200);
    assert.match(third.json.result.content[0].text, /^Rate limit reached: retry after \d+ s$/);
    assert.deepEqual(
      observer.toolCalls.map((c) => c.outcome),
      ['invalid', 'invalid', 'invalid', 'invalid', 'invalid', 'denied', 'denied', 'denied', 'ok', 'ok', 'ratelimited'],
    );
  });
});

describe('listing, discovery and reads', () => {
  let limited: Limited;
  before(async () => {
    limited = await startLimited({ DOERS_RATE_LIMIT_CALLS: '2' });
  });
  after(() => limited.server.close());

  test('listing, discovery and unknown URIs take no permit; reads and tool calls share one budget; a read beyond it is 429 -32000 with Retry-After', async () => {
    // Arrange
    const { server, observer } = limited;
    for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']) {
      for (let i = 0; i < 3; i++) {
        const res = await modernCall(server, method);
        assert.equal(res.status, 200, `${method}: ${res.text}`);
      }
    }
    const unknown = await read(server, 'fixture://limits/nothing-here');

    // Act
    const firstRead = await read(server);
    const call = await probe(server);
    const secondRead = await read(server);
    const secondCall = await probe(server);

    // Assert
    assert.equal(unknown.json.error.code, -32602, unknown.text);
    assert.equal(firstRead.status, 200, firstRead.text);
    assert.equal(firstRead.json.result.contents[0].text, 'probe');
    assert.equal(kindOf(call), 'ok', call.text);
    assertRateLimitedRead(secondRead);
    assert.match(secondRead.json.error.message, /^Rate limit reached: retry after \d+ s$/);
    assert.equal(kindOf(secondCall), 'ratelimited', secondCall.text);
    assert.deepEqual(
      observer.reads.map((r) => r.outcome),
      ['notfound', 'ok', 'ratelimited'],
    );
  });
});

describe('concurrency bound 1 with 2 rate permits', () => {
  let limited: Limited;
  before(async () => {
    limited = await startLimited({ DOERS_RATE_LIMIT_CALLS: '2', DOERS_MAX_CONCURRENT_CALLS: '1' });
  });
  after(() => limited.server.close());

  test('a call or read while another call runs is refused busy with Retry-After: 1 and takes no rate permit', async () => {
    // Arrange
    const { server, observer } = limited;
    const running = probe(server, 600);
    await sleep(200);

    // Act
    const busyCall = await probe(server);
    const busyRead = await read(server);
    const first = await running;
    const afterwards = await probe(server);
    const beyondRate = await probe(server);

    // Assert
    assert.equal(kindOf(busyCall), 'busy', busyCall.text);
    assert.match(busyCall.json.result.content[0].text, /^Too many calls in flight for this user: retry after 1 s$/);
    assertRateLimitedRead(busyRead, '1');
    assert.match(busyRead.json.error.message, /^Too many calls in flight/);
    assert.equal(kindOf(first), 'ok', first.text);
    assert.equal(kindOf(afterwards), 'ok', 'the busy refusals must not have used the second permit');
    assert.equal(kindOf(beyondRate), 'ratelimited', beyondRate.text);
    assert.deepEqual(
      observer.toolCalls.map((c) => c.outcome),
      ['busy', 'ok', 'ok', 'ratelimited'],
    );
    assert.deepEqual(
      observer.reads.map((r) => r.outcome),
      ['busy'],
    );
  });
});

describe('0 disables', () => {
  let limited: Limited;
  before(async () => {
    limited = await startLimited({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' });
  });
  after(() => limited.server.close());

  test('with both limits 0, 130 concurrent calls all run, more than 4 of them at once', async () => {
    // Act
    const answers = await Promise.all(Array.from({ length: 130 }, () => probe(limited.server, 300)));

    // Assert
    assert.deepEqual(
      answers.map(kindOf).filter((k) => k !== 'ok'),
      [],
    );
    const peak = peakOverlap(answers.map((r) => r.json.result.structuredContent));
    assert.ok(peak > 4, `peak in flight ${peak}`);
  });
});

describe('the cold-start log line', () => {
  // Never contacted: building a guard does no I/O, and with both limits off neither does acquire.
  const unreachable = createDocumentClient({ endpoint: 'http://127.0.0.1:9' });
  after(() => unreachable.destroy());
  const principal = { userId: 'usr_x', workspaceId: 'ws_x' } as Principal;

  const logOf = (env: Record<string, string>) => {
    const logger = new Logger({ serviceName: 'doers-test' });
    const info = mock.method(logger, 'info', () => {});
    const guard = createLimitsGuard(unreachable, loadConfig(env), logger);
    return { guard, calls: info.mock.calls.map((c) => c.arguments as unknown[]) };
  };

  test('names both limits and the lease bound in seconds when both are in force', () => {
    const { calls } = logOf({
      DOERS_RATE_LIMIT_CALLS: '120',
      DOERS_RATE_LIMIT_WINDOW_SECONDS: '60',
      DOERS_MAX_CONCURRENT_CALLS: '4',
      DOERS_FUNCTION_TIMEOUT_SECONDS: '15',
    });

    assert.equal(calls.length, 1);
    assert.equal(
      calls[0]![0],
      "Limits in force: rate limit 120 calls per 60 s per user; concurrency at most 4 calls in flight per user, a dead call's lease stops counting within 32 s",
    );
    assert.deepEqual(calls[0]![1], { rateLimit: { calls: 120, windowSeconds: 60 }, maxConcurrentCalls: 4, leaseBoundSeconds: 32 });
  });

  test('says a limit set to 0 is off', () => {
    const { calls } = logOf({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '3', DOERS_FUNCTION_TIMEOUT_SECONDS: '30' });

    assert.equal(calls.length, 1);
    assert.match(
      String(calls[0]![0]),
      /^Limits in force: rate limit off \(DOERS_RATE_LIMIT_CALLS=0\); concurrency at most 3 calls in flight per user, .* within 62 s$/,
    );
  });

  test('with both off, says so and admits without a DynamoDB round trip', async () => {
    const { guard, calls } = logOf({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' });

    const release = await guard.acquire(principal);
    await release();

    assert.equal(calls.length, 1);
    assert.equal(
      calls[0]![0],
      'Limits in force: rate limit off (DOERS_RATE_LIMIT_CALLS=0); concurrency off (DOERS_MAX_CONCURRENT_CALLS=0)',
    );
  });
});

describe('a call starts beside its admission', () => {
  let limited: Limited;
  before(async () => {
    limited = await startLimited({ DOERS_RATE_LIMIT_CALLS: '2' });
  });
  after(() => limited.server.close());

  test('a change the rate limit refuses writes nothing: no task, no record, no claim, though its reads began beside the admission', async () => {
    // Arrange: the window's two permits spent
    const { server, observer } = limited;
    const call = (name: string, args: Record<string, unknown>) => modernCall(server, 'tools/call', { name, arguments: args });
    await call('me_get', {});
    await call('me_get', {});
    const before = await server.app.services.activity.list(
      { workspaceId: DEMO_WORKSPACE_ID, layout: 2, activityIndexed: true },
      { includeTeam: true },
      100,
      new Date(),
    );

    // Act: a create (it claims itself in its write) and an update (it reads the task first)
    const created = await call('task_create', { title: 'Refused before it was written' });
    const updated = await call('task_update', { taskId: 'DEMO-1', version: 1, title: 'Refused change' });

    // Assert
    for (const res of [created, updated]) {
      assert.equal(kindOf(res), 'ratelimited', res.text);
      assert.match(res.json.result.content[0].text, /^Rate limit reached/);
    }
    const afterwards = await server.app.services.activity.list(
      { workspaceId: DEMO_WORKSPACE_ID, layout: 2, activityIndexed: true },
      { includeTeam: true },
      100,
      new Date(),
    );
    assert.deepEqual(
      afterwards.records.map((r) => r.activityId),
      before.records.map((r) => r.activityId),
      'no change was recorded',
    );
    const search = await server.app.services.tasks.search(
      { workspaceId: DEMO_WORKSPACE_ID, layout: 2 },
      { status: 'any', words: ['refused'] },
      10,
    );
    assert.equal(search.tasks.length, 0, 'no task was made');
    const demo1 = await server.app.services.numbers.idOrRefuse(
      { workspaceId: DEMO_WORKSPACE_ID, workspaceKey: 'DEMO', pastKeys: [], taskCounter: 0, layout: 2 } as never,
      'DEMO-1',
      'taskId',
    );
    assert.notEqual((await server.app.services.tasks.get(DEMO_WORKSPACE_ID, demo1))?.title, 'Refused change');
    assert.deepEqual(
      observer.toolCalls.slice(-2).map((c) => c.outcome),
      ['ratelimited', 'ratelimited'],
    );
  });
});
