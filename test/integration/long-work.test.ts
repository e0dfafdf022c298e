import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { SQSEvent } from 'aws-lambda';
import * as z from 'zod';
import type { LocalServer } from '../../lambda/local/server.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { createJobDeps, runQueueBatch } from '../../lambda/worker-app.js';
import type { JobDeps } from '../../lambda/workspace/surface/long-work-runner.js';
import { legacyCall, MODERN, modernMeta, post, startTestServer, urlOf } from '../helpers/local.js';
import { caller, createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// Long work as tasks of the tasks extension (io.modelcontextprotocol/tasks): workspace_import and
// workspace_export answer a task's handle, the worker runs beside the local server as the worker
// function runs it in AWS, and the client follows the task with tasks/get and tasks/cancel.

const TASKS = 'io.modelcontextprotocol/tasks';
const FIXTURES = new URL('../fixtures/import/', import.meta.url);

let server: LocalServer;
let ws: TestWorkspace;
let other: TestWorkspace;
/** Jobs whose first progress asks them to stop, as a tasks/cancel between two steps would. */
const cancelOnFirstStep = new Set<string>();
/** The worker's services, as the server built them: the queue's batches below run on them. */
let workerDeps: JobDeps;

before(async () => {
  server = await startTestServer(
    { DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' },
    {
      demo: false,
      workHeld: true,
      jobDeps: (deps) => {
        const jobs = deps.services.jobs;
        const progress = jobs.progress.bind(jobs);
        jobs.progress = async (workspaceId, jobId, message, now) => {
          if (cancelOnFirstStep.delete(jobId)) await jobs.requestCancel(workspaceId, jobId, now);
          return progress(workspaceId, jobId, message, now);
        };
        workerDeps = deps;
        return deps;
      },
    },
  );
  [ws, other] = await Promise.all([createTestWorkspace(server), createTestWorkspace(server)]);
});
after(async () => {
  await server?.close();
});

/** A 2026-07-28 request of a client that declares the tasks extension (or, with `declare: false`, does not). */
const request = (method: string, params: Record<string, unknown>, token: string, declare = true) =>
  post(
    urlOf(server),
    {
      jsonrpc: '2.0',
      id: Math.floor(Math.random() * 1e9),
      method,
      params: {
        ...params,
        _meta: modernMeta(declare ? { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } } : {}),
      },
    },
    {
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(method === 'tools/call' ? { 'mcp-name': String(params.name) } : {}),
      ...(typeof params.taskId === 'string' ? { 'mcp-name': params.taskId } : {}),
    },
  );

const attach = async (token: string, file: string, name = file) => {
  const call = caller(server, token);
  const task = (await call('task_create', { title: `holds ${name}` })).structuredContent as { key: string; taskId: string };
  const text = await readFile(new URL(file, FIXTURES), 'utf8');
  const added = (await call('attachment_add', { taskId: task.key, name, text, type: 'text/csv' })).structuredContent as {
    attachmentId: string;
  };
  return { task, attachmentId: added.attachmentId };
};

type Task = { taskId: string; status: string; statusMessage?: string; result?: any; error?: any; ttlMs: number; pollIntervalMs: number };

const start = async (token: string, name: string, args: Record<string, unknown>): Promise<Task> => {
  const res = await request('tools/call', { name, arguments: args }, token);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.result.resultType, 'task', res.text);
  return res.json.result as Task;
};

/** tasks/get until the task ends (the worker runs beside the server; draining it ends every job). */
const ended = async (token: string, taskId: string): Promise<Task> => {
  await server.work.drain();
  const res = await request('tasks/get', { taskId }, token);
  assert.equal(res.status, 200, res.text);
  return res.json.result as Task;
};

