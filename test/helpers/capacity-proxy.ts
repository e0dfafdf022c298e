import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What one DynamoDB request consumed, as DynamoDB reports it (`ReturnConsumedCapacity: 'INDEXES'`). */
export interface Consumed {
  readonly operation: string;
  /** Read request units: the table's and each index's. */
  readonly read: number;
  /** Write request units: the table's and each index's (a transactional write counts twice). */
  readonly write: number;
  /** The same by table. */
  readonly tables: Readonly<Record<string, { readonly read: number; readonly write: number }>>;
  /** Whether the answer carried `ConsumedCapacity` at all (a refused write's does not). */
  readonly reported: boolean;
}

export interface CapacityProxy {
  readonly endpoint: string;
  /** Every request since the last clear, in order. */
  readonly consumed: Consumed[];
  stop(): Promise<void>;
}

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);

interface Capacity {
  readonly TableName?: string;
  readonly CapacityUnits?: number;
  readonly ReadCapacityUnits?: number;
  readonly WriteCapacityUnits?: number;
}

/** A read's units are read units, a write's write units, unless DynamoDB splits them itself. */
const unitsOf = (operation: string, c: Capacity): { read: number; write: number } => {
  if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined)
    return { read: c.ReadCapacityUnits ?? 0, write: c.WriteCapacityUnits ?? 0 };
  return READS.has(operation) ? { read: c.CapacityUnits ?? 0, write: 0 } : { read: 0, write: c.CapacityUnits ?? 0 };
};

/**
 * A loopback proxy that asks DynamoDB what each request consumes: it adds `ReturnConsumedCapacity:
 * 'INDEXES'` to every request that takes it, records the `ConsumedCapacity` of the answer (summed over
 * tables for batches and transactions) and removes it again unless the caller asked, so the code
 * under test sees the answer it would have had. DynamoDB Local reports capacity as DynamoDB does.
 */
export const startCapacityProxy = async (target: string): Promise<CapacityProxy> => {
  const consumed: Consumed[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const operation = String(req.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, '');
    let body = Buffer.concat(chunks);
    let asked = true;
    const measurable = operation !== '' && !['DescribeTable', 'CreateTable', 'ListTables', 'DeleteTable'].includes(operation);
    if (measurable) {
      const input = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      asked = input.ReturnConsumedCapacity !== undefined && input.ReturnConsumedCapacity !== 'NONE';
      if (!asked) body = Buffer.from(JSON.stringify({ ...input, ReturnConsumedCapacity: 'INDEXES' }));
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
    ) as Record<string, string>;
    const upstream = await fetch(target, { method: 'POST', headers, body });
    let answer = Buffer.from(await upstream.arrayBuffer());
    if (measurable && upstream.ok) {
      const output = JSON.parse(answer.toString('utf8')) as { ConsumedCapacity?: Capacity | Capacity[] };
      const all = output.ConsumedCapacity === undefined ? [] : [output.ConsumedCapacity].flat();
      const tables: Record<string, { read: number; write: number }> = {};
      for (const c of all) {
        const u = unitsOf(operation, c);
        const name = c.TableName ?? '?';
        tables[name] ??= { read: 0, write: 0 };
        const t = tables[name];
        t.read += u.read;
        t.write += u.write;
      }
      const units = Object.values(tables);
      consumed.push({
        operation,
        read: units.reduce((s, u) => s + u.read, 0),
        write: units.reduce((s, u) => s + u.write, 0),
        tables,
        reported: all.length > 0,
      });
      if (!asked) {
        delete output.ConsumedCapacity;
        answer = Buffer.from(JSON.stringify(output));
      }
    } else if (measurable) consumed.push({ operation, read: 0, write: 0, tables: {}, reported: false });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/x-amz-json-1.0' }).end(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    consumed,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
