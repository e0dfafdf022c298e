import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { NUMBER_SHARDS, numberPk, TASK_ITEM_SK, taskNumberSk, taskPk, WORKSPACE_SK, wsPk } from '../../lambda/platform/item-keys.js';
import { type DynamoProxy, type ProxyMode, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { caller, createTestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Task numbers are claimed in the write that creates the task, and the workspace's counter says
// where the next one starts. An earlier version let one bulk create leave claims above the counter
// (a chunk whose write failed kept its numbers, and its items written again one by one took fresh
// ones past the reservation); from then on every create in that workspace failed. Here random
// sequences of single and bulk creates (some big enough for several transactions, some whose
// first transaction fails on a blocker's limit) run with a fault injected at a random write of
// each call, and claims left above the counter by an earlier version are planted between them.
// After every call: each claim is at or below the counter, names a task carrying that number, no
// task or number is claimed twice, and a plain task_create right after succeeds.

let server: LocalServer;
let proxy: DynamoProxy;
let close: () => Promise<void>;
let db: DynamoDBDocumentClient;

before(async () => {
  ({ server, proxy, close } = await startProxiedServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' }));
  db = createDocumentClient({ endpoint: server.dynamodbEndpoint });
});
after(async () => {
  db.destroy();
  await close();
});

type Fault = { readonly nth: number; readonly mode: Exclude<ProxyMode, 'pass' | 'hang'> };
type Op =
  | { readonly kind: 'single'; readonly fault?: Fault }
  | { readonly kind: 'bulk'; readonly n: number; readonly waitOnHub: number; readonly longNotes: boolean; readonly fault?: Fault }
  | { readonly kind: 'plant'; readonly above: number };

const fault: fc.Arbitrary<Fault | undefined> = fc.option(
  fc.record({
    nth: fc.integer({ min: 1, max: 4 }),
    mode: fc.constantFrom(
      'throttle' as const,
      'internal' as const,
      'reset' as const,
      'conditional' as const,
      'lost' as const,
      'in-progress' as const,
    ),
  }),
  { nil: undefined },
);

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('single' as const), fault }),
  fc.record({
    kind: fc.constant('bulk' as const),
    n: fc.integer({ min: 2, max: 50 }),
    waitOnHub: fc.integer({ min: 0, max: 3 }),
    longNotes: fc.boolean(),
    fault,
  }),
  fc.record({ kind: fc.constant('plant' as const), above: fc.integer({ min: 1, max: 30 }) }),
);

const table = () => server.app.config.tables.workspace;

const counterOf = async (workspaceId: string): Promise<number> =>
  Number(
    (await db.send(new GetCommand({ TableName: table(), Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK }, ConsistentRead: true }))).Item
      ?.taskCounter ?? 0,
  );

const claimsOf = async (workspaceId: string): Promise<{ number: number; taskId: string }[]> => {
  const out: { number: number; taskId: string }[] = [];
  for (let shard = 0; shard < NUMBER_SHARDS; shard++) {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new QueryCommand({
          TableName: table(),
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': numberPk(workspaceId, shard) },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? [])
        out.push({ number: Number(String(item.sk).slice('TASKNO#'.length)), taskId: String(item.taskId) });
      start = page.LastEvaluatedKey;
    } while (start);
  }
  return out;
};

/** A claim with no task, above the counter: what the earlier version's bulk create left behind. */
const plant = async (workspaceId: string, above: number): Promise<void> => {
  const n = (await counterOf(workspaceId)) + above;
  await db.send(
    new PutCommand({ TableName: table(), Item: { pk: numberPk(workspaceId, n), sk: taskNumberSk(n), taskId: `left-behind-${n}` } }),
  );
};

const taskNumber = async (workspaceId: string, taskId: string): Promise<number | undefined> => {
  const item = (
    await db.send(new GetCommand({ TableName: table(), Key: { pk: taskPk(workspaceId, taskId), sk: TASK_ITEM_SK }, ConsistentRead: true }))
  ).Item;
  return item ? Number(item.number) : undefined;
};

describe('task numbers never wedge a workspace', () => {
  test('under faults at any write of single and bulk creates, and claims left above the counter, every later create succeeds and numbers stay unique', {
    timeout: 900_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 2, maxLength: 4 }), async (ops) => {
        // Arrange: a workspace of its own, with a task 58 others wait on (two more reach its limit of 60).
        const ws = await createTestWorkspace(server);
        const call = caller(server, ws.member.token);
        const hub = (await call('task_create', { title: 'Hub' })) as { structuredContent: { key: string } };
        const hubKey = hub.structuredContent.key;
        await call('tasks_create', { tasks: Array.from({ length: 50 }, (_, i) => ({ title: `Waits ${i}`, blockedBy: [hubKey] })) });
        await call('tasks_create', { tasks: Array.from({ length: 8 }, (_, i) => ({ title: `Waits more ${i}`, blockedBy: [hubKey] })) });
        const planted = new Set<number>();
        // Each call its own arguments: the same call again within minutes is answered, not made again.
        let made = 0;
        const title = (what: string) => `${what} ${++made}`;

        for (const o of ops) {
          // Act: one call with its fault, or claims planted as an earlier version left them.
          if (o.kind === 'plant') {
            await plant(ws.workspaceId, o.above);
            planted.add((await counterOf(ws.workspaceId)) + o.above);
          } else {
            if (o.fault) proxy.failWritesFrom(o.fault.nth, o.fault.mode, 1);
            try {
              if (o.kind === 'single') await call('task_create', { title: title('One') });
              else
                await call('tasks_create', {
                  tasks: Array.from({ length: o.n }, (_, i) => ({
                    title: `${title('Bulk')} ${i}`,
                    ...(i < o.waitOnHub ? { blockedBy: [hubKey] } : {}),
                    ...(o.longNotes ? { notes: 'n'.repeat(90_000) } : {}),
                  })),
                });
            } catch {
              // A fault may answer 503; what matters is what it left.
            } finally {
              proxy.clearFault();
            }
          }

          // Assert: every claim at or below the counter (but those planted), each naming a task with that number, none twice.
          const [counter, claims] = await Promise.all([counterOf(ws.workspaceId), claimsOf(ws.workspaceId)]);
          const real = claims.filter((c) => !c.taskId.startsWith('left-behind-'));
          for (const c of real) {
            assert.ok(c.number <= counter, `claim ${c.number} above the counter ${counter}`);
            assert.equal(await taskNumber(ws.workspaceId, c.taskId), c.number, `task of claim ${c.number}`);
          }
          assert.equal(new Set(real.map((c) => c.taskId)).size, real.length, 'a task claimed two numbers');
          const after = (await call('task_create', { title: title('Right after') })) as {
            isError: boolean;
            structuredContent: { key: string };
          };
          assert.equal(after.isError, false, toolText(after as never));
          const n = Number(after.structuredContent.key.split('-')[1]);
          assert.ok(!planted.has(n) && claims.every((c) => c.number !== n), `number ${n} given twice`);
          assert.ok(n <= (await counterOf(ws.workspaceId)), 'the counter is below the number just given');
        }
      }),
      { numRuns: 10, seed: 38, endOnFailure: true },
    );
  });
});
