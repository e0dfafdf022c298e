import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect } from '../../cli/target.js';
import { sweepCommand } from '../../cli/transfer.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { SCOPES } from '../../lambda/vocabulary.js';
import { admin } from '../helpers/admin-cli.js';
import { modernCall } from '../helpers/local.js';
import {
  addToken,
  caller,
  createTestWorkspace,
  startWorkspaceServer,
  type TestWorkspace,
  toolText,
} from '../helpers/workspace-fixtures.js';

// `npm run admin -- export` on one stack and `import` on another: two local servers with their own
// data (each with its own embedded DynamoDB), a workspace used through the tools on the first, moved
// to the second, and read there through the tools with a token made there.

let work: string;
let fromDir: string;
let toDir: string;
let from: LocalServer;
let to: LocalServer;
let ws: TestWorkspace;
let file: string;
/** What the workspace holds on the first stack, through its tools. */
const made: Record<string, string> = {};

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'doers-transfer-'));
  fromDir = join(work, 'from');
  toDir = join(work, 'to');
  [from, to] = await Promise.all([startWorkspaceServer({ DOERS_DATA_DIR: fromDir }), startWorkspaceServer({ DOERS_DATA_DIR: toDir })]);
  ws = await createTestWorkspace(from);
  const call = caller(from, ws.owner.token);
  // Its own statuses (on the project item) and a task in one of them: both must come across.
  const project = await call('project_create', {
    name: 'Moving house',
    statuses: [
      { name: 'Todo', category: 'unstarted' },
      { name: 'Packing', category: 'started' },
      { name: 'Moved', category: 'done' },
    ],
  });
  made.project = project.structuredContent.projectId;
  const a = await call('task_create', {
    title: 'Book the van',
    notes: 'Two-tonne, with a tail lift',
    priority: 'P1',
    dueDate: '2031-05-02',
    projectId: made.project,
    labels: ['move'],
    status: 'Packing',
  });
  const b = await call('task_create', { title: 'Pack the kitchen', blockedBy: [a.structuredContent.key], repeat: 'every saturday' });
  const c = await call('task_create', { title: 'Cancel the old lease' });
  made.a = a.structuredContent.key;
  made.b = b.structuredContent.key;
  await call('comment_add', { taskId: made.a, body: 'Quote from two firms first' });
  // A file on it: its bytes go beside the export and come back on the other stack.
  made.file = (await call('attachment_add', { taskId: made.a, name: 'quote.txt', text: 'Two firms, two quotes.' })).structuredContent.uri;
  await call('task_complete', { taskId: c.structuredContent.key });
  made.change = (await call('task_update', { taskId: made.a, version: 1, title: 'Book the van (Friday)' })).structuredContent.activityId;
  file = join(work, 'workspace.jsonl');
});
after(async () => {
  await Promise.all([from?.close(), to?.close()]);
  await rm(work, { recursive: true, force: true });
});

