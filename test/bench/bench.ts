import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { VIEWS } from '../../lambda/views/links.js';
import { VIEWS_DIR } from '../../lib/bundling.js';
import { countedInvoke, startDeployedFunction } from '../helpers/deployed.js';
import { bundleLambda, invokeFresh, mcpEvent, NODE22, ROOT } from '../helpers/lambda-bundle.js';
import { createTestWorkspace } from '../helpers/workspace-fixtures.js';
import { measureMigration } from './migration-speed.js';
import { measureScale } from './scale-costs.js';
import { measureToolCosts } from './tool-costs.js';

/**
 * `npm run bench`: doers side by side with Vercel's mcp-handler 2.4.0 (an equivalent stateless tool
 * on node:http) and a bare node:http JSON echo (the ceiling), each server in its own process:
 * sequential latency (p50/p95/p99) and throughput at 32 connections (autocannon) for a small read
 * tool and tools/list, three rounds after a warm-up, medians; then the function as deployed (the
 * stack's bundle, the template's environment, DynamoDB Local): its files' sizes, import time and cold start
 * against mcp-handler's in alternating fresh processes, and the DynamoDB requests, read and write
 * units of one call of every tool it lists. Writes bench/results.md. `--cold-only`: the bundle's sizes
 * and the cold starts alone, printed.
 */
const ROUNDS = 3;
/**
 * Write units of one call of each writing tool before data layout 2, limits included (2 of them):
 * bench/results.md as this bench wrote it at commit 13d22dd, on the same store and the same calls.
 */
const WRITE_UNITS_BEFORE_LAYOUT_2: Readonly<Record<string, number>> = {
  change_undo: 30,
  comment_add: 10,
  comment_delete: 12,
  member_invite: 15,
  member_remove: 15,
  member_role_set: 13,
  project_archive: 12,
  project_create: 12,
  project_delete: 12,
  project_update: 12,
  task_complete: 24,
  task_create: 16,
  task_delete: 16,
  task_reopen: 24,
  task_update: 14,
  tasks_create: 16,
  tasks_update: 14,
  'tasks_create ×50': 606,
  'tasks_update ×50': 602,
};
/** On-demand price of a million write request units (us-east-1, docs/deploy-and-operations.md). */
const DOLLARS_PER_MILLION_WRITES = 0.625;
/** What a million calls of each writing tool cost in write units, before layout 2 and now. */
const millionCalls = (costs: readonly { tool: string; write: number }[]): string[] =>
  costs
    .filter((c) => WRITE_UNITS_BEFORE_LAYOUT_2[c.tool] !== undefined)
    .map((c) => {
      const then = WRITE_UNITS_BEFORE_LAYOUT_2[c.tool]!;
      return `| ${c.tool} | ${then} | ${c.write} | $${(then * DOLLARS_PER_MILLION_WRITES).toFixed(2)} | $${(c.write * DOLLARS_PER_MILLION_WRITES).toFixed(2)} |`;
    });
/** Fresh processes per side of the cold-start comparison, alternating (docs/testing.md asks for at least 9). */
const COLD_RUNS = 11;
/**
 * The round trips a fresh instance's first `me_get` with an unseen token waits for one after another:
 * the token's record, the member and workspace, the admission beside the tool's read, the release
 * (test/e2e/request-count.test.ts pins each).
 */
const FIRST_CALL_STEPS = 4;
/** The workspaces the scale rows are measured on (docs/testing.md says how long the seeding takes). */
const SCALE_SIZES = [2_000, 20_000];
/** Tasks of the layout-1 workspace the migration is timed on. */
const MIGRATION_SIZE = 5_000;
const SEQUENTIAL = 300;
const SECONDS = 4;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

interface Target {
  readonly url: string;
  readonly token: string;
}

