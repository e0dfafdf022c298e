import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { javaAvailable, startDynamoDbLocal } from '../helpers/limits-harness.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, toolText as text } from '../helpers/workspace-fixtures.js';

// A finding of the review of the workspace core (test/integration/workspace-core.test.ts) that only
// Amazon's DynamoDB Local shows: it refuses a transaction past 4 MB as DynamoDB does, where dynalite
// does not. In a file of its own: its JVM is most of its time, and the fast loop (npm run test:quick)
// leaves the DynamoDB Local runs to npm test.

describe('a bulk call is packed as DynamoDB counts bytes, on Amazon DynamoDB Local too', {
  skip: !javaAvailable() && 'java is not on PATH',
}, () => {
  test('33 changes of the longest notes: every one written, no transaction refused for passing 4 MB', { timeout: 180_000 }, async () => {
    const local = await startDynamoDbLocal();
    const s = await startOwnWorkspacesServer({ DOERS_DYNAMODB_ENDPOINT: local.endpoint });
    try {
      const own = await createTestWorkspace(s);
      const call = caller(s, own.member.token);
      const made = (
        await call('tasks_create', { tasks: Array.from({ length: 33 }, (_, i) => ({ title: `L${i}`, notes: '長いメモ'.repeat(2_500) })) })
      ).structuredContent.items;

      const changed = await call('tasks_update', {
        tasks: made.map((i: { key: string }) => ({ taskId: i.key, notes: '新しいメモ'.repeat(2_000) })),
      });

      assert.equal(changed.isError, false, text(changed));
      assert.equal(changed.structuredContent.items.filter((i: { status: string }) => i.status === 'updated').length, 33, text(changed));
    } finally {
      await s.close();
      await local.close();
    }
  });
});