describe('moving a workspace between stacks', { timeout: 120_000 }, () => {
  test('export writes the whole workspace to a new file, and refuses to overwrite one', async () => {
    const out = await admin(fromDir, 'export', '--workspace', ws.workspaceId, '--file', file);
    const again = await admin(fromDir, 'export', '--workspace', ws.workspaceId, '--file', file);

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, new RegExp(`^Exported workspace ${ws.workspaceId} .*: \\d+ items \\(4 members, 3 tasks`));
    assert.match(out.stderr, /Tokens and connected apps are not exported/);
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    assert.equal(JSON.parse(lines[0]!).format, 'doers-workspace-export');
    assert.doesNotMatch(lines.join('\n'), /doers_pat_|TOKEN#/, 'no credential travels');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exists already; name a new file/);
  });

  test('import brings it to the other stack with ids, keys, versions and history; its people read it with a token made there', async () => {
    const before = await caller(from, ws.owner.token)('tasks_search', { status: 'any', limit: 100 });

    const out = await admin(toDir, 'import', '--file', file);
    const minted = await admin(
      toDir,
      'token',
      'create',
      '--email',
      ws.owner.email,
      '--scopes',
      'tasks:read tasks:write team:read team:admin',
    );
    const call = caller(to, minted.stdout.trim());
    const after = await call('tasks_search', { status: 'any', limit: 100 });
    const task = await call('task_get', { taskId: made.a });
    const comments = await call('comments_list', { taskId: made.a });
    const history = await call('activity_list', { task: made.a });
    const members = await call('members_list', {});
    const oldToken = await modernCall(to, 'tools/call', { name: 'me_get', arguments: {} }, { token: ws.owner.token });

    assert.equal(out.code, 0, out.stderr);
    assert.equal(minted.code, 0, minted.stderr);
    assert.deepEqual(after.structuredContent.tasks, before.structuredContent.tasks, 'the same tasks, keys, versions, links and rules');
    assert.equal(task.structuredContent.notes, 'Two-tonne, with a tail lift');
    assert.equal(task.structuredContent.projectName, 'Moving house');
    assert.equal(task.structuredContent.status, 'Packing');
    const attached = await modernCall(to, 'resources/read', { uri: made.file }, { token: minted.stdout.trim() });
    assert.equal(attached.json.result?.contents[0].text, 'Two firms, two quotes.', 'the attachment came with its bytes');
    assert.deepEqual(
      (await call('project_get', { projectId: made.project })).structuredContent.statuses.map((x: { name: string }) => x.name),
      ['Todo', 'Packing', 'Moved'],
    );
    assert.deepEqual(
      comments.structuredContent.comments.map((c: { body: string }) => c.body),
      ['Quote from two firms first'],
    );
    assert.ok(history.structuredContent.entries.some((e: { activityId: string }) => e.activityId === made.change));
    assert.equal(members.structuredContent.members.length, 4);
    assert.equal(oldToken.status, 401, 'a token of the first stack does not work on the second');
  });

  test('the history works there: a change made on the first stack is undone on the second, and new tasks continue the numbers', async () => {
    const minted = await admin(toDir, 'token', 'create', '--email', ws.admin.email, '--scopes', 'tasks:read tasks:write');
    const call = caller(to, minted.stdout.trim());

    const undone = await call('change_undo', { activityId: made.change });
    const next = await call('task_create', { title: 'Label the boxes' });

    assert.equal(undone.isError, false, toolText(undone));
    assert.equal((await call('task_get', { taskId: made.a })).structuredContent.title, 'Book the van');
    assert.equal(next.structuredContent.key, `${made.a!.split('-')[0]}-4`);
  });

  test('importing it again, or a file with an item of another workspace, is refused and writes nothing', async () => {
    const twice = await admin(toDir, 'import', '--file', file);
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const header = JSON.parse(lines[0]!);
    const foreign = join(work, 'foreign.jsonl');
    await writeFile(
      foreign,
      [
        JSON.stringify({ ...header, workspaceId: 'ws_elsewhere', items: 1 }),
        JSON.stringify({ item: { pk: { S: `WS#${ws.workspaceId}` }, sk: { S: 'META' }, name: { S: 'Taken over' } } }),
      ].join('\n'),
    );
    // Items of its own partitions that would act elsewhere: a member naming another workspace (sign-in
    // would make them act there), a task in another workspace's list index.
    const smuggled = async (name: string, item: Record<string, unknown>) => {
      const f = join(work, `${name}.jsonl`);
      await writeFile(f, [JSON.stringify({ ...header, workspaceId: 'ws_new', items: 1 }), JSON.stringify({ item })].join('\n'));
      return admin(toDir, 'import', '--file', f);
    };
    const member = await smuggled('member', {
      pk: { S: 'WS#ws_new' },
      sk: { S: 'USER#usr_x' },
      workspaceId: { S: ws.workspaceId },
      role: { S: 'owner' },
    });
    const listed = await smuggled('listed', {
      pk: { S: 'WS#ws_new#T#t1' },
      sk: { S: 'TASK' },
      gsi1pk: { S: `WS#${ws.workspaceId}#L#P1` },
    });
    // A header whose id holds a `#` would make another workspace's task partition this one's.
    const prefixed = join(work, 'prefixed.jsonl');
    await writeFile(
      prefixed,
      [
        JSON.stringify({ ...header, workspaceId: `${ws.workspaceId}#T#x`, items: 1 }),
        JSON.stringify({ item: { pk: { S: `WS#${ws.workspaceId}#T#x` }, sk: { S: 'TASK' }, title: { S: 'PWNED' } } }),
      ].join('\n'),
    );
    const refusedPrefix = await admin(toDir, 'import', '--file', prefixed);
    const tokenList = await smuggled('token-list', { pk: { S: 'WS#ws_new#T#t2' }, sk: { S: 'TASK' }, gsi1pk: { S: 'WS#ws_new#TOKENS' } });
    const cut = join(work, 'cut.jsonl');
    await writeFile(cut, lines.slice(0, 5).join('\n'));

    const refusedForeign = await admin(toDir, 'import', '--file', foreign);
    const refusedCut = await admin(toDir, 'import', '--file', cut);

    assert.equal(twice.code, 1);
    assert.match(twice.stderr, new RegExp(`workspace ${ws.workspaceId} exists in .* already; .*Nothing was imported`));
    assert.equal(refusedForeign.code, 1);
    assert.match(refusedForeign.stderr, /line 2 is not an item of workspace ws_elsewhere; nothing was imported/);
    assert.match(refusedPrefix.stderr, /its header names ".*#T#x", which is not a workspace id/);
    assert.match(member.stderr, new RegExp(`line 2 names workspace ${ws.workspaceId}; nothing was imported`));
    assert.match(listed.stderr, /line 2 has gsi1pk outside workspace ws_new; nothing was imported/);
    assert.match(tokenList.stderr, /line 2 has gsi1pk of a credential list/);
    assert.equal(refusedCut.code, 1);
    assert.match(refusedCut.stderr, /items, the header says \d+: the file is cut short/);
  });
});

