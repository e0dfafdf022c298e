import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { DEMO_PROJECTS } from '../../lambda/local/demo-seed.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { callTool, legacyCall, modernCall } from '../helpers/local.js';
import { addToken, createTestWorkspace, startWorkspaceServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

const TOOLS = [
  'me_get',
  'agenda_get',
  'tasks_search',
  'task_get',
  'task_create',
  'task_update',
  'task_complete',
  'task_reopen',
  'task_delete',
  'projects_list',
  'project_get',
  'project_create',
  'project_update',
  'project_archive',
  'project_delete',
  'comments_list',
  'comment_add',
  'comment_delete',
  'members_list',
  'member_invite',
  'member_role_set',
  'member_remove',
  'activity_list',
  'change_undo',
  'tasks_create',
  'tasks_update',
  'attachment_add',
  'attachment_delete',
  'view_save',
  'views_list',
  'view_delete',
  'inbox_list',
  'inbox_mark',
  'me_update',
  'workspace_import',
  'workspace_export',
];
const DESTRUCTIVE = [
  'attachment_delete',
  'change_undo',
  'comment_delete',
  'member_remove',
  'project_archive',
  'project_delete',
  'task_delete',
  'view_delete',
];
const NOT_IDEMPOTENT = [
  'attachment_add',
  'comment_add',
  'member_invite',
  'project_create',
  'task_create',
  'tasks_create',
  'view_save',
  'workspace_export',
];
const READ_ONLY = [
  'activity_list',
  'agenda_get',
  'comments_list',
  'inbox_list',
  'me_get',
  'members_list',
  'project_get',
  'projects_list',
  'task_get',
  'tasks_search',
  'views_list',
];

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startWorkspaceServer();
  ws = await createTestWorkspace(server);
});
after(() => server.close());

const text = toolText;
const listTools = async (token?: string) => (await modernCall(server, 'tools/list', {}, token ? { token } : {})).json.result.tools as any[];

describe('tools/list', () => {
  test('offers exactly the 36 tools of docs/workspace.md, each with output schema and its annotations as docs/workspace.md sets them', async () => {
    const tools = await listTools();

    assert.deepEqual(
      tools.map((t) => t.name),
      [...TOOLS].sort(),
    );
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.equal(t.inputSchema.additionalProperties, false, `${t.name} input is strict`);
      assert.equal(t.outputSchema?.type, 'object', t.name);
      assert.ok(t.description.length >= 40, `${t.name} has a description for the model`);
      const a = t.annotations;
      assert.equal(a.openWorldHint, false, t.name);
      // A hint left out means the protocol's default: readOnlyHint and idempotentHint false, destructiveHint true.
      const readOnly = a.readOnlyHint ?? false;
      assert.equal(readOnly, READ_ONLY.includes(t.name), `${t.name} readOnlyHint`);
      // The two hints the protocol defines only for tools that change something: absent on a read.
      assert.equal(a.destructiveHint, readOnly ? undefined : DESTRUCTIVE.includes(t.name), `${t.name} destructiveHint`);
      assert.equal(
        readOnly ? a.idempotentHint : (a.idempotentHint ?? false),
        readOnly ? undefined : !NOT_IDEMPOTENT.includes(t.name),
        `${t.name} idempotentHint`,
      );
    }
  });

  test('a token sees only the tools its scopes cover', async () => {
    const readOnly = await addToken(server, ws.workspaceId, ws.owner.userId, ['tasks:read']);
    const team = await addToken(server, ws.workspaceId, ws.owner.userId, ['team:read']);
    const none = await addToken(server, ws.workspaceId, ws.owner.userId, []);

    assert.deepEqual(
      (await listTools(readOnly)).map((t) => t.name),
      [
        'activity_list',
        'agenda_get',
        'comments_list',
        'inbox_list',
        'inbox_mark',
        'me_get',
        'me_update',
        'project_get',
        'projects_list',
        'task_get',
        'tasks_search',
        'views_list',
      ],
    );
    assert.deepEqual(
      (await listTools(team)).map((t) => t.name),
      ['me_get', 'members_list'],
    );
    assert.deepEqual(
      (await listTools(none)).map((t) => t.name),
      ['me_get'],
    );
  });

  test('every tool result validates against its declared outputSchema', async () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    const schemas = new Map((await listTools()).map((t) => [t.name, ajv.compile(t.outputSchema)]));
    const call = (name: string, args: Record<string, unknown> = {}, token = ws.owner.token) => callTool(server, name, args, token);
    const project = (await call('project_create', { name: 'Schema', description: 'checked' })).structuredContent;
    const task = (
      await call('task_create', {
        title: 'Schema task',
        notes: 'n',
        dueDate: '2030-01-01',
        dueTime: '10:00',
        assignee: 'me',
        projectId: project.projectId,
        labels: ['x'],
      })
    ).structuredContent;
    const comment = (await call('comment_add', { taskId: task.taskId, body: 'hi' })).structuredContent;
    const invited = (await call('member_invite', { email: 'schema@example.test', name: 'Schema Person' })).structuredContent;
    const spare = (await call('task_create', { title: 'spare' })).structuredContent;
    const spareProject = (await call('project_create', { name: 'Spare' })).structuredContent;
    const results: [string, Record<string, unknown>][] = [
      ['me_get', {}],
      ['agenda_get', { assignee: 'anyone' }],
      ['tasks_search', { status: 'any', limit: 1 }],
      ['task_get', { taskId: task.taskId }],
      ['task_update', { taskId: task.taskId, version: 1, priority: 'P1' }],
      ['task_complete', { taskId: task.taskId }],
      ['task_reopen', { taskId: task.taskId }],
      ['projects_list', { includeArchived: true }],
      ['project_get', { projectId: project.projectId }],
      ['project_update', { projectId: project.projectId, version: 1, name: 'Schema 2' }],
      ['project_archive', { projectId: project.projectId }],
      ['comments_list', { taskId: task.taskId }],
      ['members_list', { limit: 2 }],
      ['member_role_set', { userId: invited.userId, role: 'viewer' }],
      ['comment_delete', { taskId: task.taskId, commentId: comment.commentId }],
      ['task_delete', { taskId: spare.taskId }],
      ['project_delete', { projectId: spareProject.projectId }],
      ['member_remove', { userId: invited.userId }],
    ];
    const checked = new Set(['project_create', 'task_create', 'comment_add', 'member_invite']);
    for (const [name, args] of results) {
      const r = await call(name, args);
      assert.equal(r.isError, false, `${name}: ${text(r)}`);
      const validate = schemas.get(name)!;
      assert.ok(validate(r.structuredContent), `${name}: ${JSON.stringify(validate.errors)}`);
      checked.add(name);
    }
    assert.equal(checked.size, 22);
  });
});

