import { createHash } from 'node:crypto';
import { ToolRefusal } from '../errors.js';
import { type Member, SCOPES } from '../vocabulary.js';
import { doorSource } from '../workspace/activity/records.js';
import { mintToken } from '../workspace/membership/credentials.js';
import { inviteMember } from '../workspace/membership/members.js';
import { OPERATOR } from '../workspace/membership/rules.js';
import { createWorkspace } from '../workspace/membership/workspaces.js';
import { callerOf } from '../workspace/model/caller.js';
import { NO_STATUSES, planStatusSet } from '../workspace/model/status-sets.js';
import { addDays, dateInZone, instantInZone } from '../workspace/model/time.js';
import type { Priority } from '../workspace/model/types.js';
import { createProject } from '../workspace/projects/project-writer.js';
import { saveView } from '../workspace/saved-views/view-writer.js';
import type { WorkspaceStores } from '../workspace/store/stores.js';
import { createTasks } from '../workspace/tasks/task-writer.js';
import { DEMO_WORKSPACE_ID } from './local-data.js';

export const DEMO_OWNER = { userId: 'usr_ada', email: 'ada@example.com', name: 'Ada Lovelace' } as const;

/** The seed's source: the local server, acting as the operator or as the member who made a thing. */
const seedSource = (now: Date, who: { readonly userId: string; readonly name: string } = OPERATOR) =>
  doorSource('local server', who, 'demo seed', now);

/** A refusal that says the item is there already (an earlier start, or another server seeding the same store). */
const thereAlready = (err: unknown): void => {
  if (!(err instanceof ToolRefusal && err.reason === 'taken')) throw err;
};

/**
 * The demo workspace with its owner and team, its projects and tasks, all through the writers every
 * other door uses (each change with its record: the history says the local server seeded them).
 * Every item has a fixed id, so a second server on the same store, or a restart on a kept data
 * dir, finds what is there and seeds nothing twice.
 */
export const seedDemoWorkspace = async (services: WorkspaceStores, timeZone: string, now = new Date()): Promise<void> => {
  await createWorkspace(services, seedSource(now), { workspaceId: DEMO_WORKSPACE_ID, name: 'Demo workspace', key: 'DEMO' });
  const createdAt = now.toISOString();
  for (const m of [{ ...DEMO_OWNER, role: 'owner' as const }, ...DEMO_MEMBERS]) {
    const member: Member = { workspaceId: DEMO_WORKSPACE_ID, ...m, timeZone, status: 'active', createdAt };
    await inviteMember(services, OPERATOR, seedSource(now), member).catch(thereAlready);
  }
  await seedDemoTeamAndTasks(services, now);
};

/** Makes the dev token the owner's personal access token with every scope (a restart finds it made). */
export const registerDevToken = async (services: WorkspaceStores, token: string, now = new Date()): Promise<void> => {
  const owner = await services.directory.getMember(DEMO_WORKSPACE_ID, DEMO_OWNER.userId);
  if (!owner) throw new Error('the demo owner is not there to hold the dev token');
  await mintToken(services, OPERATOR, seedSource(now), owner, { label: 'local dev token', scopes: [...SCOPES], secret: token });
};

export const DEMO_MEMBERS = [
  { userId: 'usr_grace', email: 'grace@example.com', name: 'Grace Hopper', role: 'admin' },
  { userId: 'usr_alan', email: 'alan@example.com', name: 'Alan Turing', role: 'member' },
  { userId: 'usr_katherine', email: 'katherine@example.com', name: 'Katherine Johnson', role: 'viewer' },
] as const;

export const DEMO_PROJECTS = {
  acme: {
    projectId: '5d1c7a3e-2b4f-4c8e-9a61-0f3e8b7d2c10',
    name: 'Acme renewal',
    description: 'Renew the Acme contract before the end of the quarter.',
  },
  website: {
    projectId: '8e2f4b6a-1c3d-4e5f-8a7b-9c0d1e2f3a20',
    name: 'Website relaunch',
    description: 'New site, new docs, same domain.',
    // Its own workflow (model/status-sets.ts): the board by status shows these columns.
    statuses: planStatusSet(
      NO_STATUSES,
      [
        { name: 'Todo', category: 'unstarted' },
        { name: 'In design', category: 'started' },
        { name: 'In progress', category: 'started' },
        { name: 'In QA', category: 'started' },
        { name: 'Done', category: 'done' },
      ],
      undefined,
    ).set.statuses,
  },
  hiring: {
    projectId: 'b3a9c8d7-6e5f-4a3b-8c2d-1e0f9a8b7c30',
    name: 'Hiring: backend engineer',
    description: 'One senior backend engineer by autumn.',
  },
} as const;

