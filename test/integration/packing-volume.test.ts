import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { MAX_TRANSACTION_BYTES } from '../../lambda/platform/transact.js';
import { changeTasks, createTasks } from '../../lambda/workspace/tasks/task-writer.js';
import { type DynamoProxy, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { createTestWorkspace, type TestWorkspace, writeContextOf } from '../helpers/workspace-fixtures.js';

// The task writer packing changes into transactions by bytes, with more than 4 MB of notes in one
// call. A volume test: `npm test` runs it, `npm run test:quick` leaves it out (docs/testing.md, "The
// fast loop"); the packing by actions is in test/integration/domain-writers.test.ts.

let server: LocalServer;
let proxy: DynamoProxy;
let close: () => Promise<void>;
let ws: TestWorkspace;

before(async () => {
  ({ server, proxy, close } = await startProxiedServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' }));
  ws = await createTestWorkspace(server);
});
after(() => close());

const member = () => writeContextOf(server, ws.workspaceId, ws.member);

const transactionsDuring = async (run: () => Promise<unknown>): Promise<number> => {
  const from = proxy.operations.length;
  await run();
  return proxy.operations.slice(from).filter((op) => op === 'TransactWriteItems').length;
};

describe('packing by bytes', () => {
  test('changes of long notes are packed by bytes: none is refused for passing 4 MB, and no transaction passes it', async () => {
    // The longest notes (10,000 characters, 30 KB of UTF-8); a change's record holds the notes before
    // and after, and the task before: about 120 KB an item, 32 of them more than one transaction holds.
    const before = '長いメモ'.repeat(2_500);
    const after = '新しいメモ'.repeat(2_000);
    const created = await createTasks(
      await member(),
      Array.from({ length: 32 }, (_, i) => ({ fields: { title: `Long ${i}`, notes: before, priority: 'P4' as const } })),
    );
    const tasks = created.map((o) => (o.ok && 'written' in o ? o.written.task : assert.fail(JSON.stringify(o))));

    const outcomes: Awaited<ReturnType<typeof changeTasks>> = [];
    const n = await transactionsDuring(async () => {
      outcomes.push(
        ...(await changeTasks(
          await member(),
          tasks.map((t) => ({ before: t, patch: { notes: after } })),
        )),
      );
    });

    assert.equal(outcomes.filter((o) => o.ok).length, 32, JSON.stringify(outcomes.find((o) => !o.ok)));
    // The notes after in the task (and in its search text), before and after in the record, and the task before in it.
    const perItem = 3 * Buffer.byteLength(after) + 2 * Buffer.byteLength(before);
    assert.ok(32 * perItem > MAX_TRANSACTION_BYTES, 'the call is larger than one transaction holds');
    assert.ok(n >= 2, `${n} transactions`);
  });
});
