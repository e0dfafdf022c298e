import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Subtasks against the embedded DynamoDB: placing, moving, the levels and cycles, what task_get and
// the lists show, completing and deleting a parent, and undo.

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const text = toolText;
const m = () => caller(server, ws.member.token);
type Made = { taskId: string; key: string; version: number; parent?: string; status: string };
const create = async (title: string, extra: Record<string, unknown> = {}, call = m()): Promise<Made> => {
  const r = await call('task_create', { title, ...extra });
  assert.equal(r.isError, false, text(r));
  return r.structuredContent as Made;
};
const get = async (key: string, call = m()) => {
  const r = await call('task_get', { taskId: key });
  assert.equal(r.isError, false, text(r));
  return r.structuredContent as Made & { subtasks?: { key: string; title: string; status: string }[] };
};
const update = (key: string, version: number, fields: Record<string, unknown>, call = m()) =>
  call('task_update', { taskId: key, version, ...fields });

describe('placing subtasks', () => {
  test('a task created with a parent is listed by the parent, in order, with a rollup; its line says whose it is', async () => {
    // Arrange
    const parent = await create('Launch the website');
    // Act
    const a = await create('Write the copy', { parent: parent.key });
    const b = await create('Pick the photos', { parent: parent.key });
    await m()('task_complete', { taskId: a.key });
    // Assert
    const got = await get(parent.key);
    assert.deepEqual(
      got.subtasks?.map((s) => [s.key, s.title, s.status]),
      [
        [a.key, 'Write the copy', 'Done'],
        [b.key, 'Pick the photos', 'Todo'],
      ],
    );
    const shown = await m()('task_get', { taskId: parent.key });
    assert.match(text(shown), /Subtasks \(1 of 2 done\)/);
    assert.equal(a.parent, parent.key);
    const found = await m()('tasks_search', { text: 'photos' });
    assert.match(text(found), new RegExp(`sub of ${parent.key}`));
  });

  test('a subtask moves to another parent and back to the top level; each parent lists only its own', async () => {
    const p1 = await create('Parent one');
    const p2 = await create('Parent two');
    const c = await create('Child', { parent: p1.key });

    const moved = await update(c.key, c.version, { parent: p2.key });
    assert.equal(moved.isError, false, text(moved));

    assert.equal((await get(p1.key)).subtasks, undefined);
    assert.deepEqual(
      (await get(p2.key)).subtasks?.map((s) => s.key),
      [c.key],
    );
    const top = await update(c.key, (moved.structuredContent as Made).version, { parent: null });
    assert.equal(top.isError, false, text(top));
    assert.equal((await get(p2.key)).subtasks, undefined);
    assert.equal((await get(c.key)).parent, undefined);
  });

  test('three levels nest; a fourth is refused naming the levels, and nothing is written', async () => {
    const l1 = await create('Level one');
    const l2 = await create('Level two', { parent: l1.key });
    const l3 = await create('Level three', { parent: l2.key });

    const r = await m()('task_create', { title: 'Level four', parent: l3.key });

    assert.equal(r.isError, true);
    assert.match(text(r), /^parent: .*3 levels deep at most/);
    assert.equal((await get(l3.key)).subtasks, undefined);
  });

  test('a task with subtasks cannot go where its subtasks would sit too deep', async () => {
    const top = await create('Top');
    const mid = await create('Mid', { parent: top.key });
    const other = await create('Other');
    await create('Under other', { parent: other.key });

    // other has a subtask: below mid (level 2) it would be level 3 and its subtask level 4.
    const r = await update(other.key, other.version, { parent: mid.key });

    assert.equal(r.isError, true);
    assert.match(text(r), /has subtasks of its own/);
    assert.equal((await get(other.key)).parent, undefined);
  });

  test('a task cannot become its own ancestor: the cycle is refused naming the chain', async () => {
    const a = await create('Cycle A');
    const b = await create('Cycle B', { parent: a.key });

    const self = await update(a.key, a.version, { parent: a.key });
    const loop = await update(a.key, a.version, { parent: b.key });

    assert.equal(self.isError, true);
    assert.match(text(self), /own parent/);
    assert.equal(loop.isError, true);
    assert.match(text(loop), new RegExp(`below itself \\(${a.key} → ${b.key} → ${a.key}`));
  });

  test('a parent that is deleted, unknown, or of another workspace is refused naming the argument', async () => {
    const gone = await create('Gone');
    await m()('task_delete', { taskId: gone.key });
    const other = await createTestWorkspace(server);
    const theirs = await create('Theirs', {}, caller(server, other.member.token));

    const deleted = await m()('task_create', { title: 'x', parent: gone.key });
    const unknown = await m()('task_create', { title: 'x', parent: 'TEST-99999' });
    const foreign = await m()('task_create', { title: 'x', parent: theirs.taskId });

    assert.match(text(deleted), /^parent: task .* was deleted/);
    assert.match(text(unknown), /^parent: no task is TEST-99999/);
    assert.match(text(foreign), /^parent: no task is/);
  });
});

