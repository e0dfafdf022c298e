import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { LocalServer } from '../../lambda/local/server.js';
import { addDays, dateInZone } from '../../lambda/workspace/model/time.js';
import type { Task } from '../../lambda/workspace/model/types.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

/**
 * A query finds exactly the tasks its meaning names: random queries of the language (terms, AND,
 * OR, -, parentheses) run through tasks_search, every page and every partial read followed, against
 * a reference evaluator of this file's own over every task of the workspace read by id. The two
 * share no code: the reference says what docs/workspace.md ("Queries") says a query means.
 */

let server: LocalServer;
let ws: TestWorkspace;
let today: string;
let all: Task[];
const PROJECTS: Record<string, string> = {};
const WORDS = ['invoice', 'printer', 'launch', 'contract', 'budget', 'hiring'] as const;
const LABELS = ['legal', 'fun', 'ops'] as const;
const STATUS_NAMES = ['Backlog', 'Todo', 'In progress', 'In review', 'Done', 'Canceled'] as const;
const CATEGORY_OF: Record<string, string> = {
  Backlog: 'backlog',
  Todo: 'unstarted',
  'In progress': 'started',
  'In review': 'started',
  Done: 'done',
  Canceled: 'canceled',
};

/** A small deterministic generator: the workspace is the same on every run, the queries are fast-check's. */
const rng = (() => {
  let s = 42;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
})();
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
  today = dateInZone(new Date(), 'UTC');
  const admin = caller(server, ws.admin.token);
  for (const name of ['Website', 'Hiring plan']) PROJECTS[name] = (await admin('project_create', { name })).structuredContent.projectId;
  const ids: string[] = [];
  for (let i = 0; i < 48; i++) {
    const words = [pick(WORDS), pick(WORDS)];
    const args: Record<string, unknown> = {
      title: `Task ${i} ${words.join(' ')}`,
      priority: pick(['P1', 'P2', 'P3', 'P4']),
      labels: rng() < 0.5 ? [pick(LABELS)] : [],
      ...(rng() < 0.75 ? { dueDate: addDays(today, Math.floor(rng() * 24) - 8) } : {}),
      ...(rng() < 0.6 ? { assignee: pick([ws.admin.userId, ws.member.userId, ws.owner.userId]) } : {}),
      ...(rng() < 0.6 ? { projectId: PROJECTS[pick(Object.keys(PROJECTS))] } : {}),
      ...(rng() < 0.1 ? { repeat: 'every monday' } : {}),
      ...(i > 4 && rng() < 0.15 ? { parent: ids[Math.floor(rng() * 4)] } : {}),
      ...(i > 4 && rng() < 0.1 ? { blockedBy: [ids[Math.floor(rng() * i)]] } : {}),
    };
    const r = await admin('task_create', args);
    assert.equal(r.isError, false, toolText(r));
    ids.push(r.structuredContent.taskId);
    const status = pick(STATUS_NAMES);
    if (status === 'Done') await admin('task_complete', { taskId: r.structuredContent.taskId });
    else if (status !== 'Todo') await admin('task_update', { taskId: r.structuredContent.taskId, version: 1, status });
  }
  await admin('attachment_add', { taskId: ids[3], name: 'a.txt', text: 'a' });
  all = [...(await server.app.services.tasks.getMany(ws.workspaceId, ids)).values()];
  assert.equal(all.length, 48);
});
after(() => server.close());

// ---- the reference ------------------------------------------------------------------------------

type Node =
  | { kind: 'and' | 'or'; items: Node[] }
  | { kind: 'not'; item: Node }
  | { kind: 'term'; text: string; test: (t: Task) => boolean; phase?: boolean };

const statusName = (t: Task): string => {
  const key = t.state ?? (t.status === 'open' ? 'todo' : 'done');
  return STATUS_NAMES.find((n) => n.toLowerCase().replace(' ', '_') === key)!;
};
const ago = (days: number) => addDays(today, days);
const rank = (t: Task) => Number(t.priority.slice(1));
const cmp = (a: string | number, op: string, b: string | number) =>
  op === ':' ? a === b : op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;

const term = (text: string, test: (t: Task) => boolean, phase = false): Node => ({ kind: 'term', text, test, phase });
const OPS = [':', '<', '<=', '>', '>='] as const;
const userOf = () => ({ me: ws.admin.userId, member: ws.member.userId, owner: ws.owner.userId });