const startServer = (kind: string, args: string[] = []): Promise<{ target: Target; child: ChildProcess }> =>
  new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/bench-server.ts', kind, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) ok({ target: JSON.parse(line) as Target, child });
    });
    child.once('exit', (code) => fail(new Error(`${kind} exited with ${code}`)));
  });

const requestOf = (t: Target, method: 'tools/call' | 'tools/list', tool = 'me_get', args: Record<string, unknown> = {}) => {
  const params = method === 'tools/call' ? { name: tool, arguments: args } : {};
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${t.token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(method === 'tools/call' ? { 'mcp-name': tool } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    }),
  };
};

const once = (t: Target, req: ReturnType<typeof requestOf>, agent: Agent): Promise<{ status: number; body: string }> =>
  new Promise((ok, fail) => {
    const r = request(t.url, { method: 'POST', headers: req.headers, agent }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => ok({ status: res.statusCode ?? 0, body }));
    });
    r.on('error', fail);
    r.end(req.body);
  });

/** `req`, or a request made anew for each call (a create whose arguments must differ, or it is a replay). */
const sequential = async (t: Target, req: ReturnType<typeof requestOf> | ((i: number) => ReturnType<typeof requestOf>), n = SEQUENTIAL) => {
  const times: number[] = [];
  // A fresh keep-alive connection per run: an idle one may be closed by the server in between.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < n; i++) {
      const one = typeof req === 'function' ? req(i) : req;
      const s = performance.now();
      const { status, body } = await once(t, one, agent);
      times.push(performance.now() - s);
      if (status !== 200) throw new Error(`status ${status} from ${t.url}`);
      // A refusal (the limits, a wrong argument) would time something else than the tool.
      if (body.includes('"isError":true')) throw new Error(`a refusal from ${t.url}: ${body.slice(0, 300)}`);
    }
  } finally {
    agent.destroy();
  }
  times.sort((a, b) => a - b);
  return { p50: pct(times, 50), p95: pct(times, 95), p99: pct(times, 99) };
};

const loaded = async (t: Target, req: ReturnType<typeof requestOf>, seconds = SECONDS) => {
  const out = await autocannon({ url: t.url, method: 'POST', headers: req.headers, body: req.body, connections: 32, duration: seconds });
  if (out.non2xx || out.errors) throw new Error(`${out.non2xx} non-2xx, ${out.errors} errors from ${t.url}`);
  return out.requests.average;
};

interface Row {
  readonly server: string;
  readonly method: string;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly rps: number;
}

const measureServer = async (kind: string, label: string): Promise<Row[]> => {
  const { target, child } = await startServer(kind);
  try {
    const rows: Row[] = [];
    for (const method of ['tools/call', 'tools/list'] as const) {
      const req = requestOf(target, method);
      await loaded(target, req, 2); // warm-up
      const seq: { p50: number; p95: number; p99: number }[] = [];
      const rps: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        seq.push(await sequential(target, req));
        rps.push(await loaded(target, req));
      }
      rows.push({
        server: label,
        method: method === 'tools/call' ? 'tools/call (small read)' : 'tools/list',
        p50: median(seq.map((s) => s.p50)),
        p95: median(seq.map((s) => s.p95)),
        p99: median(seq.map((s) => s.p99)),
        rps: median(rps),
      });
      console.log(
        `${label.padEnd(26)} ${method.padEnd(11)} p50 ${rows.at(-1)!.p50.toFixed(2)} ms  p95 ${rows.at(-1)!.p95.toFixed(2)} ms  ${rows.at(-1)!.rps.toFixed(0)} req/s`,
      );
    }
    return rows;
  } finally {
    child.kill();
  }
};

/**
 * `--delay=<ms>` (5 unless given): what every DynamoDB request waits at the proxy in the region rows;
 * `--region-only`: those rows alone (about two minutes), without the rest of the bench or its file.
 */
