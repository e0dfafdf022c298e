import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { type CapacityProxy, startCapacityProxy } from '../helpers/capacity-proxy.js';
import { startTestServer } from '../helpers/local.js';
import { QUERY_READS, queryArgs, type SeededWorkspace, seedWorkspace } from '../helpers/seed-workspace.js';
import { caller, createTestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Every read path costs about what it returns, whatever the size of the workspace: the same calls on
// two workspaces of the same shape, of 300 and 3,000 tasks, read (nearly) the same units, as
// DynamoDB reports them (the embedded store behind a proxy that asks each request for its consumed
// capacity). A read whose cost grew with the workspace (a filter over all its tasks, a count by
// reading) fails here. The bench (npm run bench) runs the same at 2,000 and 20,000.

let dynamo: Awaited<ReturnType<typeof startEmbeddedDynamo>>;
let units: CapacityProxy;
let server: LocalServer;
let small: SeededWorkspace;
let large: SeededWorkspace;

before(
  async () => {
    dynamo = await startEmbeddedDynamo(':memory:');
    units = await startCapacityProxy(dynamo.endpoint);
    server = await startTestServer({
      DOERS_DYNAMODB_ENDPOINT: units.endpoint,
      DOERS_RATE_LIMIT_CALLS: '0',
      DOERS_MAX_CONCURRENT_CALLS: '0',
      DOERS_AUTH_CACHE_SECONDS: '300',
    });
    [small, large] = await Promise.all([seedWorkspace(server, 300), seedWorkspace(server, 3_000)]);
  },
  { timeout: 600_000 },
);
after(async () => {
  await server?.close();
  await units?.stop();
  await dynamo?.close();
});

/**
 * The read units of one call, on a warm instance (the credential and the names are read already).
 * Pages of three, so that every list fills its page at both sizes: a page that is not full at 300
 * tasks would read less for returning less.
 */
const readUnits = async (s: SeededWorkspace, tool: string, given: Record<string, unknown>): Promise<number> => {
  const args = ['tasks_search', 'agenda_get', 'activity_list', 'projects_list'].includes(tool) ? { limit: 3, ...given } : given;
  const call = caller(server, s.ws.owner.token);
  await call(tool, args);
  const from = units.consumed.length;
  const r = await call(tool, args);
  assert.equal(r.isError, false, `${tool} ${JSON.stringify(args)}: ${toolText(r)}`);
  return units.consumed.slice(from).reduce((sum, c) => sum + c.read, 0);
};

type Case = [name: string, tool: string, args: (s: SeededWorkspace) => Record<string, unknown>];
const CASES: Case[] = [
  ['tasks_search, open (the default)', 'tasks_search', () => ({})],
  ['tasks_search, done', 'tasks_search', () => ({ status: 'done' })],
  ['tasks_search, any status', 'tasks_search', () => ({ status: 'any' })],
  ['tasks_search, a project', 'tasks_search', (s) => ({ project: s.projects[3] })],
  ['tasks_search, the inbox', 'tasks_search', () => ({ project: 'none' })],
  ['tasks_search, an assignee', 'tasks_search', (s) => ({ assignee: s.people[4] })],
  ['tasks_search, unassigned', 'tasks_search', () => ({ assignee: 'none' })],
  ['tasks_search, a label', 'tasks_search', () => ({ label: 'l3' })],
  ['tasks_search, a priority', 'tasks_search', () => ({ priority: 'P2' })],
  ['tasks_search, a due range', 'tasks_search', (s) => ({ dueAfter: s.day, dueBefore: s.day.replace(/-\d\d$/, '-28') })],
  ['tasks_search, overdue', 'tasks_search', () => ({ overdue: true })],
  ['tasks_search, one word with one hit', 'tasks_search', () => ({ text: 'quetzal' })],
  ['tasks_search, two words with one hit', 'tasks_search', () => ({ text: 'quetzal feather' })],
  ['tasks_search, a common word', 'tasks_search', () => ({ text: 'review' })],
  ['agenda_get, one person', 'agenda_get', (s) => ({ date: s.day, assignee: s.people[4] })],
  ['agenda_get, anyone', 'agenda_get', (s) => ({ date: s.day, assignee: 'anyone' })],
  ['agenda_get, nobody', 'agenda_get', (s) => ({ date: s.day, assignee: 'none' })],
  ['project_get', 'project_get', (s) => ({ projectId: s.projects[3] })],
  ['projects_list', 'projects_list', () => ({})],
  ['task_get', 'task_get', (s) => ({ taskId: s.keys[100] })],
  ['activity_list', 'activity_list', () => ({})],
  ['activity_list, a task', 'activity_list', (s) => ({ task: s.keys[100] })],
  ['activity_list, an actor', 'activity_list', () => ({ actor: 'me' })],
  ['activity_list, a project', 'activity_list', (s) => ({ project: s.projects[3] })],
  ['activity_list, a rare kind (views)', 'activity_list', () => ({ kind: 'view' })],
  ['activity_list, projects', 'activity_list', () => ({ kind: 'project' })],
  ['activity_list, a project and a kind', 'activity_list', (s) => ({ project: s.projects[3], kind: 'task' })],
  ...QUERY_READS.map(([name, query]): Case => [`tasks_search query: ${name}`, 'tasks_search', () => queryArgs(query)]),
];

describe('reads cost what they return, not what the workspace holds', () => {
  const rows: string[] = [];
  after(() => console.log(`Read units per call, 300 tasks → 3,000 tasks:\n  ${rows.join('\n  ')}`));
  for (const [name, tool, args] of CASES) {
    test(`${name}: the same read units at 300 and at 3,000 tasks (within 20 %), and at most 50`, async () => {
      const at300 = await readUnits(small, tool, args(small));
      const at3000 = await readUnits(large, tool, args(large));
      rows.push(`${name}: ${at300} → ${at3000}`);

      assert.ok(at3000 <= at300 * 1.2 + 1, `${name}: ${at300} read units at 300 tasks, ${at3000} at 3,000`);
      assert.ok(at3000 <= 50, `${name}: ${at3000} read units`);
    });
  }
});

describe('a page of the history stays under its read units however large its records', () => {
  test('activity_list of changes with 9 KB of notes each, 100 to a page: at most 50 read units, with a cursor to go on', async () => {
    // Arrange: sixty tasks whose records each hold 9 KB of notes
    const ws = await createTestWorkspace(server);
    const owner = caller(server, ws.owner.token);
    const notes = 'Long notes. '.repeat(750);
    for (let i = 0; i < 2; i++) {
      const r = await owner('tasks_create', { tasks: Array.from({ length: 30 }, (_, j) => ({ title: `Heavy ${i * 30 + j}`, notes })) });
      assert.equal(r.isError, false, toolText(r));
    }
    const read = async (args: Record<string, unknown>) => {
      await owner('activity_list', args);
      const from = units.consumed.length;
      const r = await owner('activity_list', args);
      return { r, units: units.consumed.slice(from).reduce((sum, c) => sum + c.read, 0) };
    };

    // Act
    const all = await read({ limit: 100 });
    const byKind = await read({ kind: 'task', limit: 100 });

    // Assert
    for (const { r, units: spent } of [all, byKind]) {
      assert.equal(r.isError, false, toolText(r));
      assert.ok(spent <= 50, `${spent} read units`);
      assert.ok(r.structuredContent.returned > 0);
      assert.ok(r.structuredContent.returned < 60 ? r.structuredContent.nextCursor : true, 'a short page says where to go on');
    }
  });
});