const terms: fc.Arbitrary<Node> = fc.oneof(
  fc
    .constantFrom('me', 'member', 'owner', 'none')
    .map((who) => term(`assignee:${who}`, (t) => (t.assigneeId ?? 'none') === (who === 'none' ? 'none' : userOf()[who as 'me']))),
  fc
    .constantFrom('assignee', 'project', 'due', 'labels', 'parent')
    .map((what) =>
      term(`no:${what}`, (t) =>
        what === 'assignee'
          ? !t.assigneeId
          : what === 'project'
            ? !t.projectId
            : what === 'due'
              ? !t.dueDate
              : what === 'labels'
                ? !t.labels.length
                : !t.parentId,
      ),
    ),
  fc
    .constantFrom('Website', 'Hiring plan', 'none')
    .map((p) => term(p === 'none' ? 'project:none' : `project:"${p}"`, (t) => (p === 'none' ? !t.projectId : t.projectId === PROJECTS[p]))),
  fc
    .constantFrom(...STATUS_NAMES, 'started', 'canceled')
    .map((s) =>
      term(`status:"${s}"`, (t) => (s === 'started' || s === 'canceled' ? CATEGORY_OF[statusName(t)] === s : statusName(t) === s), true),
    ),
  fc
    .constantFrom('open', 'done', 'canceled', 'blocked', 'overdue', 'recurring', 'subtask')
    .map((v) =>
      term(
        `is:${v}`,
        (t) =>
          v === 'open'
            ? t.status === 'open'
            : v === 'done'
              ? statusName(t) === 'Done'
              : v === 'canceled'
                ? statusName(t) === 'Canceled'
                : v === 'blocked'
                  ? (t.openBlockers?.length ?? 0) > 0
                  : v === 'overdue'
                    ? t.status === 'open' && !!t.dueDate && t.dueDate < today
                    : v === 'recurring'
                      ? !!t.repeat
                      : !!t.parentId,
        v === 'open' || v === 'done' || v === 'canceled',
      ),
    ),
  fc.constantFrom(...LABELS).map((l) => term(`label:${l}`, (t) => t.labels.includes(l))),
  fc.tuple(fc.constantFrom(...OPS), fc.integer({ min: 1, max: 4 })).map(([op, n]) => term(`priority${op}${n}`, (t) => cmp(rank(t), op, n))),
  fc.integer({ min: 1, max: 4 }).map((n) => term(`p${n}`, (t) => rank(t) === n)),
  fc
    .tuple(fc.constantFrom(...OPS), fc.integer({ min: -9, max: 16 }), fc.boolean())
    .map(([op, d, iso]) =>
      term(`due${op}${iso ? ago(d) : `${d < 0 ? '-' : '+'}${Math.abs(d)}d`}`, (t) => !!t.dueDate && cmp(t.dueDate, op, ago(d))),
    ),
  fc
    .constantFrom('today', 'tomorrow', 'yesterday')
    .map((w) => term(`due:${w}`, (t) => t.dueDate === ago(w === 'today' ? 0 : w === 'tomorrow' ? 1 : -1))),
  fc
    .constantFrom('files', 'subtasks', 'labels', 'due')
    .map((h) =>
      term(`has:${h}`, (t) =>
        h === 'files'
          ? (t.attachmentCount ?? 0) > 0
          : h === 'subtasks'
            ? (t.subtaskCount ?? 0) > 0
            : h === 'labels'
              ? t.labels.length > 0
              : !!t.dueDate,
      ),
    ),
  fc
    .constantFrom('completed>=-1d', 'completed<-1d', 'created>=-1d', 'updated<-3d')
    .map((q) =>
      term(
        q,
        (t) =>
          q === 'completed>=-1d'
            ? t.status === 'done' && !!t.completedAt && t.completedAt.slice(0, 10) >= ago(-1)
            : q === 'completed<-1d'
              ? t.status === 'done' && !!t.completedAt && t.completedAt.slice(0, 10) < ago(-1)
              : q === 'created>=-1d'
                ? t.createdAt.slice(0, 10) >= ago(-1)
                : t.updatedAt.slice(0, 10) < ago(-3),
        q.startsWith('completed'),
      ),
    ),
  fc.constantFrom(...WORDS).map((w) => term(w, (t) => t.title.toLowerCase().split(' ').includes(w))),
);

const query: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    terms,
    fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((items): Node => ({ kind: 'and', items })),
    fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((items): Node => ({ kind: 'or', items })),
    tie('node').map((item): Node => ({ kind: 'not', item })),
  ),
})).node;

const textOf = (n: Node): string =>
  n.kind === 'term'
    ? n.text
    : n.kind === 'not'
      ? `-${n.item.kind === 'term' ? n.item.text : `(${textOf(n.item)})`}`
      : `(${n.items.map(textOf).join(n.kind === 'and' ? ' ' : ' OR ')})`;
const holds = (n: Node, t: Task): boolean =>
  n.kind === 'term'
    ? n.test(t)
    : n.kind === 'not'
      ? !holds(n.item, t)
      : n.kind === 'and'
        ? n.items.every((i) => holds(i, t))
        : n.items.some((i) => holds(i, t));
const namesPhase = (n: Node): boolean => (n.kind === 'term' ? !!n.phase : n.kind === 'not' ? namesPhase(n.item) : n.items.some(namesPhase));
const termCount = (n: Node): number =>
  n.kind === 'term' ? 1 : n.kind === 'not' ? termCount(n.item) : n.items.reduce((s, i) => s + termCount(i), 0);

/** What the reference says a query finds: its condition, and open tasks only unless it names the phase. */
const expected = (n: Node): string[] =>
  all
    .filter((t) => !t.deletedAt && holds(n, t) && (namesPhase(n) || t.status === 'open'))
    .map((t) => t.taskId)
    .sort();

/** Every task tasks_search gives for a query, page by page, partial pages followed by their cursor. */
const found = async (q: string): Promise<string[]> => {
  const search = caller(server, ws.admin.token);
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const r = await search('tasks_search', { query: q, limit: 100, ...(cursor ? { cursor } : {}) });
    assert.equal(r.isError, false, `${q}: ${toolText(r)}`);
    ids.push(...r.structuredContent.tasks.map((t: { taskId: string }) => t.taskId));
    cursor = r.structuredContent.nextCursor;
    if (!cursor) return ids.sort();
  }
  assert.fail(`${q}: more than 50 pages`);
};

test('tasks_search finds for a random query exactly the tasks the reference evaluator finds over every task', async () => {
  await fc.assert(
    fc.asyncProperty(
      query.filter((n) => termCount(n) <= 20),
      async (n) => {
        const q = textOf(n);
        const got = await found(q);
        assert.deepEqual(got, expected(n), `query ${q}`);
        assert.equal(new Set(got).size, got.length, `${q}: a task on two pages`);
      },
    ),
    { numRuns: 120 },
  );
});