const DELAY_MS = Number(process.argv.find((a) => a.startsWith('--delay='))?.slice('--delay='.length) ?? '5');
if (!Number.isFinite(DELAY_MS) || DELAY_MS < 0) {
  console.error(`--delay takes milliseconds, 0 or more (5 unless given); got ${process.argv.find((a) => a.startsWith('--delay='))}`);
  process.exit(2);
}
const REGION_ONLY = process.argv.includes('--region-only');
/** `--cold-only`: the bundle's sizes and the cold starts alone (about a minute), without the rest of the bench or its file. */
const COLD_ONLY = process.argv.includes('--cold-only');
const REGION_SEQUENTIAL = 200;

/**
 * The p50 each read may take with a region's round trips (`DELAY_MS` each): two in sequence (the
 * admission beside the first reads, the lease given back) and the work of the call itself; a list
 * may wait for one step of reads more than `me_get` (docs/testing.md, "Steps in sequence").
 */
const REGION_BUDGETS: Readonly<Record<string, (delay: number) => number>> = {
  me_get: (d) => 2.5 * d + 2,
  agenda_get: (d) => 3 * d + 4,
  tasks_search: (d) => 3 * d + 4,
};

interface RegionRow {
  readonly server: string;
  readonly tool: string;
  readonly p50: number;
  readonly p95: number;
  readonly budget?: number;
}

/**
 * doers with the limits on behind the delaying proxy, tool by tool, under both models of a region's
 * round trip (bench-server.ts `doers-region`): `floor`, which the budgets are held to (each request
 * answered no sooner than `delayMs` after it was sent, the store's own time inside it, as DynamoDB's
 * service time is inside a region's latency), and `add` (the delay on top of the embedded store's
 * own 1 to 2 ms); mcp-handler's `me_get` beside them.
 */
const measureRegion = async (delayMs: number): Promise<RegionRow[]> => {
  const rows: RegionRow[] = [];
  const run = async (server: string, target: Target, tool: string, req: Parameters<typeof sequential>[1]) => {
    await sequential(target, req, 20); // warm-up: the credential, the directory, the code paths
    const rounds: { p50: number; p95: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await sequential(target, req, REGION_SEQUENTIAL));
    const budget = server.includes('round trip') ? REGION_BUDGETS[tool]?.(delayMs) : undefined;
    const row = {
      server,
      tool,
      p50: median(rounds.map((x) => x.p50)),
      p95: median(rounds.map((x) => x.p95)),
      ...(budget ? { budget } : {}),
    };
    rows.push(row);
    console.log(
      `${server.padEnd(34)} ${tool.padEnd(13)} p50 ${row.p50.toFixed(2)} ms  p95 ${row.p95.toFixed(2)} ms${budget ? `  (budget ${budget} ms)` : ''}`,
    );
  };
  for (const model of ['floor', 'add'] as const) {
    const doers = await startServer('doers-region', [String(delayMs), model]);
    try {
      const t = doers.target;
      const label =
        model === 'floor' ? `doers, limits on, round trip ≥ ${delayMs} ms` : `doers, limits on, ${delayMs} ms added to each request`;
      await run(label, t, 'me_get', requestOf(t, 'tools/call', 'me_get'));
      await run(label, t, 'agenda_get', requestOf(t, 'tools/call', 'agenda_get', { assignee: 'anyone' }));
      await run(label, t, 'tasks_search', requestOf(t, 'tools/call', 'tasks_search', { query: 'is:open sort:due' }));
      await run(label, t, 'task_get', requestOf(t, 'tools/call', 'task_get', { taskId: 'DEMO-1' }));
      // Every create its own title, across the warm-up and the rounds: the same call again within
      // minutes is answered from its claim (a replay), which would time something else.
      let made = 0;
      await run(label, t, 'task_create', () =>
        requestOf(t, 'tools/call', 'task_create', { title: `Bench create ${++made}`, assignee: 'me' }),
      );
    } finally {
      doers.child.kill();
    }
  }
  const handler = await startServer('mcp-handler');
  try {
    await run('mcp-handler 2.4.0 (no store)', handler.target, 'me_get', requestOf(handler.target, 'tools/call', 'me_get'));
  } finally {
    handler.child.kill();
  }
  return rows;
};

