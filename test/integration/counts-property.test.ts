import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { LocalServer } from '../../lambda/local/server.js';
import { addDays } from '../../lambda/workspace/model/time.js';
import type { Task } from '../../lambda/workspace/model/types.js';
import { addMember, caller, createTestWorkspace, startOwnWorkspacesServer } from '../helpers/workspace-fixtures.js';

// The counts that agenda_get and project_get read are kept by the writes (task-derived.ts), never
// recounted. Here random sequences of changes (creates, edits of due date, assignee, project and
// priority, completions, reopenings, deletes, undos of any of them, bulk calls) run through the
// tools, and after each sequence every scope's kept counts are compared with a count of the tasks
// themselves. A count that drifted once would stay wrong for good, so this is the guard.

let server: LocalServer;
before(async () => {
  server = await startOwnWorkspacesServer({ DOERS_AUTH_CACHE_SECONDS: '0' });
});
after(() => server.close());

const DAY = '2026-12-02';

type Op =
  | { kind: 'create'; due?: number; who: number; project: number; done: boolean }
  | { kind: 'bulk'; n: number; due?: number; who: number }
  | { kind: 'due'; t: number; due?: number }
  | { kind: 'assign'; t: number; who: number }
  | { kind: 'move'; t: number; project: number }
  | { kind: 'priority'; t: number; p: number }
  | { kind: 'complete' | 'reopen' | 'delete'; t: number }
  | { kind: 'undo'; back: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('create' as const),
    due: fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
    who: fc.nat(3),
    project: fc.nat(2),
    done: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('bulk' as const),
    n: fc.integer({ min: 2, max: 4 }),
    due: fc.option(fc.integer({ min: -2, max: 2 }), { nil: undefined }),
    who: fc.nat(3),
  }),
  fc.record({ kind: fc.constant('due' as const), t: fc.nat(30), due: fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }) }),
  fc.record({ kind: fc.constant('assign' as const), t: fc.nat(30), who: fc.nat(3) }),
  fc.record({ kind: fc.constant('move' as const), t: fc.nat(30), project: fc.nat(2) }),
  fc.record({ kind: fc.constant('priority' as const), t: fc.nat(30), p: fc.nat(3) }),
  fc.record({ kind: fc.constantFrom('complete' as const, 'reopen' as const, 'delete' as const), t: fc.nat(30) }),
  fc.record({ kind: fc.constant('undo' as const), back: fc.nat(5) }),
);