describe('many at once', () => {
  test('tasks_create makes a parent, its subtasks and theirs in one call (@n names an earlier item)', async () => {
    const r = await m()('tasks_create', {
      tasks: [
        { title: 'Plan the offsite' },
        { title: 'Book the venue', parent: '@1' },
        { title: 'Call three venues', parent: '@2' },
        { title: 'Send invites', parent: '@1' },
      ],
    });

    assert.equal(r.isError, false, text(r));
    const items = (r.structuredContent as { items: { key: string; status: string }[] }).items;
    assert.deepEqual(
      items.map((i) => i.status),
      ['created', 'created', 'created', 'created'],
    );
    const [p, venue, call3, invites] = items.map((i) => i.key);
    assert.deepEqual(
      (await get(p!)).subtasks?.map((s) => s.key),
      [venue, invites],
    );
    assert.deepEqual(
      (await get(venue!)).subtasks?.map((s) => s.key),
      [call3],
    );
    assert.equal((await get(call3!)).parent, venue);
  });

  test('a fourth level through earlier items of the same call is refused, and only that item', async () => {
    const r = await m()('tasks_create', {
      tasks: [{ title: 'L1' }, { title: 'L2', parent: '@1' }, { title: 'L3', parent: '@2' }, { title: 'L4', parent: '@3' }],
    });
    const items = (r.structuredContent as { items: { status: string; reason?: string }[] }).items;
    assert.deepEqual(
      items.map((i) => i.status),
      ['created', 'created', 'created', 'refused'],
    );
    assert.match(items[3]!.reason!, /parent: .*3 levels deep at most/);
  });
});

