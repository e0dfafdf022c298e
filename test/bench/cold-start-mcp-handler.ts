import { createMcpHandler } from 'mcp-handler';
import * as z from 'zod';

// mcp-handler's side of the cold-start comparison: a fresh Node 22 process imports the bundle, builds
// the handler with one stateless tool and answers one tools/call.
const handler = createMcpHandler((server) => {
  server.registerTool(
    'me_get',
    {
      title: 'Who am I',
      description: 'The caller and today',
      inputSchema: z.object({}),
      outputSchema: z.object({ name: z.string(), today: z.string() }),
    },
    async () => {
      const out = { name: 'Ada Lovelace', today: new Date().toISOString().slice(0, 10) };
      return { content: [{ type: 'text', text: `${out.name}, today ${out.today}` }], structuredContent: out };
    },
  );
});
const res = await handler(
  new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'me_get',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'me_get',
        arguments: {},
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    }),
  }),
);
const text = await res.text();
console.log(JSON.stringify({ ms: performance.now(), ok: res.status === 200 && text.includes('Ada Lovelace') }));
process.exit(0);
