import { createHash } from 'node:crypto';
import { ToolRefusal } from '../errors.js';
import type { Member } from '../vocabulary.js';
import { SCOPES } from '../vocabulary.js';
import { NO_STATUSES, planStatusSet } from '../workspace/model/status-sets.js';
import { readStatus, setOf, stateOf } from '../workspace/model/statuses.js';
import { addDays, dateInZone, instantInZone } from '../workspace/model/time.js';
import type { Priority, Project, Task } from '../workspace/model/types.js';
import type { WorkspaceStores } from '../workspace/store/stores.js';
import { CounterMoved } from '../workspace/store/task-numbers.js';

import { DEMO_WORKSPACE_ID } from './local-data.js';
export const DEMO_OWNER = { userId: 'usr_ada', email: 'ada@example.com', name: 'Ada Lovelace' } as const;

/**
 * The demo workspace with its owner. Every write is create-if-absent, so a second server (or a
 * restart on a kept data dir) seeds nothing twice.
 */
export const seedDemoWorkspace = async (services: WorkspaceStores, timeZone: string, now = new Date()): Promise<void> => {
  const createdAt = now.toISOString();
  await services.directory.createWorkspace({
    workspaceId: DEMO_WORKSPACE_ID,
    name: 'Demo workspace',
    key: 'DEMO',
    // The seeded tasks are DEMO-1 … DEMO-30 (create-if-absent below): new ones go on from there.
    taskCounter: DEMO_TASKS.length,
    status: 'active',
    createdAt,
  });
  await services.directory.createMember({
    workspaceId: DEMO_WORKSPACE_ID,
    ...DEMO_OWNER,
    role: 'owner',
    timeZone,
    status: 'active',
    createdAt,
  });
  await seedDemoTeamAndTasks(services, timeZone, now);
};

/** Registers the dev token as the owner's personal access token with every scope (idempotent). */
export const registerDevToken = async (services: WorkspaceStores, token: string, now = new Date()): Promise<void> => {
  await services.tokens.register(token, {
    workspaceId: DEMO_WORKSPACE_ID,
    userId: DEMO_OWNER.userId,
    scopes: [...SCOPES],
    label: 'local dev token',
    createdAt: now.toISOString(),
  });
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
  ['Review the accessibility audit', 4, 'P2', 'ada', 'website', ['a11y'], { under: 15 }],
  ['Compress hero images', 0, 'P4', 'alan', 'website', ['performance'], { under: 15 }],
  ['Launch checklist walkthrough', 10, 'P1', 'grace', 'website', [], { after: [11, 12] }],
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
 * The demo team, three projects (one with its own statuses) and thirty tasks (one with two subtasks) spread over overdue, today and later (relative to
 * the day of the first seeding, in the owner's time zone), so agenda_get and the prompts show
 * something real. Create-if-absent with fixed ids: a restart or a second server adds nothing.
 */
const seedDemoTeamAndTasks = async (services: WorkspaceStores, timeZone: string, now: Date): Promise<void> => {
  const ws = DEMO_WORKSPACE_ID;
  const at = now.toISOString();
  const today = dateInZone(now, timeZone);
  const startOfToday = instantInZone(today, '00:00', timeZone);
  await Promise.all([
    ...DEMO_MEMBERS.map((m) =>
      services.directory.createMember({ workspaceId: ws, ...m, timeZone, status: 'active', createdAt: at } satisfies Member),
    ),
    ...Object.values(DEMO_PROJECTS).map((p) =>
      services.projects.create({
        workspaceId: ws,
        ...p,
        status: 'active',
        createdBy: DEMO_OWNER.userId,
        createdAt: at,
        updatedAt: at,
        version: 1,
      } satisfies Project),
    ),
  ]);
  // Both sides of each blocked-by link, written with the tasks (links.ts keeps them from then on).
  const waitsOn = (n: number) => DEMO_TASKS[n - 1]![6]?.after ?? [];
  const blocksOf = (n: number) => DEMO_TASKS.flatMap((_, j) => (waitsOn(j + 1).includes(n) ? [demoTaskId(j)] : []));
  const isDone = (n: number) => DEMO_TASKS[n - 1]![6]?.done !== undefined;
  // A parent's count of its subtasks; their entries beside it come with each subtask's own write.
  const subtasksOf = (n: number) => DEMO_TASKS.filter((t) => t[6]?.under === n).length;
  // One task at a time: every task's write also moves the workspace's shared count items, and thirty
  // transactions on those at once (times every server seeding the same store) only conflict.
  for (const [i, [title, due, priority, who, where, labels, extra = {}]] of DEMO_TASKS.entries()) {
    const after = waitsOn(i + 1);
    const blocks = blocksOf(i + 1);
    // Done a few hours ago means done today: not before today's midnight, even when seeded just after it.
    const doneMs = extra.done === undefined ? undefined : now.getTime() - extra.done * 3_600_000;
    const completedAt =
      doneMs === undefined ? undefined : new Date(extra.done! < 24 ? Math.max(doneMs, startOfToday) : doneMs).toISOString();
    const task: Task = {
      workspaceId: ws,
      taskId: demoTaskId(i),
      number: i + 1,
      title,
      ...(extra.notes ? { notes: extra.notes } : {}),
      status: completedAt ? 'done' : 'open',
      ...(extra.status && where
        ? { state: stateOf(readStatus(extra.status, setOf(DEMO_PROJECTS[where] as Pick<Project, 'statuses'>), 'status')) }
        : {}),
      priority,
      ...(due !== null ? { dueDate: addDays(today, due) } : {}),
      ...(extra.time ? { dueTime: extra.time } : {}),
      ...(who ? { assigneeId: USER_OF[who] } : {}),
      ...(where ? { projectId: DEMO_PROJECTS[where].projectId } : {}),
      labels,
      createdBy: who === 'grace' ? 'usr_grace' : DEMO_OWNER.userId,
      createdAt: at,
      updatedAt: completedAt ?? at,
      ...(completedAt ? { completedAt, completedBy: who ? USER_OF[who] : DEMO_OWNER.userId } : {}),
      version: completedAt ? 2 : 1,
      ...(after.length ? { blockedBy: Object.fromEntries(after.map((n) => [demoTaskId(n - 1), n])) } : {}),
      ...(after.some((n) => !isDone(n)) ? { openBlockers: after.filter((n) => !isDone(n)).map((n) => demoTaskId(n - 1)) } : {}),
      ...(blocks.length ? { blocks, linksVersion: 1 } : {}),
      ...(extra.under ? { parentId: demoTaskId(extra.under - 1), parentNumber: extra.under } : {}),
      ...(subtasksOf(i + 1) ? { subtaskCount: subtasksOf(i + 1) } : {}),
    };
    // The task and its number's claim together; both are there already after the first seeding.
    await services.commit([...services.tasks.writeOps(undefined, task), services.numbers.claimOp(ws, i + 1, task.taskId)]).catch((err) => {
      if (!(err instanceof ToolRefusal) && !(err instanceof CounterMoved)) throw err;
    });
  }
};