describe('a parent with its subtasks', () => {
  const tree = async (title: string) => {
    const p = await create(title);
    const a = await create(`${title}: first`, { parent: p.key });
    const b = await create(`${title}: second`, { parent: p.key });
    const c = await create(`${title}: under first`, { parent: a.key });
    return { p, a, b, c };
  };

  test('completing a parent with open subtasks completes it only and names them', async () => {
    const { p, a, b } = await tree('Only the parent');

    const r = await m()('task_complete', { taskId: p.key });

    assert.equal(r.isError, false, text(r));
    assert.deepEqual((r.structuredContent as { openSubtasks?: string[] }).openSubtasks, [a.key, b.key]);
    assert.match(text(r), /Subtasks still open: .*withSubtasks: true/);
    assert.equal((await get(a.key)).status, 'Todo');
  });

  test('withSubtasks completes the whole subtree in one write; undoing the call reopens them all', async () => {
    const { p, a, b, c } = await tree('All of it');

    const r = await m()('task_complete', { taskId: p.key, withSubtasks: true });

    assert.equal(r.isError, false, text(r));
    const out = r.structuredContent as { completedSubtasks?: string[]; activityId: string };
    assert.deepEqual(new Set(out.completedSubtasks), new Set([a.key, b.key, c.key]));
    for (const k of [p.key, a.key, b.key, c.key]) assert.equal((await get(k)).status, 'Done', k);
    assert.deepEqual(
      (await get(p.key)).subtasks?.map((s) => s.status),
      ['Done', 'Done'],
    );

    const undo = await m()('change_undo', { activityId: out.activityId });
    assert.equal(undo.isError, false, text(undo));
    for (const k of [p.key, a.key, b.key, c.key]) assert.equal((await get(k)).status, 'Todo', k);
  });

  test('deleting a parent deletes its subtree in one change naming how many, and undo restores it all', async () => {
    const { p, a, b, c } = await tree('Delete me');
    await m()('comment_add', { taskId: c.key, body: 'a note on the deepest' });

    const r = await m()('task_delete', { taskId: p.key });

    assert.equal(r.isError, false, text(r));
    const out = r.structuredContent as { subtasks?: number; activityId: string };
    assert.equal(out.subtasks, 3);
    assert.match(text(r), /with its 3 subtask\(s\)/);
    for (const k of [p.key, a.key, b.key, c.key]) assert.equal((await m()('task_get', { taskId: k })).isError, true, k);

    const undo = await m()('change_undo', { activityId: out.activityId });
    assert.equal(undo.isError, false, text(undo));
    assert.deepEqual(
      (await get(p.key)).subtasks?.map((s) => s.key),
      [a.key, b.key],
    );
    assert.deepEqual(
      (await get(a.key)).subtasks?.map((s) => s.key),
      [c.key],
    );
    const comments = await m()('comments_list', { taskId: c.key });
    assert.match(text(comments), /a note on the deepest/);
  });

  test('a subtask of a deleted parent is restored only after its parent', async () => {
    const { p, b } = await tree('Order of undo');
    const del = await m()('task_delete', { taskId: p.key });
    const callId = (del.structuredContent as { activityId: string }).activityId;
    // The records of the call: the parent's first, then each subtask's.
    const items = await server.app.services.activity.itemsOfCall({ workspaceId: ws.workspaceId, layout: 2 }, callId);
    const bRecord = items.find((i) => i.taskNumber === Number(b.key.split('-')[1]))!;

    const early = await m()('change_undo', { activityId: bRecord.activityId });

    assert.equal(early.isError, true);
    assert.match(text(early), new RegExp(`subtask of ${p.key}, which was deleted .*restore ${p.key} first`));
  });

  test('a subtask deleted alone leaves its parent, and its undo puts it back under the parent', async () => {
    const { p, b } = await tree('One goes');

    const del = await m()('task_delete', { taskId: b.key });
    assert.equal(del.isError, false, text(del));
    assert.equal((await get(p.key)).subtasks?.length, 1);

    const undo = await m()('change_undo', { activityId: (del.structuredContent as { activityId: string }).activityId });
    assert.equal(undo.isError, false, text(undo));
    assert.equal((await get(p.key)).subtasks?.length, 2);
  });

  test('subtasks waiting on one another are deleted and restored together, their links intact', async () => {
    const p = await create('Linked tree');
    const a = await create('Linked first', { parent: p.key });
    const b = await create('Linked second', { parent: p.key, blockedBy: [a.key] });

    const del = await m()('task_delete', { taskId: p.key });
    assert.equal(del.isError, false, text(del));
    const undo = await m()('change_undo', { activityId: (del.structuredContent as { activityId: string }).activityId });
    assert.equal(undo.isError, false, text(undo));

    const got = (await get(b.key)) as Made & { blockedBy?: { key: string; open: boolean; deleted?: true }[] };
    assert.deepEqual(got.blockedBy, [{ key: a.key, taskId: a.taskId, open: true }]);
  });

  test('undoing the creation of a task that has gained subtasks is refused, and nothing changes', async () => {
    const p = await create('Made, then a parent');
    await create('Its subtask', { parent: p.key });
    const records = await m()('activity_list', { task: p.key });
    const made = (records.structuredContent as { entries: { activityId: string; action: string }[] }).entries.find(
      (x) => x.action === 'created',
    )!;

    const undo = await m()('change_undo', { activityId: made.activityId });

    assert.equal(undo.isError, true);
    assert.match(text(undo), /has 1 subtask\(s\)/);
    assert.equal((await get(p.key)).subtasks?.length, 1);
  });

  test('undoing a move puts the task back under its old parent, with the rules checked again', async () => {
    const p1 = await create('Old parent');
    const p2 = await create('New parent');
    const c = await create('Moving child', { parent: p1.key });
    const moved = await update(c.key, c.version, { parent: p2.key });

    const undo = await m()('change_undo', { activityId: (moved.structuredContent as { activityId: string }).activityId });

    assert.equal(undo.isError, false, text(undo));
    assert.equal((await get(c.key)).parent, p1.key);
    assert.equal((await get(p2.key)).subtasks, undefined);
  });
});