/** The region rows as bench/results.md shows them, each budget said met or missed. */
const regionTable = (rows: readonly RegionRow[], delayMs: number): string[] => [
  `DynamoDB as a region: a proxy before the embedded store makes each request a round trip of at least ${delayMs} ms, the store's own`,
  `time inside it ("round trip ≥"; the budgets), or adds ${delayMs} ms to the store's own 1 to 2 ms ("added"); limits on (the concurrency`,
  `bound as the stack sets it, the rate raised so that no call is refused); ${REGION_SEQUENTIAL} sequential calls on one keep-alive connection, medians`,
  `of ${ROUNDS} rounds (\`npm run bench -- --region-only --delay=${delayMs}\`):`,
  '',
  '| server | tool | p50 ms | p95 ms | p50 budget | |',
  '|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.server} | ${r.tool} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.budget !== undefined ? `${r.budget} ms` : '—'} | ${r.budget === undefined ? '' : r.p50 <= r.budget ? 'met' : '**missed**'} |`,
  ),
];

/** Async on purpose: the embedded DynamoDB the doers cold start talks to lives in this process. */
const fresh = (args: string[], env: Record<string, string>): Promise<{ ms: number; ok: boolean }> =>
  new Promise((ok, fail) => {
    const child = spawn(NODE22, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill(), 30_000);
    child.once('exit', () => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('{"ms"'));
      if (line) ok(JSON.parse(line) as { ms: number; ok: boolean });
      else fail(new Error(`no result from ${args.join(' ')}: ${err}`));
    });
  });

const runs = async (n: number, args: string[], env: Record<string, string>) => {
  const out: { ms: number; ok: boolean }[] = [];
  for (let i = 0; i < n; i++) out.push(await fresh(args, env));
  return out;
};

/**
 * The function as deployed (the stack's bundle, the template's environment): its files' sizes, the
 * import alone, and fresh processes to a first successful `tools/call` of `me_get` alternating with
 * mcp-handler's, {@link COLD_RUNS} of each side, medians.
 */
