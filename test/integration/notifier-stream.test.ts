import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import type { Notice } from '../../lambda/delivery/notice.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { tellStreamBatch } from '../../lambda/notifier-app.js';
import type { ActivityRecord } from '../../lambda/workspace/model/activity.js';
import type { NotifyDeps } from '../../lambda/workspace/notify/notifier.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace } from '../helpers/workspace-fixtures.js';

/**
 * The notifier function's batch (lambda/notifier-app.ts, tellStreamBatch) on real records in the
 * embedded DynamoDB: a record that fails stops the batch there, it and every later one reported
 * failed (partial batch response), and handed over again they tell everyone once.
 */

let server: LocalServer;
let ws: TestWorkspace;
before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const streamOf = (records: readonly ActivityRecord[]): DynamoDBStreamEvent => ({
  Records: records.map((r, i) => ({
    eventName: 'INSERT',
    dynamodb: { SequenceNumber: String(100 + i), NewImage: marshall(r, { removeUndefinedValues: true }) as never },
  })),
});

test('a record that fails is reported with every later one; handed over again, nobody is told twice', async () => {
  // Arrange: three assignments to the member, and webhooks that fail on the second.
  const asOwner = caller(server, ws.owner.token);
  for (const title of ['Stream one', 'Stream two', 'Stream three']) await asOwner('task_create', { title, assignee: ws.member.userId });
  const records = (await server.app.services.activity.since(ws.workspaceId, 'act_', 'act_~', 100)).filter((r) => r.kind === 'task');
  assert.equal(records.length, 3);
  const failing = records[1]!.activityId;
  const hooks = (fail: boolean) => ({
    dispatch: async (_ws: string, notices: readonly Notice[]) => {
      if (fail && notices.some((n) => n.id.startsWith(failing))) throw new Error('the receivers are unreachable');
    },
    retryDue: async () => {},
    test: async () => ({ ok: true as const, status: 200 }),
  });
  const deps = (fail: boolean): NotifyDeps => ({
    stores: server.app.services,
    publicUrl: server.url,
    activityDays: 90,
    hooks: hooks(fail),
  });
  const inbox = async () =>
    (await caller(server, ws.member.token)('inbox_list', { limit: 50 })).structuredContent.entries.map((e: { task: string }) => e.task);

  // Act
  const failed = await tellStreamBatch(deps(true), streamOf(records));
  const afterFirst = await inbox();
  const again = await tellStreamBatch(deps(false), streamOf(records.slice(1)));
  const afterSecond = await inbox();

  // Assert
  assert.deepEqual(
    failed.batchItemFailures.map((f) => f.itemIdentifier),
    ['101', '102'],
  );
  assert.equal(afterFirst.length, 2, 'the first told, the failing one filed beside its failed webhooks, the third not yet');
  assert.deepEqual(again.batchItemFailures, []);
  assert.equal(afterSecond.length, 3, 'each told once');
  assert.equal(new Set(afterSecond).size, 3);
});