describe('finding subtasks', () => {
  test('tasks_search parent lists the direct subtasks; topLevel leaves subtasks out', async () => {
    const p = await create('Searchable parent zebra');
    const a = await create('Searchable child zebra', { parent: p.key });
    await create('Grandchild zebra', { parent: a.key });

    const direct = await m()('tasks_search', { parent: p.key });
    const top = await m()('tasks_search', { text: 'zebra', topLevel: true });
    const subs = await m()('tasks_search', { text: 'zebra', topLevel: false });

    const keys = (r: Awaited<ReturnType<ReturnType<typeof m>>>) =>
      (r.structuredContent as { tasks: { key: string }[] }).tasks.map((t) => t.key);
    assert.deepEqual(keys(direct), [a.key]);
    assert.deepEqual(keys(top), [p.key]);
    assert.equal(keys(subs).length, 2);
  });
});

describe('concurrent calls', () => {
  test('a move deeper and a new subtask of the moved task at the same moment never make a fourth level', async () => {
    for (let round = 0; round < 8; round++) {
      // Arrange: P at level 2 (below L1); T a leaf at the top, about to go below P (level 3) while a subtask is made under it.
      const l1 = await create(`Race level one ${round}`);
      const p = await create(`Race level two ${round}`, { parent: l1.key });
      const t = await create(`Race leaf ${round}`);

      // Act
      const [moved, child] = await Promise.all([
        update(t.key, t.version, { parent: p.key }),
        m()('task_create', { title: `Race child ${round}`, parent: t.key }),
      ]);

      // Assert: not both; and the tree holds three levels at most.
      assert.ok(moved.isError || child.isError, `both landed in round ${round}: ${text(moved)} / ${text(child)}`);
      const got = await get(t.key);
      assert.ok(!(got.parent === p.key && got.subtasks?.length), `a fourth level in round ${round}`);
    }
  });

  test('twenty subtasks made at once under one parent are all counted and listed', async () => {
    const p = await create('Busy parent');

    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => create(`Busy child ${i}`, { parent: p.key })));

    assert.equal((await get(p.key)).subtasks?.length, 20);
    const task = await server.app.services.tasks.get(ws.workspaceId, p.taskId);
    assert.equal(task?.subtaskCount, 20);
    assert.equal(made.length, 20);
  });
});

/**
 * Runs `competing` once, right before the next commit whose actions mention `marker`: the other call
 * lands between this call's read and its write, the one interleaving a timing race rarely hits.
 */
const beforeCommitMentioning = (marker: string, competing: () => Promise<unknown>) => {
  const services = writesOf(server.app.services) as { commit: (ops: readonly unknown[]) => Promise<void> };
  const commit = services.commit;
  services.commit = async (ops) => {
    if (JSON.stringify(ops.map((op) => (op as { item: unknown }).item)).includes(marker)) {
      services.commit = commit;
      await competing();
    }
    return commit(ops);
  };
  return () => {
    services.commit = commit;
  };
};

