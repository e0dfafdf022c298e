import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { countedInvoke, type DeployedFunction, type Instance, startDeployedFunction } from '../helpers/deployed.js';
import { type BundleAnswer, mcpEvent } from '../helpers/lambda-bundle.js';
import { approve, pkcePair } from '../helpers/oauth.js';
import { addMember, createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// The regression guard of per-call cost: how many DynamoDB requests one MCP request costs as deployed.
// The function is the stack's bundle (built as the stack builds it) run by Node 22 as a Lambda
// instance with the template's environment, in front of DynamoDB Local (dynalite without Java); a
// proxy counts every request on the wire. The budgets are a warm instance's with a warm credential:
// the instance has served this workspace, so it knows the token's owner and holds the directory
// snapshot (names of members and projects), and the credential was checked within
// DOERS_AUTH_CACHE_SECONDS. A call is then the limits (admission and release, one write each) and the
// tool's own requests. What the other paths add is pinned on its own below: a cold credential one
// BatchGetItem, a token the instance has not seen one more and a first-of-the-day stamp, a member or
// project change one reading of the directory on every instance, a fresh instance both. A change that
// adds a request fails here; one that removes a request should lower its budget.

let fn: DeployedFunction;
/**
 * The template's environment but for two values that change no count: a credential cache longer
 * than the template's 5 s (which would expire somewhere in a run of this length and add a read to a
 * random row: the cold-credential instance below shows that read), and a rate limit these calls
 * cannot reach (admission is one conditional write whatever the limit).
 */
let warm: Instance;
/** The same with the credential cache off: every call checks its credential. */
let cold: Instance;
let ws: TestWorkspace;
let host: string;
const ids: Record<string, string> = {};

before(
  async () => {
    fn = await startDeployedFunction();
    host = new URL(fn.server.url).host;
    ws = await createTestWorkspace(fn.server);
    [warm, cold] = await Promise.all([
      fn.startInstance({ DOERS_AUTH_CACHE_SECONDS: '300', DOERS_RATE_LIMIT_CALLS: '10000' }),
      fn.startInstance({ DOERS_AUTH_CACHE_SECONDS: '0', DOERS_RATE_LIMIT_CALLS: '10000' }),
    ]);
    // Each instance has seen the owner's token and read the directory, as after its first calls; the
    // token's once-a-day last-used stamp is written. What those first calls cost is counted below.
    for (const instance of [warm, cold]) await instance.invoke(event('tools/call', { name: 'tasks_search', arguments: { limit: 1 } }));
  },
  { timeout: 120_000 },
);
after(() => fn?.close());

const event = (method: string, params: Record<string, unknown> = {}, token = ws.owner.token, legacy?: string) =>
  mcpEvent(token, method, params, { host, ...(legacy ? { legacy } : {}) });

const counted = (instance: Instance, method: string, params: Record<string, unknown> = {}, token = ws.owner.token) =>
  countedInvoke(fn, instance, event(method, params, token));

const call = (name: string, args: Record<string, unknown> = {}, instance = warm) =>
  counted(instance, 'tools/call', { name, arguments: args });

const body = (answer: BundleAnswer) => {
  assert.equal(answer.res.statusCode, 200, answer.res.body);
  return JSON.parse(answer.res.body);
};

const structured = (answer: BundleAnswer) => {
  const json = body(answer);
  assert.equal(json.result?.isError, false, answer.res.body);
  return json.result.structuredContent;
};

/**
 * The same requests, in any order: a call's reads go out beside its admission, so which of them the
 * proxy sees first varies (the credential's, before the call, always come first).
 */
const assertSameOps = (actual: readonly string[], expected: readonly string[], message?: string) =>
  assert.deepEqual([...actual].sort(), [...expected].sort(), message ?? `${actual.join(' ')} is not ${expected.join(' ')}`);

const assertBudget = (what: string, ops: string[], budget: number) => {
  assert.ok(ops.length <= budget, `${what}: ${ops.length} DynamoDB requests (${ops.join(', ')}), budget ${budget}`);
};

/** The workspace's directory version, read past the proxy (uncounted). */
const directoryVersion = async () => (await fn.server.app.services.directory.getWorkspace(ws.workspaceId))?.directoryVersion ?? 0;

describe('the credential', () => {
  test('a token this instance has not seen: two requests (token, then member and workspace) and its first-of-the-day last-used stamp; after that one, or none while it is cached', async () => {
    const member = await addMember(fn.server, ws.workspaceId, 'member', 'UTC');

    const first = await counted(cold, 'tools/list', {}, member.token);
    const again = await counted(cold, 'tools/list', {}, member.token);
    const seenWarm = await counted(warm, 'tools/list', {}, member.token);
    const cached = await counted(warm, 'tools/list', {}, member.token);

    assertSameOps(first.ops, ['BatchGetItem', 'BatchGetItem', 'UpdateItem']);
    assertSameOps(again.ops, ['BatchGetItem']);
    // Stamped already today: only the two reads.
    assertSameOps(seenWarm.ops, ['BatchGetItem', 'BatchGetItem']);
    assertSameOps(cached.ops, []);
  });

  test('an access token of the built-in authorization server: one request (its grant, the member and the workspace together)', async () => {
    // Arrange: a token as an assistant gets it, through registration, sign-in and consent.
    const { server } = fn;
    const redirect = 'http://127.0.0.1:5555/cb';
    const registered = (await (
      await fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
      })
    ).json()) as { client_id: string };
    const pkce = pkcePair();
    const authorize = new URL(`${server.url}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: registered.client_id,
      response_type: 'code',
      redirect_uri: redirect,
      scope: 'tasks:read',
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(k, v);
    const back = await approve(authorize);
    const tokens = (await (
      await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: back.searchParams.get('code')!,
          redirect_uri: redirect,
          client_id: registered.client_id,
          code_verifier: pkce.verifier,
        }).toString(),
      })
    ).json()) as { access_token: string };

    // Act
    const first = await counted(cold, 'tools/list', {}, tokens.access_token);
    const listed = await counted(cold, 'tools/list', {}, tokens.access_token);

    // Assert: the first call of the day also stamps the grant's last use.
    assertSameOps(first.ops, ['BatchGetItem', 'UpdateItem']);
    body(listed.answer);
    assertSameOps(listed.ops, ['BatchGetItem']);
  });

  test('a cold credential costs exactly one request more than a warm one, its BatchGetItem, first', async () => {
    // The member added above changed the directory: the cold instance, which sees the new version at
    // once, reads it again on its next call (the warm one sees it when its cached principal expires).
    await cold.invoke(event('tools/call', { name: 'tasks_search', arguments: { limit: 1 } }));
    for (const [method, params] of [
      ['tools/list', {}],
      ['tools/call', { name: 'me_get', arguments: {} }],
      ['tools/call', { name: 'agenda_get', arguments: {} }],
      ['tools/call', { name: 'tasks_search', arguments: {} }],
    ] as const) {
      const w = await counted(warm, method, params);
      const c = await counted(cold, method, params);

      body(w.answer);
      body(c.answer);
      assertSameOps(c.ops, ['BatchGetItem', ...w.ops], `${method} ${JSON.stringify(params)}`);
    }
  });

  test("a fresh instance's first agenda_get: the token's owner, the member and workspace, the limits, both halves of the directory and the agenda", async () => {
    const fresh = await fn.startInstance({});
    try {
      const { answer, ops } = await countedInvoke(fn, fresh, event('tools/call', { name: 'agenda_get', arguments: {} }));

      structured(answer);
      // Token record (by hash), then member and workspace; admission; members, projects, the four
      // priorities of the person's list, their counts and the unread count; release.
      assertSameOps(ops, ['BatchGetItem', 'BatchGetItem', 'UpdateItem', ...Array(8).fill('Query'), 'UpdateItem']);
    } finally {
      fresh.close();
    }
  });
});

describe('listing and discovery cost at most the credential: none while it is warm', () => {
  const cases: [string, string, Record<string, unknown>, string?][] = [
    ['tools/list', 'tools/list', {}],
    ['prompts/list', 'prompts/list', {}],
    ['resources/templates/list', 'resources/templates/list', {}],
    ['resources/list', 'resources/list', {}],
    ['server/discover', 'server/discover', {}],
    ['prompts/get', 'prompts/get', { name: 'daily_briefing', arguments: {} }],
    [
      'initialize',
      'initialize',
      { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      '2025-11-25',
    ],
    ['ping', 'ping', {}, '2025-11-25'],
  ];
  for (const [label, method, params, legacy] of cases) {
    test(`${label}: no request warm, one (the credential) cold`, async () => {
      const w = await countedInvoke(fn, warm, event(method, params, ws.owner.token, legacy));
      const c = await countedInvoke(fn, cold, event(method, params, ws.owner.token, legacy));

      assert.equal(body(w.answer).error, undefined, w.answer.res.body);
      assert.equal(body(c.answer).error, undefined, c.answer.res.body);
      assertBudget(label, w.ops, 0);
      assertBudget(`${label} (cold credential)`, c.ops, 1);
    });
  }
});

describe('tool calls: limits and the tool itself', () => {
  // Each request waits 10 ms at the proxy, as in a region: requests sent together overlap, so the
  // steps counted are the round trips a call waits for one after another.
  before(() => {
    fn.proxy.delayMs = 10;
  });
  after(() => {
    fn.proxy.delayMs = 0;
  });
  // In order: later calls use what earlier ones created. Budgets: a warm instance with a warm
  // credential (admission and release are two of each).
  // Each row: its requests, and the steps it waits for one after another (the admission beside the
  // first reads; a change's write after them; the release last).
  const steps: [tool: string, args: () => Record<string, unknown>, budget: number, inSequence: number, keep?: (out: any) => void][] = [
    // Admission and release, and beside the admission the unread inbox entries counted (one Query).
    ['me_get', () => ({}), 3, 2],
    // A call that must not be made twice claims itself in its write, and keeps its answer on the
    // claim beside the release (one UpdateItem more, in the same step: store/call-claims.ts).
    ['project_create', () => ({ name: 'Counted project' }), 4, 3, (o) => (ids.project = o.projectId)],
    [
      'task_create',
      () => ({ title: 'Counted task', projectId: ids.project, assignee: 'me', dueDate: '2026-01-02', labels: ['x'] }),
      4,
      3,
      (o) => {
        ids.task = o.taskId;
        ids.key = o.key;
      },
    ],
    // One person's day: the overdue and due-today tasks of their list, one Query per priority (four,
    // in parallel, each at most a page), their counts (one Query of their count partition), and the
    // caller's unread inbox entries counted (one Query).
    ['agenda_get', () => ({}), 8, 2],
    // Anyone's: the workspace's list by priority (four) and its counts, kept in four partitions (four).
    ['agenda_get', () => ({ assignee: 'anyone' }), 11, 2],
    // A list is four partitions, one per priority, read in parallel and merged.
    ['tasks_search', () => ({}), 6, 2],
    // Text: the entries of its word (one Query), the tasks they name (one BatchGetItem), and, when
    // those do not fill the page, the entries of the longer words it starts (one Query; none match).
    ['tasks_search', () => ({ assignee: 'me', text: 'counted' }), 5, 4],
    ['task_get', () => ({ taskId: ids.task }), 3, 2],
    // A number this instance has given or read before: no read of its claim.
    ['task_get', () => ({ taskId: ids.key }), 3, 2],
    ['task_update', () => ({ taskId: ids.task, version: 1, title: 'Counted task, renamed' }), 4, 3, (o) => (ids.change = o.activityId)],
    // The record, the task as it is now (records keep only what changed), and the one write that
    // restores the task, records the undo and marks the original.
    ['change_undo', () => ({ activityId: ids.change }), 5, 4],
    // One key range per page: a task's or an actor's history; the workspace's is four partitions merged.
    ['activity_list', () => ({}), 6, 2],
    ['activity_list', () => ({ task: ids.task }), 3, 2],
    ['activity_list', () => ({ actor: 'me' }), 3, 2],
    ['activity_list', () => ({ since: '2020-01-01', until: '2099-12-31' }), 6, 2],
    // One transaction per chunk of up to 100 actions: two tasks and their records are one write.
    ['tasks_create', () => ({ tasks: [{ title: 'Counted bulk one', assignee: 'me' }, { title: 'Counted bulk two' }] }), 4, 3],
    // The tasks in one BatchGetItem, the changes and their records in one transaction.
    ['tasks_update', () => ({ tasks: [{ taskId: ids.task, title: 'Counted task, bulk-renamed' }] }), 4, 3],
    // Fifty tasks: each its item, number claim, record and word entries (about 300 actions; their
    // counts combine into a few), in five transactions of at most 100, which take their fifty numbers
    // first (one UpdateItem) so that the keys run in order whichever transaction lands first.
    [
      'tasks_create',
      () => ({ tasks: Array.from({ length: 50 }, (_, i) => ({ title: `Counted fifty ${i + 1}`, priority: 'P3' })) }),
      9,
      8,
      (o) => (ids.fifty = o.items.map((i: { key: string }) => i.key).join(' ')),
    ],
    // Fifty completions: the tasks in one BatchGetItem (of up to 100), 100 actions (change, record each)
    // and their counts, combined per count item, in two transactions.
    ['tasks_update', () => ({ tasks: ids.fifty!.split(' ').map((key) => ({ taskId: key, status: 'done' })) }), 5, 4],
    ['task_complete', () => ({ taskId: ids.task }), 4, 3],
    ['task_reopen', () => ({ taskId: ids.task }), 4, 3],
    ['comment_add', () => ({ taskId: ids.task, body: 'A comment' }), 5, 3, (o) => (ids.comment = o.commentId)],
    ['comments_list', () => ({ taskId: ids.task }), 4, 2],
    ['comment_delete', () => ({ taskId: ids.task, commentId: ids.comment }), 4, 3],
    ['projects_list', () => ({}), 3, 2],
    // The project and its counts (one Query of its count partition, whatever it holds).
    ['project_get', () => ({ projectId: ids.project }), 4, 2],
    ['project_update', () => ({ projectId: ids.project, version: 1, description: 'Counted' }), 4, 3],
    // Its own statuses, one removed: the project's write alone, however many tasks were in it (none is rewritten).
    [
      'project_update',
      () => ({
        projectId: ids.project,
        version: 2,
        statuses: [
          { name: 'Todo', category: 'unstarted' },
          { name: 'Doing', category: 'started' },
          { name: 'Done', category: 'done' },
        ],
      }),
      4,
      3,
    ],
    ['members_list', () => ({}), 3, 2],
    // The unread count, the unread and the read entries: three Queries beside the admission.
    ['inbox_list', () => ({}), 5, 2],
    // Up to an entry: the ids of the unread ones beside the admission, their updates (none here), then the count.
    ['inbox_mark', () => ({ upTo: 'act_~', state: 'read' }), 4, 3],
    // The member read beside the admission, then the member's write with its record.
    ['me_update', () => ({ timeZone: 'Europe/Berlin' }), 4, 3],
    // The member, its e-mail claim, its record and the directory's version in one transaction.
    [
      'member_invite',
      () => ({ email: 'counted@example.test', name: 'Counted Person', role: 'member' }),
      4,
      3,
      (o) => (ids.user = o.userId),
    ],
    ['member_role_set', () => ({ userId: ids.user, role: 'viewer' }), 4, 3],
    // The team, the removal, then their tokens and connected apps to revoke.
    ['member_remove', () => ({ userId: ids.user }), 6, 4],
    ['task_delete', () => ({ taskId: ids.task }), 5, 3],
    ['project_archive', () => ({ projectId: ids.project }), 4, 3],
    // The project, its counts (is it empty?), the write.
    ['project_delete', () => ({ projectId: ids.project }), 5, 4],
  ];
  const seen: string[] = [];
  for (const [tool, args, budget, inSequenceBudget, keep] of steps) {
    test(`${tool}: at most ${budget} requests, ${inSequenceBudget} in sequence`, async () => {
      const version = await directoryVersion();
      const { answer, ops, steps: inSequence } = await call(tool, args());

      const out = structured(answer);
      keep?.(out);
      seen.push(`${tool}: ${ops.length} in ${inSequence} step(s) (${ops.join(' ')})`);
      assertBudget(tool, ops, budget);
      assert.ok(inSequence <= inSequenceBudget, `${tool}: ${inSequence} steps in sequence, budget ${inSequenceBudget}`);
      // A member or project change: this instance's next call that needs names reads the directory
      // once (counted here, so no later row pays it), as every other instance's does.
      if ((await directoryVersion()) !== version) {
        const reread = await call('tasks_search', { limit: 1 });
        seen.push(`  then the directory again: ${reread.ops.length} (${reread.ops.join(' ')})`);
        assertSameOps(reread.ops, ['UpdateItem', ...Array(6).fill('Query'), 'UpdateItem'], 'members, projects and the search');
      }
    });
  }
  after(() => console.log(`DynamoDB requests per tool call (warm instance, warm credential):\n  ${seen.join('\n  ')}`));

  test('completing a recurring task moves it to its next occurrence in the one write task_complete makes', async () => {
    const made = structured((await call('task_create', { title: 'Counted recurring', repeat: 'every monday' })).answer);

    const { answer, ops } = await call('task_complete', { taskId: made.key });

    const out = structured(answer);
    assert.equal(out.status, 'Todo');
    assert.equal(out.doneFor, made.dueDate);
    assertBudget('task_complete of a recurring task', ops, 4);
    assert.equal(ops.filter((op) => op === 'TransactWriteItems').length, 1, ops.join(' '));
  });

  test('task_get of a task with 50 subtasks is one read of its partition: 3 requests with admission and release', async () => {
    const parent = structured((await call('task_create', { title: 'Counted parent' })).answer);
    const made = structured(
      (
        await call('tasks_create', {
          tasks: Array.from({ length: 50 }, (_, i) => ({ title: `Counted subtask ${i + 1}`, parent: parent.key })),
        })
      ).answer,
    );
    assert.ok(
      made.items.every((i: { status: string }) => i.status === 'created'),
      JSON.stringify(made.items.slice(0, 2)),
    );

    const { answer, ops } = await call('task_get', { taskId: parent.key });

    assert.equal(structured(answer).subtasks.length, 50);
    assertBudget('task_get with 50 subtasks', ops, 3);
    assertSameOps(ops, ['UpdateItem', 'Query', 'UpdateItem']);
  });

  test('attachment_add of a 1 MB file is 5 DynamoDB requests (its answer kept beside the release) and one S3 PUT; task_get of a task with files reads no more than without', async () => {
    // Arrange
    const t = structured((await call('task_create', { title: 'Counted files' })).answer);
    const content = Buffer.alloc(1024 * 1024, 7).toString('base64');
    fn.s3.seen.length = 0;

    // Act
    const added = await call('attachment_add', { taskId: t.key, name: 'one-megabyte.bin', content });
    const s3 = [...fn.s3.seen];
    await call('attachment_add', { taskId: t.key, name: 'notes.txt', text: 'Counted.' });
    const got = await call('task_get', { taskId: t.key });

    // Assert: admission, the task, the one write (item, task count, bytes, record, the call's claim), the answer kept and the release.
    assert.equal(structured(added.answer).size, 1024 * 1024);
    assertBudget('attachment_add', added.ops, 5);
    assertSameOps(added.ops, ['UpdateItem', 'Query', 'TransactWriteItems', 'UpdateItem', 'UpdateItem']);
    assert.deepEqual(s3, ['PUT'], 'one S3 request: the PUT of the bytes');
    assert.equal(structured(got.answer).files.length, 2);
    assertSameOps(got.ops, ['UpdateItem', 'Query', 'UpdateItem'], 'the files come in the read of the task');
  });

  test('a subtask costs one read of its parent more than a task; moving one reads the new parent and its own', async () => {
    const parent = structured((await call('task_create', { title: 'Counted parent two' })).answer);
    const other = structured((await call('task_create', { title: 'Counted parent three' })).answer);

    const created = await call('task_create', { title: 'Counted child', parent: parent.key });
    const child = structured(created.answer);
    const moved = await call('task_update', { taskId: child.key, version: child.version, parent: other.key });

    assertBudget('task_create with a parent', created.ops, 5);
    assertBudget('task_update moving it', moved.ops, 5);
    assert.equal(moved.ops.filter((op) => op === 'TransactWriteItems').length, 1, moved.ops.join(' '));
  });

  test('deleting a parent with its subtasks, and completing one with them, is one write each', async () => {
    const parent = structured((await call('task_create', { title: 'Counted tree' })).answer);
    await call('tasks_create', {
      tasks: [
        { title: 'Counted leaf one', parent: parent.key },
        { title: 'Counted leaf two', parent: parent.key },
      ],
    });

    const done = await call('task_complete', { taskId: parent.key, withSubtasks: true });
    const gone = await call('task_delete', { taskId: parent.key });

    // The task with its entries, its subtasks, the write (and admission, release); the delete also the comments of each.
    assertBudget('task_complete withSubtasks', done.ops, 5);
    assertBudget('task_delete with subtasks', gone.ops, 8);
    for (const ops of [done.ops, gone.ops]) assert.equal(ops.filter((op) => op === 'TransactWriteItems').length, 1, ops.join(' '));
  });

  test('a member or project change costs every instance one reading of the directory (members, projects), then none', async () => {
    await call('project_create', { name: 'Changes the directory' });
    // The cold-credential instance sees the new version with its next credential read.
    await counted(cold, 'tools/call', { name: 'me_get', arguments: {} });

    const first = await call('tasks_search', { limit: 1 }, cold);
    const second = await call('tasks_search', { limit: 1 }, cold);

    assertSameOps(
      first.ops,
      ['BatchGetItem', 'UpdateItem', ...Array(6).fill('Query'), 'UpdateItem'],
      'members, projects and the search (its four priorities)',
    );
    assertSameOps(second.ops, ['BatchGetItem', 'UpdateItem', ...Array(4).fill('Query'), 'UpdateItem'], 'the search alone');
  });

  test("a task key this instance has never seen costs one read of its number's claim, then none", async () => {
    const made = structured((await call('task_create', { title: 'Numbered elsewhere' })).answer);

    // The cold-credential instance has not created or read this task: its key is new to it.
    const first = await call('task_get', { taskId: made.key }, cold);
    const second = await call('task_get', { taskId: `#${made.number ?? made.key.split('-')[1]}` }, cold);

    // The claim (where numbers are claimed, and where the layout before claimed them: one BatchGetItem),
    // then the task's partition: the task, its notes and its subtasks' entries (one Query).
    assertSameOps(first.ops, ['BatchGetItem', 'UpdateItem', 'BatchGetItem', 'Query', 'UpdateItem'], 'the claim, then the task');
    assertSameOps(second.ops, ['BatchGetItem', 'UpdateItem', 'Query', 'UpdateItem'], 'the task alone');
  });

  test('a resource read: limits, the task and its comments', async () => {
    const task = await call('task_create', { title: 'Readable' });
    const { answer, ops } = await counted(warm, 'resources/read', { uri: `doers://tasks/${structured(task.answer).taskId}` });

    body(answer);
    assertBudget('resources/read', ops, 4);
  });
});
