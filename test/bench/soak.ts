import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/lambda-bundle.js';
import { javaAvailable, startDynalite, startDynamoDbLocal } from '../helpers/limits-harness.js';
import { MODERN, modernMeta } from '../helpers/local.js';

/**
 * `npm run soak`: the local server (limits as the stack sets them, the real audit lines and meters)
 * under 50 connections for 10 minutes, one user per connection, each cycling through a realistic mix
 * (me_get, tools/list, tasks_search, agenda_get, and an update of its own task) as fast as it is
 * answered. Per minute: requests, latency, admitted calls, intended refusals (rate limit, busy, a
 * lost version race), errors and the server's RSS. Passes when there are no errors, RSS at the last
 * minute is within 10 % of minute 2, and from minute 2 on no minute's p99 is over twice the median
 * minute's (minute 1 warms up).
 * Writes bench/soak.md. `SOAK_MINUTES` and `SOAK_CONNECTIONS` shorten it for a try-out.
 */
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 50);

interface Minute {
  requests: number;
  latencies: number[];
  admitted: number;
  refused: number;
  errors: number;
  rssMb: number;
}

const newMinute = (): Minute => ({ requests: 0, latencies: [], admitted: 0, refused: 0, errors: 0, rssMb: 0 });
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const median = (xs: number[]): number => pct(xs, 50);

const rssMb = async (pid: number): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};

// ---- DynamoDB and the server, each alone in its process ----
// Amazon's DynamoDB Local where Java exists; dynalite otherwise (it leaks LevelDB iterators under this
// load, which is its own memory, in its own process, not the server's).
const store = javaAvailable() ? await startDynamoDbLocal() : await startDynalite();
const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/soak-server.ts'], {
  cwd: ROOT,
  env: { ...process.env, SOAK_USERS: String(CONNECTIONS), SOAK_DYNAMODB_ENDPOINT: store.endpoint },
  stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
});
const control = child.stdio[3] as NodeJS.ReadableStream;
const ready = await new Promise<{ url: string; pid: number; dataDir: string; users: { token: string; taskId: string }[] }>((ok, fail) => {
  let buf = '';
  control.on('data', (d: Buffer) => {
    buf += d.toString();
    const line = buf.split('\n').find((l) => l.startsWith('{"url"'));
    if (line) ok(JSON.parse(line));
  });
  child.once('exit', (code) => fail(new Error(`the soak server exited (${code})`)));
});
const url = new URL(ready.url);

// ---- load ----
type Kind = 'call' | 'list';
const send = (agent: Agent, token: string, method: string, params: Record<string, unknown>): Promise<{ status: number; body: string }> =>
  new Promise((ok, fail) => {
    const name = method === 'tools/call' ? (params.name as string) : undefined;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: modernMeta() } });
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          'mcp-protocol-version': MODERN,
          'mcp-method': method,
          ...(name ? { 'mcp-name': name } : {}),
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => ok({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', fail);
    req.end(body);
  });

const minutes: Minute[] = [newMinute()];
const errorSamples: string[] = [];
const started = Date.now();
const end = started + MINUTES * 60_000;
const current = () => minutes[minutes.length - 1]!;

/** Outcome of one answer: an admitted call, an intended refusal, or an error. */
const classify = (kind: Kind, status: number, body: string): 'admitted' | 'refused' | 'error' => {
  if (status !== 200) return 'error';
  const json = JSON.parse(body) as { result?: { isError?: boolean; content?: { text: string }[] }; error?: unknown };
  if (json.error || !json.result) return 'error';
  if (kind === 'list') return 'admitted';
  if (!json.result.isError) return 'admitted';
  const text = json.result.content?.[0]?.text ?? '';
  return /Rate limit reached|Too many calls in flight|Conflict/.test(text) ? 'refused' : 'error';
};

const loop = async (user: { token: string; taskId: string }, i: number) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let version = 1;
  const mix: (() => [Kind, string, Record<string, unknown>])[] = [
    () => ['call', 'tools/call', { name: 'me_get', arguments: {} }],
    () => ['list', 'tools/list', {}],
    () => ['call', 'tools/call', { name: 'tasks_search', arguments: { limit: 20 } }],
    () => ['call', 'tools/call', { name: 'agenda_get', arguments: {} }],
    () => ['call', 'tools/call', { name: 'task_update', arguments: { taskId: user.taskId, version, title: `Soak ${i} at ${Date.now()}` } }],
  ];
  for (let n = i; Date.now() < end; n++) {
    const [kind, method, params] = mix[n % mix.length]!();
    const t0 = performance.now();
    let outcome: 'admitted' | 'refused' | 'error';
    try {
      const res = await send(agent, user.token, method, params);
      outcome = classify(kind, res.status, res.body);
      if (outcome === 'error' && errorSamples.length < 5) errorSamples.push(`${method} ${res.status} ${res.body.slice(0, 200)}`);
      if (params.name === 'task_update') {
        const parsed = JSON.parse(res.body) as { result?: { structuredContent?: { version?: number }; content?: { text: string }[] } };
        const stored =
          parsed.result?.structuredContent?.version ?? Number(/version (\d+)/.exec(parsed.result?.content?.[0]?.text ?? '')?.[1]);
        if (Number.isFinite(stored)) version = stored;
      }
    } catch (err) {
      outcome = 'error';
      if (errorSamples.length < 5) errorSamples.push(`${method} ${(err as Error).message}`);
    }
    const m = current();
    m.requests += 1;
    m.latencies.push(performance.now() - t0);
    m[outcome === 'admitted' ? 'admitted' : outcome === 'refused' ? 'refused' : 'errors'] += 1;
  }
  agent.destroy();
};

