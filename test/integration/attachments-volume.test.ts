import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// A task filled to its 100 files, one attachment_add at a time, against the embedded DynamoDB and
// the embedded S3 API. A volume test: `npm test` runs it, `npm run test:quick` leaves it out
// (docs/testing.md, "The fast loop"); workspace-attachments.test.ts has every other refusal.

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const m = () => caller(server, ws.member.token);

describe('how many files a task holds', () => {
  test('a task holds at most 100 files: the 101st is refused naming the task and the limit, and nothing of it is kept', async () => {
    // Arrange
    const t = (await m()('task_create', { title: 'Many files' })).structuredContent as { key: string };
    for (let i = 0; i < 100; i++) {
      const added = await m()('attachment_add', { taskId: t.key, name: `f${i}.txt`, text: `${i}` });
      assert.equal(added.isError, false, toolText(added));
    }

    // Act
    const over = await m()('attachment_add', { taskId: t.key, name: 'f100.txt', text: 'one too many' });

    // Assert
    assert.equal(over.isError, true);
    assert.match(toolText(over), /taskId: TEST-\d+ holds 100 files, the most a task holds/);
    const files = (await m()('task_get', { taskId: t.key })).structuredContent as { attachments?: number; files?: { name: string }[] };
    assert.equal(files.attachments, 100);
    assert.ok(!files.files?.some((f) => f.name === 'f100.txt'));
  });
});