/** The counts and entries every live parent keeps, read from the store: each equals its live subtasks. */
const countsOf = async (...made: Made[]) => {
  const out: Record<string, number> = {};
  for (const t of made) {
    const task = await server.app.services.tasks.get(ws.workspaceId, t.taskId);
    out[t.key] = task?.subtaskCount ?? 0;
  }
  return out;
};

describe('moves within one tree (red-team findings)', () => {
  test('a subtask moved under its sibling: the old parent counts one fewer, the sibling one more', async () => {
    // Arrange
    const p = await create('Sibling parent');
    const a = await create('Sibling A', { parent: p.key });
    const b = await create('Sibling B', { parent: p.key });

    // Act
    const moved = await update(a.key, a.version, { parent: b.key });

    // Assert
    assert.equal(moved.isError, false, text(moved));
    assert.deepEqual(await countsOf(p, a, b), { [p.key]: 1, [a.key]: 0, [b.key]: 1 });
    assert.deepEqual(
      (await get(p.key)).subtasks?.map((s) => s.key),
      [b.key],
    );
    assert.deepEqual(
      (await get(b.key)).subtasks?.map((s) => s.key),
      [a.key],
    );
  });

  test('the same move through tasks_update lands the same way', async () => {
    const p = await create('Bulk sibling parent');
    const a = await create('Bulk sibling A', { parent: p.key });
    const b = await create('Bulk sibling B', { parent: p.key });

    const moved = await m()('tasks_update', { tasks: [{ taskId: a.key, parent: b.key }] });

    assert.equal(moved.isError, false, text(moved));
    assert.deepEqual(await countsOf(p, b), { [p.key]: 1, [b.key]: 1 });
    assert.equal((await get(a.key)).parent, b.key);
  });

  test('undoing a move up puts the subtask back one level down, counts right', async () => {
    // Arrange: P > A > C, then C moved up beside A.
    const p = await create('Up parent');
    const a = await create('Up middle', { parent: p.key });
    const c = await create('Up leaf', { parent: a.key });
    const up = await update(c.key, c.version, { parent: p.key });
    assert.equal(up.isError, false, text(up));

    // Act
    const undo = await m()('change_undo', { activityId: (up.structuredContent as { activityId: string }).activityId });

    // Assert
    assert.equal(undo.isError, false, text(undo));
    assert.equal((await get(c.key)).parent, a.key);
    assert.deepEqual(await countsOf(p, a), { [p.key]: 1, [a.key]: 1 });
  });

  test('a parent waiting on its subtask: deleting the subtask alone frees the parent and leaves it counted right', async () => {
    const p = await create('Waiting parent');
    const a = await create('Awaited subtask', { parent: p.key });
    const waits = await update(p.key, (await get(p.key)).version, { blockedBy: [a.key] });
    assert.equal(waits.isError, false, text(waits));

    const del = await m()('task_delete', { taskId: a.key });

    assert.equal(del.isError, false, text(del));
    assert.deepEqual(await countsOf(p), { [p.key]: 0 });
    assert.equal((await get(p.key)).subtasks, undefined);
    const undo = await m()('change_undo', { activityId: (del.structuredContent as { activityId: string }).activityId });
    assert.equal(undo.isError, false, text(undo));
    assert.deepEqual(await countsOf(p), { [p.key]: 1 });
  });

  test('a subtask made waiting on its own parent is one write: the parent counts it and lists it as waiting', async () => {
    const p = await create('Parent and blocker');

    const r = await m()('task_create', { title: 'Child that waits on it', parent: p.key, blockedBy: [p.key] });

    assert.equal(r.isError, false, text(r));
    const child = r.structuredContent as Made & { blockedBy?: { key: string }[] };
    assert.deepEqual(
      child.blockedBy?.map((x) => x.key),
      [p.key],
    );
    assert.deepEqual(await countsOf(p), { [p.key]: 1 });
    assert.deepEqual(
      (await get(p.key)).subtasks?.map((s) => s.key),
      [child.key],
    );
  });

  test('a task completed and moved under the task waiting on it in one tasks_update item', async () => {
    const a = await create('Blocker to finish');
    const p = await create('Waits on the blocker', { blockedBy: [a.key] });

    const r = await m()('tasks_update', { tasks: [{ taskId: a.key, status: 'done', parent: p.key }] });

    assert.equal(r.isError, false, text(r));
    const got = await get(a.key);
    assert.equal(got.status, 'Done');
    assert.equal(got.parent, p.key);
    assert.deepEqual(
      (await get(p.key)).subtasks?.map((s) => [s.key, s.status]),
      [[a.key, 'Done']],
    );
  });
});