type Who = 'ada' | 'grace' | 'alan' | undefined;
type Where = keyof typeof DEMO_PROJECTS | undefined;
/**
 * title, due (days from the seeding day; null: none), priority, assignee, project, labels, extra
 * (`after`: the numbers it waits on; `under`: its parent's number).
 */
type DemoTask = [
  string,
  number | null,
  Priority,
  Who,
  Where,
  string[],
  { done?: number; notes?: string; time?: string; after?: number[]; under?: number; status?: string }?,
];

const DEMO_TASKS: DemoTask[] = [
  [
    'Send the Acme renewal quote',
    -2,
    'P3',
    'ada',
    'acme',
    ['sales'],
    { notes: 'Use the 2025 price list; 12% discount approved by Grace.' },
  ],
  ['Review the Acme contract redlines', -1, 'P1', 'ada', 'acme', ['legal']],
  ['Book the Acme kickoff call', 0, 'P2', 'ada', 'acme', ['sales'], { time: '15:00' }],
  ['Draft the renewal announcement', 3, 'P4', 'grace', 'acme', ['writing'], { after: [2] }],
  ['Check Acme invoice history', -5, 'P2', 'alan', 'acme', ['finance']],
  ['Ask Acme for usage numbers', 1, 'P3', 'ada', 'acme', []],
  ['Prepare the renewal slide deck', 5, 'P2', 'grace', 'acme', ['sales']],
  ['Send the signed NDA to Acme', -10, 'P3', 'alan', 'acme', ['legal'], { done: 30 }],
  [
    'Write the homepage copy',
    0,
    'P1',
    'ada',
    'website',
    ['writing'],
    { notes: 'Three variants for the hero line; keep it under 12 words.' },
  ],
  ['Pick the new colour palette', -3, 'P3', 'grace', 'website', ['design'], { status: 'In design' }],
  ['Migrate the docs to the new theme', 7, 'P2', 'alan', 'website', ['docs'], { status: 'In progress' }],
  ['Set up redirects for old URLs', 2, 'P2', 'alan', 'website', ['seo'], { status: 'In QA' }],
  ['Launch checklist walkthrough', 10, 'P1', 'grace', 'website', [], { after: [11, 12] }],
  ['Review the accessibility audit', 4, 'P2', 'ada', 'website', ['a11y'], { under: 13 }],
  ['Compress hero images', 0, 'P4', 'alan', 'website', ['performance'], { under: 13 }],
  ['Choose the analytics tool', -4, 'P3', 'ada', 'website', [], { done: 2 }],
  ['Fix the broken footer links', -1, 'P4', 'alan', 'website', ['bug'], { done: 1 }],
  ['Write the job description', -6, 'P2', 'grace', 'hiring', ['writing'], { done: 50 }],
  ['Screen the first ten CVs', -1, 'P2', 'ada', 'hiring', []],
  ['Schedule interviews for next week', 2, 'P3', 'grace', 'hiring', [], { after: [19] }],
  ['Prepare the coding exercise', 6, 'P2', 'alan', 'hiring', ['engineering']],
  ['Post the job on the careers page', null, 'P4', 'grace', 'hiring', [], { after: [18] }],
  ['Renew the team calendar subscription', 0, 'P3', 'ada', undefined, ['admin']],
  ['Expense report for September', -2, 'P4', 'ada', undefined, ['finance']],
  ['Read the quarterly board memo', null, 'P3', 'ada', undefined, []],
  ['Order a new laptop for Alan', 1, 'P2', undefined, undefined, ['admin']],
  ['Plan the team offsite', 14, 'P3', undefined, undefined, []],
  ['Update the on-call rota', 0, 'P2', 'alan', undefined, ['ops'], { done: 3 }],
  ["Archive last year's shared drive", null, 'P4', undefined, undefined, ['admin']],
  ['Reply to the insurance broker', 3, 'P3', 'ada', undefined, []],
];

const USER_OF: Record<Exclude<Who, undefined>, string> = { ada: DEMO_OWNER.userId, grace: 'usr_grace', alan: 'usr_alan' };

