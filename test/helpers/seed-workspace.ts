import type { LocalServer } from '../../lambda/local/server.js';
import { addDays } from '../../lambda/workspace/model/time.js';
import { addMember, caller, createTestWorkspace, type TestWorkspace } from './workspace-fixtures.js';

/**
 * A workspace grown to `size` tasks through the tools, as a team's would: 10 projects (and an inbox),
 * 10 assignees (and unassigned tasks), labels, priorities, due dates spread over three months around
 * `day` (some undated), 200 characters of notes each, 30 % done, a few waiting on others. Its shape
 * is the same at every size, so what a read costs at two sizes can be compared. One task holds the
 * words "quetzal feather", found nowhere else: a search that has exactly one hit.
 */
export interface SeededWorkspace {
  readonly ws: TestWorkspace;
  readonly projects: readonly string[];
  readonly people: readonly string[];
  readonly keys: readonly string[];
  readonly day: string;
}

const WORDS = [
  'review',
  'contract',
  'homepage',
  'pricing',
  'invoice',
  'launch',
  'hiring',
  'budget',
  'design',
  'report',
  'meeting',
  'draft',
];
const NOTES =
  'Check the numbers against last quarter, ask finance for the final figures, and send the summary to the team before the review. ';

export const seedWorkspace = async (
  server: LocalServer,
  size: number,
  opts: { readonly day?: string; readonly concurrency?: number } = {},
): Promise<SeededWorkspace> => {
  const day = opts.day ?? new Date().toISOString().slice(0, 10);
  const ws = await createTestWorkspace(server);
  const owner = caller(server, ws.owner.token);
  const extra = await Promise.all(Array.from({ length: 7 }, () => addMember(server, ws.workspaceId, 'member', 'UTC')));
  const people = [ws.owner.userId, ws.admin.userId, ws.member.userId, ...extra.map((m) => m.userId)];
  const projects: string[] = [];
  for (let p = 0; p < 10; p++) projects.push((await owner('project_create', { name: `Project ${p}` })).structuredContent.projectId);
  const task = (i: number) => ({
    title: i === 7 ? 'Order the quetzal feather samples' : `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} ${i}`,
    priority: (['P1', 'P2', 'P3', 'P4'] as const)[i % 4],
    ...(i % 5 === 4 ? {} : { dueDate: addDays(day, (i % 90) - 45) }),
    ...(i % 11 === 10 ? {} : { assignee: people[i % people.length] }),
    ...(i % 12 === 11 ? {} : { projectId: projects[i % projects.length] }),
    labels: [`l${i % 10}`, ...(i % 3 === 0 ? ['q4'] : [])],
    notes: NOTES.repeat(2).slice(0, 200),
  });
  const keys: string[] = new Array(size);
  const batches: number[] = [];
  for (let i = 0; i < size; i += 50) batches.push(i);
  const run = async (work: readonly number[], f: (i: number) => Promise<void>) => {
    const queue = [...work];
    await Promise.all(
      Array.from({ length: opts.concurrency ?? 4 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) await f(i);
      }),
    );
  };
  await run(batches, async (start) => {
    const tasks = Array.from({ length: Math.min(50, size - start) }, (_, j) => task(start + j));
    const r = await owner('tasks_create', { tasks });
    if (r.isError) throw new Error(r.content[0]!.text);
    for (const [j, item] of (r.structuredContent.items as { key: string }[]).entries()) keys[start + j] = item.key;
  });
  // 30 % done; every 50th waits on the one before it.
  const done = keys.filter((_, i) => i % 10 < 3);
  const doneBatches: number[] = [];
  for (let i = 0; i < done.length; i += 50) doneBatches.push(i);
  await run(doneBatches, async (start) => {
    const r = await owner('tasks_update', { tasks: done.slice(start, start + 50).map((taskId) => ({ taskId, status: 'done' })) });
    if (r.isError) throw new Error(r.content[0]!.text);
  });
  const linked = keys.filter((_, i) => i % 50 === 49 && i % 10 >= 3);
  for (let i = 0; i < linked.length; i += 50) {
    await owner('tasks_update', { tasks: linked.slice(i, i + 50).map((k) => ({ taskId: k, blockedBy: [keys[keys.indexOf(k) - 1]!] })) });
  }
  await owner('view_save', { name: 'Mine', query: 'assignee:me is:open', sort: 'due', shared: true });
  return { ws, projects, people, keys, day };
};

/**
 * Queries a person would type, on a seeded workspace (its people[0] is the owner, who runs them):
 * the read-cost test runs them at 300 and 3,000 tasks, the bench at 2,000 and 20,000. The last ones
 * are served by no index of their own: a bounded read of the list they fall back to.
 */
export const QUERY_READS: readonly [name: string, query: string][] = [
  ['unassigned, not done, due within a month, by due date', 'no:assignee -status:done due<=+30d sort:due'],
  ['a project by name and a priority', 'project:"Project 3" p2'],
  ['a label, open', 'label:l3 is:open'],
  ['due today or overdue, P1', '(due:today OR is:overdue) p1'],
  ['a word with one hit', 'quetzal'],
  ['the inbox', 'no:project'],
  ['top priorities due in a week or later', 'priority<=2 due>=+7d'],
  ['done in the last week', 'completed>=-7d'],
  ['a saved view', ''],
  ['no index: not labelled q4', '-label:q4'],
  ['no index: sorted by priority', 'sort:priority'],
];

/** tasks_search's arguments for one of QUERY_READS (the saved view by its name). */
export const queryArgs = (query: string): Record<string, unknown> => (query ? { query } : { view: 'Mine' });