const measureColdStarts = async (work: string) => {
  // The stack's bundle with the template's environment (test/helpers/deployed.ts): DynamoDB Local
  // where Java is installed (dynalite otherwise), a loopback Secrets Manager (init reads the secret).
  const deployed = await startDeployedFunction();
  try {
    const lambdaBundle = deployed.bundle;
    const viewSizes = await Promise.all(
      VIEWS.map(async (view) => {
        const html = await readFile(join(dirname(lambdaBundle.file), VIEWS_DIR, `${view}.html`));
        return [view, html.length, gzipSync(html).length] as const;
      }),
    );
    const ws = await createTestWorkspace(deployed.server);
    const host = new URL(deployed.server.url).host;
    // Straight to the store: the cold starts pass no proxy.
    const asDeployed = { ...deployed.env, AWS_ENDPOINT_URL_DYNAMODB: deployed.store.endpoint };
    const limitsOff = { ...asDeployed, DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' };
    const importScript = join(work, 'import-time.mjs');
    await writeFile(
      importScript,
      `const t = performance.now(); await import(${JSON.stringify(lambdaBundle.file)}); console.log(JSON.stringify({ ms: performance.now() - t, ok: true })); process.exit(0);`,
    );
    const coldHandler = await bundleLambda('test/bench/cold-start-mcp-handler.ts', join(work, 'cold-handler'));
    const sdkFloor = await bundleLambda('test/bench/cold-start-sdk-floor.ts', join(work, 'sdk-floor'));
    const meGet = mcpEvent(ws.owner.token, 'tools/call', { name: 'me_get', arguments: {} }, { host });
    const doersCold = (env: Record<string, string>) => async () => {
      const { res, ms } = await invokeFresh(lambdaBundle, meGet, env, NODE22);
      if (res.statusCode !== 200 || res.body.includes('"isError":true'))
        throw new Error(`a cold start did not answer its tools/call: ${res.body}`);
      return ms;
    };
    const handlerCold = async () => {
      const [r] = await runs(1, [coldHandler.file], {});
      if (!r!.ok) throw new Error('an mcp-handler cold start did not answer its tools/call');
      return r!.ms;
    };
    const floorCold = (steps: number) => async () => {
      const { ms, ok } = await fresh([sdkFloor.file, deployed.server.app.config.tables.workspace, String(steps)], asDeployed);
      if (!ok) throw new Error('the AWS SDK floor did not get its GetItems answered');
      return ms;
    };
    // Alternating, so a busier stretch of the machine weighs on every side alike.
    const sides: [string, () => Promise<number>][] = [
      ['doers as deployed (limits on)', doersCold(asDeployed)],
      ['doers, limits off', doersCold(limitsOff)],
      ['mcp-handler 2.4.0', handlerCold],
      ['doers import only', async () => (await fresh([importScript], asDeployed)).ms],
      ['the AWS SDK floor, one request', floorCold(1)],
      [`the AWS SDK floor, ${FIRST_CALL_STEPS} requests in sequence`, floorCold(FIRST_CALL_STEPS)],
    ];
    for (const [, side] of sides) await side(); // the files in the page cache, the token's owner stamped today
    const coldTimes = sides.map(() => [] as number[]);
    for (let i = 0; i < COLD_RUNS; i++) for (const [j, [, side]] of sides.entries()) coldTimes[j]!.push(await side());
    const [coldMs, coldOffMs, handlerColdMs, importMs, floorMs, floorStepsMs] = coldTimes.map(median) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    console.log(
      `cold start (median of ${COLD_RUNS}): doers ${coldMs.toFixed(0)} ms, limits off ${coldOffMs.toFixed(0)} ms, mcp-handler ${handlerColdMs.toFixed(0)} ms, the AWS SDK floor ${floorMs.toFixed(0)} ms (${FIRST_CALL_STEPS} steps: ${floorStepsMs.toFixed(0)} ms); import ${importMs.toFixed(0)} ms`,
    );
    return { lambdaBundle, viewSizes, importMs, coldMs, coldOffMs, handlerColdMs, floorMs, floorStepsMs, coldStore: deployed.store.name };
  } finally {
    await deployed.close();
  }
};

/** The bundle's files and the cold starts as bench/results.md shows them. */
const coldRows = (c: Awaited<ReturnType<typeof measureColdStarts>>): string[] => {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB (${bytes} B)`;
  const b = c.lambdaBundle;
  return [
    `| main file \`index.mjs\`, minified ESM | ${kb(b.bytes)} |`,
    `| what a cold start loads: the main file and the chunks it imports statically | ${kb(b.startBytes)} |`,
    `| every file of the bundle: the main file and its ${b.files.length - 1} chunks, those read on first use included (the S3 module's own bundle apart) | ${kb(b.totalBytes)} |`,
    `| import in a fresh Node 22 process, init included (median of ${COLD_RUNS}) | ${c.importMs.toFixed(0)} ms |`,
    `| fresh process to first successful tools/call, doers as deployed, limits on (median of ${COLD_RUNS}) | ${c.coldMs.toFixed(0)} ms |`,
    `| the same, limits off (median of ${COLD_RUNS}) | ${c.coldOffMs.toFixed(0)} ms |`,
    `| fresh process to first successful tools/call, mcp-handler (median of ${COLD_RUNS}, alternating with the above) | ${c.handlerColdMs.toFixed(0)} ms |`,
    `| cold start vs mcp-handler, as deployed / limits off (goal ≤ ×0.75) | ×${(c.coldMs / c.handlerColdMs).toFixed(2)} / ×${(c.coldOffMs / c.handlerColdMs).toFixed(2)} |`,
    `| the floor: fresh process to one GetItem answered, the AWS SDK v3 document client alone, bundled as the stack bundles (median of ${COLD_RUNS}, alternating) | ${c.floorMs.toFixed(0)} ms (×${(c.floorMs / c.handlerColdMs).toFixed(2)} of mcp-handler) |`,
    `| the same floor with ${FIRST_CALL_STEPS} GetItems one after another, the steps a fresh instance's first \`me_get\` waits for | ${c.floorStepsMs.toFixed(0)} ms (×${(c.floorStepsMs / c.handlerColdMs).toFixed(2)} of mcp-handler) |`,
    `| store of the cold starts | ${c.coldStore} |`,
  ];
};