describe('prompts', () => {
  test('lists the four prompts for a full token; triage needs write, so a read-only token sees three', async () => {
    const readOnly = await addToken(server, ws.workspaceId, ws.owner.userId, ['tasks:read']);

    const full = (await modernCall(server, 'prompts/list')).json.result.prompts;
    const read = (await modernCall(server, 'prompts/list', {}, { token: readOnly })).json.result.prompts;

    assert.deepEqual(
      full.map((p: { name: string }) => p.name),
      ['catch_up_on', 'daily_briefing', 'triage_inbox', 'weekly_review'],
    );
    assert.deepEqual(full.find((p: { name: string }) => p.name === 'catch_up_on').arguments, [
      { name: 'project', description: 'The project name or projectId', required: true },
    ]);
    assert.deepEqual(
      read.map((p: { name: string }) => p.name),
      ['catch_up_on', 'daily_briefing', 'weekly_review'],
    );
  });

  test("each answers one user message that chains this server's tools and says to report only what they returned", async () => {
    for (const [name, args, tools] of [
      ['daily_briefing', {}, ['me_get', 'agenda_get', 'tasks_search', 'activity_list']],
      ['weekly_review', {}, ['me_get', 'projects_list', 'tasks_search']],
      ['triage_inbox', {}, ['tasks_search', 'projects_list', 'task_update']],
      ['catch_up_on', { project: 'Acme renewal' }, ['projects_list', 'project_get', 'tasks_search', 'comments_list', 'activity_list']],
    ] as const) {
      const res = await modernCall(server, 'prompts/get', { name, arguments: args });
      const messages = res.json.result.messages;
      assert.equal(messages.length, 1, name);
      assert.equal(messages[0].role, 'user');
      for (const tool of tools) assert.ok(messages[0].content.text.includes(tool), `${name} drives ${tool}`);
      assert.match(messages[0].content.text, /Report only what the tools returned/);
    }
    const weekly = await modernCall(server, 'prompts/get', { name: 'weekly_review', arguments: {} });
    assert.match(weekly.json.result.messages[0].content.text, /query "assignee:me is:recurring due<=\+7d" for what repeats next week/);
    const catchUp = await modernCall(server, 'prompts/get', { name: 'catch_up_on', arguments: { project: 'Acme renewal' } });
    assert.match(catchUp.json.result.messages[0].content.text, /"Acme renewal"/);
  });

  test('every query a prompt names runs as tasks_search reads it', async () => {
    const queries: string[] = [];
    for (const [name, args] of [
      ['daily_briefing', {}],
      ['weekly_review', {}],
      ['triage_inbox', {}],
      ['catch_up_on', { project: 'Acme renewal' }],
    ] as const) {
      const text: string = (await modernCall(server, 'prompts/get', { name, arguments: args })).json.result.messages[0].content.text;
      for (const m of text.matchAll(/query "([^"]+)"|'([^']*project:[^']*)'/g))
        queries.push((m[1] ?? m[2]!).replace('<its name>', 'Acme renewal'));
    }

    assert.ok(queries.length >= 8, queries.join(' | '));
    for (const query of queries) {
      const r = await callTool(server, 'tasks_search', { query });
      assert.equal(r.isError, false, `${query}: ${r.content[0]!.text}`);
    }
  });

  test('a missing required or an undeclared argument is -32602', async () => {
    const missing = await modernCall(server, 'prompts/get', { name: 'catch_up_on', arguments: {} });
    const undeclared = await modernCall(server, 'prompts/get', { name: 'daily_briefing', arguments: { day: 'today' } });

    assert.equal(missing.json.error.code, -32602);
    assert.match(missing.json.error.message, /project/);
    assert.equal(undeclared.json.error.code, -32602);
    assert.match(undeclared.json.error.message, /day/);
  });
});