describe('workspace_import as a task', () => {
  test('a dry run reports every column and writes nothing; the import then creates the tasks, and change_undo takes them back', async () => {
    // Arrange
    const { attachmentId } = await attach(ws.admin.token, 'jira.csv');
    const call = caller(server, ws.admin.token);
    const before = ((await call('tasks_search', { query: 'is:open' })).structuredContent as { tasks: unknown[] }).tasks.length;

    // Act: the dry run first
    const dry = await start(ws.admin.token, 'workspace_import', { attachmentId, dryRun: true });

    // Assert: a handle as the extension shapes it, then the report
    assert.equal(dry.status, 'working');
    assert.equal(typeof dry.taskId, 'string');
    assert.equal(dry.ttlMs, 86_400_000);
    assert.equal(dry.pollIntervalMs, 1000);
    const dryEnd = await ended(ws.admin.token, dry.taskId);
    assert.equal(dryEnd.status, 'completed', JSON.stringify(dryEnd));
    assert.equal(dryEnd.result.isError, false);
    assert.equal(dryEnd.result.structuredContent.format, 'jira');
    assert.equal(dryEnd.result.structuredContent.created, 0);
    assert.ok(dryEnd.result.structuredContent.report.some((l: string) => /Outward issue link \(Blocks\)/.test(l)));
    const afterDry = ((await call('tasks_search', { query: 'is:open' })).structuredContent as { tasks: unknown[] }).tasks.length;
    assert.equal(afterDry, before);

    // Act: the import
    const run = await start(ws.admin.token, 'workspace_import', { attachmentId });
    const done = await ended(ws.admin.token, run.taskId);

    // Assert
    assert.equal(done.status, 'completed', JSON.stringify(done));
    const out = done.result.structuredContent;
    assert.equal(out.format, 'jira');
    assert.equal(out.created, out.rows, JSON.stringify(out));
    assert.ok(out.changes.length >= 1);
    assert.match(done.result.content[0].text, /^Imported \d+ task\(s\) from jira\.csv \(jira\)/);
    const history = (await call('activity_list', {})).structuredContent as { entries: { client: string; tool?: string }[] };
    assert.ok(
      history.entries.some((e) => e.tool === 'workspace_import'),
      JSON.stringify(history.entries.slice(0, 3)),
    );

    // Act: undo every change the import made, newest first
    for (const changeId of [...out.changes].reverse()) {
      const undone = await call('change_undo', { activityId: changeId });
      assert.equal(undone.isError, false, JSON.stringify(undone));
    }

    // Assert: what was open before is all that is open
    const afterUndo = ((await call('tasks_search', { query: 'is:open' })).structuredContent as { tasks: unknown[] }).tasks.length;
    assert.equal(afterUndo, before);
  });

  test('a client that does not declare the extension is refused, naming the extension and the admin CLI; nothing is started', async () => {
    const { attachmentId } = await attach(ws.admin.token, 'linear.csv');

    const modern = await request('tools/call', { name: 'workspace_import', arguments: { attachmentId } }, ws.admin.token, false);
    const legacy = await legacyCall(
      server,
      'tools/call',
      { name: 'workspace_import', arguments: { attachmentId } },
      { token: ws.admin.token },
    );

    assert.equal(modern.status, 400);
    assert.equal(modern.json.error.code, -32021);
    assert.deepEqual(modern.json.error.data.requiredCapabilities, { extensions: { [TASKS]: {} } });
    assert.match(modern.json.error.message, /npm run admin -- import/);
    assert.equal(legacy.status, 200);
    assert.equal(legacy.json.result.isError, true);
    assert.match(legacy.json.result.content[0].text, /io\.modelcontextprotocol\/tasks.*npm run admin -- import/s);
    assert.equal(legacy.json.result._meta['sh.doers/refusal'].code, 'ERR_NEEDS_EXTENSION');
  });

  test('members are refused (admins and owners import), and a file that is no export is refused naming the columns it saw', async () => {
    const { attachmentId } = await attach(ws.admin.token, 'jira.csv');
    const member = await request('tools/call', { name: 'workspace_import', arguments: { attachmentId } }, ws.member.token);
    assert.equal(member.json.result.isError, true);
    assert.equal(member.json.result._meta['sh.doers/refusal'].code, 'ERR_ROLE_TOO_LOW');

    const call = caller(server, ws.admin.token);
    const holder = (await call('task_create', { title: 'holds a list' })).structuredContent as { key: string };
    const bad = (await call('attachment_add', { taskId: holder.key, name: 'groceries.csv', text: 'item,qty\nmilk,2\n', type: 'text/csv' }))
      .structuredContent as { attachmentId: string };
    const run = await start(ws.admin.token, 'workspace_import', { attachmentId: bad.attachmentId });
    const done = await ended(ws.admin.token, run.taskId);
    assert.equal(done.status, 'completed');
    assert.equal(done.result.isError, true);
    assert.match(done.result.content[0].text, /^attachmentId: groceries\.csv is its columns \(item, qty/);
    assert.deepEqual(done.result._meta['sh.doers/refusal'].data.columns, ['item', 'qty']);
  });

  test("a task is its starter's own: another user, or another workspace, gets -32602 as for a task that does not exist", async () => {
    const { attachmentId } = await attach(ws.admin.token, 'asana.csv');
    const run = await start(ws.admin.token, 'workspace_import', { attachmentId, dryRun: true });
    await server.work.drain();

    const owner = await request('tasks/get', { taskId: run.taskId }, ws.owner.token);
    const elsewhere = await request('tasks/get', { taskId: run.taskId }, other.owner.token);
    const cancel = await request('tasks/cancel', { taskId: run.taskId }, other.owner.token);
    const none = await request('tasks/get', { taskId: 'no-such-task' }, ws.admin.token);
    const undeclared = await request('tasks/get', { taskId: run.taskId }, ws.admin.token, false);
    const handshake = await legacyCall(server, 'tasks/get', { taskId: run.taskId }, { token: ws.admin.token });

    for (const res of [owner, elsewhere, cancel, none]) {
      assert.equal(res.json.error.code, -32602, res.text);
      assert.match(res.json.error.message, /taskId/);
    }
    assert.equal(undeclared.json.error.code, -32021);
    // The methods exist on 2026-07-28 only: the handshake era answers them as it answers any unknown method.
    assert.equal(handshake.status, 200);
    assert.equal(handshake.json.error.code, -32601);
  });

  test('tasks/cancel before the worker starts ends the task cancelled with nothing written; a cancel of an ended task is acknowledged', async () => {
    const { attachmentId } = await attach(ws.owner.token, 'todoist.csv', 'Groceries.csv');
    const call = caller(server, ws.owner.token);
    const projects = async () => ((await call('projects_list', {})).structuredContent as { projects: { name: string }[] }).projects;

    // The handle and the cancel are in before the worker's first turn.
    const run = await start(ws.owner.token, 'workspace_import', { attachmentId });
    const ack = await request('tasks/cancel', { taskId: run.taskId }, ws.owner.token);
    const done = await ended(ws.owner.token, run.taskId);
    const again = await request('tasks/cancel', { taskId: run.taskId }, ws.owner.token);

    assert.equal(ack.status, 200);
    assert.equal(ack.json.result.resultType, 'complete');
    assert.equal(done.status, 'cancelled');
    assert.match(done.statusMessage ?? '', /nothing was written/);
    assert.equal(again.json.result.resultType, 'complete');
    assert.ok(!(await projects()).some((p) => p.name === 'Groceries'));
  });

  test('tasks/cancel between two steps stops after a whole step, says how to take it back, and undo does', async () => {
    // Arrange: 120 rows of a Linear export: three calls of fifty rows
    const header = (await readFile(new URL('linear.csv', FIXTURES), 'utf8')).split('\n', 1)[0];
    const rows = Array.from({ length: 120 }, (_, i) => `BIG-${i + 1},Big,Row ${i + 1},,Todo,,Low,,,,,,,,,,,,,,,,,,,,,,,,,,,`);
    const call = caller(server, ws.owner.token);
    const holder = (await call('task_create', { title: 'holds big.csv' })).structuredContent as { key: string };
    const { attachmentId } = (
      await call('attachment_add', { taskId: holder.key, name: 'big.csv', text: [header, ...rows].join('\n'), type: 'text/csv' })
    ).structuredContent as { attachmentId: string };
    const count = async () => {
      let n = 0;
      let cursor: string | undefined;
      do {
        const page = (await call('tasks_search', { query: 'Row', limit: 50, ...(cursor ? { cursor } : {}) })).structuredContent as {
          tasks: unknown[];
          nextCursor?: string;
        };
        n += page.tasks.length;
        cursor = page.nextCursor;
      } while (cursor);
      return n;
    };
    const before = await count();

    // Act
    const run = await start(ws.owner.token, 'workspace_import', { attachmentId });
    cancelOnFirstStep.add(run.taskId);
    const done = await ended(ws.owner.token, run.taskId);

    // Assert: the first fifty rows, whole, and nothing after them
    assert.equal(done.status, 'cancelled', JSON.stringify(done));
    // The project the file's team became, then the one call of tasks.
    assert.match(
      done.statusMessage ?? '',
      /^Cancelled: 50 task\(s\) were written before it stopped, each call whole\. change_undo of act_\w+, act_\w+ takes them back\.$/,
    );
    assert.equal(await count(), before + 50);
    for (const changeId of (done.statusMessage!.match(/act_\w+/g) ?? []).reverse()) {
      const undone = await call('change_undo', { activityId: changeId });
      assert.equal(undone.isError, false, JSON.stringify(undone));
    }
    assert.equal(await count(), before);
  });

  test('one import at a time per workspace: a second is refused as busy while the first runs, and runs once it ended', async () => {
    const { attachmentId } = await attach(ws.owner.token, 'linear.csv');
    const first = await start(ws.owner.token, 'workspace_import', { attachmentId });

    const second = await request('tools/call', { name: 'workspace_import', arguments: { attachmentId } }, ws.admin.token);
    assert.equal(second.json.result.isError, true, second.text);
    assert.equal(second.json.result._meta['sh.doers/refusal'].reason, 'busy');

    assert.equal((await ended(ws.owner.token, first.taskId)).status, 'completed');
    const third = await start(ws.admin.token, 'workspace_import', { attachmentId });
    const done = await ended(ws.admin.token, third.taskId);
    // The same file again: every row was imported before, nothing is made twice.
    assert.equal(done.result.structuredContent.created, 0, JSON.stringify(done.result.structuredContent));
  });
});

describe('workspace_export as a task', () => {
  test('the export is an attachment of the task named, a doers export the client reads with resources/read', async () => {
    const call = caller(server, ws.owner.token);
    const holder = (await call('task_create', { title: 'exports' })).structuredContent as { key: string; taskId: string };

    const run = await start(ws.owner.token, 'workspace_export', { taskId: holder.key });
    const done = await ended(ws.owner.token, run.taskId);

    assert.equal(done.status, 'completed', JSON.stringify(done));
    const out = done.result.structuredContent;
    assert.equal(out.taskId, holder.taskId);
    assert.match(out.name, /^doers-export-.*\.jsonl$/);
    const read = await post(
      urlOf(server),
      { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: out.uri, _meta: modernMeta() } },
      { authorization: `Bearer ${ws.owner.token}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'resources/read', 'mcp-name': out.uri },
    );
    const text: string = read.json.result.contents[0].text;
    const [header, ...lines] = text.trim().split('\n');
    assert.equal(JSON.parse(header!).format, 'doers-workspace-export');
    assert.equal(JSON.parse(header!).workspaceId, ws.workspaceId);
    assert.equal(lines.length, out.items);
    assert.ok(
      lines.every((l) => !l.includes('#JOB')),
      'long work records are not exported',
    );
    // The tasks' part only: anyone who reads the task reads the file, so no webhook (its secret), inbox,
    // saved view, history, call claim or undo copy is in it, and members only by name, e-mail and role.
    assert.equal(JSON.parse(header!).content, 'tasks');
    const ws0 = `WS#${ws.workspaceId}`;
    for (const line of lines) {
      const item = JSON.parse(line).item as Record<string, { S?: string }>;
      const [pk, sk] = [item.pk!.S!, item.sk!.S!];
      const allowed =
        (pk === ws0 && (sk === 'META' || /^(USER|PROJECT|COMMENT)#/.test(sk))) ||
        (pk.startsWith(`${ws0}#T#`) && (sk === 'TASK' || sk === 'NOTES' || sk.startsWith('SUB#')));
      assert.ok(allowed, `${pk} ${sk} is not the tasks' part`);
      if (sk.startsWith('USER#'))
        assert.deepEqual(Object.keys(item).sort(), ['email', 'name', 'pk', 'role', 'sk', 'status', 'userId', 'workspaceId']);
      if (sk === 'TASK') assert.equal(item.reminders, undefined);
    }
  });

  test('a doers export imports into another workspace through workspace_import: its tasks, links and comments, once', async () => {
    // Arrange: a workspace with a project, a parent and a subtask, a blocker, a comment
    const source = await createTestWorkspace(server);
    const call = caller(server, source.owner.token);
    const project = (await call('project_create', { name: 'Moving' })).structuredContent as { projectId: string };
    const parent = (
      await call('task_create', { title: 'Pack the office', projectId: project.projectId, priority: 'P1', notes: 'Boxes first' })
    ).structuredContent as { key: string };
    const child = (await call('task_create', { title: 'Label the boxes', parent: parent.key, projectId: project.projectId }))
      .structuredContent as { key: string };
    await call('task_create', { title: 'Book the van', blockedBy: [child.key], labels: ['logistics'] });
    await call('comment_add', { taskId: parent.key, body: 'Start on Monday' });
    const run = await start(source.owner.token, 'workspace_export', { taskId: parent.key });
    const exported = (await ended(source.owner.token, run.taskId)).result.structuredContent as { uri: string };
    const read = await post(
      urlOf(server),
      { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: exported.uri, _meta: modernMeta() } },
      {
        authorization: `Bearer ${source.owner.token}`,
        'mcp-protocol-version': MODERN,
        'mcp-method': 'resources/read',
        'mcp-name': exported.uri,
      },
    );
    const into = caller(server, other.owner.token);
    const holder = (await into('task_create', { title: 'holds the export' })).structuredContent as { key: string };
    const { attachmentId } = (
      await into('attachment_add', { taskId: holder.key, name: 'moving.jsonl', text: read.json.result.contents[0].text })
    ).structuredContent as { attachmentId: string };

    // Act
    const imported = await ended(other.owner.token, (await start(other.owner.token, 'workspace_import', { attachmentId })).taskId);
    const again = await ended(other.owner.token, (await start(other.owner.token, 'workspace_import', { attachmentId })).taskId);

    // Assert: the four tasks (the export's holder among them), their tree, link, labels, notes and comment
    assert.equal(imported.status, 'completed', JSON.stringify(imported));
    assert.equal(imported.result.structuredContent.format, 'doers');
    assert.equal(imported.result.structuredContent.created, 3, JSON.stringify(imported.result.structuredContent.report));
    assert.equal(again.result.structuredContent.created, 0);
    const found = async (text: string) =>
      ((await into('tasks_search', { text, status: 'any' })).structuredContent as { tasks: { key: string; title: string }[] }).tasks.find(
        (t) => t.title === text,
      )!;
    const pack = (await into('task_get', { taskId: (await found('Pack the office')).key })).structuredContent as {
      notes: string;
      priority: string;
      projectId: string;
      subtasks: { title: string }[];
    };
    const van = (await into('task_get', { taskId: (await found('Book the van')).key })).structuredContent as {
      labels: string[];
      blockedBy: { key: string }[];
    };
    assert.equal(pack.notes, 'Boxes first');
    assert.equal(pack.priority, 'P1');
    const projects = ((await into('projects_list', {})).structuredContent as { projects: { projectId: string; name: string }[] }).projects;
    assert.equal(projects.find((p) => p.projectId === pack.projectId)?.name, 'Moving');
    assert.deepEqual(
      pack.subtasks.map((t) => t.title),
      ['Label the boxes'],
    );
    assert.deepEqual(van.labels, ['logistics']);
    assert.deepEqual(
      van.blockedBy.map((b) => b.key),
      [(await found('Label the boxes')).key],
    );
    const comments = (await into('comments_list', { taskId: (await found('Pack the office')).key })).structuredContent as {
      comments: { body: string; authorName?: string }[];
    };
    // A member's import writes as no one else: the comment is the importer's, headed by its author's name.
    assert.deepEqual(
      comments.comments.map((c) => [c.authorName, c.body]),
      [[other.owner.name, `*${source.owner.name} wrote:*\n\nStart on Monday`]],
    );
  });
});

describe("the worker function's batch (an SQS event, one job a message)", () => {
  const event = (...bodies: string[]): SQSEvent =>
    ({ Records: bodies.map((body, i) => ({ messageId: `m${i}`, body })) }) as unknown as SQSEvent;

  test('runs the job of a message once: a second delivery of it changes nothing, and neither is reported as failed', async () => {
    const call = caller(server, ws.owner.token);
    const holder = (await call('task_create', { title: 'exports by message' })).structuredContent as { key: string };
    const run = await start(ws.owner.token, 'workspace_export', { taskId: holder.key });
    const body = JSON.stringify({ workspaceId: ws.workspaceId, jobId: run.taskId });
    const errors: unknown[] = [];

    const first = await runQueueBatch(workerDeps, event(body), (_id, err) => errors.push(err));
    const done = (await request('tasks/get', { taskId: run.taskId }, ws.owner.token)).json.result as Task & { lastUpdatedAt: string };
    const second = await runQueueBatch(workerDeps, event(body), (_id, err) => errors.push(err));
    const again = (await request('tasks/get', { taskId: run.taskId }, ws.owner.token)).json.result as Task & { lastUpdatedAt: string };
    await server.work.drain(); // the held hand-over finds the job ended, and leaves it

    assert.deepEqual(first.batchItemFailures, []);
    assert.deepEqual(second.batchItemFailures, []);
    assert.deepEqual(errors, []);
    assert.equal(done.status, 'completed');
    assert.deepEqual(again, done);
    const files = ((await call('task_get', { taskId: holder.key })).structuredContent as { files?: unknown[] }).files ?? [];
    assert.equal(files.length, 1, 'one export, not two');
  });

  test('a message that names no job is dropped (nothing could ever run it), said to the log', async () => {
    const errors: string[] = [];

    const out = await runQueueBatch(workerDeps, event('not json', '{"jobId":1}'), (id) => errors.push(id));

    assert.deepEqual(out.batchItemFailures, []);
    assert.deepEqual(errors, ['m0', 'm1']);
  });

  test('a job whose table cannot be reached is handed back to the queue, to be tried again', async () => {
    const unreachable = createJobDeps(server.app.config, createDocumentClient({ endpoint: 'http://127.0.0.1:9' }), undefined);

    const out = await runQueueBatch(unreachable, event(JSON.stringify({ workspaceId: ws.workspaceId, jobId: 'job-1' })), () => {});

    assert.deepEqual(out.batchItemFailures, [{ itemIdentifier: 'm0' }]);
  });
});

describe('the official v2 client', () => {
  test('attaches a Jira CSV, runs workspace_import as a task, follows it with tasks/get to its result, and undoes it', async () => {
    // Arrange: a 2026-07-28 client of the official SDK that declares the tasks extension
    const client = new Client(
      { name: 'doers-long-work', version: '1.0.0' },
      { capabilities: { extensions: { [TASKS]: {} } } as never, versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(urlOf(server)), {
        requestInit: { headers: { Authorization: `Bearer ${ws.owner.token}` } },
      }),
    );
    const TaskShape = z
      .object({ taskId: z.string(), status: z.string(), pollIntervalMs: z.number(), result: z.any().optional() })
      .passthrough();
    try {
      const holder = await client.callTool({ name: 'task_create', arguments: { title: 'holds the Jira export' } });
      const key = (holder.structuredContent as { key: string }).key;
      const csv = (await readFile(new URL('jira.csv', FIXTURES), 'utf8')).replaceAll('OPS-', 'SDK-').replaceAll('TEST-', 'SDKT-');
      const added = await client.callTool({
        name: 'attachment_add',
        arguments: { taskId: key, name: 'sdk.csv', text: csv, type: 'text/csv' },
      });
      const { attachmentId } = added.structuredContent as { attachmentId: string };

      // Act: the call answers the task's handle. The SDK (2.4.0) refuses any result type but complete and
      // input_required on 2026-07-28 (UNSUPPORTED_RESULT_TYPE), so this one request is sent as the SDK would
      // send it, by hand; the client then follows the task.
      const handle = await start(ws.owner.token, 'workspace_import', { attachmentId });
      let task = TaskShape.parse(handle);
      for (let i = 0; i < 50 && task.status === 'working'; i++) {
        await server.work.drain();
        task = await client.request({ method: 'tasks/get', params: { taskId: handle.taskId } } as never, TaskShape);
      }

      // Assert: the handle, then the import's result, as tools/call would have answered it
      assert.equal(handle.status, 'working');
      assert.ok((client.getServerCapabilities() as { extensions?: Record<string, unknown> })?.extensions?.[TASKS]);
      assert.equal(task.status, 'completed');
      const result = task.result as { isError: boolean; structuredContent: { created: number; changes: string[] } };
      assert.equal(result.isError, false);
      assert.ok(result.structuredContent.created > 0);

      // Act: undo every change, newest first
      for (const activityId of [...result.structuredContent.changes].reverse()) {
        const undone = await client.callTool({ name: 'change_undo', arguments: { activityId } });
        assert.equal(undone.isError, false, JSON.stringify(undone.content));
      }

      // Assert: none of the file's tasks is left
      const left = await client.callTool({ name: 'tasks_search', arguments: { text: 'SSL certificate', status: 'any' } });
      assert.equal((left.structuredContent as { tasks: unknown[] }).tasks.length, 0);
    } finally {
      await client.close();
    }
  });
});