const ticker = setInterval(async () => {
  current().rssMb = await rssMb(ready.pid);
  const m = current();
  process.stderr.write(
    `minute ${minutes.length}: ${m.requests} requests, p99 ${pct(m.latencies, 99).toFixed(1)} ms, ${m.admitted} admitted, ${m.refused} refused, ${m.errors} errors, RSS ${m.rssMb.toFixed(0)} MB\n`,
  );
  if (Date.now() < end) minutes.push(newMinute());
}, 60_000);

await Promise.all(ready.users.map((u, i) => loop(u, i)));
clearInterval(ticker);
if (current().rssMb === 0) current().rssMb = await rssMb(ready.pid);
child.kill();
await store.close();
await rm(ready.dataDir, { recursive: true, force: true });

// ---- verdict and report ----
const full = minutes.filter((m) => m.rssMb > 0);
const totals = full.reduce(
  (t, m) => ({
    requests: t.requests + m.requests,
    admitted: t.admitted + m.admitted,
    refused: t.refused + m.refused,
    errors: t.errors + m.errors,
  }),
  { requests: 0, admitted: 0, refused: 0, errors: 0 },
);
// Minute 1 warms up (JIT, DynamoDB's own warm-up, the first snapshots and caches): both the memory
// and the latency verdicts start from minute 2.
const steady = full.length > 1 ? full.slice(1) : full;
const p99s = steady.map((m) => pct(m.latencies, 99));
const base = steady[0]!;
const last = full[full.length - 1]!;
const rssDrift = (last.rssMb - base.rssMb) / base.rssMb;
const checks = [
  [`errors: ${totals.errors} (expected 0)`, totals.errors === 0],
  [
    `RSS at minute ${full.length} vs minute ${Math.min(2, full.length)}: ${base.rssMb.toFixed(0)} → ${last.rssMb.toFixed(0)} MB (${(rssDrift * 100).toFixed(1)} %, within ±10 %)`,
    Math.abs(rssDrift) <= 0.1,
  ],
  [
    `worst minute p99 from minute ${full.length - steady.length + 1} on: ${Math.max(...p99s).toFixed(1)} ms vs the median minute's ${median(p99s).toFixed(1)} ms (at most ×2)`,
    Math.max(...p99s) <= 2 * median(p99s),
  ],
] as const;
const report = [
  '# Soak results',
  '',
  `${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}; \`npm run soak\`: ${MINUTES} min, ${CONNECTIONS} connections (one user each), limits on (120 calls / 60 s, 4 in flight per user), the local server on ${store.name} (in its own process), the real audit lines and meters.`,
  'Each connection cycles me_get, tools/list, tasks_search, agenda_get and an update of its own task as fast as it is answered. Refused: the rate limit, the concurrency limit, or a lost version race, all answered as tool errors by design.',
  '',
  '| minute | requests | req/s | p50 ms | p99 ms | admitted | refused | errors | server RSS MB |',
  '|---|---|---|---|---|---|---|---|---|',
  ...full.map(
    (m, i) =>
      `| ${i + 1} | ${m.requests} | ${(m.requests / 60).toFixed(0)} | ${pct(m.latencies, 50).toFixed(1)} | ${pct(m.latencies, 99).toFixed(1)} | ${m.admitted} | ${m.refused} | ${m.errors} | ${m.rssMb.toFixed(0)} |`,
  ),
  '',
  `Totals: ${totals.requests} requests, ${totals.admitted} admitted, ${totals.refused} refused, ${totals.errors} errors.`,
  '',
  ...checks.map(([text, ok]) => `- ${ok ? 'pass' : 'FAIL'}: ${text}`),
  ...(errorSamples.length ? ['', 'First errors:', '', ...errorSamples.map((e) => `- \`${e}\``)] : []),
  '',
].join('\n');
await writeFile(join(ROOT, 'bench/soak.md'), report);
process.stdout.write(report);
process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