/** Says which region budgets were missed; the bench then exits 1 (after writing its file). */
const missedBudgets = (rows: readonly RegionRow[]): string[] =>
  rows
    .filter((r) => r.budget !== undefined && r.p50 > r.budget)
    .map((r) => `${r.tool}: p50 ${r.p50.toFixed(2)} ms over its budget of ${r.budget} ms`);

if (REGION_ONLY) {
  const region = await measureRegion(DELAY_MS);
  console.log(`\n${regionTable(region, DELAY_MS).join('\n')}`);
  const missed = missedBudgets(region);
  for (const m of missed) console.error(`budget missed: ${m}`);
  process.exit(missed.length ? 1 : 0);
}

if (COLD_ONLY) {
  const work = await mkdtemp(join(tmpdir(), 'doers-bench-'));
  try {
    const cold = await measureColdStarts(work);
    console.log(`\n| Lambda bundle | figure |\n|---|---|\n${coldRows(cold).join('\n')}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  process.exit(0);
}

const started = performance.now();
const work = await mkdtemp(join(tmpdir(), 'doers-bench-'));
let missed: string[] = [];
try {
  // ---- throughput and latency ----
  const rows = [
    ...(await measureServer('doers-off', 'doers, limits off')),
    ...(await measureServer('doers-on', 'doers, limits on')),
    ...(await measureServer('mcp-handler', 'mcp-handler 2.4.0')),
    ...(await measureServer('echo', 'node:http JSON echo')),
  ];
  // ---- latency as a region would see it ----
  const region = await measureRegion(DELAY_MS);
  missed = missedBudgets(region);

  // ---- the Lambda bundle as deployed: size, import, cold start; what each tool costs ----
  const cold = await measureColdStarts(work);
  const { viewSizes, coldMs, coldOffMs, handlerColdMs, floorStepsMs } = cold;

  // Listing with a warm and a cold credential, then one call of every tool the function lists: the
  // same bundle on the store whose consumed capacity counts every item of a transaction (deployed.ts).
  const costs = await startDeployedFunction({ units: true });
  const costsWs = await createTestWorkspace(costs.server);
  const costsHost = new URL(costs.server.url).host;
  const warmInstance = await costs.startInstance({ DOERS_AUTH_CACHE_SECONDS: '300' });
  const coldInstance = await costs.startInstance({ DOERS_AUTH_CACHE_SECONDS: '0' });
  const listing: [method: string, warm: number, cold: number, coldRead: number][] = [];
  for (const method of ['tools/list', 'resources/templates/list', 'prompts/list']) {
    const ev = mcpEvent(costsWs.owner.token, method, {}, { host: costsHost });
    const counts: number[] = [];
    let coldRead = 0;
    for (const instance of [warmInstance, coldInstance]) {
      await instance.invoke(ev);
      costs.units!.consumed.length = 0;
      counts.push((await countedInvoke(costs, instance, ev)).ops.length);
      coldRead = costs.units!.consumed.reduce((sum, c) => sum + c.read, 0);
    }
    listing.push([method, counts[0]!, counts[1]!, coldRead]);
  }
  warmInstance.close();
  coldInstance.close();
  const toolCosts = await measureToolCosts(costs);
  const storeName = costs.store.name;
  await costs.close();

  // ---- a workspace of 2,000 and of 20,000 tasks: what each read and each change costs ----
  const scale = await measureScale(SCALE_SIZES);
  const migration = await measureMigration(MIGRATION_SIZE);
  for (const t of toolCosts) console.log(`${t.tool.padEnd(18)} ${t.ops.length} requests, ${t.read} RRU, ${t.write} WRU ${t.refused}`);

  // ---- report ----
  const of = (server: string, method: string) => rows.find((r) => r.server === server && r.method.startsWith(method))!;
  const call = of('doers, limits off', 'tools/call');
  const handlerCall = of('mcp-handler 2.4.0', 'tools/call');
  const echo = of('node:http JSON echo', 'tools/call');
  const ratios = [
    `tools/call req/s vs mcp-handler: ×${(call.rps / handlerCall.rps).toFixed(2)} (target ≥ 2)`,
    `tools/call req/s vs the echo: ×${(call.rps / echo.rps).toFixed(2)} (target ≥ 0.6)`,
    `sequential p50 vs mcp-handler: ×${(call.p50 / handlerCall.p50).toFixed(2)} (target ≤ 0.5)`,
    `cold start vs mcp-handler, as deployed: ×${(coldMs / handlerColdMs).toFixed(2)}; limits off: ×${(coldOffMs / handlerColdMs).toFixed(2)} (goal ≤ 0.75, then ≤ 0.5); the AWS SDK alone with the first call's ${FIRST_CALL_STEPS} steps: ×${(floorStepsMs / handlerColdMs).toFixed(2)}`,
  ];
  const f = (v: number) => v.toFixed(2);
  const cpu = (await import('node:os')).cpus();
  const md = [
    '# Benchmark results',
    '',
    `${new Date().toISOString().slice(0, 10)}, ${cpu.length} × ${cpu[0]?.model.trim()}, Node ${process.version} (servers), Node 22 (bundle, cold start); \`npm run bench\`.`,
    `Each server in its own process on loopback; sequential: ${SEQUENTIAL} requests on one keep-alive connection; load: autocannon, 32 connections, ${SECONDS} s; medians of ${ROUNDS} rounds after a warm-up.`,
    '',
    '| server | request | p50 ms | p95 ms | p99 ms | req/s at 32 connections |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.server} | ${r.method} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.p99)} | ${r.rps.toFixed(0)} |`),
    '',
    ...regionTable(region, DELAY_MS),
    '',
    "| Lambda bundle (as the stack builds it, the template's environment) | figure |",
    '|---|---|',
    ...coldRows(cold),
    ...viewSizes.map(
      ([view, bytes, gz]) =>
        `| MCP Apps view \`${view}.html\` beside it, all inline (budget 300 KB) | ${(bytes / 1024).toFixed(0)} KB (${(gz / 1024).toFixed(0)} KB gzipped) |`,
    ),
    '',
    `DynamoDB per call as deployed (the template's environment, a warm instance) on ${storeName}, whose units follow DynamoDB's`,
    "billing rules, a transaction's 2 per KB for every item included (DynamoDB Local reports a transaction as one item's units:",
    'test/helpers/deployed.ts):',
    '',
    '| listing | requests, warm credential | requests, cold credential | read units, cold credential |',
    '|---|---|---|---|',
    ...listing.map(([m, w, c, r]) => `| ${m} | ${w} | ${c} | ${r} |`),
    '',
    'Every tool the function lists, called once with a warm credential (a cold one adds the BatchGetItem of the token record,',
    "member and workspace above); the limits' admission and release are two of the requests and 2 of the write units:",
    '',
    '| tool | requests | what they are | read units | write units | write units before layout 2 |',
    '|---|---|---|---|---|---|',
    ...toolCosts.map(
      (t) =>
        `| ${t.tool} | ${t.ops.length} | ${t.ops.join(', ')} | ${t.reported ? t.read : 'n/a'} | ${t.reported ? t.write : 'n/a'}${t.refused ? ` (refused: ${t.refused.slice(0, 80)})` : ''} | ${WRITE_UNITS_BEFORE_LAYOUT_2[t.tool] ?? '—'} |`,
    ),
    '',
    `A million calls of each writing tool, in write units (millions) and on demand at $${DOLLARS_PER_MILLION_WRITES} a million:`,
    '',
    '| tool | before layout 2 | now | cost before | cost now |',
    '|---|---|---|---|---|',
    ...millionCalls(toolCosts),
    '',
    `### A workspace of ${SCALE_SIZES.map((n) => n.toLocaleString('en')).join(' and of ')} tasks`,
    '',
    `Seeded through \`tasks_create\` and \`tasks_update\` (test/helpers/seed-workspace.ts: 10 projects, 10 people, labels, 30 % done, 200-character notes, due dates over three months) in ${scale.seedSeconds.map((s, i) => `${s} s (${SCALE_SIZES[i]!.toLocaleString('en')})`).join(' and ')}; one call of each read, warm, pages of 20; read units as the store reports them, requests without the limits':`,
    '',
    `| read | ${scale.sizes.map((n) => `requests at ${n.toLocaleString('en')} | read units at ${n.toLocaleString('en')}`).join(' | ')} |`,
    `|---|${scale.sizes.map(() => '---|---|').join('')}`,
    ...scale.reads.map((r) => `| ${r.name} | ${r.at.map((a) => `${a.requests} | ${a.read}`).join(' | ')} |`),
    '',
    'What each change of one task (1 KB of notes, a due date, an assignee, a project, a label) writes, as DynamoDB bills it, the',
    'partition keys it lands on, and how many such changes a second one workspace takes before one of its partitions is full',
    '(1,000 write units a second each): spread over its tasks, people, projects and priorities, and all by one person in one',
    'project at one priority (docs/workspace.md, "How many changes a second"):',
    '',
    '| change | write units | changes/s, spread | changes/s, all in one | partition keys (units) |',
    '|---|---|---|---|---|',
    ...scale.writes.map(
      (w) =>
        `| ${w.name} | ${w.write} | ${w.ceiling.spread.toLocaleString('en')} | ${w.ceiling.oneOfEach.toLocaleString('en')} | ${w.byKey.map((k) => `\`${k.key}\` ${k.units}`).join(', ')} |`,
    ),
    '',
    `\`npm run admin -- migrate\` of a workspace of layout 1 with ${migration.size.toLocaleString('en')} tasks, each with its number's claim and a record (test/bench/migration-speed.ts, the embedded store, the two 20 s drain waits left out): ${migration.seconds} s, ${migration.tasksPerSecond.toLocaleString('en')} tasks a second.`,
    '',
    'Ratios:',
    '',
    ...ratios.map((r) => `- ${r}`),
    '',
    // The small read is me_get on both sides, but doers' counts the caller's unread inbox entries (one
    // Query of the store), which mcp-handler's, reading nothing, does not: tools/list is the like-for-like row.
    "The tools/call rows compare unlike work since the inbox came: doers' `me_get` reads the caller's unread count from the store (one Query, limits off or on), `mcp-handler`'s answers from memory. `tools/list` (no store on either side) is the like-for-like row.",
    '',
  ].join('\n');
  await mkdir(join(ROOT, 'bench'), { recursive: true });
  await writeFile(join(ROOT, 'bench/results.md'), md);
  console.log(`\n${md}`);
  console.log(`bench took ${((performance.now() - started) / 1000).toFixed(0)} s; written to bench/results.md`);
} finally {
  await rm(work, { recursive: true, force: true });
}
for (const m of missed) console.error(`budget missed: ${m}`);
if (missed.length) process.exit(1);
