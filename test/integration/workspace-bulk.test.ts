import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { startTestServer } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';
import { caller, createTestWorkspace, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// tasks_create and tasks_update against the embedded DynamoDB: each item done or refused on its
// own, in order, with its record; one call is one call for the limits and the audit line.

let server: LocalServer;
let ws: TestWorkspace;
const observer = new RecordingObserver();

before(async () => {
  server = await startTestServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' }, { observer });
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const text = toolText;
const m = () => caller(server, ws.member.token);

describe('tasks_create', () => {
  test('creates every valid item and refuses the others by position, naming the field; the text starts with the summary', async () => {
    // Arrange
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);

    // Act
    const r = await call('tasks_create', {
      tasks: [
        { title: 'Write the intro' },
        { title: 'Draw the diagram', priority: 'P2', assignee: 'me' },
        { title: 'Check the dates', dueDate: '2026-02-30' },
        { title: 'Proofread', dueTime: '10:00' },
        { title: 'Publish', dueDate: '2026-03-02' },
      ],
    });

    // Assert
    assert.equal(r.isError, false, text(r));
    const items = r.structuredContent.items;
    assert.deepEqual(
      items.map((i: { item: number; status: string; key?: string }) => [i.item, i.status, i.key]),
      [
        [1, 'created', 'TEST-1'],
        [2, 'created', 'TEST-2'],
        [3, 'refused', undefined],
        [4, 'refused', undefined],
        [5, 'created', 'TEST-3'],
      ],
    );
    assert.match(items[2].reason, /dueDate/);
    // The position is the item's own field: the reason does not repeat it ("item 4 item 4" in the text).
    assert.match(items[3].reason, /^dueTime: needs a dueDate/);
    assert.match(text(r), /^Created 3 of 5; 2 refused: item 3 dueDate/);
    assert.match(text(r), /\n- 4: refused: dueTime: needs a dueDate/);
    assert.doesNotMatch(text(r), /item 4 item 4|item \d+ item \d+/);
    assert.equal((await call('tasks_search', {})).structuredContent.returned, 3);
  });

  test('more than 50 items is refused as a whole, naming the limit; nothing is created', async () => {
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);

    const r = await call('tasks_create', { tasks: Array.from({ length: 51 }, (_, i) => ({ title: `T${i}` })) });

    assert.equal(r.isError, true);
    assert.match(text(r), /tasks: .*50/);
    assert.equal((await call('tasks_search', {})).structuredContent.returned, 0);
  });

  test('50 tasks in one call get 50 numbers in input order; the audit line counts one call of 50 items', async () => {
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const audited = observer.toolCalls.length;

    const r = await call('tasks_create', { tasks: Array.from({ length: 50 }, (_, i) => ({ title: `Item ${i + 1}` })) });

    assert.deepEqual(
      r.structuredContent.items.map((i: { key: string }) => i.key),
      Array.from({ length: 50 }, (_, i) => `TEST-${i + 1}`),
    );
    const event = observer.toolCalls.slice(audited).find((e) => e.tool === 'tasks_create');
    assert.equal(event?.items, 50);
    assert.equal(event?.outcome, 'ok');
  });
});

describe('tasks_update', () => {
  test('each entry on its own: changed, stale, unknown, duplicated; completion and reopening too', async () => {
    // Arrange
    const made = (await m()('tasks_create', { tasks: [{ title: 'A' }, { title: 'B' }, { title: 'C' }, { title: 'D' }] })).structuredContent
      .items as { key: string }[];
    const [a, b, c, d] = made.map((x) => x.key);
    await m()('task_update', { taskId: b, version: 1, title: 'B moved on' });

    // Act
    const r = await m()('tasks_update', {
      tasks: [
        { taskId: a, dueDate: '2026-04-01' },
        { taskId: b, version: 1, priority: 'P1' },
        { taskId: 'TEST-9999', title: 'Nobody' },
        { taskId: c, status: 'done' },
        { taskId: d, title: 'Once' },
        { taskId: d, title: 'Twice' },
      ],
    });

    // Assert
    assert.equal(r.isError, false, text(r));
    const items = r.structuredContent.items;
    assert.deepEqual(
      items.map((i: { status: string }) => i.status),
      ['updated', 'refused', 'refused', 'updated', 'refused', 'refused'],
    );
    assert.match(items[1].reason, new RegExp(`^version: Conflict: ${b} is at version 2, not 1`));
    assert.match(items[2].reason, /no task is TEST-9999/);
    assert.match(items[4].reason, /items 5 and 6 both name/);
    assert.match(text(r), /^Changed 2 of 6; 4 refused: item 2 version/);
    assert.equal((await m()('task_get', { taskId: a })).structuredContent.dueDate, '2026-04-01');
    assert.equal((await m()('task_get', { taskId: c })).structuredContent.status, 'Done');
    assert.equal((await m()('task_get', { taskId: d })).structuredContent.title, 'D', 'neither duplicate was applied');
  });

  test('every item has its record, and change_undo of the call undoes each item that still can', async () => {
    // Arrange
    const made = (await m()('tasks_create', { tasks: [{ title: 'One' }, { title: 'Two' }, { title: 'Three' }] })).structuredContent
      .items as { key: string }[];
    const changed = await m()('tasks_update', { tasks: made.map((x) => ({ taskId: x.key, priority: 'P1' })) });
    // Someone moves the third on: its undo is refused, the others go through.
    await m()('task_update', { taskId: made[2]!.key, version: 2, title: 'Three, later' });

    // Act
    const undone = await m()('change_undo', { activityId: changed.structuredContent.activityId });
    const priorities = await Promise.all(made.map(async (x) => (await m()('task_get', { taskId: x.key })).structuredContent.priority));

    // Assert
    assert.equal(changed.structuredContent.items[0].activityId, `${changed.structuredContent.activityId}.01`);
    assert.equal(undone.isError, false, text(undone));
    assert.match(undone.structuredContent.summary, /^Undid 2 of 3 change\(s\) of act_/);
    assert.deepEqual(
      undone.structuredContent.items.map((i: { activityId: string; undid: boolean }) => [i.activityId.slice(-3), i.undid]),
      [
        ['.01', true],
        ['.02', true],
        ['.03', false],
      ],
    );
    assert.match(undone.structuredContent.items[2].reason, /Conflict/);
    assert.match(text(undone), /not undone act_\w+\.03: Conflict/);
    assert.deepEqual(priorities, ['P4', 'P4', 'P1']);
  });
});
