import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import {
  type CallKind,
  call,
  type Endpoint,
  javaAvailable,
  kindOf,
  outputMarks,
  peakOverlap,
  probe,
  readProbe,
  recordsSince,
  refusalOf,
  type ScenarioRecords,
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
/** The kill scenario's function timeout: small, so the dead lease expires quickly. */
const FUNCTION_TIMEOUT_SECONDS = 2;
/** AdmissionLimiter: buckets of timeout + 1 s; a dead lease stops counting within two buckets. */
const BUCKET_SECONDS = FUNCTION_TIMEOUT_SECONDS + 1;
const LEASE_BOUND_SECONDS = 2 * BUCKET_SECONDS;
/** The both-limits variant: the rate limit and the concurrency bound it runs with. */
const BOTH_CALLS = 80;
const BOTH_MAX = 2;
/** The subject of the limits item: the demo owner the dev token belongs to (docs/limits.md). */
const SUBJECT = `${DEMO_WORKSPACE_ID}#${DEMO_OWNER.userId}`;

/** How one process joins a burst: tool calls running `sleepMs` each, and resource reads. */
interface Share {
  readonly calls: number;
  readonly sleepMs: number;
  readonly reads: number;
}

interface Answer {
  /** The client name the request gave, which its audit line carries. */
  readonly client: string;
  readonly read: boolean;
  readonly res: RawResponse;
  readonly kind: CallKind;
}

let sequence = 0;
const answer = async (client: string, read: boolean, sending: Promise<RawResponse>): Promise<Answer> => {
  const res = await sending;
  return { client, read, res, kind: kindOf(res) };
};

/** One concurrent burst: every process of `servers` sends its share at once. */
const burst = (servers: readonly Endpoint[], scenario: string, share: Share): Promise<Answer[]> =>
  Promise.all(
    servers.flatMap((s) => [
      ...Array.from({ length: share.calls }, () => {
        const client = `${scenario}-${sequence++}`;
        return answer(client, false, probe(s, share.sleepMs, undefined, client));
      }),
      ...Array.from({ length: share.reads }, () => {
        const client = `${scenario}-${sequence++}`;
        return answer(client, true, readProbe(s, client));
      }),
    ]),
  );

const tally = (kinds: readonly CallKind[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const kind of kinds) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
};
const kinds = (answers: readonly Answer[]): CallKind[] => answers.map((a) => a.kind);

/** Seconds from `atMs` to the end of its window, as the server rounds them for Retry-After. */
const secondsToWindowEnd = (windowSeconds: number, atMs: number): number => {
  const now = atMs / 1000;
  return Math.ceil(Math.floor(now / windowSeconds) * windowSeconds + windowSeconds - now);
};

/** The outcome an audit line and its meter record for an answer of this kind (a 503 is `failed`). */
const OUTCOME: Record<CallKind, string> = { ok: 'ok', ratelimited: 'ratelimited', busy: 'busy', unavailable: 'failed', other: '?' };

/**
 * For every single answer: it is one of `allowed`; a refusal's text and Retry-After agree (kindOf)
 * and, for a rate refusal, name the seconds left in the window between `fromMs` and `toMs`; its audit
 * line and its meter record name the same outcome; and the `Refusals` meter counts exactly the
 * refused reads (a refused tool call is an isError result, counted by its ToolCalls outcome).
 */
const assertEveryAnswer = (
  answers: readonly Answer[],
  records: ScenarioRecords,
  allowed: readonly CallKind[],
  rateWindow: { windowSeconds: number; fromMs: number; toMs: number } | undefined,
): void => {
  for (const a of answers) {
    assert.ok(allowed.includes(a.kind), `${a.client} answered ${a.kind} (allowed: ${allowed.join(', ')}): ${a.res.status} ${a.res.text}`);
    if (a.kind === 'ratelimited') {
      const { windowSeconds, fromMs, toMs } = rateWindow!;
      const retryAfter = refusalOf(a.res)!.retryAfter;
      const [least, most] = [secondsToWindowEnd(windowSeconds, toMs), secondsToWindowEnd(windowSeconds, fromMs)];
      assert.ok(retryAfter >= least && retryAfter <= most, `${a.client}: Retry-After ${retryAfter}, window ends in ${least}..${most} s`);
    }
    if (a.kind === 'busy') assert.equal(a.res.headers.get('retry-after'), '1', a.client);
    if (a.kind !== 'ok') assert.equal(a.res.status, a.kind === 'unavailable' ? 503 : a.read ? 429 : 200, a.client);
    const record = records.byClient.get(a.client);
    // A store that cannot answer the credential's read fails the request before anyone is known to
    // have called, so such a 503 has no audit line (its Requests record is counted below).
    if (a.kind === 'unavailable' && record === undefined) continue;
    assert.deepEqual(record, { audit: OUTCOME[a.kind], meter: OUTCOME[a.kind] }, `${a.client} answered ${a.kind}`);
  }
  assert.equal(records.statuses.get(503) ?? 0, answers.filter((a) => a.kind === 'unavailable').length, 'every 503 has its Requests record');
  assert.deepEqual(
    [...records.refusals].sort(),
    answers
      .filter((a) => a.read && (a.kind === 'busy' || a.kind === 'ratelimited'))
      .map((a) => a.kind)
      .sort(),
    'Refusals meter reasons',
  );
};

/** Listing is not counted by either limit: it warms every process (JIT, connections) and the store. */
const warmUp = async (servers: readonly Endpoint[]): Promise<void> => {
  const answers = await Promise.all(servers.flatMap((s) => Array.from({ length: 10 }, () => call(s, 'tools/list', {}))));
  for (const res of answers) assert.equal(res.status, 200, res.text);
};

for (const backend of backends) {
  describe(`limits across ${PROCESSES} server processes on ${backend.name}`, () => {
    let dynamo: SharedDynamo;
    let db: DynamoDBDocumentClient;
    let processes: ServerProcess[];
    /** The rate window of variants 0 and 3, far enough from its ends for a test to stay inside one. */
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
    /** Server variant 3: both limits, BOTH_CALLS per window and BOTH_MAX in flight. */
    let bothServers: Endpoint[];
    before(async () => {
      dynamo = await backend.start();
      db = createDocumentClient({ endpoint: dynamo.endpoint });
      await warmStore(dynamo.endpoint);
      windowSeconds = windowAwayFromBoundary(120);
      // Each variant on a limits table of its own: one user, so variants on one table would share
      // their counters.
      processes = await spawnServerProcesses(PROCESSES, dynamo.endpoint, [
        {
          DOERS_RATE_LIMIT_CALLS: '120',
          DOERS_RATE_LIMIT_WINDOW_SECONDS: String(windowSeconds),
          DOERS_MAX_CONCURRENT_CALLS: '0',
          DOERS_LIMITS_TABLE: 'doers-limits-rate-test',
        },
        {
          DOERS_RATE_LIMIT_CALLS: '0',
          DOERS_MAX_CONCURRENT_CALLS: '4',
          DOERS_FUNCTION_TIMEOUT_SECONDS: '15',
          DOERS_LIMITS_TABLE: 'doers-limits-lease-test',
        },
        {
          DOERS_RATE_LIMIT_CALLS: '0',
          DOERS_MAX_CONCURRENT_CALLS: '4',
          DOERS_FUNCTION_TIMEOUT_SECONDS: String(FUNCTION_TIMEOUT_SECONDS),
          DOERS_LIMITS_TABLE: 'doers-limits-kill-test',
        },
        {
          DOERS_RATE_LIMIT_CALLS: String(BOTH_CALLS),
          DOERS_RATE_LIMIT_WINDOW_SECONDS: String(windowSeconds),
          DOERS_MAX_CONCURRENT_CALLS: String(BOTH_MAX),
          DOERS_FUNCTION_TIMEOUT_SECONDS: '15',
          DOERS_LIMITS_TABLE: 'doers-limits-both-test',
        },
      ]);
      rateServers = processes.map((p) => p.servers[0]!);
      leaseServers = processes.map((p) => p.servers[1]!);
      killServers = processes.map((p) => p.servers[2]!);
      bothServers = processes.map((p) => p.servers[3]!);
      await warmUp([...rateServers, ...leaseServers, ...bothServers]);
    });
    after(async () => {
      db?.destroy();
      await Promise.all((processes ?? []).map((p) => p.stop()));
      await dynamo?.close();
    });

    /** The permits a variant's limits table has handed out in the current window, read from its item. */
    const permitsTaken = async (table: string): Promise<number> => {
      const windowStart = Math.floor(Date.now() / 1000 / windowSeconds) * windowSeconds;
      const item = (await db.send(new GetCommand({ TableName: table, Key: { pk: SUBJECT }, ConsistentRead: true }))).Item;
      return Number(item?.[`r${windowStart}`] ?? 0);
    };
    const bothPermitsTaken = () => permitsTaken('doers-limits-both-test');

    test('with the rate limit alone, of 400 concurrent calls and reads the store admits at most the 120 it allows, all 120 before it refuses one, and every refusal says when the window ends', async (t) => {
      // Arrange
      const marks = outputMarks(processes);
      const fromMs = Date.now();

      // Act
      const answers = await burst(rateServers, 'rate', { calls: 80, sleepMs: 0, reads: 20 });

      // Assert: never more than 120. On a saturated machine a few requests may miss their DynamoDB
      // deadline and answer 503 with Retry-After; such a request may or may not have taken its
      // permit before it gave up, so each one can explain at most one permit missing. With no 503
      // (the normal case) the two bounds meet: exactly 120.
      const toMs = Date.now();
      const counts = tally(kinds(answers));
      const unavailable = counts.unavailable ?? 0;
      assert.ok((counts.ok ?? 0) <= 120, `over-admitted: ${JSON.stringify(counts)}`);
      assert.ok((counts.ok ?? 0) + unavailable >= 120, `permits lost beyond the 503s: ${JSON.stringify(counts)}`);
      // What the store admitted, from its own item: every admitted call took a permit, no permit went
      // to a call that answered anything but ok or 503, and a rate refusal came only once all were gone.
      const taken = await permitsTaken('doers-limits-rate-test');
      assert.ok(
        taken <= 120 && taken >= (counts.ok ?? 0) && taken <= (counts.ok ?? 0) + unavailable,
        `permits taken ${taken}: ${JSON.stringify(counts)}`,
      );
      if (counts.ratelimited) assert.equal(taken, 120, `rate refusals while permits remained: ${JSON.stringify(counts)}`);
      if (unavailable) t.diagnostic(`${unavailable} of 400 answered 503 (store saturated); admitted ${counts.ok}`);
      assert.equal(counts.busy, undefined, `busy refusals with the bound off: ${JSON.stringify(counts)}`);
      const records = await recordsSince(processes, marks, answers.length);
      assertEveryAnswer(answers, records, ['ok', 'ratelimited', 'unavailable'], { windowSeconds: windowSeconds, fromMs, toMs });
      // Admitted calls ran in several processes: the count is shared, not per process.
      const pids = new Set(answers.filter((a) => a.kind === 'ok' && !a.read).map((a) => a.res.json.result.structuredContent.pid));
      assert.ok(pids.size >= 2, `admitted calls ran in ${pids.size} process(es)`);
    });

    test('with the concurrency bound alone, 400 concurrent slow calls and reads never run more than 4 at once, and every refusal is busy with Retry-After: 1, never a rate refusal', async () => {
      // Arrange
      const marks = outputMarks(processes);

      // Act
      const answers = await burst(leaseServers, 'lease', { calls: 80, sleepMs: 150, reads: 20 });

      // Assert: a 503 with Retry-After is the answer when the store cannot keep up (it did not
      // admit the call); anything else than ok or busy would be a fault.
      const counts = tally(kinds(answers));
      assert.equal(counts.ratelimited, undefined, `rate refusals with the rate limit off: ${JSON.stringify(counts)}`);
      const records = await recordsSince(processes, marks, answers.length);
      assertEveryAnswer(answers, records, ['ok', 'busy', 'unavailable'], undefined);
      assert.ok((counts.busy ?? 0) >= 1, JSON.stringify(counts));
      const ran = answers
        .filter((a) => a.kind === 'ok' && !a.read)
        .map((a) => a.res.json.result.structuredContent as { startedAt: number; endedAt: number });
      const peak = peakOverlap(ran);
      assert.ok(peak <= 4, `peak in flight ${peak}`);
      assert.ok(peak >= 2, `peak in flight ${peak}: the calls did not overlap at all, so the bound was not exercised`);
    });

    test(`with both limits (${BOTH_CALLS} per window, ${BOTH_MAX} in flight), a refusal is busy while permits remain and a rate refusal once they are spent, and exactly ${BOTH_CALLS} are admitted`, async () => {
      // Arrange: 60 concurrent slow calls and reads can take at most 60 of the 80 permits, so
      // only the bound can refuse them.
      const marks = outputMarks(processes);
      const fromMs = Date.now();
      const boundOnly = await burst(bothServers, 'both-bound', { calls: 12, sleepMs: 250, reads: 3 });
      const afterBurst = await bothPermitsTaken();
      // Spend all permits but two, two calls at a time (never more than two in flight: none is busy).
      const spend = BOTH_CALLS - afterBurst - BOTH_MAX;
      const chain = async (server: Endpoint, n: number): Promise<Answer[]> => {
        const out: Answer[] = [];
        for (let i = 0; i < n; i++) {
          const client = `both-spend-${sequence++}`;
          out.push(await answer(client, false, probe(server, 0, undefined, client)));
        }
        return out;
      };
      const spent = (
        await Promise.all([chain(bothServers[0]!, Math.ceil(spend / 2)), chain(bothServers[1]!, Math.floor(spend / 2))])
      ).flat();
      // The last two permits go to two calls that hold both leases while the burst below runs.
      const holders = [bothServers[2]!, bothServers[3]!].map((s) => {
        const client = `both-holder-${sequence++}`;
        return answer(client, false, probe(s, 1_500, undefined, client));
      });
      const waitUntil = Date.now() + 10_000;
      while ((await bothPermitsTaken()) < BOTH_CALLS && Date.now() < waitUntil) await sleep(25);
      assert.equal(await bothPermitsTaken(), BOTH_CALLS, 'the two holders took the last permits');

      // Act: the rate limit and the bound are both reached; the refusals name the rate limit, the
      // one that still holds when the leases come back.
      const bothReached = await burst(bothServers, 'both-reached', { calls: 10, sleepMs: 0, reads: 3 });
      const held = await Promise.all(holders);
      const last = `both-after-${sequence++}`;
      const afterwards = await answer(last, false, probe(bothServers[0]!, 0, undefined, last));

      // Assert
      const toMs = Date.now();
      const rateWindow = { windowSeconds, fromMs, toMs };
      const countsA = tally(kinds(boundOnly));
      assert.deepEqual(
        boundOnly.filter((a) => a.kind === 'ratelimited').map((a) => a.client),
        [],
        `rate refusals with permits left: ${JSON.stringify(countsA)}`,
      );
      assert.ok((countsA.busy ?? 0) >= 1, `the bound did not bite: ${JSON.stringify(countsA)}`);
      assert.ok(
        afterBurst >= (countsA.ok ?? 0) && afterBurst <= (countsA.ok ?? 0) + (countsA.unavailable ?? 0),
        `${afterBurst} permits taken for ${JSON.stringify(countsA)}`,
      );
      assert.deepEqual(tally(kinds(spent)), { ok: spend });
      assert.deepEqual(tally(kinds(held)), { ok: BOTH_MAX });
      assert.equal(afterwards.kind, 'ratelimited', afterwards.res.text);
      assert.equal(await bothPermitsTaken(), BOTH_CALLS, 'a refused call took a permit');
      const all = [...boundOnly, ...spent, ...held, ...bothReached, afterwards];
      const records = await recordsSince(processes, marks, all.length);
      assert.deepEqual(
        bothReached.filter((a) => a.kind === 'busy' || a.kind === 'ok').map((a) => `${a.client} ${a.kind}`),
        [],
        `with no permit left a refusal names the rate limit: ${JSON.stringify(tally(kinds(bothReached)))}`,
      );
      assertEveryAnswer(all, records, ['ok', 'busy', 'ratelimited', 'unavailable'], rateWindow);
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
      // Every doomed lease stops counting within the bound of its own start (all four began within
      // the 300 ms above; on a loaded machine not in one instant), so all four are free by then.
      let again = await Promise.all([others[0]!, ...others].map((s) => probe(s, 100)));
      while (tally(again.map(kindOf)).ok !== 4 && Date.now() - firedAt < LEASE_BOUND_SECONDS * 1000 + 800) {
        await sleep(100);
        again = await Promise.all([others[0]!, ...others].map((s) => probe(s, 100)));
      }
      assert.deepEqual(
        tally(again.map(kindOf)),
        { ok: 4 },
        `all four leases are free again ${Date.now() - firedAt} ms after the dead calls began`,
      );
    });
  });
}
