import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { addDays, dateInZone } from '../../lambda/workspace/model/time.js';
import type { Task } from '../../lambda/workspace/model/types.js';
import { type CreateItem, createTasks } from '../../lambda/workspace/tasks/task-writer.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, toolText, writeContextOf } from '../helpers/workspace-fixtures.js';

// tasks_search paged to the end of a workspace of 1,000 tasks. A volume test: `npm test` runs it,
// `npm run test:quick` leaves it out (docs/testing.md, "The fast loop").

let server: LocalServer;
let today: string;
const as = (token: string) => caller(server, token);
const text = toolText;

before(async () => {
  server = await startOwnWorkspacesServer();
  today = dateInZone(new Date(), 'UTC');
});
after(() => server.close());

describe('paging a large workspace', () => {
  test('paging 1,000 tasks to the end returns every task exactly once, in order', async () => {
    const big = await createTestWorkspace(server);
    const now = new Date();
    const items: CreateItem[] = Array.from({ length: 1000 }, (_, i) => {
      const done = i % 4 === 0;
      return {
        fields: {
          title: `Task ${i}`,
          priority: (['P1', 'P2', 'P3', 'P4'] as const)[i % 4]!,
          ...(i % 7 === 0 ? {} : { dueDate: addDays(today, (i % 40) - 20) }),
          labels: i % 3 === 0 ? ['three'] : [],
          ...(done ? { completed: { at: new Date(now.getTime() - i * 60_000).toISOString(), by: big.owner.userId } } : {}),
        },
      };
    });
    const ctx = await writeContextOf(server, big.workspaceId, big.owner);
    const tasks: Task[] = [];
    for (let i = 0; i < items.length; i += 50) {
      for (const o of await createTasks(ctx, items.slice(i, i + 50))) {
        assert.ok(o.ok && 'written' in o);
        tasks.push(o.written.task);
      }
    }

    const collect = async (args: Record<string, unknown>) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const r = await as(big.viewer.token)('tasks_search', { ...args, ...(cursor ? { cursor } : {}) });
        assert.equal(r.isError, false, text(r));
        assert.equal(r.structuredContent.returned, r.structuredContent.tasks.length);
        seen.push(...r.structuredContent.tasks.map((t: { taskId: string }) => t.taskId));
        cursor = r.structuredContent.nextCursor;
        assert.equal(r.structuredContent.truncated, cursor !== undefined);
        pages++;
      } while (cursor);
      return { seen, pages };
    };

    const all = await collect({ status: 'any', limit: 100 });
    const labelled = await collect({ status: 'any', label: 'three', limit: 37 });

    assert.equal(all.seen.length, 1000);
    assert.equal(new Set(all.seen).size, 1000);
    assert.deepEqual(new Set(all.seen), new Set(tasks.map((t) => t.taskId)));
    assert.equal(all.pages, 10);
    const byId = new Map(tasks.map((t) => [t.taskId, t]));
    const firstDone = all.seen.findIndex((id) => byId.get(id)!.status === 'done');
    assert.equal(firstDone, 750, 'the 750 open tasks come first, then the 250 done ones');
    const openDue = all.seen.slice(0, 750).map((id) => byId.get(id)!.dueDate ?? '~');
    assert.deepEqual(openDue, [...openDue].sort(), 'open tasks by due date, undated last');
    const expectedLabelled = tasks.filter((t) => t.labels.includes('three')).map((t) => t.taskId);
    assert.equal(labelled.seen.length, expectedLabelled.length);
    assert.deepEqual(new Set(labelled.seen), new Set(expectedLabelled));
  });
});