/** A fixed UUID per demo task, so reseeding finds what an earlier start wrote. */
const demoTaskId = (i: number): string => {
  if (i === 0) return '0ebb429f-7c2d-4e8a-9b1f-3a6d2c5e8f01';
  const h = createHash('sha256').update(`doers demo task ${i}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/**
 * Three projects (one with its own statuses) and thirty tasks (one with two subtasks, a few waiting
 * on others, some done) spread over overdue, today and later (relative to the day of the first
 * seeding, in the owner's time zone), so agenda_get and the prompts show something real. Each task
 * is made by its creator through the task writer, in order (DEMO-1 … DEMO-30), a creator's run of
 * tasks in one call, those that are there already left out.
 */
const seedDemoTeamAndTasks = async (services: WorkspaceStores, now: Date): Promise<void> => {
  const ws = DEMO_WORKSPACE_ID;
  const [workspace, members] = await Promise.all([services.directory.getWorkspace(ws), services.directory.listMembers(ws)]);
  if (!workspace) throw new Error('the demo workspace is not there to seed');
  const contextOf = (userId: string) => {
    const m = members.find((x) => x.userId === userId)!;
    return { stores: services, caller: callerOf(workspace, m), source: seedSource(now, m) };
  };
  const owner = members.find((m) => m.userId === DEMO_OWNER.userId)!;
  const today = dateInZone(now, owner.timeZone);
  const startOfToday = instantInZone(today, '00:00', owner.timeZone);
  for (const p of Object.values(DEMO_PROJECTS)) {
    const statusSet = 'statuses' in p ? planStatusSet(NO_STATUSES, p.statuses, undefined).set : undefined;
    await createProject(contextOf(DEMO_OWNER.userId), {
      projectId: p.projectId,
      name: p.name,
      description: p.description,
      ...(statusSet ? { statusSet } : {}),
    }).catch(thereAlready);
  }
  const made = await services.tasks.getMany(
    ws,
    DEMO_TASKS.map((_, i) => demoTaskId(i)),
  );
  // Consecutive tasks of one creator are made in one call, as tasks_create makes them (their numbers
  // in order), unless one waits on or sits under a task of the same call, which must exist first.
  let batch: { creator: string; indexes: Set<number>; items: Parameters<typeof createTasks>[1][number][] } | undefined;
  const flush = async () => {
    if (!batch) return;
    const outcomes = await createTasks(contextOf(batch.creator), batch.items);
    for (const outcome of outcomes) if (!outcome.ok) thereAlready(outcome.error);
    batch = undefined;
  };
  for (const [i, [title, due, priority, who, where, labels, extra = {}]] of DEMO_TASKS.entries()) {
    if (made.has(demoTaskId(i))) continue;
    // Done a few hours ago means done today: not before today's midnight, even when seeded just after it.
    const doneMs = extra.done === undefined ? undefined : now.getTime() - extra.done * 3_600_000;
    const completedAt =
      doneMs === undefined ? undefined : new Date(extra.done! < 24 ? Math.max(doneMs, startOfToday) : doneMs).toISOString();
    const creator = who === 'grace' ? 'usr_grace' : DEMO_OWNER.userId;
    const refersToBatch = [...(extra.after ?? []), ...(extra.under ? [extra.under] : [])].some((n) => batch?.indexes.has(n - 1));
    if (batch && (batch.creator !== creator || refersToBatch)) await flush();
    batch ??= { creator, indexes: new Set(), items: [] };
    batch.indexes.add(i);
    batch.items.push({
      fields: {
        taskId: demoTaskId(i),
        title,
        ...(extra.notes ? { notes: extra.notes } : {}),
        priority,
        ...(due !== null ? { dueDate: addDays(today, due) } : {}),
        ...(extra.time ? { dueTime: extra.time } : {}),
        ...(who ? { assigneeId: USER_OF[who] } : {}),
        ...(where ? { projectId: DEMO_PROJECTS[where].projectId } : {}),
        labels,
        ...(extra.status ? { state: extra.status } : {}),
        ...(completedAt ? { completed: { at: completedAt, by: who ? USER_OF[who] : DEMO_OWNER.userId } } : {}),
        ...(extra.after ? { blockedBy: extra.after.map((n) => demoTaskId(n - 1)) } : {}),
        ...(extra.under ? { parentId: demoTaskId(extra.under - 1) } : {}),
      },
    });
  }
  await flush();
  // Two shared views every member opens as their own ("assignee:me" is whoever runs it).
  const seen = await services.views.visible(ws, DEMO_OWNER.userId);
  for (const view of DEMO_VIEWS) {
    if (seen.some((v) => v.name === view.name)) continue;
    await saveView(contextOf(DEMO_OWNER.userId), { ...view, shared: true }).catch(thereAlready);
  }
};

/** The demo's saved views (docs/workspace.md, "Views"). */
export const DEMO_VIEWS = [
  { name: 'Overdue for the team', query: 'is:overdue', sort: 'priority', group: 'assignee' },
  { name: 'My week', query: 'assignee:me is:open due<=+7d', sort: 'due', group: 'due' },
] as const;
