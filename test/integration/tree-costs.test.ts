import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { addComment } from '../../lambda/workspace/comments/comment-writer.js';
import type { Task } from '../../lambda/workspace/model/types.js';
import { createTasks } from '../../lambda/workspace/tasks/task-writer.js';
import { type CapacityProxy, startCapacityProxy } from '../helpers/capacity-proxy.js';
import { MODERN, modernMeta, post, startTestServer, urlOf } from '../helpers/local.js';
import { createTestWorkspace, type TestWorkspace, writeContextOf } from '../helpers/workspace-fixtures.js';

// A tree's delete and its completion with its subtasks decide from the counts the tree keeps before
// they read it: a tree too big for one write is refused before any subtask is read, and what is read
// is the task items, never their notes. An earlier version read every subtask whole (4.2 MB of
// notes for 135 subtasks) and every one's comments, then refused the write as too big. Requests and
// read units as the store reports them (the embedded DynamoDB behind a proxy that asks each request
// what it consumed).

let dynamo: Awaited<ReturnType<typeof startEmbeddedDynamo>>;
let units: CapacityProxy;
let server: LocalServer;
let ws: TestWorkspace;

before(
  async () => {
    dynamo = await startEmbeddedDynamo(':memory:');
    units = await startCapacityProxy(dynamo.endpoint);
    server = await startTestServer({
      DOERS_DYNAMODB_ENDPOINT: units.endpoint,
      DOERS_RATE_LIMIT_CALLS: '0',
      DOERS_MAX_CONCURRENT_CALLS: '0',
      DOERS_AUTH_CACHE_SECONDS: '300',
    });
    ws = await createTestWorkspace(server);
    // The member's credential and the workspace's names are read once, as on a warm instance: what is counted is the tool's own.
    await measured('me_get', {});
    await measured('tasks_search', { limit: 1 });
  },
  { timeout: 120_000 },
);
after(async () => {
  await server?.close();
  await units?.stop();
  await dynamo?.close();
});

/** 5 KB of notes of one word (each word of a task is an entry its delete removes: these keep a tree of ten within one write). */
const NOTES = 'Unneeded '.repeat(570);

/** A root with `n` subtasks, each with long notes, written through the task writer; and a comment on each of the first `comments`. */
const tree = async (title: string, n: number, comments = 0): Promise<{ root: Task; subtasks: Task[] }> => {
  const ctx = await writeContextOf(server, ws.workspaceId, ws.member);
  const [made] = await createTasks(ctx, [{ fields: { title, priority: 'P3' } }]);
  assert.ok(made?.ok && 'written' in made);
  const root = made.written.task;
  const subtasks: Task[] = [];
  for (let i = 0; i < n; i += 50) {
    const items = Array.from({ length: Math.min(50, n - i) }, (_, j) => ({
      fields: { title: `${title} step ${i + j + 1}`, priority: 'P3' as const, notes: NOTES, parentId: root.taskId },
    }));
    for (const o of await createTasks(ctx, items)) {
      assert.ok(o.ok && 'written' in o, JSON.stringify(o));
      subtasks.push(o.written.task);
    }
  }
  for (const t of subtasks.slice(0, comments)) await addComment(ctx, t, 'A comment the delete takes along.');
  return { root, subtasks };
};

/** One call as the member, with form elicitation declared: what it answered, its DynamoDB requests and read units. */
const measured = async (name: string, args: Record<string, unknown>, asks = true) => {
  const from = units.consumed.length;
  const res = await post(
    urlOf(server),
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: modernMeta(asks ? { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } } : {}),
      },
    },
    { authorization: `Bearer ${ws.member.token}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
  );
  const spent = units.consumed.slice(from);
  return { res, requests: spent.length, readUnits: spent.reduce((s, c) => s + c.read, 0) };
};

const keyOf = (t: Task) => `TEST-${t.number}`;

describe('a tree is decided from its counts before it is read', () => {
  test('the delete question of a task with 100 subtasks with long notes is refused naming the limit, in two requests, reading a few units', {
    timeout: 120_000,
  }, async () => {
    // Arrange
    const { root } = await tree('Hundred', 100, 5);

    // Act: with form elicitation (it would ask first), and without (it would act at once).
    const asked = await measured('task_delete', { taskId: keyOf(root) });
    const acted = await measured('task_delete', { taskId: keyOf(root) }, false);

    // Assert: refused before the person is asked, before any subtask is read; nothing is written.
    for (const m of [asked, acted]) {
      assert.equal(m.res.json.result.isError, true, m.res.text);
      assert.deepEqual(m.res.json.result._meta['sh.doers/refusal'].reason, 'limit');
      assert.match(
        m.res.json.result.content[0].text,
        /^taskId: deleting TEST-\d+ with its subtasks would change 100 subtask\(s\) and write at least 302 items, more than one all-or-nothing write holds \(100\)/,
      );
      assert.ok(m.requests <= 3, `${m.requests} requests`);
      assert.ok(m.readUnits <= 10, `${m.readUnits} read units`);
    }
    assert.ok((await server.app.services.tasks.get(ws.workspaceId, root.taskId))?.subtaskCount === 100);
  });

  test('completing it with its subtasks is refused the same way, reading as little', { timeout: 120_000 }, async () => {
    // Arrange
    const { root } = await tree('Hundred to complete', 100);

    // Act
    const m = await measured('task_complete', { taskId: keyOf(root), withSubtasks: true });

    // Assert
    assert.equal(m.res.json.result.isError, true, m.res.text);
    assert.match(m.res.json.result.content[0].text, /^withSubtasks: completing TEST-\d+ with its subtasks would change 100 subtask/);
    assert.ok(m.requests <= 3, `${m.requests} requests`);
    assert.ok(m.readUnits <= 10, `${m.readUnits} read units`);
  });

  test('a tree that fits is asked about and deleted reading its task items, not their notes; its comments go with it', {
    timeout: 120_000,
  }, async () => {
    // Arrange: ten subtasks with 5 KB of notes each (50 KB of notes in all), two of them with a comment.
    const { root, subtasks } = await tree('Ten', 10, 2);

    // Act
    const asked = await measured('task_delete', { taskId: keyOf(root) });
    const acted = await measured('task_delete', { taskId: keyOf(root) }, false);

    // Assert: the question reads the root (with its entries) and the ten items, a unit each: the
    // notes alone would be two units more each.
    assert.equal(asked.res.json.result.resultType, 'input_required', asked.res.text);
    assert.ok(asked.readUnits <= 13, `${asked.readUnits} read units to ask`);
    assert.equal(acted.res.json.result.isError, false, acted.res.text);
    assert.equal(acted.res.json.result.structuredContent.subtasks, 10);
    assert.ok(acted.readUnits <= 16, `${acted.readUnits} read units to delete`);
    for (const t of subtasks) assert.equal(await server.app.services.tasks.get(ws.workspaceId, t.taskId), undefined);
    const listed = await post(
      urlOf(server),
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'comments_list', arguments: { taskId: keyOf(subtasks[0]!) }, _meta: modernMeta() },
      },
      {
        authorization: `Bearer ${ws.member.token}`,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'comments_list',
      },
    );
    assert.match(listed.json.result.content[0].text, /was deleted/);
  });
});
