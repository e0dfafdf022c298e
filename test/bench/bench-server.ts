import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as z from 'zod';

/**
 * One server of `npm run bench`, in a process of its own so the load generator does not share its
 * event loop. Prints `{"url":…,"token":…}` on one line once it answers. Kinds:
 *   doers-off   the local server (the Lambda handler behind node:http), limits off
 *   doers-on    the same with the limits as the stack sets them (120/min would refuse most calls of
 *               a benchmark, so the rate is raised; every call still takes and gives back its lease)
 *   mcp-handler Vercel's mcp-handler 2.4.0 with an equivalent stateless tool on node:http
 *   echo        a bare node:http JSON echo: the ceiling of this machine
 *   doers-region <ms> <add|floor>  doers with the limits on behind a proxy to the embedded store:
 *               `add` holds every DynamoDB request <ms> before it reaches the store (the store's own
 *               time comes on top); `floor` forwards it at once and answers it no sooner than <ms>
 *               after it arrived (a region's round trip, its service time included)
 */
const kind = process.argv[2];

const listen = (handler: Parameters<typeof createServer>[1]): Promise<string> =>
  new Promise((resolve) => {
    const server = createServer({ keepAliveTimeout: 60_000 }, handler);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });

if (kind === 'doers-off' || kind === 'doers-on') {
  const { startTestServer } = await import('../helpers/local.js');
  const limits =
    kind === 'doers-on'
      ? { DOERS_RATE_LIMIT_CALLS: '1000000', DOERS_MAX_CONCURRENT_CALLS: '64' }
      : { DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' };
  const { RecordingObserver } = await import('../helpers/recording-observer.js');
  const server = await startTestServer(limits, { observer: new RecordingObserver() });
  console.log(JSON.stringify({ url: server.mcpUrl, token: server.token }));
} else if (kind === 'doers-region') {
  const delayMs = Number(process.argv[3] ?? '5');
  const { startProxiedServer } = await import('../helpers/dynamo-proxy.js');
  const { RecordingObserver } = await import('../helpers/recording-observer.js');
  // The stack's limits (each call takes and gives back its lease), the rate raised as for doers-on.
  const { server, proxy } = await startProxiedServer(
    { DOERS_RATE_LIMIT_CALLS: '1000000', DOERS_MAX_CONCURRENT_CALLS: '4' },
    { observer: new RecordingObserver() },
  );
  if (process.argv[4] === 'floor') proxy.roundTripMs = delayMs;
  else proxy.delayMs = delayMs;
  console.log(JSON.stringify({ url: server.mcpUrl, token: server.token }));
} else if (kind === 'mcp-handler') {
  const { createMcpHandler } = await import('mcp-handler');
  const handler = createMcpHandler((server) => {
    server.registerTool(
      'me_get',
      {
        title: 'Who am I',
        description: 'The caller and today',
        inputSchema: z.object({}),
        outputSchema: z.object({ name: z.string(), role: z.string(), today: z.string() }),
      },
      async () => {
        const out = { name: 'Ada Lovelace', role: 'owner', today: new Date().toISOString().slice(0, 10) };
        return { content: [{ type: 'text', text: `${out.name} (${out.role}), today ${out.today}` }], structuredContent: out };
      },
    );
  });
  const url = await listen(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
    const response = await handler(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method!,
        headers,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  console.log(JSON.stringify({ url: `${url}/mcp`, token: 'none' }));
} else if (kind === 'echo') {
  const url = await listen(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { id?: unknown };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, result: {} }));
  });
  console.log(JSON.stringify({ url: `${url}/mcp`, token: 'none' }));
} else {
  console.error(`unknown kind ${kind}`);
  process.exit(2);
}