describe('files sweep', () => {
  test("removes a workspace's objects that no attachment names, once they are older than an hour, and nothing else", async () => {
    // Arrange: an object a crash left (put straight into the bucket), beside the workspace's real file
    const target = await connect(undefined, undefined, { DOERS_DATA_DIR: fromDir });
    const task = (await caller(from, ws.owner.token)('task_get', { taskId: made.a })).structuredContent;
    const orphan = `workspaces/${ws.workspaceId}/tasks/${task.taskId}/${task.taskId}.orphan0000`;
    await target.bucket!.put(orphan, new TextEncoder().encode('left by a crash'), 'text/plain');
    const lines: string[] = [];
    const out = { stdout: (l: string) => lines.push(l), stderr: (l: string) => lines.push(l) };
    const later = new Date(Date.now() + 2 * 3600_000);

    // Act
    await sweepCommand.run({ workspace: ws.workspaceId }, target, out, new Date());
    await sweepCommand.run({ workspace: ws.workspaceId, 'dry-run': true }, target, out, later);
    const listedBefore = await target.bucket!.list(`workspaces/${ws.workspaceId}/`);
    await sweepCommand.run({ workspace: ws.workspaceId }, target, out, later);
    const listedAfter = await target.bucket!.list(`workspaces/${ws.workspaceId}/`);

    // Assert
    assert.match(lines[0]!, /^Removed 0 object\(s\) .* \(of 0 older than an hour\)/, 'a young object is left alone');
    assert.match(lines[1]!, /^Would remove 1 object\(s\)/);
    assert.ok(
      listedBefore.some((f) => f.key === orphan),
      'the dry run removed nothing',
    );
    assert.deepEqual(
      listedAfter.map((f) => f.key).filter((k) => k === orphan),
      [],
    );
    assert.equal(listedAfter.length, listedBefore.length - 1, 'the real file stays');
    const read = await modernCall(from, 'resources/read', { uri: made.file }, { token: ws.owner.token });
    assert.equal(read.json.result?.contents[0].text, 'Two firms, two quotes.');
  });
});

describe('an import line of a workspace whose id starts with the target id', () => {
  test('a partition or an index key of ws_<id>c is refused for ws_<id>, naming the line, and nothing is imported', async () => {
    // Arrange: a file of workspace `target`, each with one item that lives in (or is listed in) `longer`'s partitions
    const target = `ws_pfx${Date.now().toString(36)}`;
    const longer = `${target}c`;
    const header = {
      format: 'doers-workspace-export',
      version: 1,
      workspaceId: target,
      name: 'Prefix',
      exportedAt: new Date().toISOString(),
      items: 1,
    };
    const fileWith = async (name: string, item: Record<string, unknown>) => {
      const f = join(work, `prefix-${name}.jsonl`);
      await writeFile(f, [JSON.stringify(header), JSON.stringify({ item })].join('\n'));
      return f;
    };
    const cases = [
      ['pk', { pk: { S: `WS#${longer}#T#t1` }, sk: { S: 'TASK' } }, `line 2 is not an item of workspace ${target}`],
      ...(['gsi1pk', 'gsi2pk', 'gsi3pk'] as const).map(
        (key) =>
          [
            key,
            { pk: { S: `WS#${target}#T#t1` }, sk: { S: 'TASK' }, [key]: { S: `WS#${longer}#L#P1` } },
            `line 2 has ${key} outside workspace ${target}`,
          ] as const,
      ),
    ] as const;

    for (const [name, item, said] of cases) {
      // Act
      const refused = await admin(toDir, 'import', '--file', await fileWith(name, item));

      // Assert
      assert.equal(refused.code, 1, `${name}: ${refused.stdout}`);
      assert.match(refused.stderr, new RegExp(`--file: ${said}; nothing was imported`), name);
    }
    assert.equal(await to.app.services.directory.getWorkspace(target), undefined);
  });
});

