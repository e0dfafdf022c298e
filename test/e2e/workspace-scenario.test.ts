import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { urlOf } from '../helpers/local.js';
import { createTestWorkspace, startWorkspaceServer, type TestWorkspace } from '../helpers/workspace-fixtures.js';

/**
 * A team's day through the official SDK client (v1, the handshake era): the client validates
 * every structuredContent against the tool's outputSchema, as real hosts do.
 */
let server: LocalServer;
let ws: TestWorkspace;
const clients: Client[] = [];

const connect = async (token: string): Promise<Client> => {
  const client = new Client({ name: 'doers-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  clients.push(client);
  await client.listTools(); // the SDK checks structuredContent against the schemas it listed
  return client;
};

type Result = { content: { type: string; text: string }[]; structuredContent?: any; isError?: boolean };
const call = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<Result> =>
  (await client.callTool({ name, arguments: args })) as Result;

before(async () => {
  server = await startWorkspaceServer();
  ws = await createTestWorkspace(server, { timeZone: 'Europe/Berlin' });
});
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
});

test('a project with tasks: create, search with paging, complete, stale update refused, comment, delete; a viewer cannot write', async () => {
  const admin = await connect(ws.admin.token);
  const member = await connect(ws.member.token);
  const viewer = await connect(ws.viewer.token);

  // An admin sets up a project; a member fills it with tasks.
  const project = await call(admin, 'project_create', { name: 'Spring launch', description: 'Everything for the launch' });
  assert.equal(project.isError, false);
  const projectId: string = project.structuredContent.projectId;
  const me = await call(member, 'me_get');
  const today: string = me.structuredContent.today;
  const created: string[] = [];
  for (let i = 1; i <= 7; i++) {
    const r = await call(member, 'task_create', {
      title: `Launch step ${i}`,
      projectId,
      priority: i === 1 ? 'P1' : 'P3',
      dueDate: today,
      assignee: 'me',
    });
    assert.equal(r.isError, false, r.content[0]!.text);
    created.push(r.structuredContent.taskId);
  }

  // Search with paging: three pages of three, every task once.
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await call(viewer, 'tasks_search', { project: projectId, limit: 3, ...(cursor ? { cursor } : {}) });
    assert.equal(page.isError, false);
    seen.push(...page.structuredContent.tasks.map((t: { taskId: string }) => t.taskId));
    cursor = page.structuredContent.nextCursor;
    pages++;
  } while (cursor);
  assert.equal(pages, 3);
  assert.deepEqual(new Set(seen), new Set(created));
  assert.equal(seen.length, 7);

  // The agenda shows the day; the first task is the most urgent.
  const agenda = await call(member, 'agenda_get');
  assert.match(agenda.content[0]!.text, /^7 open, 0 overdue, 7 due today/);
  assert.match(agenda.content[0]!.text, /- \w+-\d+ Launch step 1 · P1, due today/);

  // Complete one; a later update that still carries version 1 is refused, naming version 2.
  const done = await call(member, 'task_complete', { taskId: created[0] });
  assert.equal(done.structuredContent.status, 'Done');
  assert.equal(done.structuredContent.version, 2);
  const stale = await call(admin, 'task_update', { taskId: created[0], version: 1, title: 'Overwritten' });
  assert.equal(stale.isError, true);
  assert.match(stale.content[0]!.text, /Conflict.*version 2/);
  const fresh = await call(admin, 'task_update', { taskId: created[0], version: 2, title: 'Launch step 1 (checked)' });
  assert.equal(fresh.isError, false);
  assert.equal(fresh.structuredContent.version, 3);

  // Discuss, then clean up.
  const comment = await call(admin, 'comment_add', { taskId: created[1], body: 'Waiting for legal' });
  assert.equal(comment.isError, false);
  const comments = await call(viewer, 'comments_list', { taskId: created[1] });
  assert.deepEqual(
    comments.structuredContent.comments.map((c: { body: string }) => c.body),
    ['Waiting for legal'],
  );
  const deleted = await call(member, 'task_delete', { taskId: created[6] });
  assert.equal(deleted.structuredContent.deleted, true);
  const afterDelete = await call(viewer, 'task_get', { taskId: created[6] });
  assert.equal(afterDelete.isError, true);
  assert.match(afterDelete.content[0]!.text, /was deleted .*change_undo of that change restores it/);

  // The viewer's token (made with every scope) acts as a viewer's: it reads, and no write tool is
  // listed or callable (refused for its scope before the tool runs).
  const listed = (await viewer.listTools()).tools.map((t) => t.name);
  for (const [name, args] of [
    ['task_create', { title: 'sneaky' }],
    ['task_complete', { taskId: created[2] }],
    ['comment_add', { taskId: created[2], body: 'sneaky' }],
    ['task_delete', { taskId: created[2] }],
  ] as const) {
    assert.ok(!listed.includes(name), name);
    await assert.rejects(viewer.callTool({ name, arguments: args }), /needs the scope tasks:write/, name);
  }
  const untouched = await call(viewer, 'task_get', { taskId: created[2] });
  assert.equal(untouched.structuredContent.status, 'Todo');

  // A resource by reference, and a prompt that chains the tools.
  const resource = await viewer.readResource({ uri: `doers://projects/${projectId}` });
  const contents = resource.contents[0]!;
  assert.ok('text' in contents);
  assert.match(contents.text, /^# Spring launch/);
  const prompt = await member.getPrompt({ name: 'catch_up_on', arguments: { project: 'Spring launch' } });
  assert.match(String((prompt.messages[0]!.content as { text: string }).text), /project_get/);
});
