import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { describeCase } from './endpoint-arbitraries.js';
import { endpointProperty, FuzzStats, limitsProperty, watchProcess } from './endpoint-properties.js';
import { startFuzzTargets } from './endpoint-target.js';

/**
 * `npm run fuzz [-- --runs N --seed S]` (or FUZZ_RUNS / FUZZ_SEED): the properties of
 * test/fuzz/endpoint.test.ts, long. Every case is checked and every failing one counted (the run
 * does not stop at the first); if any failed, fast-check replays the seed to shrink the first.
 * 2% of the runs go to the limits-on target, as groups of concurrent calls.
 */
const { values } = parseArgs({ options: { runs: { type: 'string' }, seed: { type: 'string' } } });
const runs = Number(values.runs ?? process.env.FUZZ_RUNS ?? 100_000);
const seed = Number(values.seed ?? process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
if (!Number.isInteger(runs) || runs < 2 || !Number.isInteger(seed)) throw new Error('--runs takes an integer ≥ 2, --seed an integer');
const limitsRuns = Math.max(1, Math.round(runs * 0.02));
const mainRuns = runs - limitsRuns;

const fmt = (n: number) => n.toLocaleString('en-US');

const printHistogram = (title: string, m: Map<string | number, number>) => {
  console.log(`\n${title}:`);
  for (const [k, n] of [...m].sort((a, b) => b[1] - a[1])) console.log(`  ${String(k).padEnd(12)} ${fmt(n).padStart(8)}`);
};

const main = async (): Promise<number> => {
  console.log(`fuzz: ${fmt(runs)} runs (${fmt(mainRuns)} any request, ${fmt(limitsRuns)} groups against limits on), seed ${seed}`);
  const watch = watchProcess();
  const [target, limited] = await startFuzzTargets();
  const started = performance.now();
  const stats = new FuzzStats((cases) => {
    if (cases % 10_000 === 0)
      console.log(`  ${fmt(cases)} cases, ${fmt(Math.round(cases / ((performance.now() - started) / 1000)))} cases/s`);
  });
  const limitStats = new FuzzStats();
  try {
    await fc.check(endpointProperty(target, { stats, mode: 'count' }), { seed, numRuns: mainRuns });
    await fc.check(limitsProperty(limited, { stats: limitStats, mode: 'count' }), { seed, numRuns: limitsRuns });
    const seconds = (performance.now() - started) / 1000;
    const cases = stats.cases + limitStats.cases;
    const failed = stats.failed + limitStats.failed;

    console.log(
      `\n${fmt(runs)} runs, ${fmt(cases)} handler invocations in ${seconds.toFixed(1)} s: ${fmt(Math.round(cases / seconds))} cases/s`,
    );
    console.log(
      `failures: ${failed}; unhandled rejections: ${watch.rejections.length}; uncaught exceptions: ${watch.exceptions.length}; seed: ${seed}`,
    );
    printHistogram('status (any request)', stats.statuses);
    printHistogram('status and JSON-RPC code (any request)', stats.pairs);
    printHistogram('case family (any request)', stats.families);
    printHistogram('status and JSON-RPC code (limits on)', limitStats.pairs);

    for (const f of [...stats.failures, ...limitStats.failures].slice(0, 10)) {
      console.log(`\nFAIL ${describeCase(f.case).slice(0, 2_000)}\n  ${f.problems.join('\n  ').slice(0, 2_000)}`);
    }
    for (const r of [...watch.rejections, ...watch.exceptions].slice(0, 5)) console.log(`\nUNHANDLED ${(r as Error)?.stack ?? String(r)}`);

    if (stats.failed > 0) {
      // The same seed replays the same cases (ids may differ: the data moved on), this time stopping to shrink.
      console.log('\nshrinking the first failure (same seed)…');
      const details = await fc.check(endpointProperty(target), { seed, numRuns: mainRuns });
      console.log(
        details.failed ? fc.defaultReportMessage(details) : 'the replay did not fail: the failure depended on data the run had changed',
      );
    }
    return failed + watch.rejections.length + watch.exceptions.length === 0 ? 0 : 1;
  } finally {
    watch.dispose();
    await Promise.all([target.close(), limited.close()]);
  }
};

process.exitCode = await main();
