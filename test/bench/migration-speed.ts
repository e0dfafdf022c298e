import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { createTableInput } from '../../lambda/platform/tables.js';
import { migrateWorkspace } from '../../lambda/workspace/admin/migrate.js';

/**
 * How long `npm run admin -- migrate` takes per task: the layout-1 workspace of
 * test/fixtures/layout-1-workspace.json (made by that version's own tools) grown to `size` tasks by
 * copies of its unlinked tasks, each with its number's claim and one activity record, then moved
 * on the embedded store with no drain waits (the operator's command waits 20 s twice besides).
 */
export const measureMigration = async (size: number): Promise<{ size: number; seconds: number; tasksPerSecond: number }> => {
  const fixture = JSON.parse(readFileSync(new URL('../fixtures/layout-1-workspace.json', import.meta.url), 'utf8'), (_k, v) =>
    v && typeof v === 'object' && Array.isArray(v.$set) ? new Set(v.$set) : v,
  ) as { workspaceId: string; items: Record<string, unknown>[] };
  const ws = fixture.workspaceId;
  const dynamo = await startEmbeddedDynamo(':memory:');
  const db = createDocumentClient({ endpoint: dynamo.endpoint });
  try {
    const table = 'doers-workspace';
    await (db as unknown as DynamoDBClient).send(new CreateTableCommand(createTableInput('workspace', table)));
    const plain = fixture.items.filter((i) => String(i.sk).startsWith('TASK#') && !i.blockedBy && !i.blocks && !i.deletedAt);
    const record = fixture.items.find((i) => String(i.sk).startsWith('ACT#') && i.kind === 'task')!;
    const first = Number(fixture.items.find((i) => i.sk === 'META')!.taskCounter) + 1;
    const copies: Record<string, unknown>[] = [];
    for (let n = 0; n < size; n++) {
      const template = plain[n % plain.length]!;
      const taskId = randomUUID();
      const number = first + n;
      const swap = (v: unknown) => (typeof v === 'string' ? v.replaceAll(String(template.taskId), taskId) : v);
      copies.push(Object.fromEntries(Object.entries({ ...template, number }).map(([k, v]) => [k, swap(v)])));
      copies.push({ pk: `WS#${ws}`, sk: `TASKNO#${number}`, taskId });
      const activityId = `act_${String(n).padStart(16, '0')}`;
      copies.push({ ...record, sk: `ACT#${activityId}`, gsi1sk: activityId, gsi2sk: activityId, activityId, targetId: taskId, taskId });
    }
    const items = [...fixture.items.map((i) => (i.sk === 'META' ? { ...i, taskCounter: first + size - 1 } : i)), ...copies];
    for (let i = 0; i < items.length; i += 25)
      await db.send(new BatchWriteCommand({ RequestItems: { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
    const started = performance.now();
    await migrateWorkspace(db, table, ws, { drainMs: 0 });
    const seconds = (performance.now() - started) / 1000;
    const tasks = size + fixture.items.filter((i) => String(i.sk).startsWith('TASK#')).length;
    return { size: tasks, seconds: Math.round(seconds * 10) / 10, tasksPerSecond: Math.round(tasks / seconds) };
  } finally {
    db.destroy();
    await dynamo.close();
  }
};
