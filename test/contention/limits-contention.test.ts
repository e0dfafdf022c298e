import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  call,
  type Endpoint,
  javaAvailable,
  kindOf,
  peakOverlap,
  probe,
  type ServerProcess,
  type SharedDynamo,
  spawnServerProcesses,
  startDynalite,
  startDynamoDbLocal,
  warmStore,
  windowAwayFromBoundary,
} from '../helpers/limits-harness.js';
import type { RawResponse } from '../helpers/local.js';

// docs/limits.md under contention: four server processes (four "Lambda instances") share one real
// DynamoDB API and one user. Run on dynalite always, and on DynamoDB Local wherever Java is present.

const backends: { name: string; start: () => Promise<SharedDynamo> }[] = [{ name: 'dynalite', start: startDynalite }];
if (javaAvailable()) {
  // The JVM takes seconds to come up: start it now, while the dynalite scenarios run.
  const starting = startDynamoDbLocal();
  starting.catch(() => {}); // reported by the suite that awaits it
  backends.push({ name: 'DynamoDB Local', start: () => starting });
} else
  process.stdout.write(
    '\n######## NOTICE: `java` is not on PATH. The limits contention tests ran on dynalite ONLY; ' +
      'the DynamoDB Local variant did not run. Install a JRE (CI has one) to run it. ########\n\n',
  );

const PROCESSES = 4;
const CALLS_PER_PROCESS = 100;
/** The kill scenario's function timeout: small, so the dead lease expires quickly. */
const FUNCTION_TIMEOUT_SECONDS = 2;
/** AdmissionLimiter: buckets of timeout + 1 s; a dead lease stops counting within two buckets. */
const BUCKET_SECONDS = FUNCTION_TIMEOUT_SECONDS + 1;
const LEASE_BOUND_SECONDS = 2 * BUCKET_SECONDS;

const tally = (answers: readonly RawResponse[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const k of answers.map(kindOf)) counts[k] = (counts[k] ?? 0) + 1;
  return counts;
};

const fireFromEach = (servers: readonly Endpoint[], sleepMs: number): Promise<RawResponse[]> =>
  Promise.all(servers.flatMap((s) => Array.from({ length: CALLS_PER_PROCESS }, () => probe(s, sleepMs))));

/** Listing is not counted by either limit: it warms every process (JIT, connections) and the store. */
const warmUp = async (servers: readonly Endpoint[]): Promise<void> => {
  const answers = await Promise.all(servers.flatMap((s) => Array.from({ length: 10 }, () => call(s, 'tools/list', {}))));
  for (const res of answers) assert.equal(res.status, 200, res.text);
};

