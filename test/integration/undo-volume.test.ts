import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Undoing one bulk call of 45 changes with long notes, over as many calls as the write ceiling needs.
// A volume test: `npm test` runs it, `npm run test:quick` leaves it out (docs/testing.md, "The fast loop").

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const m = () => caller(server, ws.member.token);
const text = toolText;

describe('undoing a bulk call reaches every one of its records', () => {
  test('45 changes with long notes: every one is undone, over as many calls as the write ceiling needs, each answer naming what it undid and what it left', {
    timeout: 120_000,
  }, async () => {
    // Arrange: 45 tasks, their notes changed in one call; each change's record carries ~60 KB.
    const notes = '日本語のメモ'.repeat(1_100);
    const made = (await m()('tasks_create', { tasks: Array.from({ length: 45 }, (_, i) => ({ title: `Long ${i}` })) })).structuredContent
      .items;
    const changed = await m()('tasks_update', { tasks: made.map((i: { key: string }) => ({ taskId: i.key, notes })) });
    assert.equal(changed.structuredContent.items.filter((i: { status: string }) => i.status === 'updated').length, 45, text(changed));

    // Act: undo the call until nothing is left.
    const answers = [];
    for (let round = 0; round < 45; round++) {
      const r = await m()('change_undo', { activityId: changed.structuredContent.activityId });
      answers.push(r);
      if (
        r.structuredContent.items.every(
          (i: { undid: boolean; reason?: string }) => i.undid || !/left for the next call/.test(i.reason ?? ''),
        )
      )
        break;
    }
    const notesNow = await Promise.all(
      made.map(async (i: { key: string }) => (await m()('task_get', { taskId: i.key })).structuredContent.notes),
    );

    // Assert: every record was reached; no answer counted what it did not do.
    assert.deepEqual(
      notesNow,
      made.map(() => undefined),
    );
    for (const r of answers) {
      const items = r.structuredContent.items as { undid: boolean }[];
      assert.equal(items.length, 45);
      assert.match(r.structuredContent.summary, new RegExp(`^Undid ${items.filter((i) => i.undid).length} of 45 `));
    }
  });
});
