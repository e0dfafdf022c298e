import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { itemSize, writeUnitsOf } from '../../lambda/platform/item-size.js';
import { startCapacityProxy } from '../helpers/capacity-proxy.js';
import { startTestServer } from '../helpers/local.js';
import { QUERY_READS, queryArgs, type SeededWorkspace, seedWorkspace } from '../helpers/seed-workspace.js';
import { caller } from '../helpers/workspace-fixtures.js';

/**
 * The scale half of `npm run bench`: workspaces of each size seeded through the tools (the shape of
 * test/helpers/seed-workspace.ts), then every read path's requests and read units per call, and
 * what each kind of task change writes: its write units as DynamoDB bills them (the embedded store
 * reports them by DynamoDB's rules: 2 per KB per item of a transaction, an index entry 1 per KB) and
 * how they spread over partition keys, which is what bounds one workspace's changes per second
 * (a partition takes 1,000 write units a second).
 */

export interface ReadRow {
  readonly name: string;
  /** Per size: requests and read units of one call. */
  readonly at: readonly { readonly size: number; readonly requests: number; readonly read: number }[];
}

export interface WriteRow {
  readonly name: string;
  readonly requests: number;
  /** Write units of the call (the limits are off: none of them are the limits'). */
  readonly write: number;
  /** Units per partition key (the table's, and each index's entries under their own key). */
  readonly byKey: readonly { readonly key: string; readonly units: number }[];
  /** Changes like this one a second one workspace can take before a partition is full: spread, and all in one. */
  readonly ceiling: { readonly spread: number; readonly oneOfEach: number };
}

/**
 * What share of a workspace's changes of one kind a partition key takes: spread (changes over many
 * tasks, 10 people, 10 projects, 4 priorities, as the seeded workspace) and all in one (one person,
 * one project, one priority: the worst a team can do). A task's own partition, a word's and a
 * target's history take no share of the workspace (they are as many as the tasks).
 */