describe('the kept counts never drift from the tasks they count', () => {
  test('after random changes, undos and deletes, every scope counts what a recount of its tasks says', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 14 }), async (ops) => {
        // Arrange: a workspace of its own per run, two projects and three people.
        const ws = await createTestWorkspace(server);
        const other = await addMember(server, ws.workspaceId, 'member', 'UTC');
        const call = caller(server, ws.owner.token);
        const projects = [
          (await call('project_create', { name: 'A' })).structuredContent.projectId as string,
          (await call('project_create', { name: 'B' })).structuredContent.projectId as string,
        ];
        const people = [ws.owner.userId, ws.member.userId, other.userId];
        const ids: string[] = [];
        const changes: string[] = [];
        const due = (d: number | undefined) => (d === undefined ? null : addDays(DAY, d));
        const pick = (t: number) => ids[t % Math.max(ids.length, 1)];
        const version = async (id: string) => (await call('task_get', { taskId: id })).structuredContent?.version as number | undefined;

        // Act
        for (const o of ops) {
          let r: any;
          if (o.kind === 'create') {
            r = await call('task_create', {
              title: 'Counted',
              ...(o.due !== undefined ? { dueDate: addDays(DAY, o.due) } : {}),
              ...(o.who < 3 ? { assignee: people[o.who] } : {}),
              ...(o.project < 2 ? { projectId: projects[o.project] } : {}),
            });
            if (!r.isError) {
              ids.push(r.structuredContent.taskId);
              if (o.done) r = await call('task_complete', { taskId: r.structuredContent.taskId });
            }
          } else if (o.kind === 'bulk') {
            r = await call('tasks_create', {
              tasks: Array.from({ length: o.n }, (_, i) => ({
                title: `Bulk ${i}`,
                ...(o.due !== undefined ? { dueDate: addDays(DAY, o.due + i) } : {}),
                ...(o.who < 3 ? { assignee: people[(o.who + i) % 3] } : {}),
              })),
            });
            for (const item of r.structuredContent?.items ?? []) if (item.taskId) ids.push(item.taskId);
          } else if (o.kind === 'undo') {
            const id = changes[changes.length - 1 - (o.back % Math.max(changes.length, 1))];
            if (!id) continue;
            r = await call('change_undo', { activityId: id });
          } else {
            const id = pick(o.t);
            if (!id) continue;
            const v = await version(id);
            if (v === undefined) continue;
            r =
              o.kind === 'due'
                ? await call('task_update', { taskId: id, version: v, dueDate: due(o.due) })
                : o.kind === 'assign'
                  ? await call('task_update', { taskId: id, version: v, assignee: o.who < 3 ? people[o.who] : 'none' })
                  : o.kind === 'move'
                    ? await call('task_update', { taskId: id, version: v, projectId: o.project < 2 ? projects[o.project] : null })
                    : o.kind === 'priority'
                      ? await call('task_update', { taskId: id, version: v, priority: `P${o.p + 1}` })
                      : o.kind === 'complete'
                        ? await call('task_complete', { taskId: id })
                        : o.kind === 'reopen'
                          ? await call('task_reopen', { taskId: id })
                          : await call('task_delete', { taskId: id });
          }
          const activityId = r?.structuredContent?.activityId ?? r?.structuredContent?.undoId;
          if (activityId && !r.isError) changes.push(activityId);
        }

        // Assert: each scope's counts, kept, against the tasks counted one by one.
        const all = (await server.app.services.tasks.getMany(ws.workspaceId, ids)).values();
        const live = [...all].filter((t) => !t.deletedAt);
        const now = new Date();
        const from = new Date(now.getTime() - 86_400_000).toISOString();
        const to = new Date(now.getTime() + 60_000).toISOString();
        const recount = (tasks: Task[]) => {
          const open = tasks.filter((t) => t.status === 'open');
          return {
            open: open.length,
            overdue: open.filter((t) => t.dueDate !== undefined && t.dueDate < DAY).length,
            dueToday: open.filter((t) => t.dueDate === DAY).length,
            doneBetween: tasks.filter((t) => t.status === 'done' && t.completedAt! >= from && t.completedAt! < to).length,
          };
        };
        const ref = { workspaceId: ws.workspaceId, layout: 2 };
        const kept = async (scope: { assigneeId?: string | null; projectId?: string | null }) => {
          const c = await server.app.services.tasks.counts(ref, scope, DAY, from, to);
          return { open: c.open, overdue: c.overdue, dueToday: c.dueToday, doneBetween: c.doneBetween, done: c.done };
        };
        const { done: _wd, ...workspace } = await kept({});
        assert.deepEqual(workspace, recount(live), `the workspace, after ${JSON.stringify(ops)}`);
        for (const who of [...people, null]) {
          const { done: _d, ...person } = await kept({ assigneeId: who });
          assert.deepEqual(person, recount(live.filter((t) => (t.assigneeId ?? null) === who)), `assignee ${who}`);
        }
        for (const p of [...projects, null]) {
          const { doneBetween: _b, ...project } = await kept({ projectId: p });
          const { doneBetween: _r, ...expected } = recount(live.filter((t) => (t.projectId ?? null) === p));
          assert.deepEqual(
            project,
            { ...expected, done: live.filter((t) => (t.projectId ?? null) === p && t.status === 'done').length },
            `project ${p}`,
          );
        }
      }),
      { numRuns: 25 },
    );
  });
});
