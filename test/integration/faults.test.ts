import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { type DynamoProxy, type ProxyMode, startProxiedServer } from '../helpers/dynamo-proxy.js';
import { modernCall } from '../helpers/local.js';
import { RecordingObserver } from '../helpers/recording-observer.js';
import { addMember, caller, createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// Faults injected on DynamoDB at every write a tool makes (throttling and 500s past the SDK's
// retries, a dropped connection, a conditional failure), through a proxy in front of the embedded
// DynamoDB. Each answer is 503 + Retry-After or a tool error, never a 500 and never internals; what
// is stored afterwards is all of the write or none of it; the audit line says how the call ended;
// and the next call once DynamoDB is back succeeds. (Faults while the credential and the limits are
// checked: fail-safe.test.ts and limits-faults.test.ts.) Each tool gets a server, a proxy and a
// store of its own, so the tools run side by side: under a fault most of a call's time is the SDK's
// backoff and the writer's replay window, waiting rather than working.

const FAULTS: Exclude<ProxyMode, 'pass'>[] = ['throttle', 'internal', 'reset', 'conditional'];
const INTERNALS = /exception|dynamo|doers-workspace|doers-limits|ECONN|at [\w.<>]+ \(|\.ts:\d+/i;

// The shared rig of the tests after the per-tool ones.
let server: LocalServer;
let proxy: DynamoProxy;
let ws: TestWorkspace;

/** Tools faulted at once (each waits out retries, so more than the cores). */
const TOOLS_AT_ONCE = 8;

/** A server behind its own fault-injecting proxy, a workspace on it, and what its audit lines said. */
interface Rig {
  readonly server: LocalServer;
  readonly proxy: DynamoProxy;
  readonly ws: TestWorkspace;
  readonly observer: RecordingObserver;
  close(): Promise<void>;
}

const startRig = async (): Promise<Rig> => {
  const observer = new RecordingObserver();
  const { server, proxy, close } = await startProxiedServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' }, { observer });
  const ws = await createTestWorkspace(server);
  // Each token's first call of the day also stamps its last use (one write in the credential check);
  // make it here, so the writes counted below are the tools' own.
  for (const m of [ws.owner, ws.admin, ws.member, ws.viewer]) await caller(server, m.token)('me_get', {});
  return { server, proxy, ws, observer, close };
};

let rig: Rig;
before(async () => {
  rig = await startRig();
  ({ server, proxy, ws } = rig);
  scenarios = scenariosOn(rig);
});
after(() => rig.close());

interface Case {
  readonly args: Record<string, unknown>;
  /** Fails unless the stored state is all of the call's write or none of it. */
  readonly allOrNothing: () => Promise<void>;
}

type Scenarios = Record<string, { token: () => string; arrange: () => Promise<Case> }>;
let scenarios: Scenarios;

/** Each writing tool's call on a rig, with what it needs made first and how to check all or nothing. */
const scenariosOn = ({ server, ws }: Pick<Rig, 'server' | 'ws'>): Scenarios => {
  const tasks = () => server.app.services.tasks;
  const member = () => caller(server, ws.member.token);
  const newTask = async (title = `Task ${randomUUID().slice(0, 8)}`) =>
    (await member()('task_create', { title, notes: `made ${randomUUID()}` })).structuredContent.taskId as string;
  const commentCount = async (taskId: string) =>
    (await member()('comments_list', { taskId, limit: 100 })).structuredContent?.returned as number | undefined;

  return {
    task_create: {
      token: () => ws.member.token,
      arrange: async () => {
        const title = `Created ${randomUUID()}`;
        return {
          args: { title, assignee: 'me', priority: 'P2' },
          allOrNothing: async () => {
            const found = (await member()('tasks_search', { text: title, status: 'any' })).structuredContent.tasks as { taskId: string }[];
            assert.ok(found.length <= 1, 'one call, at most one task');
            // The counts the agenda reads (kept by the write) agree with the list index (written by it too).
            const agenda = (await member()('agenda_get', {})).structuredContent;
            const mine = (await member()('tasks_search', { assignee: 'me', limit: 100 })).structuredContent;
            assert.equal(agenda.counts.open, mine.returned, 'the kept counts agree with the tasks');
            if (found[0]) {
              const stored = await tasks().get(ws.workspaceId, found[0].taskId);
              assert.deepEqual([stored?.version, stored?.priority, stored?.assigneeId], [1, 'P2', ws.member.userId]);
            }
          },
        };
      },
    },
    task_update: {
      token: () => ws.member.token,
      arrange: async () => {
        const taskId = await newTask('Before');
        return {
          args: { taskId, version: 1, title: 'After', priority: 'P1' },
          allOrNothing: async () => {
            const t = await tasks().get(ws.workspaceId, taskId);
            assert.ok(
              [JSON.stringify([1, 'Before', 'P4']), JSON.stringify([2, 'After', 'P1'])].includes(
                JSON.stringify([t?.version, t?.title, t?.priority]),
              ),
              JSON.stringify(t),
            );
          },
        };
      },
    },
    task_complete: {
      token: () => ws.member.token,
      arrange: async () => {
        const taskId = await newTask();
        return {
          args: { taskId, version: 1 },
          allOrNothing: async () => {
            const t = await tasks().get(ws.workspaceId, taskId);
            const state = [t?.version, t?.status, t?.completedAt !== undefined];
            assert.ok(
              [JSON.stringify([1, 'open', false]), JSON.stringify([2, 'done', true])].includes(JSON.stringify(state)),
              JSON.stringify(t),
            );
          },
        };
      },
    },
    comment_add: {
      token: () => ws.member.token,
      arrange: async () => {
        const taskId = await newTask();
        await member()('comment_add', { taskId, body: 'first' });
        return {
          args: { taskId, body: 'second' },
          allOrNothing: async () => assert.ok([1, 2].includes((await commentCount(taskId))!)),
        };
      },
    },
    task_delete: {
      token: () => ws.member.token,
      arrange: async () => {
        const taskId = await newTask();
        await Promise.all([member()('comment_add', { taskId, body: 'a' }), member()('comment_add', { taskId, body: 'b' })]);
        return {
          args: { taskId, version: 1 },
          allOrNothing: async () => {
            const stored = await tasks().get(ws.workspaceId, taskId);
            // Still there: with both comments. Gone: so are its comments, as far as anyone can see.
            if (stored) assert.equal(await commentCount(taskId), 2);
            else assert.equal(await commentCount(taskId), undefined);
          },
        };
      },
    },
    member_role_set: {
      token: () => ws.owner.token,
      arrange: async () => {
        const second = await addMember(server, ws.workspaceId, 'owner', 'UTC');
        return {
          args: { userId: second.userId, role: 'admin' },
          allOrNothing: async () => {
            const members = await server.app.services.directory.listMembers(ws.workspaceId);
            const role = members.find((m) => m.userId === second.userId)?.role;
            assert.ok(role === 'owner' || role === 'admin', String(role));
            assert.ok(members.some((m) => m.role === 'owner' && m.status === 'active'));
            const listed = (await caller(server, ws.owner.token)('members_list', {})).structuredContent.members as {
              userId: string;
              role: string;
            }[];
            assert.equal(listed.find((m) => m.userId === second.userId)?.role, role, 'members_list shows what is stored');
          },
        };
      },
    },
    project_create: {
      token: () => ws.admin.token,
      arrange: async () => {
        const name = `Project ${randomUUID().slice(0, 8)}`;
        return {
          args: { name },
          allOrNothing: async () => {
            const projects = (await caller(server, ws.admin.token)('projects_list', { includeArchived: true })).structuredContent
              .projects as { name: string }[];
            assert.ok(projects.filter((p) => p.name === name).length <= 1);
          },
        };
      },
    },
  };
};
const TOOLS = Object.keys(scenariosOn({} as Rig));

/** Writes a clean call of the tool makes, so every one of them gets its fault. */
const writesOf = async ({ server, proxy }: Rig, own: Scenarios, tool: string): Promise<number> => {
  const { args } = await own[tool]!.arrange();
  const before = proxy.operations.length;
  const res = await modernCall(server, 'tools/call', { name: tool, arguments: args }, { token: own[tool]!.token() });
  assert.equal(res.json.result?.isError, false, res.text);
  return proxy.operations.slice(before).filter((op) => /^(Put|Update|Delete)Item$|Write/.test(op)).length;
};

describe('DynamoDB faults at each write of a tool', { concurrency: TOOLS_AT_ONCE }, () => {
  for (const tool of TOOLS) {
    test(`${tool}: 503 + Retry-After or a tool error, all or nothing stored, the audit line agrees, then it works again`, {
      timeout: 120_000,
    }, async (t) => {
      const r = await startRig();
      t.after(() => r.close());
      const { server, proxy, observer } = r;
      const scenarios = scenariosOn(r);
      const writes = await writesOf(r, scenarios, tool);
      assert.ok(writes >= 1, `${tool} writes`);
      for (let nth = 1; nth <= writes; nth++) {
        for (const fault of FAULTS) {
          // Arrange
          const c = await scenarios[tool]!.arrange();
          const audited = observer.toolCalls.length;

          // Act
          proxy.failWritesFrom(nth, fault);
          const res = await modernCall(
            server,
            'tools/call',
            { name: tool, arguments: c.args },
            { token: scenarios[tool]!.token() },
          ).finally(() => proxy.clearFault());

          // Assert
          const where = `${tool}, write ${nth}/${writes}, ${fault}`;
          assert.doesNotMatch(res.text, INTERNALS, where);
          if (res.status === 503) {
            assert.equal(res.headers.get('retry-after'), '1', where);
            assert.equal(res.json.error.code, -32000, where);
          } else {
            assert.equal(res.status, 200, `${where}: ${res.text}`);
          }
          const outcome = observer.toolCalls.slice(audited).find((e) => e.tool === tool)?.outcome;
          const expected = res.status === 503 ? 'failed' : res.json.result.isError ? 'error' : 'ok';
          assert.equal(outcome, expected, `${where}: audit line`);
          await c.allOrNothing();
        }
      }
      const { args } = await scenarios[tool]!.arrange();
      const again = await modernCall(server, 'tools/call', { name: tool, arguments: args }, { token: scenarios[tool]!.token() });
      assert.equal(again.json.result?.isError, false, again.text);
    });
  }

  test('a write DynamoDB never answers: once the SDK gives up (3 attempts of 3 s) the answer says it may not have been written and how to check, nothing stored, then it works again', {
    timeout: 60_000,
  }, async () => {
    // Arrange
    const c = await scenarios.task_create!.arrange();
    const started = performance.now();

    // Act
    proxy.failWritesFrom(1, 'hang');
    const res = await modernCall(server, 'tools/call', { name: 'task_create', arguments: c.args }, { token: ws.member.token }).finally(() =>
      proxy.clearFault(),
    );
    const tookMs = performance.now() - started;

    // Assert: well inside the function's 15 s timeout and API Gateway's 30 s. The write was sent and
    // never answered, so nobody can know whether it landed: no 503 that invites a blind retry, but a
    // tool error that says so and names what to check.
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.result.isError, true);
    assert.match(res.json.result.content[0].text, /^Not confirmed: .*may or may not have been written\. It would have created TEST-\d+ /);
    assert.match(res.json.result.content[0].text, /task_get TEST-\d+ shows whether it did/);
    assert.doesNotMatch(res.text, INTERNALS);
    assert.ok(tookMs < 12_000, `took ${Math.round(tookMs)} ms`);
    await c.allOrNothing();
    const again = await modernCall(server, 'tools/call', { name: 'task_create', arguments: c.args }, { token: ws.member.token });
    assert.equal(again.json.result?.isError, false, again.text);
  });
});