for (const backend of backends) {
  describe(`limits across ${PROCESSES} server processes on ${backend.name}`, () => {
    let dynamo: SharedDynamo;
    let processes: ServerProcess[];
    let windowSeconds: number;
    /** Server variant 0 of each process: rate limit 120, no concurrency bound. */
    let rateServers: Endpoint[];
    /** Server variant 1: concurrency bound 4, no rate limit; a timeout long enough for 100 queued requests. */
    let leaseServers: Endpoint[];
    /**
     * Server variant 2: concurrency bound 4 with a 2 s function timeout, on a lease table of its own
     * (instances sharing a lease table share one function timeout, as one deployment does).
     */
    let killServers: Endpoint[];
    before(async () => {
      dynamo = await backend.start();
      await warmStore(dynamo.endpoint);
      windowSeconds = windowAwayFromBoundary(120);
      processes = await spawnServerProcesses(PROCESSES, dynamo.endpoint, [
        { DOERS_RATE_LIMIT_CALLS: '120', DOERS_RATE_LIMIT_WINDOW_SECONDS: String(windowSeconds), DOERS_MAX_CONCURRENT_CALLS: '0' },
        { DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '4', DOERS_FUNCTION_TIMEOUT_SECONDS: '15' },
        {
          DOERS_RATE_LIMIT_CALLS: '0',
          DOERS_MAX_CONCURRENT_CALLS: '4',
          DOERS_FUNCTION_TIMEOUT_SECONDS: String(FUNCTION_TIMEOUT_SECONDS),
          DOERS_LIMITS_TABLE: 'doers-limits-kill-test',
        },
      ]);
      rateServers = processes.map((p) => p.servers[0]!);
      leaseServers = processes.map((p) => p.servers[1]!);
      killServers = processes.map((p) => p.servers[2]!);
      await warmUp([...rateServers, ...leaseServers]);
    });
    after(async () => {
      await Promise.all((processes ?? []).map((p) => p.stop()));
      await dynamo?.close();
    });

    test('of 400 concurrent calls by one user, exactly the 120 the rate limit allows succeed; the rest are told when to retry', async (t) => {
      // Act
      const answers = await fireFromEach(rateServers, 0);

      // Assert: never more than 120. On a saturated machine a few requests may miss their DynamoDB
      // deadline and answer 503 with Retry-After; such a request may or may not have taken its
      // permit before it gave up, so each one can explain at most one permit missing. With no 503
      // (the normal case) the two bounds meet: exactly 120.
      const counts = tally(answers);
      const unavailable = counts.unavailable ?? 0;
      assert.equal(counts.other, undefined, `${JSON.stringify(counts)}: ${answers.find((r) => kindOf(r) === 'other')?.text}`);
      assert.ok((counts.ok ?? 0) <= 120, `over-admitted: ${JSON.stringify(counts)}`);
      assert.ok((counts.ok ?? 0) + unavailable >= 120, `permits lost beyond the 503s: ${JSON.stringify(counts)}`);
      assert.ok(unavailable <= 40, `the store shed too much for the run to say anything: ${JSON.stringify(counts)}`);
      if (unavailable) t.diagnostic(`${unavailable} of 400 answered 503 (store saturated); admitted ${counts.ok}`);
      for (const res of answers.filter((r) => kindOf(r) === 'ratelimited')) {
        const retryAfter = Number(res.headers.get('retry-after'));
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds, `Retry-After ${retryAfter}`);
        assert.match(res.json.result.content[0].text, new RegExp(`retry after ${retryAfter} s`));
      }
      // Admitted calls ran in several processes: the count is shared, not per process.
      const pids = new Set(answers.filter((r) => kindOf(r) === 'ok').map((r) => r.json.result.structuredContent.pid));
      assert.ok(pids.size >= 2, `admitted calls ran in ${pids.size} process(es)`);
    });

    test('400 concurrent slow calls never run more than 4 at once, and the surplus is refused busy with Retry-After: 1', async () => {
      // Act
      const answers = await fireFromEach(leaseServers, 150);

      // Assert: a 503 with Retry-After is the answer when the store cannot keep up (it did not
      // admit the call); anything else than ok, busy or that would be a fault.
      const counts = tally(answers);
      assert.equal(counts.other, undefined, `${JSON.stringify(counts)}: ${answers.find((r) => kindOf(r) === 'other')?.text}`);
      assert.ok((counts.busy ?? 0) >= 1, JSON.stringify(counts));
      const ran = answers
        .filter((r) => kindOf(r) === 'ok')
        .map((r) => r.json.result.structuredContent as { startedAt: number; endedAt: number });
      const peak = peakOverlap(ran);
      assert.ok(peak <= 4, `peak in flight ${peak}`);
      assert.ok(peak >= 2, `peak in flight ${peak}: the calls did not overlap at all, so the bound was not exercised`);
    });

    test(`a process killed mid-call holds its leases for at most ${LEASE_BOUND_SECONDS} s, then the user is admitted again`, async () => {
      // Arrange: four calls that will never finish hold all four leases in the victim process.
      const victim = processes[0]!;
      const [doomedTarget, ...others] = killServers as [Endpoint, ...Endpoint[]];
      const firedAt = Date.now();
      let settled = 0;
      const doomed = Array.from({ length: 4 }, () =>
        probe(doomedTarget, 60_000).then(
          () => settled++,
          () => undefined,
        ),
      );
      await sleep(300);
      assert.equal(kindOf(await probe(others[0]!)), 'busy', 'the four doomed calls should hold every lease');
      assert.equal(settled, 0, 'a doomed call ended before the kill');

      // Act
      await victim.kill();
      await Promise.all(doomed);
      const rightAfterKill = await probe(others[1]!);
      let admittedAt: number | undefined;
      while (admittedAt === undefined && Date.now() - firedAt < (LEASE_BOUND_SECONDS + 3) * 1000) {
        const res = await probe(others[2]!);
        if (kindOf(res) === 'ok') admittedAt = Date.now();
        else {
          assert.equal(kindOf(res), 'busy', res.text);
          await sleep(100);
        }
      }

      // Assert
      assert.equal(kindOf(rightAfterKill), 'busy', "a dead holder's leases still count right after the kill");
      assert.ok(admittedAt !== undefined, `still busy ${LEASE_BOUND_SECONDS + 3} s after the dead calls began`);
      const heldMs = admittedAt - firedAt;
      assert.ok(heldMs <= LEASE_BOUND_SECONDS * 1000 + 500, `dead leases counted for ${heldMs} ms`);
      assert.ok(heldMs >= BUCKET_SECONDS * 1000 - 100, `dead leases counted for only ${heldMs} ms`);
      const again = await Promise.all([others[0]!, ...others].map((s) => probe(s, 100)));
      assert.deepEqual(tally(again), { ok: 4 }, 'all four leases are free again');
    });
  });
}
