import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import type { LocalServer, LocalServerOptions } from '../../lambda/local/server.js';
import { startTestServer } from './local.js';

/**
 * pass: forward; throttle: ThrottlingException; internal: 500 InternalServerError; reset: drop the
 * connection; conditional: ConditionalCheckFailedException, or for a transaction TransactionCanceledException
 * with its first action's condition failed (what a lost race looks like); hang:
 * never answer (the connection is closed when the proxy stops); in-progress: the first faulted write
 * is forwarded (it commits) but answered TransactionInProgressException, as are the next ones (the
 * SDK's retries under the same request token), up to `times` in all, then writes pass again; lost:
 * the first faulted write is forwarded (it commits) and its connection dropped before the answer, then writes pass.
 */
export type ProxyMode = 'pass' | 'throttle' | 'reset' | 'internal' | 'conditional' | 'hang' | 'in-progress' | 'lost';

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
/** Writes that can carry a condition (BatchWriteItem cannot). A transaction's is its first action's. */
const CONDITIONAL = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems']);

const ERRORS: Record<'throttle' | 'internal' | 'conditional', { status: number; type: string; message: string }> = {
  throttle: { status: 400, type: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
  internal: { status: 500, type: 'InternalServerError', message: 'Internal server error' },
  conditional: { status: 400, type: 'ConditionalCheckFailedException', message: 'The conditional request failed' },
};

/**
 * A loopback proxy in front of a real DynamoDB API (dynalite, DynamoDB Local). Every request the
 * server under test sends is seen here, so tests count them and inject faults without touching
 * the code under test.
 */
export interface DynamoProxy {
  readonly endpoint: string;
  mode: ProxyMode;
  /** Operations seen (X-Amz-Target without the API prefix), in order. */
  readonly operations: string[];
  /**
   * Milliseconds every request waits before it is forwarded: a region's round trip, so requests sent
   * together overlap however fast the local store answers (0: none).
   */
  delayMs: number;
  /**
   * The least milliseconds from a request's arrival (once its body is read) to its answer, for the
   * requests forwarded in `pass` mode (0: none; faults and held transactions answer as they do):
   * forwarded at once and answered no sooner, so the store's own time is part of the round trip, as
   * a region's service time is part of its latency, rather than added to it (`npm run bench -- --delay`).
   */
  roundTripMs: number;
  /** When each operation arrived and when its answer was out (performance.now()), in arrival order. */
  readonly timings: { operation: string; start: number; end: number }[];
  /**
   * From the `nth` write (1-based, counted from now) on, every write gets `mode` (SDK retries
   * included) until `clearFault`; reads pass. `conditional` fails only that one write, and only
   * where DynamoDB could (PutItem, UpdateItem, DeleteItem).
   */
  failWritesFrom(nth: number, mode: Exclude<ProxyMode, 'pass'>, times?: number): void;
  clearFault(): void;
  /**
   * Holds the next `count` TransactWriteItems until all of them have arrived, then forwards them one
   * at a time in the order `order` gives for their bodies (indexes into them): two calls' writes land
   * in a chosen order after both have read what they read.
   */
  holdTransactions(count: number, order: (bodies: readonly string[]) => readonly number[]): void;
  stop(): Promise<void>;
  resume(): Promise<void>;
}

export const startDynamoProxy = async (target: string): Promise<DynamoProxy> => {
  const proxy = {
    mode: 'pass' as ProxyMode,
    delayMs: 0,
    roundTripMs: 0,
    operations: [] as string[],
    timings: [] as { operation: string; start: number; end: number }[],
  };
  let fault: { nth: number; mode: Exclude<ProxyMode, 'pass'>; seen: number; times: number } | undefined;
  let hold:
    | { count: number; order: (bodies: readonly string[]) => readonly number[]; waiting: { body: string; go: () => Promise<void> }[] }
    | undefined;
  const modeFor = (operation: string): ProxyMode => {
    if (!fault || !WRITES.has(operation)) return proxy.mode;
    fault.seen += 1;
    if (fault.seen < fault.nth) return proxy.mode;
    if (fault.mode === 'in-progress') return fault.seen < fault.nth + fault.times ? 'in-progress' : proxy.mode;
    if (fault.mode === 'lost') return fault.seen === fault.nth ? 'lost' : proxy.mode;
    if (fault.mode !== 'conditional') return fault.mode;
    return fault.seen === fault.nth && CONDITIONAL.has(operation) ? 'conditional' : proxy.mode;
  };
  let port = 0;
  let server: Server;
  const listen = async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const operation = String(req.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, '');
      proxy.operations.push(operation);
      const timing = { operation, start: performance.now(), end: Number.POSITIVE_INFINITY };
      proxy.timings.push(timing);
      res.on('close', () => {
        timing.end = performance.now();
      });
      const mode = modeFor(operation);
      if (mode === 'reset') return void req.socket.destroy();
      if (mode === 'hang') return;
      if (mode === 'conditional' && operation === 'TransactWriteItems') {
        // As DynamoDB cancels a transaction whose first condition failed: one reason per action.
        const actions = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { TransactItems?: unknown[] }).TransactItems ?? [];
        return void res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'injected' }).end(
          JSON.stringify({
            __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
            message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed]',
            CancellationReasons: actions.map((_, i) =>
              i === 0 ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' } : { Code: 'None' },
            ),
          }),
        );
      }
      const forward = async () => {
        if (proxy.delayMs > 0) await new Promise((r) => setTimeout(r, proxy.delayMs));
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
        ) as Record<string, string>;
        return fetch(target, { method: 'POST', headers, body: Buffer.concat(chunks) });
      };
      if (mode === 'in-progress') {
        // The first of them reaches the store and commits; the client is told it is still running.
        if (fault && fault.seen === fault.nth) await (await forward()).arrayBuffer();
        return void res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'injected' }).end(
          JSON.stringify({
            __type: 'com.amazonaws.dynamodb.v20120810#TransactionInProgressException',
            message: 'The transaction with the given request token is already in progress.',
          }),
        );
      }
      if (mode === 'lost') {
        // The write reaches the store and commits; its answer never reaches the client.
        await (await forward()).arrayBuffer();
        return void req.socket.destroy();
      }
      if (mode !== 'pass') {
        const e = ERRORS[mode as keyof typeof ERRORS];
        return void res
          .writeHead(e.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'injected' })
          .end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${e.type}`, message: e.message }));
      }
      if (hold && operation === 'TransactWriteItems') {
        const h = hold;
        const done = new Promise<void>((resolve) =>
          h.waiting.push({
            body: Buffer.concat(chunks).toString('utf8'),
            go: async () => {
              const upstream = await forward();
              res
                .writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/x-amz-json-1.0' })
                .end(Buffer.from(await upstream.arrayBuffer()));
              resolve();
            },
          }),
        );
        if (h.waiting.length === h.count) {
          hold = undefined;
          for (const i of h.order(h.waiting.map((w) => w.body))) await h.waiting[i]!.go();
        }
        return void (await done);
      }
      const upstream = await forward();
      const answer = Buffer.from(await upstream.arrayBuffer());
      const early = timing.start + proxy.roundTripMs - performance.now();
      if (early > 0) await new Promise((r) => setTimeout(r, early));
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/x-amz-json-1.0' }).end(answer);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  };
  await listen();
  return Object.assign(proxy, {
    endpoint: `http://127.0.0.1:${port}`,
    failWritesFrom: (nth: number, mode: Exclude<ProxyMode, 'pass'>, times = 3) => {
      fault = { nth, mode, seen: 0, times };
    },
    clearFault: () => {
      fault = undefined;
    },
    holdTransactions: (count: number, order: (bodies: readonly string[]) => readonly number[]) => {
      hold = { count, order, waiting: [] };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    resume: listen,
  });
};

/**
 * A test server whose every DynamoDB request passes the proxy: an embedded DynamoDB, the proxy in
 * front of it, and the local server pointed at the proxy. `close` stops all three.
 */
export const startProxiedServer = async (
  env: Record<string, string> = {},
  opts: LocalServerOptions = {},
): Promise<{ server: LocalServer; proxy: DynamoProxy; close(): Promise<void> }> => {
  const dynamo = await startEmbeddedDynamo(':memory:');
  const proxy = await startDynamoProxy(dynamo.endpoint);
  const server = await startTestServer({ DOERS_DYNAMODB_ENDPOINT: proxy.endpoint, ...env }, opts);
  return {
    server,
    proxy,
    close: async () => {
      await server.close();
      await proxy.stop();
      await dynamo.close();
    },
  };
};
