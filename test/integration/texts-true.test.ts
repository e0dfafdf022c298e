import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { doorSource } from '../../lambda/workspace/activity/records.js';
import { mintToken } from '../../lambda/workspace/membership/credentials.js';
import { OPERATOR } from '../../lambda/workspace/membership/rules.js';
import { MODERN, modernCall, modernMeta, post, urlOf } from '../helpers/local.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Texts true to the person reading them: each finding of a review that tried the endpoint as a new
// user would (with the Python SDK and the Inspector) has its test here; each failed before its fix.

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
});
after(() => server.close());

type Result = { isError: boolean; content: { text: string }[]; structuredContent: any; _meta?: Record<string, any> };
const as = (token: string) => caller(server, token) as (name: string, args?: Record<string, unknown>) => Promise<Result>;
const member = () => as(ws.member.token);
const owner = () => as(ws.owner.token);

describe('a token and its role', () => {
  test("a viewer's token is not minted with tasks:write: refused naming the role and what it allows, nothing made", async () => {
    // Arrange
    const viewer = (await server.app.services.directory.getMember(ws.workspaceId, ws.viewer.userId))!;
    const before = (await server.app.services.tokens.list(ws.workspaceId)).length;

    // Act
    const refused = await mintToken(server.app.services, OPERATOR, doorSource('admin CLI', OPERATOR, 'token create', new Date()), viewer, {
      label: 'too much',
      scopes: ['tasks:read', 'tasks:write'],
    }).then(
      () => assert.fail('minted'),
      (err: unknown) => err as Error & { reason: string; data: unknown },
    );

    // Assert
    assert.equal(refused.reason, 'role');
    assert.equal(
      refused.message,
      "scopes: tasks:write is more than a viewer can use (a viewer's tokens can carry tasks:read, team:read); the token was not made. Ask for those, or change the role first.",
    );
    assert.equal((await server.app.services.tokens.list(ws.workspaceId)).length, before);
  });

  test('a token that carries a scope its role cuts is refused 403 naming the role, not the token', async () => {
    // Act: the viewer's test token carries every scope (as tokens from before the mint rule may).
    const res = await modernCall(
      server,
      'tools/call',
      { name: 'task_create', arguments: { title: 'By a viewer' } },
      { token: ws.viewer.token },
    );

    // Assert
    assert.equal(res.status, 403);
    assert.match(
      res.json.error.message,
      /^The tool task_create needs the scope tasks:write; this token carries it, but a viewer cannot use it \(a viewer's tokens act with tasks:read, team:read\): the role, not the token, is why$/,
    );
  });
});

describe('tasks named by their keys', () => {
  test('a subtask nested too deep in one bulk call is refused naming keys and the items of the call, never an id', async () => {
    // Arrange: two levels made before.
    const top = await member()('task_create', { title: 'Depth top' });
    const mid = await member()('task_create', { title: 'Depth middle', parent: top.structuredContent.key });

    // Act: a subtask of the middle one, and one below that in the same call.
    const bulk = await member()('tasks_create', {
      tasks: [
        { title: 'Depth third', parent: mid.structuredContent.key },
        { title: 'Depth fourth', parent: '@1' },
      ],
    });

    // Assert
    const refusal = bulk.structuredContent.items[1];
    assert.equal(refusal.status, 'refused');
    assert.doesNotMatch(refusal.reason, /[0-9a-f]{8}-[0-9a-f]{4}-/);
    assert.match(refusal.reason, /@1 is at level 3 \(below TEST-\d+ below TEST-\d+\).*the new task cannot go below @1/);
  });

  test('a blocker with the most tasks waiting on it refuses the one more by its limit, not as a conflict', async () => {
    // Arrange: 60 tasks wait on the hub.
    const hub = await member()('task_create', { title: 'Full hub' });
    const key = hub.structuredContent.key;
    await member()('tasks_create', { tasks: Array.from({ length: 50 }, (_, i) => ({ title: `Waits on the hub ${i}`, blockedBy: [key] })) });
    await member()('tasks_create', {
      tasks: Array.from({ length: 9 }, (_, i) => ({ title: `Waits on the hub too ${i}`, blockedBy: [key] })),
    });

    // Act: two more in one call, of which the first fits.
    const more = await member()('tasks_create', {
      tasks: [
        { title: 'The sixtieth', blockedBy: [key] },
        { title: 'The sixty-first', blockedBy: [key] },
      ],
    });

    // Assert
    assert.equal(more.structuredContent.items[0].status, 'created');
    assert.equal(more.structuredContent.items[1].status, 'refused');
    assert.equal(
      more.structuredContent.items[1].reason,
      `blockedBy: ${key} already blocks 60 tasks, the most one task can; this one was not linked to it.`,
    );
  });
});

describe('words as a person reads them', () => {
  test('task_get says its repeat rule, and when and by whom it was made in words, not an instant and an id', async () => {
    // Arrange
    const made = await member()('task_create', { title: 'Weekly sync notes', dueDate: '2026-12-07', repeat: 'every monday' });

    // Act
    const got = await member()('task_get', { taskId: made.structuredContent.key });

    // Assert
    assert.match(toolText(got), /\nRepeats every Monday\n/);
    assert.match(toolText(got), new RegExp(`\\nCreated today \\d\\d:\\d\\d by ${ws.member.name}, updated today \\d\\d:\\d\\d`));
    assert.doesNotMatch(toolText(got), /\d{4}-\d\d-\d\dT\d\d:/);
  });

  test('tasks_search takes assignee "anyone", as agenda_get does', async () => {
    const anyone = await member()('tasks_search', { assignee: 'anyone', limit: 1 });

    assert.equal(anyone.isError, false, toolText(anyone));
  });

  test('completing a task that repeats after completion a second time the same day says truthfully that nothing changed', async () => {
    // Arrange
    const made = await member()('task_create', { title: 'Water the plants', repeat: 'every 3 days after completion' });
    const first = await member()('task_complete', { taskId: made.structuredContent.key });

    // Act
    const second = await member()('task_complete', { taskId: made.structuredContent.key });

    // Assert
    assert.match(toolText(first), /^Done for /);
    assert.equal(second.isError, false);
    assert.equal(second.structuredContent.activityId, undefined);
    assert.match(
      toolText(second),
      /^Nothing changed: it is open at its next occurrence \(due \w{3} \d+ \w{3} \d{4}\), which completing it now gives again \(every 3 days after completion\): /,
    );
    assert.doesNotMatch(toolText(second), /Done already/);
  });

  test("a record's structured changes name the status, not its stored key, and a creation's status is the task's", async () => {
    // Arrange
    const made = await member()('task_create', { title: 'Statuses in records' });
    await member()('task_update', { taskId: made.structuredContent.key, version: 1, status: 'In progress' });

    // Act
    const history = await member()('activity_list', { task: made.structuredContent.key });

    // Assert
    const [changed, created] = history.structuredContent.entries;
    assert.deepEqual(changed.changes, [{ field: 'status', before: 'Todo', after: 'In progress' }]);
    assert.deepEqual(
      created.changes.find((c: { field: string }) => c.field === 'status'),
      { field: 'status', after: 'Todo' },
    );
    assert.ok(!JSON.stringify(history.structuredContent).includes('"state"'));
  });

  test('the question before undoing a change of statuses names what a person knows, not stored fields', async () => {
    // Arrange: a project's statuses changed, one removed (two stored fields move: the set and the retired ones).
    const p = await owner()('project_create', { name: 'Undo words' });
    const changed = await owner()('project_update', {
      projectId: p.structuredContent.projectId,
      version: 1,
      name: 'Undo words, renamed',
      statuses: [
        { name: 'Todo', category: 'unstarted' },
        { name: 'Done', category: 'done' },
      ],
    });

    // Act: with form elicitation, so it asks.
    const asked = await post(
      urlOf(server),
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'change_undo',
          arguments: { activityId: changed.structuredContent.activityId },
          _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } }),
        },
      },
      { authorization: `Bearer ${ws.owner.token}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'change_undo' },
    );

    // Assert
    const message = JSON.stringify(asked.json.result.inputRequests);
    assert.match(message, /It puts back 2 fields: name, statuses\./);
    assert.doesNotMatch(message, /retiredStatuses/);
  });
});

describe('bad input is refused as invalid, never a 500', () => {
  test('arguments nested 100,000 deep, in a bulk item or anywhere, are refused naming where', async () => {
    const deep = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    for (const [name, args] of [
      ['tasks_create', `{"tasks":[{"title":"Deep","labels":${deep}}]}`],
      ['task_create', `{"title":"Deep","notes":${deep}}`],
      ['tasks_update', `{"tasks":[{"taskId":"TEST-1","unknown":${deep}}]}`],
    ] as const) {
      // Act
      const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args},"_meta":${JSON.stringify(modernMeta())}}}`;
      const res = await post(urlOf(server), body, {
        authorization: `Bearer ${ws.member.token}`,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': name,
      });

      // Assert
      assert.equal(res.status, 200, `${name}: ${res.text.slice(0, 200)}`);
      assert.equal(res.json.result.isError, true);
      assert.match(
        res.json.result.content[0].text,
        new RegExp(`^Invalid arguments for ${name}: [a-z.0-9]+: nested deeper than 32 levels; no argument is\\.$`),
      );
      assert.equal(res.json.result._meta['sh.doers/refusal'].reason, 'invalid-argument');
    }
  });

  test('on 2025-03-26 and 2025-06-18, where invalid arguments are a protocol error, deep ones are -32602 naming where', async () => {
    const deep = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    for (const version of ['2025-03-26', '2025-06-18']) {
      // Act
      const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"task_create","arguments":{"title":"Deep","notes":${deep}}}}`;
      const res = await post(urlOf(server), body, { authorization: `Bearer ${ws.member.token}`, 'mcp-protocol-version': version });

      // Assert
      assert.equal(res.status, 200, `${version}: ${res.text.slice(0, 200)}`);
      assert.equal(res.json.id, 7);
      assert.equal(res.json.error.code, -32602, version);
      assert.match(
        res.json.error.message,
        /^Invalid arguments for task_create: notes(\.\d+)*: nested deeper than 32 levels; no argument is\.$/,
      );
    }
  });
});
