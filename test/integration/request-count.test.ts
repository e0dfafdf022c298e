import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { type DynamoProxy, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { legacyCall, modernCall, type RawResponse } from '../helpers/local.js';
import { approve, pkcePair } from '../helpers/oauth.js';
import { addMember, createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// The regression guard of per-call cost: how many DynamoDB requests one MCP request sends, counted
// on the wire by a proxy in front of the embedded DynamoDB. Limits are on as the stack sets them.
// The credential cache is off (DOERS_AUTH_CACHE_SECONDS=0), so every figure is the cold-cache cost:
// credential (1) + limits (1 in, 1 out) + the tool's own requests. The instance's directory snapshot
// (names of members and projects) is warm, as it is on any instance after its first call and until
// the next member or project change; what a change costs once is counted on its own. A change that
// adds a request fails here; one that removes a request should lower its budget.

let proxied: Awaited<ReturnType<typeof startProxiedServer>>;
let proxy: DynamoProxy;
let server: LocalServer;
let ws: TestWorkspace;
const ids: Record<string, string> = {};

before(async () => {
  proxied = await startProxiedServer({ DOERS_AUTH_CACHE_SECONDS: '0', DOERS_RATE_LIMIT_CALLS: '10000' });
  ({ server, proxy } = proxied);
  ws = await createTestWorkspace(server);
  // The owner's token has been used today already (its once-a-day last-used stamp is written), as on
  // any day after a token's first call; that stamp is counted on its own below.
  await warmNames();
});
after(() => proxied.close());

/** Sends one request and returns it with the DynamoDB operations it caused. */
const counted = async (send: () => Promise<RawResponse>): Promise<{ res: RawResponse; ops: string[] }> => {
  // Let the previous request's release (sent after its answer) land first.
  await new Promise((r) => setTimeout(r, 20));
  proxy.operations.length = 0;
  const res = await send();
  await new Promise((r) => setTimeout(r, 20));
  return { res, ops: [...proxy.operations] };
};

const call = (name: string, args: Record<string, unknown> = {}) =>
  counted(() => modernCall(server, 'tools/call', { name, arguments: args }, { token: ws.owner.token }));

/** An uncounted call that reads the directory snapshot, as any earlier call on the instance would have. */
const warmNames = () => modernCall(server, 'tools/call', { name: 'tasks_search', arguments: { limit: 1 } }, { token: ws.owner.token });

const structured = (res: RawResponse) => {
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.result?.isError, false, res.text);
  return res.json.result.structuredContent;
};

const assertBudget = (what: string, ops: string[], budget: number) => {
  assert.ok(ops.length <= budget, `${what}: ${ops.length} DynamoDB requests (${ops.join(', ')}), budget ${budget}`);
};

describe('the credential', () => {
  test('a token this instance has not seen: two requests (token, then member and workspace) and its first-of-the-day last-used stamp; after that one', async () => {
    const member = await addMember(server, ws.workspaceId, 'member', 'UTC');

    const first = await counted(() => modernCall(server, 'tools/list', {}, { token: member.token }));
    const second = await counted(() => modernCall(server, 'tools/list', {}, { token: member.token }));

    assert.deepEqual(first.ops, ['BatchGetItem', 'BatchGetItem', 'UpdateItem']);
    assert.deepEqual(second.ops, ['BatchGetItem']);
  });

  test('an access token of the built-in authorization server: one request (its grant, the member and the workspace together)', async () => {
    // Arrange: a token as an assistant gets it, through registration, sign-in and consent.
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
    const first = await counted(() => modernCall(server, 'tools/list', {}, { token: tokens.access_token }));
    const listed = await counted(() => modernCall(server, 'tools/list', {}, { token: tokens.access_token }));

    // Assert: the first call of the day also stamps the grant's last use.
    assert.deepEqual(first.ops, ['BatchGetItem', 'UpdateItem']);
    assert.equal(listed.res.status, 200, listed.res.text);
    assert.deepEqual(listed.ops, ['BatchGetItem']);
  });
});

describe('listing and discovery cost at most the credential', () => {
  // The instance has seen the token before, as a warm Lambda instance has.
  before(() => modernCall(server, 'tools/list', {}, { token: ws.owner.token }));

  const cases: [string, () => Promise<RawResponse>][] = [
    ['tools/list', () => modernCall(server, 'tools/list', {}, { token: ws.owner.token })],
    ['prompts/list', () => modernCall(server, 'prompts/list', {}, { token: ws.owner.token })],
    ['resources/templates/list', () => modernCall(server, 'resources/templates/list', {}, { token: ws.owner.token })],
    ['resources/list', () => modernCall(server, 'resources/list', {}, { token: ws.owner.token })],
    ['server/discover', () => modernCall(server, 'server/discover', {}, { token: ws.owner.token })],
    ['prompts/get', () => modernCall(server, 'prompts/get', { name: 'daily_briefing', arguments: {} }, { token: ws.owner.token })],
    [
      'initialize',
      () =>
        legacyCall(
          server,
          'initialize',
          { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
          { token: ws.owner.token },
        ),
    ],
    ['ping', () => legacyCall(server, 'ping', {}, { token: ws.owner.token })],
  ];
  for (const [method, send] of cases) {
    test(`${method}: one request (the credential)`, async () => {
      const { res, ops } = await counted(send);

      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.error, undefined, res.text);
      assertBudget(method, ops, 1);
    });
  }
});

describe('tool calls: credential, limits and the tool itself', () => {
  // In order: later calls use what earlier ones created.
  const steps: [tool: string, args: () => Record<string, unknown>, budget: number, keep?: (out: any) => void][] = [
    ['me_get', () => ({}), 3],
    ['project_create', () => ({ name: 'Counted project' }), 4, (o) => (ids.project = o.projectId)],
    [
      'task_create',
      () => ({ title: 'Counted task', projectId: ids.project, assignee: 'me', dueDate: '2026-01-02', labels: ['x'] }),
      4,
      (o) => (ids.task = o.taskId),
    ],
    ['agenda_get', () => ({}), 4],
    ['agenda_get', () => ({ assignee: 'anyone' }), 5],
    ['tasks_search', () => ({}), 4],
    ['tasks_search', () => ({ assignee: 'me', text: 'counted' }), 4],
    ['task_get', () => ({ taskId: ids.task }), 4],
    ['task_update', () => ({ taskId: ids.task, version: 1, title: 'Counted task, renamed' }), 5, (o) => (ids.change = o.activityId)],
    // The record's read and the one write that restores the task, records the undo and marks the original.
    ['change_undo', () => ({ activityId: ids.change }), 5],
    // One key range per page: the workspace's history, a task's, or an actor's.
    ['activity_list', () => ({}), 4],
    ['activity_list', () => ({ task: ids.task }), 4],
    ['activity_list', () => ({ actor: 'me' }), 4],
    ['activity_list', () => ({ since: '2020-01-01', until: '2099-12-31' }), 4],
    ['task_complete', () => ({ taskId: ids.task }), 5],
    ['task_reopen', () => ({ taskId: ids.task }), 5],
    ['comment_add', () => ({ taskId: ids.task, body: 'A comment' }), 5, (o) => (ids.comment = o.commentId)],
    ['comments_list', () => ({ taskId: ids.task }), 5],
    ['comment_delete', () => ({ taskId: ids.task, commentId: ids.comment }), 5],
    ['projects_list', () => ({}), 5],
    ['project_get', () => ({ projectId: ids.project }), 6],
    ['project_update', () => ({ projectId: ids.project, version: 1, description: 'Counted' }), 6],
    ['members_list', () => ({}), 4],
    ['member_invite', () => ({ email: 'counted@example.test', name: 'Counted Person', role: 'member' }), 5, (o) => (ids.user = o.userId)],
    ['member_role_set', () => ({ userId: ids.user, role: 'viewer' }), 6],
    ['member_remove', () => ({ userId: ids.user }), 7],
    ['task_delete', () => ({ taskId: ids.task }), 6],
    ['project_archive', () => ({ projectId: ids.project }), 6],
    ['project_delete', () => ({ projectId: ids.project }), 7],
  ];
  const seen: string[] = [];
  for (const [tool, args, budget, keep] of steps) {
    test(`${tool}: at most ${budget} requests`, async () => {
      await warmNames();
      const { res, ops } = await call(tool, args());

      const out = structured(res);
      keep?.(out);
      seen.push(`${tool}: ${ops.length} (${ops.join(' ')})`);
      assertBudget(tool, ops, budget);
    });
  }
  after(() => console.log(`DynamoDB requests per tool call:\n  ${seen.join('\n  ')}`));

  test('a member or project change costs every instance one reading of the directory, then none', async () => {
    await call('project_create', { name: 'Changes the directory' });

    const first = await call('tasks_search', { limit: 1 });
    const second = await call('tasks_search', { limit: 1 });

    assert.deepEqual(first.ops.filter((o) => o === 'Query').length, 3, `members, projects and the search: ${first.ops.join(' ')}`);
    assert.deepEqual(second.ops.filter((o) => o === 'Query').length, 1, `the search alone: ${second.ops.join(' ')}`);
  });

  test('a resource read: credential, limits, the task and its comments', async () => {
    const task = await call('task_create', { title: 'Readable' });
    const { res, ops } = await counted(() =>
      modernCall(server, 'resources/read', { uri: `doers://tasks/${structured(task.res).taskId}` }, { token: ws.owner.token }),
    );

    assert.equal(res.status, 200, res.text);
    assertBudget('resources/read', ops, 5);
  });
});
