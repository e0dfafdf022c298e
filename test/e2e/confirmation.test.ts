import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { startTestServer, urlOf } from '../helpers/local.js';
import { caller, createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// Confirmation before destruction through the 2026-07-28 multi round-trip pattern, driven by the
// official SDK client, which answers `input_required` through its elicitation handler: accept,
// decline, cancel, and a change between the question and the answer. An earlier revision, and a
// client without form elicitation, act at once.

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startTestServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' });
  ws = await createTestWorkspace(server);
});
after(() => server.close());

type Answer = { action: 'accept'; content: { confirm: boolean } } | { action: 'decline' } | { action: 'cancel' };

/** A 2026-07-28 client that can show forms, answering every question with `answer` (after `meanwhile`). */
const asking = async (token: string, answer: Answer, meanwhile?: () => Promise<void>) => {
  const client = new ModernClient(
    { name: 'doers-e2e-confirm', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  const asked: { message: string; requestedSchema: unknown }[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params as (typeof asked)[number]);
    await meanwhile?.();
    return answer;
  });
  await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return { client, asked };
};

const taskWithComments = async (title: string, comments = 0) => {
  const call = caller(server, ws.member.token);
  const t = (await call('task_create', { title, priority: 'P1', dueDate: '2026-12-05', assignee: 'me' })).structuredContent;
  for (let i = 0; i < comments; i++) await call('comment_add', { taskId: t.taskId, body: `comment ${i}` });
  return t as { taskId: string };
};

const stillThere = async (taskId: string) => !(await caller(server, ws.member.token)('task_get', { taskId })).isError;

describe('task_delete asks a client that can show a form', () => {
  test('accept: the person is asked what exactly will happen, and after yes the task is deleted', async () => {
    // Arrange
    const t = await taskWithComments('Send the Acme quote', 3);
    const { client, asked } = await asking(ws.member.token, { action: 'accept', content: { confirm: true } });

    // Act
    const result = await client.callTool({ name: 'task_delete', arguments: { taskId: t.taskId } });
    await client.close();

    // Assert
    assert.equal(asked.length, 1);
    assert.equal(
      asked[0]!.message,
      `Delete task 'Send the Acme quote' (P1, due 2026-12-05, assigned to ${ws.member.name}) and its 3 comment(s)? You can undo this for 90 days.`,
    );
    assert.deepEqual(asked[0]!.requestedSchema, {
      type: 'object',
      properties: { confirm: { type: 'boolean', title: 'Delete the task', default: false } },
      required: ['confirm'],
    });
    assert.equal(result.isError, false);
    assert.equal((result.structuredContent as { deleted: boolean }).deleted, true);
    assert.equal(await stillThere(t.taskId), false);
  });

  for (const answer of [{ action: 'decline' }, { action: 'cancel' }, { action: 'accept', content: { confirm: false } }] as Answer[]) {
    const name = answer.action === 'accept' ? 'accept without ticking the box' : answer.action;
    test(`${name}: an ordinary result saying nothing changed, and nothing is written`, async () => {
      // Arrange
      const t = await taskWithComments(`Kept after ${name}`);
      const { client } = await asking(ws.member.token, answer);
      const before = (await caller(server, ws.member.token)('activity_list', { task: t.taskId })).structuredContent.returned;

      // Act
      const result = await client.callTool({ name: 'task_delete', arguments: { taskId: t.taskId } });
      await client.close();

      // Assert
      assert.equal(result.isError, false);
      // Each answer is said as it was: an accept without the tick is not called a decline.
      assert.match(
        (result.content as { text: string }[])[0]!.text,
        answer.action === 'accept'
          ? /^Nothing was changed: the person accepted the question about deleting task .* without ticking its box, which is not a yes\.$/
          : new RegExp(`^Nothing was changed: the person ${answer.action === 'decline' ? 'declined' : 'cancelled'} deleting task`),
      );
      assert.equal(
        (result.structuredContent as { declined: string }).declined,
        answer.action === 'accept' ? 'unticked' : answer.action === 'decline' ? 'declined' : 'cancelled',
      );
      assert.equal((result.structuredContent as { deleted: boolean }).deleted, false);
      assert.equal(await stillThere(t.taskId), true);
      const after = (await caller(server, ws.member.token)('activity_list', { task: t.taskId })).structuredContent.returned;
      assert.equal(after, before, 'no record either');
    });
  }

  test('a change between the question and the answer: a conflict, and nothing is deleted', async () => {
    // Arrange
    const t = await taskWithComments('Changed while asked');
    const { client } = await asking(ws.member.token, { action: 'accept', content: { confirm: true } }, async () => {
      await caller(server, ws.admin.token)('task_update', { taskId: t.taskId, version: 1, title: 'Changed by someone else' });
    });

    // Act
    const result = await client.callTool({ name: 'task_delete', arguments: { taskId: t.taskId } });
    await client.close();

    // Assert
    assert.equal(result.isError, true);
    assert.match((result.content as { text: string }[])[0]!.text, /changed between the question and the answer, so nothing was changed/);
    assert.equal(await stillThere(t.taskId), true);
  });
});