describe('calls between the read and the write (red-team findings)', () => {
  test('a subtask made under a parent while the parent is being deleted: never a live subtask under a deleted parent', async () => {
    // Arrange
    const p = await create('Deleted while busy');
    await create('Known subtask', { parent: p.key });
    let late: Awaited<ReturnType<ReturnType<typeof m>>> | undefined;
    const restore = beforeCommitMentioning('deletedAt', async () => {
      late = await m()('task_create', { title: 'Late subtask', parent: p.key });
    });

    // Act
    const del = await m()('task_delete', { taskId: p.key }).finally(restore);

    // Assert: the late subtask landed (it came first), so the delete that read one subtask is refused.
    assert.ok(late);
    assert.equal(late.isError, false, text(late));
    assert.equal(del.isError, true, text(del));
    assert.match(text(del), /changed|again/i);
    const lateKey = (late.structuredContent as Made).key;
    assert.equal((await get(lateKey)).parent, p.key);
    assert.deepEqual(await countsOf(p), { [p.key]: 2 });
  });

  test('a subtask moved deeper while a subtask is made below its own subtask: not both', async () => {
    // Arrange: T at the top; S > C; S about to go below T (C at level 3) as G is made under C (level 4).
    const t = await create('Deeper target');
    const s = await create('Moving down');
    const c = await create('Moving down: its subtask', { parent: s.key });
    let grand: Awaited<ReturnType<ReturnType<typeof m>>> | undefined;
    const restore = beforeCommitMentioning(t.taskId, async () => {
      grand = await m()('task_create', { title: 'Grandchild', parent: c.key });
    });

    // Act
    const moved = await update(s.key, s.version, { parent: t.key }).finally(restore);

    // Assert
    assert.equal(grand?.isError, false, grand && text(grand));
    assert.equal(moved.isError, true, text(moved));
    assert.equal((await get(s.key)).parent, undefined);
  });
});

describe('who may take a tree (red-team findings)', () => {
  test('completing a parent already done, withSubtasks, answers for the parent and completes the rest', async () => {
    const p = await create('Done before its subtasks');
    const a = await create('Still open 1', { parent: p.key });
    const b = await create('Still open 2', { parent: p.key });
    await m()('task_complete', { taskId: p.key });

    const r = await m()('task_complete', { taskId: p.key, withSubtasks: true });

    assert.equal(r.isError, false, text(r));
    const out = r.structuredContent as Made & { completedSubtasks?: string[] };
    assert.equal(out.key, p.key);
    assert.deepEqual(new Set(out.completedSubtasks), new Set([a.key, b.key]));
    assert.equal((await get(a.key)).status, 'Done');
  });

  test("a member deleting their own parent that holds someone else's subtasks is refused before any confirmation", async () => {
    const admin = caller(server, ws.admin.token);
    const p = await create('Mine with theirs');
    const theirs = await create("An admin's subtask", { parent: p.key }, admin);

    const r = await m()('task_delete', { taskId: p.key });

    assert.equal(r.isError, true, text(r));
    assert.match(text(r), new RegExp(theirs.key));
    assert.doesNotMatch(text(r), /confirm/i);
    assert.equal((await get(p.key)).subtasks?.length, 1);
  });
});
