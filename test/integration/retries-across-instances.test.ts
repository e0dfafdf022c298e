import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { startEmbeddedS3 } from '../../lambda/local/embedded-s3.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { type DynamoProxy, startDynamoProxy } from '../helpers/dynamo-proxy.js';
import { startTestServer } from '../helpers/local.js';
import { caller, createTestWorkspace, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Two servers on one DynamoDB, as two Lambda instances of one deployment: a client that retries a
// call after a timeout may reach the other one. A call that must not be made twice (a create, an
// add, an invite) claims itself in the write that makes it; the same call again, on either server,
// within the claim's window, answers the first call's answer and writes nothing. Server A reaches
// the store through a fault proxy, so its writes can be made to go unconfirmed.

let dynamo: Awaited<ReturnType<typeof startEmbeddedDynamo>>;
let s3: Awaited<ReturnType<typeof startEmbeddedS3>>;
let proxy: DynamoProxy;
let dataDir: string;
let a: LocalServer;
let b: LocalServer;
let ws: TestWorkspace;

type Result = { isError: boolean; content: { text: string }[]; structuredContent: any };

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'doers-retries-'));
  [dynamo, s3] = await Promise.all([startEmbeddedDynamo(':memory:'), startEmbeddedS3(join(dataDir, 's3'))]);
  proxy = await startDynamoProxy(dynamo.endpoint);
  // One data dir (the key ring tokens are hashed with), one store, one bucket: one deployment.
  const env = {
    DOERS_DATA_DIR: dataDir,
    DOERS_S3_ENDPOINT: s3.endpoint,
    DOERS_RATE_LIMIT_CALLS: '0',
    DOERS_MAX_CONCURRENT_CALLS: '0',
  };
  a = await startTestServer({ ...env, DOERS_DYNAMODB_ENDPOINT: proxy.endpoint });
  b = await startTestServer({ ...env, DOERS_DYNAMODB_ENDPOINT: dynamo.endpoint });
  ws = await createTestWorkspace(a);
});
after(async () => {
  await a?.close();
  await b?.close();
  await proxy?.stop();
  await Promise.all([dynamo?.close(), s3?.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

const on = (server: LocalServer) => caller(server, ws.member.token) as (name: string, args?: Record<string, unknown>) => Promise<Result>;

const titled = async (title: string): Promise<Result[]> => {
  const found = (await on(b)('tasks_search', { text: title, status: 'any' })) as Result;
  return found.structuredContent.tasks.filter((t: { title: string }) => t.title === title);
};

describe('a call retried on another instance is written once', () => {
  test('task_create answered on A, then the same call on B: B answers the same task, says it replayed, and one task exists', async () => {
    // Arrange
    const args = { title: 'Retried across instances', priority: 'P2' };
    const first = await on(a)('task_create', args);

    // Act
    const again = await on(b)('task_create', args);

    // Assert
    assert.equal(first.isError, false, toolText(first));
    assert.equal(again.isError, false, toolText(again));
    assert.equal(again.structuredContent.taskId, first.structuredContent.taskId);
    assert.equal(again.structuredContent.activityId, first.structuredContent.activityId);
    assert.match(toolText(again), /Replayed: this same call \(same arguments\) was answered/);
    assert.equal((await titled(args.title)).length, 1);
  });

  test('the same task_create sent to both instances at once: exactly one task, and each answer names it or says it is in progress', async () => {
    // Arrange
    const args = { title: 'Raced across instances' };

    // Act
    const answers = await Promise.all([on(a)('task_create', args), on(b)('task_create', args)]);

    // Assert
    const made = await titled(args.title);
    assert.equal(made.length, 1);
    for (const r of answers) {
      if (r.isError) assert.match(toolText(r), /^In progress: this same call/);
      else assert.equal(r.structuredContent.title, args.title);
    }
    assert.ok(answers.some((r) => !r.isError));
  });

  test('a write DynamoDB never confirms on A (its claim says it landed): A answers the task, B never writes it again', {
    timeout: 60_000,
  }, async () => {
    // Arrange: A's write commits and every answer to it is "in progress", past every replay under its
    // token (A's credential and its task counter are current first, so the first write is the create's, and it lands).
    const args = { title: 'Unconfirmed on A' };
    await on(a)('task_create', { title: 'Warms A' });
    proxy.failWritesFrom(1, 'in-progress', 10_000);

    // Act
    const first = await on(a)('task_create', args).finally(() => proxy.clearFault());
    const again = await on(b)('task_create', args);

    // Assert: A's answer is the task. Keeping A's answer for a retry is a write of its own, which the
    // same fault refused: B says the call is still being made rather than writing it twice.
    assert.equal(first.isError, false, toolText(first));
    assert.match(toolText(first), /^Created: TEST-\d+ Unconfirmed on A/);
    assert.equal(again.isError, true);
    assert.match(
      toolText(again),
      /^In progress: this same call \(same arguments\) was started .* call it again in \d+ s for its answer\.$/,
    );
    assert.equal((await titled(args.title)).length, 1);
  });

  test('tasks_create of many transactions retried on B: the same answer, no task twice', async () => {
    // Arrange: long notes, so the call needs several transactions.
    const args = { tasks: Array.from({ length: 12 }, (_, i) => ({ title: `Bulk retried ${i}`, notes: 'n'.repeat(9_000) })) };
    const first = await on(a)('tasks_create', args);

    // Act
    const again = await on(b)('tasks_create', args);

    // Assert
    assert.equal(first.isError, false, toolText(first));
    assert.deepEqual(
      again.structuredContent.items.map((i: { taskId?: string }) => i.taskId),
      first.structuredContent.items.map((i: { taskId?: string }) => i.taskId),
    );
    const found = (await on(b)('tasks_search', { text: 'Bulk retried', limit: 50 })) as Result;
    assert.equal(found.structuredContent.tasks.length, 12);
  });

  test('comment_add retried on B: one comment', async () => {
    // Arrange
    const task = await on(a)('task_create', { title: 'Commented once' });
    const args = { taskId: task.structuredContent.key, body: 'Only once, please' };
    await on(a)('comment_add', args);

    // Act
    const again = await on(b)('comment_add', args);

    // Assert
    assert.equal(again.isError, false, toolText(again));
    const listed = (await on(b)('comments_list', { taskId: task.structuredContent.key })) as Result;
    assert.equal(listed.structuredContent.comments.length, 1);
  });

  test('after the first call is undone, the same call makes a new task', async () => {
    // Arrange
    const args = { title: 'Made, undone, made again' };
    const first = await on(a)('task_create', args);
    await on(a)('change_undo', { activityId: first.structuredContent.activityId });

    // Act
    const again = await on(b)('task_create', args);

    // Assert
    assert.equal(again.isError, false, toolText(again));
    assert.notEqual(again.structuredContent.taskId, first.structuredContent.taskId);
    assert.doesNotMatch(toolText(again), /Replayed/);
    assert.equal((await titled(args.title)).length, 1);
  });

  test('the same title with other arguments is another call: two tasks', async () => {
    // Arrange
    await on(a)('task_create', { title: 'Twice on purpose' });

    // Act
    const second = await on(b)('task_create', { title: 'Twice on purpose', priority: 'P1' });

    // Assert
    assert.equal(second.isError, false, toolText(second));
    assert.equal((await titled('Twice on purpose')).length, 2);
  });

  test("another member's identical call is theirs: it makes its own task", async () => {
    // Arrange
    const args = { title: 'Same words, two people' };
    await on(a)('task_create', args);

    // Act
    const theirs = (await caller(b, ws.admin.token)('task_create', args)) as Result;

    // Assert
    assert.equal(theirs.isError, false, toolText(theirs));
    assert.equal((await titled(args.title)).length, 2);
  });
});