describe('the other destructive changes ask too', () => {
  test('project_delete, comment_delete, member_remove and a role lowered from admin each ask once and act on yes', async () => {
    // Arrange
    const own = await createTestWorkspace(server);
    const project = (await caller(server, own.admin.token)('project_create', { name: 'Asked project' })).structuredContent;
    const t = (await caller(server, own.member.token)('task_create', { title: 'Has a comment' })).structuredContent;
    const c = (await caller(server, own.member.token)('comment_add', { taskId: t.taskId, body: 'Goodbye' })).structuredContent;
    const { client: owner, asked } = await asking(own.owner.token, { action: 'accept', content: { confirm: true } });

    // Act
    const results = [
      await owner.callTool({ name: 'project_delete', arguments: { projectId: project.projectId } }),
      await owner.callTool({ name: 'comment_delete', arguments: { taskId: t.taskId, commentId: c.commentId } }),
      await owner.callTool({ name: 'member_role_set', arguments: { userId: own.admin.userId, role: 'member' } }),
      await owner.callTool({ name: 'member_remove', arguments: { userId: own.viewer.userId } }),
    ];
    // Raising a role takes nothing away: no question.
    const raised = await owner.callTool({ name: 'member_role_set', arguments: { userId: own.member.userId, role: 'admin' } });
    await owner.close();

    // Assert
    assert.deepEqual(
      results.map((r) => r.isError),
      [false, false, false, false],
    );
    assert.equal(asked.length, 4);
    assert.match(asked[0]!.message, /^Delete the project 'Asked project'\?/);
    assert.match(asked[1]!.message, /^Delete .+'s comment on 'Has a comment' \("Goodbye"\)\?/);
    assert.match(asked[2]!.message, new RegExp(`^Change ${own.admin.name}'s role from admin to member\\?`));
    assert.match(asked[3]!.message, new RegExp(`^Remove ${own.viewer.name} <${own.viewer.email}> \\(viewer\\) from the workspace`));
    assert.equal(raised.isError, false);
    assert.equal((await server.app.services.directory.getMember(own.workspaceId, own.viewer.userId)) === undefined, true);
  });
});

describe('without form elicitation the tools act at once, as before', () => {
  test('a 2026-07-28 client that declares no elicitation: deleted without a question', async () => {
    const t = await taskWithComments('No form to show');
    const client = new ModernClient(
      { name: 'doers-e2e-noform', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(
      new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${ws.member.token}` } } }),
    );

    const result = await client.callTool({ name: 'task_delete', arguments: { taskId: t.taskId } });
    await client.close();

    assert.equal(result.isError, false);
    assert.equal(await stillThere(t.taskId), false);
  });

  test('the v1 SDK client on 2025-11-25, even declaring elicitation: deleted at once (that revision asks only over a stream)', async () => {
    const t = await taskWithComments('Handshake era');
    const client = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    await client.connect(
      new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${ws.member.token}` } } }),
    );

    const result = await client.callTool({ name: 'task_delete', arguments: { taskId: t.taskId } });
    await client.close();

    assert.equal(result.isError, false);
    assert.equal(await stillThere(t.taskId), false);
  });
});
