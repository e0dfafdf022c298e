import { performance } from 'node:perf_hooks';
import { callTool, modernCall, startTestServer } from '../helpers/local.js';

/**
 * `npm run bench`: latency of the whole handler (middlewares, credential gate on DynamoDB, dispatcher,
 * registry) through the local server on the embedded DynamoDB. Figures are for comparing changes on
 * one machine, not a prediction of Lambda latency (which adds API Gateway and real DynamoDB).
 */
const N = Number(process.argv[2] ?? 400);

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const measure = async (label: string, fn: () => Promise<unknown>, concurrency = 1): Promise<void> => {
  for (let i = 0; i < 20; i++) await fn(); // warm-up
  const times: number[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < N) {
        const t = performance.now();
        await fn();
        times.push(performance.now() - t);
      }
    }),
  );
  const wall = performance.now() - started;
  times.sort((a, b) => a - b);
  const f = (v: number) => v.toFixed(2).padStart(7);
  console.log(`${label.padEnd(34)} n=${times.length} c=${concurrency}  p50 ${f(percentile(times, 50))} ms  p95 ${f(percentile(times, 95))} ms  p99 ${f(percentile(times, 99))} ms  ${(times.length / (wall / 1000)).toFixed(0)} req/s`);
};

const coldStart = performance.now();
const server = await startTestServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' });
console.log(`local server start (tables, seed, composition): ${(performance.now() - coldStart).toFixed(0)} ms`);
try {
  await measure('tools/list (2026-07-28)', () => modernCall(server, 'tools/list'));
  await measure('tools/call me_get (2026-07-28)', () => callTool(server, 'me_get'));
  await measure('tools/call me_get (2026-07-28)', () => callTool(server, 'me_get'), 8);
} finally {
  await server.close();
}