describe('the demo workspace round trip into a fresh local data dir', { timeout: 120_000 }, () => {
  let demoDir: string;
  let freshDir: string;
  let demo: LocalServer;
  let fresh: LocalServer;
  let exported: string;
  const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  const everything = async (server: LocalServer, token: string) => {
    const call = caller(server, token);
    const tasks = (await call('tasks_search', { status: 'any', limit: 100 })).structuredContent.tasks;
    const full = await Promise.all(tasks.map((t: { key: string }) => call('task_get', { taskId: t.key })));
    const comments = await Promise.all(tasks.map((t: { key: string }) => call('comments_list', { taskId: t.key })));
    return {
      tasks: full.map((f) => f.structuredContent),
      comments: comments.map((c) => c.structuredContent.comments.map((x: { body: string; authorId: string }) => [x.body, x.authorId])),
      views: (await call('views_list', {})).structuredContent,
    };
  };

  before(async () => {
    const root = await mkdtemp(join(tmpdir(), 'doers-demo-trip-'));
    demoDir = join(root, 'demo');
    freshDir = join(root, 'fresh');
    exported = join(root, 'demo.jsonl');
    [demo, fresh] = await Promise.all([
      startWorkspaceServer({ DOERS_DATA_DIR: demoDir }),
      startWorkspaceServer({ DOERS_DATA_DIR: freshDir, DOERS_DEMO_SEED: 'off' }),
    ]);
    // A comment on a task that waits on two others, so comments and links both travel.
    await caller(demo, demo.token)('comment_add', { taskId: 'DEMO-13', body: 'Walkthrough **after** QA signs off' });
  });
  after(async () => {
    await Promise.all([demo?.close(), fresh?.close()]);
    await rm(join(demoDir, '..'), { recursive: true, force: true });
  });

  test('DOERS_DEMO_SEED=off starts without the demo; the demo comes across whole, and again beside itself with --as', async () => {
    assert.equal(fresh.token, '', 'no dev token without the demo');
    assert.equal(await fresh.app.services.directory.getWorkspace('ws_demo'), undefined);
    const source = await everything(demo, demo.token);

    const out = await admin(demoDir, 'export', '--workspace', 'ws_demo', '--file', exported);
    const plain = await admin(freshDir, 'import', '--file', exported);
    const copied = await admin(freshDir, 'import', '--file', exported, '--as', 'COPY', '--workspace', 'ws_copy');
    const again = await admin(freshDir, 'import', '--file', exported, '--as', 'TWIN');

    assert.equal(out.code, 0, out.stderr);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(copied.code, 0, copied.stderr);
    assert.equal(again.code, 0, again.stderr);
    assert.match(
      copied.stdout,
      /Imported workspace ws_copy \(Demo workspace\) .*; a copy of ws_demo, its tasks COPY-<number>, \d+ ids made new\./,
    );
    assert.match(
      copied.stderr,
      /ada@example\.com, alan@example\.com, grace@example\.com, katherine@example\.com are members of another workspace here/,
    );
    const minted = await admin(freshDir, 'token', 'create', '--email', 'ada@example.com', '--scopes', 'tasks:read tasks:write');
    const moved = await everything(fresh, minted.stdout.trim());
    assert.deepEqual(moved, source, 'every task, key, link, comment and view, as it was');
    assert.equal(source.tasks.length, 30);
    assert.ok(
      source.tasks.some((t) => t.blockedBy?.length),
      'links are part of what was compared',
    );
    assert.ok(source.comments.flat().length >= 1, 'comments are part of what was compared');

    const copy = await everything(fresh, await addToken(fresh, 'ws_copy', 'usr_ada', SCOPES));
    const asCopy = (x: unknown) =>
      JSON.stringify(x)
        .replace(UUID, 'ID')
        .replace(/view_[0-9a-v]{16}/g, 'VIEW')
        .replace(/\bDEMO-/g, 'COPY-');
    assert.deepEqual(JSON.parse(asCopy(copy)), JSON.parse(asCopy(source)), 'the copy: the same, its keys COPY-n');
    const ids = (x: unknown) => new Set(JSON.stringify(x).match(UUID));
    const shared = [...ids(copy)].filter((id) => ids(source).has(id));
    assert.deepEqual(shared, [], 'no task, project or comment id of the original');
    const resolved = await caller(fresh, await addToken(fresh, 'ws_copy', 'usr_ada', SCOPES))('task_get', { taskId: 'DEMO-13' });
    assert.equal(resolved.structuredContent.key, 'COPY-13', "the export's key still names the copy's tasks (history, comments)");
    const twin = /Imported workspace (ws_[0-9a-f]{12}) /.exec(again.stdout)?.[1];
    assert.equal((await fresh.app.services.directory.getWorkspace(twin!))?.key, 'TWIN', 'a second copy of the same export beside the two');
  });
});