const shareOf = (key: string): { spread: number; oneOfEach: number } => {
  const k = key.replace(/^WS#[^#]+/, '');
  if (k === '' || k.startsWith('#LINKS')) return { spread: 1, oneOfEach: 1 };
  if (/^#N#W#\d/.test(k) || /^#R\d/.test(k)) return { spread: 1 / 4, oneOfEach: 1 / 4 };
  if (/^#NO\d/.test(k)) return { spread: 1 / 8, oneOfEach: 1 / 8 };
  if (/^#L#P\d/.test(k)) return { spread: 1 / 4, oneOfEach: 1 };
  if (/^#[AP]#[^#]+#P\d/.test(k)) return { spread: 1 / 40, oneOfEach: 1 };
  if (/^#N#[AP]#/.test(k) || /^#ACT#BY#/.test(k) || /^#LB#/.test(k)) return { spread: 1 / 10, oneOfEach: 1 };
  return { spread: 0, oneOfEach: 0 };
};

const ceilingOf = (byKey: readonly { key: string; units: number }[]) => {
  const worst = (pick: 'spread' | 'oneOfEach') =>
    Math.min(...byKey.map(({ key, units }) => (shareOf(key)[pick] ? 1000 / (units * shareOf(key)[pick]) : Number.POSITIVE_INFINITY)));
  return { spread: Math.floor(worst('spread')), oneOfEach: Math.floor(worst('oneOfEach')) };
};

export interface ScaleResults {
  readonly sizes: readonly number[];
  readonly seedSeconds: readonly number[];
  readonly reads: readonly ReadRow[];
  readonly writes: readonly WriteRow[];
}

const READS: [name: string, tool: string, args: (s: SeededWorkspace) => Record<string, unknown>][] = [
  ['tasks_search (open, the default)', 'tasks_search', () => ({})],
  ['tasks_search status done', 'tasks_search', () => ({ status: 'done' })],
  ['tasks_search status any', 'tasks_search', () => ({ status: 'any' })],
  ['tasks_search a project', 'tasks_search', (s) => ({ project: s.projects[3] })],
  ['tasks_search the inbox (no project)', 'tasks_search', () => ({ project: 'none' })],
  ['tasks_search an assignee', 'tasks_search', (s) => ({ assignee: s.people[4] })],
  ['tasks_search unassigned', 'tasks_search', () => ({ assignee: 'none' })],
  ['tasks_search a label', 'tasks_search', () => ({ label: 'l3' })],
  ['tasks_search a priority', 'tasks_search', () => ({ priority: 'P2' })],
  ['tasks_search a due range', 'tasks_search', (s) => ({ dueAfter: s.day, dueBefore: s.day.replace(/-\d\d$/, '-28') })],
  ['tasks_search overdue', 'tasks_search', () => ({ overdue: true })],
  ['tasks_search text, one word, one hit', 'tasks_search', () => ({ text: 'quetzal' })],
  ['tasks_search text, two words, one hit', 'tasks_search', () => ({ text: 'quetzal feather' })],
  ['tasks_search text, a word in 1 of 6 tasks', 'tasks_search', () => ({ text: 'review' })],
  ['tasks_search project and assignee', 'tasks_search', (s) => ({ project: s.projects[3], assignee: s.people[3] })],
  ['tasks_search blocked', 'tasks_search', () => ({ blocked: true })],
  ...QUERY_READS.map(([name, query]): (typeof READS)[number] => [`tasks_search query: ${name}`, 'tasks_search', () => queryArgs(query)]),
  ['agenda_get (one person)', 'agenda_get', (s) => ({ date: s.day, assignee: s.people[4] })],
  ['agenda_get anyone', 'agenda_get', (s) => ({ date: s.day, assignee: 'anyone' })],
  ['agenda_get nobody', 'agenda_get', (s) => ({ date: s.day, assignee: 'none' })],
  ['project_get (its counts)', 'project_get', (s) => ({ projectId: s.projects[3] })],
  ['projects_list', 'projects_list', () => ({})],
  ['task_get', 'task_get', (s) => ({ taskId: s.keys[100] })],
  ['activity_list', 'activity_list', () => ({})],
  ['activity_list a task', 'activity_list', (s) => ({ task: s.keys[100] })],
  ['activity_list a project', 'activity_list', (s) => ({ project: s.projects[3] })],
  ['activity_list a kind (view, none but one)', 'activity_list', () => ({ kind: 'view' })],
  ['activity_list a kind (project)', 'activity_list', () => ({ kind: 'project' })],
];

/** A proxy that keeps the bodies of the writes it passes (what each partition key was given). */
const startRecorder = async (target: string) => {
  const writes: { op: string; body: Record<string, unknown> }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const op = String(req.headers['x-amz-target'] ?? '').replace(/^DynamoDB_\d+\./, '');
    const body = Buffer.concat(chunks);
    if (['TransactWriteItems', 'PutItem', 'UpdateItem', 'DeleteItem'].includes(op)) writes.push({ op, body: JSON.parse(body.toString()) });
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
    ) as Record<string, string>;
    const up = await fetch(target, { method: 'POST', headers, body });
    res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/x-amz-json-1.0' });
    res.end(Buffer.from(await up.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    writes,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
};

/** DynamoDB JSON (`{ S: … }`) of a key attribute. */
const str = (v: unknown): string => String((v as { S?: string }).S ?? '');

export const measureScale = async (sizes: readonly number[], log: (line: string) => void = console.log): Promise<ScaleResults> => {
  const dynamo = await startEmbeddedDynamo(':memory:');
  const units = await startCapacityProxy(dynamo.endpoint);
  const recorder = await startRecorder(units.endpoint);
  const server: LocalServer = await startTestServer({
    DOERS_DYNAMODB_ENDPOINT: recorder.endpoint,
    DOERS_RATE_LIMIT_CALLS: '0',
    DOERS_MAX_CONCURRENT_CALLS: '0',
    DOERS_AUTH_CACHE_SECONDS: '300',
  });
  const db = createDocumentClient({ endpoint: dynamo.endpoint });
  try {
    const seeded: SeededWorkspace[] = [];
    const seedSeconds: number[] = [];
    for (const size of sizes) {
      const t = performance.now();
      seeded.push(await seedWorkspace(server, size, { concurrency: 4 }));
      seedSeconds.push(Math.round((performance.now() - t) / 1000));
      log(`seeded ${size} tasks in ${seedSeconds.at(-1)} s`);
    }
    const requestsCounted = async (s: SeededWorkspace, tool: string, args: Record<string, unknown>) => {
      const call = caller(server, s.ws.owner.token);
      await call(tool, args);
      const from = units.consumed.length;
      const r = await call(tool, args);
      if (r.isError) throw new Error(`${tool}: ${r.content[0]!.text}`);
      const mine = units.consumed.slice(from);
      return { requests: mine.length, read: mine.reduce((sum, c) => sum + c.read, 0) };
    };
    const reads: ReadRow[] = [];
    for (const [name, tool, args] of READS) {
      const at = [];
      for (const [i, s] of seeded.entries()) at.push({ size: sizes[i]!, ...(await requestsCounted(s, tool, args(s))) });
      reads.push({ name, at });
      log(`${name.padEnd(44)} ${at.map((a) => `${a.size}: ${a.requests} req ${a.read} RRU`).join('   ')}`);
    }

    // ---- what each change writes, and where ----
    const s = seeded.at(-1)!;
    const call = caller(server, s.ws.owner.token);
    const kb = 'x'.repeat(1000);
    const make = async () =>
      (
        await call('task_create', {
          title: 'Measured change of a task',
          notes: `${kb}`,
          dueDate: s.day,
          assignee: s.people[2],
          projectId: s.projects[2],
          labels: ['l2'],
        })
      ).structuredContent as { taskId: string; version: number };
    const writes: WriteRow[] = [];
    const measure = async (name: string, run: () => Promise<unknown>) => {
      const fromWrites = recorder.writes.length;
      const fromUnits = units.consumed.length;
      await run();
      const mine = units.consumed.slice(fromUnits);
      const byKey = new Map<string, number>();
      for (const w of recorder.writes.slice(fromWrites)) {
        const actions =
          w.op === 'TransactWriteItems'
            ? (w.body.TransactItems as Record<string, Record<string, unknown>>[]).map((a) => Object.entries(a)[0]!)
            : [[w.op.replace('Item', ''), w.body] as [string, Record<string, unknown>]];
        for (const [kind, action] of actions) {
          const key = (action.Key ?? action.Item) as Record<string, unknown>;
          const pk = str(key.pk);
          const sk = str(key.sk);
          // The item as it is after the write: its size is what the write is billed by, its index keys where the entries went.
          const after = (await db.send(new GetCommand({ TableName: server.app.config.tables.workspace, Key: { pk, sk } }))).Item;
          const size = kind === 'Put' ? itemSize(after ?? {}) : after ? itemSize(after) : 100;
          const txn = w.op === 'TransactWriteItems' ? 2 : 1;
          byKey.set(pk, (byKey.get(pk) ?? 0) + txn * writeUnitsOf(size));
          for (const g of ['gsi1pk', 'gsi2pk', 'gsi3pk']) {
            if (after?.[g])
              byKey.set(
                `${String(after[g])} (${g.slice(0, 4)})`,
                (byKey.get(`${String(after[g])} (${g.slice(0, 4)})`) ?? 0) + writeUnitsOf(size),
              );
          }
        }
      }
      const keys = [...byKey.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([key, u]) => ({ key: key.replace(s.ws.workspaceId, '<ws>').replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>'), units: u }));
      const row: WriteRow = {
        name,
        requests: mine.length,
        write: mine.reduce((sum, c) => sum + c.write, 0),
        byKey: keys,
        ceiling: ceilingOf(keys),
      };
      writes.push(row);
      log(
        `${name.padEnd(52)} ${row.write} WRU; ${row.ceiling.spread}/s spread, ${row.ceiling.oneOfEach}/s all in one; ${keys.map((k) => `${k.key} ${k.units}`).join(', ')}`,
      );
    };
    let t = await make();
    await measure('task_create (1 KB notes, due, assignee, project, label)', async () => {
      t = await make();
    });
    const update = (patch: Record<string, unknown>) => async () => {
      const r = await call('task_update', { taskId: t.taskId, version: t.version, ...patch });
      if (r.isError) throw new Error(r.content[0]!.text);
      t = { taskId: t.taskId, version: r.structuredContent.version };
    };
    await measure('task_update title, same words (1 KB notes)', update({ title: 'Measured task of a change' }));
    await measure('task_update title, one new word (1 KB notes)', update({ title: 'Measured task of a bigger change' }));
    await measure('task_update priority (1 KB notes)', update({ priority: 'P1' }));
    await measure('task_update due date (1 KB notes)', update({ dueDate: s.day.replace(/-\d\d$/, '-27') }));
    await measure('task_update notes, 1 KB (1 KB notes)', update({ notes: 'y'.repeat(1000) }));
    await measure('task_complete (1 KB notes)', async () => {
      const r = await call('task_complete', { taskId: t.taskId });
      t = { taskId: t.taskId, version: r.structuredContent.version };
    });
    await measure('task_reopen (1 KB notes)', async () => {
      const r = await call('task_reopen', { taskId: t.taskId });
      t = { taskId: t.taskId, version: r.structuredContent.version };
    });
    await measure('comment_add', async () =>
      call('comment_add', { taskId: t.taskId, body: 'A comment of about sixty characters, as most of them are.' }),
    );
    await measure('task_delete (1 KB notes, one comment)', async () => call('task_delete', { taskId: t.taskId }));
    return { sizes, seedSeconds, reads, writes };
  } finally {
    await server.close();
    await recorder.stop();
    await units.stop();
    await dynamo.close();
  }
};

// Run alone: `npx tsx test/bench/scale-costs.ts 2000 20000`.
if (process.argv[1]?.endsWith('scale-costs.ts')) {
  const sizes = process.argv.slice(2).map(Number);
  const out = await measureScale(sizes.length ? sizes : [2_000, 20_000]);
  console.log(JSON.stringify(out, null, 1));
  process.exit(0);
}
