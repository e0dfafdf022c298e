import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Context } from 'aws-lambda';
import type { HttpEvent, HttpResult } from '../http/request-context.js';
import { MAX_ATTACHMENT_BODY_BYTES } from '../http/transport.js';

/** Reads at most one byte past the largest limit (an attachment's): enough for the handler to answer 413, no more held. */
const readBody = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size > MAX_ATTACHMENT_BODY_BYTES) return;
      chunks.push(chunk);
      size += chunk.length;
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

/** The same API Gateway HTTP API (payload v2) event Lambda receives. */
export const toApiGatewayEvent = (req: IncomingMessage, body: Buffer): HttpEvent => {
  const url = new URL(req.url ?? '/', 'http://local');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  // API Gateway's payload v2 moves the Cookie header into `cookies`, one entry per cookie.
  const cookies = headers.cookie?.split(/;\s*/).filter((c) => c.length > 0);
  delete headers.cookie;
  const now = Date.now();
  const method = req.method ?? 'GET';
  return {
    version: '2.0',
    routeKey: `${method} ${url.pathname}`,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: `${method} ${url.pathname}`,
      stage: '$default',
      time: new Date(now).toISOString(),
      timeEpoch: now,
    },
    ...(cookies?.length ? { cookies } : {}),
    body: body.length ? body.toString('utf8') : undefined,
    isBase64Encoded: false,
  } as HttpEvent;
};

const lambdaContext = (timeoutMs: number): Context => {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'doers-local',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:doers-local',
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: 'local',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
};

const write = (res: ServerResponse, result: HttpResult): void => {
  res.statusCode = result.statusCode ?? 200;
  for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, String(v));
  // Payload v2's way of returning several Set-Cookie headers, which one header map cannot hold.
  if (result.cookies?.length) res.setHeader('set-cookie', result.cookies);
  res.end(result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? ''));
};

/** node:http in front of the very handler Lambda runs: one request, one invocation. */
export type Invoke = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/**
 * How long a client may take to deliver one whole request, headers and body. On Lambda, API Gateway
 * receives and buffers the request before the function runs, so only this adapter ever faces a
 * client that trickles its bytes; Node's own bound (five minutes, looked at every 30 s) would let one
 * hold a connection and its buffered body that long. A 1 MiB body takes milliseconds on loopback.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

export interface HttpAdapterOptions {
  /** Overrides REQUEST_TIMEOUT_MS (tests). */
  readonly requestTimeoutMs?: number;
}

export const createHttpAdapter = (handler: Invoke, timeoutMs: number, opts: HttpAdapterOptions = {}): Server => {
  const requestTimeout = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // Past the bound Node answers 408 and closes the connection; the handler never sees the request.
  // It only notices at each connections check, so that runs often enough for the bound to hold.
  return createServer({ requestTimeout, connectionsCheckingInterval: Math.min(1_000, requestTimeout) }, (req, res) => {
    readBody(req)
      .then((body) => handler(toApiGatewayEvent(req, body), lambdaContext(timeoutMs)))
      .then((result) => write(res, result))
      .catch(() => {
        // A request cut short (timed out, client gone) has no one left to answer.
        if (req.socket.destroyed) return;
        // The handler maps every error itself; reaching here means the adapter failed.
        res.statusCode = 500;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }));
      });
  });
};