describe('resources', () => {
  test('resources/list lists the two MCP Apps views; the three templates are listed', async () => {
    const list = await modernCall(server, 'resources/list');
    const templates = await modernCall(server, 'resources/templates/list');

    assert.deepEqual(
      list.json.result.resources.map((r: { uri: string }) => r.uri),
      ['ui://doers/agenda', 'ui://doers/board'],
    );
    assert.deepEqual(
      templates.json.result.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate),
      ['doers://attachments/{attachmentId}', 'doers://projects/{projectId}', 'doers://tasks/{taskId}'],
    );
  });

  test('a task reads as Markdown with its notes and comments; a project with its open tasks', async () => {
    const project = (await callTool(server, 'project_create', { name: 'Readable' }, ws.admin.token)).structuredContent;
    const task = (
      await callTool(server, 'task_create', { title: 'Read me', notes: 'The **notes**', projectId: project.projectId }, ws.member.token)
    ).structuredContent;
    await callTool(server, 'comment_add', { taskId: task.taskId, body: 'A remark' }, ws.admin.token);

    const t = await modernCall(server, 'resources/read', { uri: `doers://tasks/${task.taskId}` }, { token: ws.viewer.token });
    const p = await modernCall(server, 'resources/read', { uri: `doers://projects/${project.projectId}` }, { token: ws.viewer.token });

    const tc = t.json.result.contents[0];
    assert.equal(tc.uri, `doers://tasks/${task.taskId}`);
    assert.equal(tc.mimeType, 'text/markdown');
    assert.match(tc.text, /^# Read me\n/);
    assert.match(tc.text, /## Notes\n\nThe \*\*notes\*\*/);
    assert.match(tc.text, new RegExp(`\\*\\*${ws.admin.name}\\*\\*, .*: A remark`));
    const pc = p.json.result.contents[0];
    assert.match(pc.text, /^# Readable\n/);
    assert.match(pc.text, new RegExp(`- ${task.key} Read me`));
    assert.match(tc.text, new RegExp(`- Key: ${task.key} \\(version 1\\)`));
  });

  test('an unknown or foreign id is -32602 with data.uri on 2026-07-28 and -32002 before', async () => {
    const foreignUri = `doers://projects/${DEMO_PROJECTS.acme.projectId}`;
    const unknownUri = 'doers://tasks/00000000-0000-4000-8000-000000000000';

    const foreign = await modernCall(server, 'resources/read', { uri: foreignUri }, { token: ws.owner.token });
    const unknown = await modernCall(server, 'resources/read', { uri: unknownUri }, { token: ws.owner.token });
    const legacy = await legacyCall(server, 'resources/read', { uri: foreignUri }, { token: ws.owner.token });
    const demoOwner = await modernCall(server, 'resources/read', { uri: foreignUri });

    assert.equal(foreign.json.error.code, -32602);
    assert.deepEqual(foreign.json.error.data, { uri: foreignUri });
    assert.equal(unknown.json.error.code, -32602);
    assert.deepEqual(unknown.json.error.data, { uri: unknownUri });
    assert.equal(legacy.json.error.code, -32002);
    assert.deepEqual(legacy.json.error.data, { uri: foreignUri });
    assert.match(demoOwner.json.result.contents[0].text, /^# Acme renewal/, 'the same URI reads fine in its own workspace');
  });
});
