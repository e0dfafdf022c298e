import { ToolRefusal } from '../lambda/errors.js';
import type { Status } from '../lambda/vocabulary.js';
import { ROLES, workspaceKeyOf } from '../lambda/vocabulary.js';
import { doorSource } from '../lambda/workspace/activity/records.js';
import { listWorkspaceIds, migrateWorkspace } from '../lambda/workspace/admin/migrate.js';
import { numberExistingTasks } from '../lambda/workspace/admin/numbering.js';
import { OPERATOR } from '../lambda/workspace/membership/rules.js';
import { setWorkspaceKey, setWorkspaceStatus } from '../lambda/workspace/membership/workspaces.js';
import { buildRecord } from '../lambda/workspace/model/activity.js';
import { type Command, existingWorkspace, noWorkspace, required, workspaceOf } from './args.js';
import { usage } from './errors.js';

/** A whole workspace switched off (every member refused) and on again. */
const workspaceStatus = (status: Status): Command => ({
  options: ['workspace'],
  async run(o, target, out, now) {
    const workspaceId = workspaceOf(o.workspace, target);
    const source = doorSource('admin CLI', OPERATOR, `workspace ${status === 'disabled' ? 'disable' : 'enable'}`, now);
    await existingWorkspace(target, workspaceId);
    await setWorkspaceStatus(target, source, workspaceId, status);
    out.stdout(`Workspace ${workspaceId} is ${status}.`);
  },
});

/** The workspace's task key (DEMO in DEMO-42); the old key keeps naming its tasks. */
const workspaceKey: Command = {
  options: ['key', 'workspace'],
  async run(o, target, out, now) {
    const workspaceId = workspaceOf(o.workspace, target);
    const key = required(o.key, 'key');
    const old = workspaceKeyOf(await existingWorkspace(target, workspaceId));
    try {
      await setWorkspaceKey(target, doorSource('admin CLI', OPERATOR, 'workspace key', now), workspaceId, key);
    } catch (err) {
      if (err instanceof ToolRefusal && err.reason === 'invalid-argument') throw usage(`--${err.message}`);
      throw err;
    }
    out.stdout(`Workspace ${workspaceId}: tasks are ${key.toUpperCase()}-<number> now; ${old}-<number> still names them.`);
  },
};

/**
 * The migration to task numbers: every task of the workspace without a number gets one, oldest
 * first, and the workspace its key. Idempotent: run again, it numbers nothing.
 */
const tasksNumber: Command = {
  options: ['workspace'],
  async run(o, target, out, now) {
    const workspaceId = workspaceOf(o.workspace, target);
    const before = await existingWorkspace(target, workspaceId);
    const source = doorSource('admin CLI', OPERATOR, 'tasks number', now);
    const { numbered, counter } = await numberExistingTasks(target.db, target.table, workspaceId, target, (n) =>
      n === 0
        ? undefined
        : buildRecord(
            source,
            workspaceId,
            {
              kind: 'workspace',
              action: 'changed',
              targetId: workspaceId,
              targetLabel: before.name,
              changes: [{ field: 'taskCounter', before: before.taskCounter ?? 0, after: (before.taskCounter ?? 0) + n }],
            },
            target.activity.expiresAtFor(now),
          ),
    );
    const key = workspaceKeyOf(before);
    out.stdout(
      numbered
        ? `Numbered ${numbered} task(s) of ${workspaceId}; they are ${key}-1 … ${key}-${counter} with the ones numbered before.`
        : `Every task of ${workspaceId} has a number already; nothing changed.`,
    );
  },
};

/**
 * What the CLI sees of a workspace, and in which table: the check after adopting a restored table
 * (docs/deploy-and-operations.md, "Restoring the table"). Counts are the workspace's count items,
 * which the function's agenda reads too.
 */
const workspaceShow: Command = {
  options: ['workspace'],
  async run(o, target, out, now) {
    const workspaceId = workspaceOf(o.workspace, target);
    const [ws, members] = await Promise.all([target.directory.getWorkspace(workspaceId), target.directory.listMembers(workspaceId)]);
    if (!ws) throw noWorkspace(workspaceId, target);
    const layout = ws.layout ?? 1;
    const day = now.toISOString().slice(0, 10);
    const counts = await target.tasks.counts(
      { workspaceId, layout, migrating: ws.migrating !== undefined },
      {},
      day,
      `${day}T00:00:00.000Z`,
      now.toISOString(),
    );
    const byRole = ROLES.map((r) => [r, members.filter((m) => m.role === r && m.status === 'active').length] as const).filter(([, n]) => n);
    out.stdout(
      [
        `Workspace ${workspaceId} "${ws.name}" (${ws.status}) in table ${target.table} (${target.where})`,
        `  tasks: ${workspaceKeyOf(ws)}-1 … ${workspaceKeyOf(ws)}-${ws.taskCounter ?? 0}; data layout ${layout}${ws.migrating ? ', being migrated' : ''}${layout === 2 ? '' : ' (run migrate)'}`,
        `  open tasks: ${counts.open} (${counts.overdue} overdue, ${counts.dueToday} due today, UTC); done today: ${counts.doneBetween}`,
        `  members: ${members.length} (${byRole.map(([r, n]) => `${n} ${r}`).join(', ') || 'none active'}${members.some((m) => m.status !== 'active') ? `, ${members.filter((m) => m.status !== 'active').length} disabled` : ''})`,
      ].join('\n'),
    );
  },
};

/** The move of one workspace (or every one) to the current data layout; see workspace/admin/migrate.ts. */
const migrate: Command = {
  options: ['workspace', 'drain-seconds'],
  async run(o, target, out) {
    const drain = o['drain-seconds'] === undefined ? 20 : Number(o['drain-seconds']);
    if (!Number.isFinite(drain) || drain < 0 || drain > 600) throw usage('--drain-seconds: a number of seconds from 0 to 600');
    const ids = o.workspace === 'all' ? await listWorkspaceIds(target.db, target.table) : [workspaceOf(o.workspace, target)];
    for (const workspaceId of ids) {
      await existingWorkspace(target, workspaceId);
      const s = await migrateWorkspace(target.db, target.table, workspaceId, {
        drainMs: drain * 1000,
        progress: (line) => out.stderr(line),
      });
      out.stdout(
        s.already
          ? `${workspaceId}: in the current layout already${s.removed ? `; removed ${s.removed} leftover item(s) of the old one` : ''}${s.recordsIndexed ? `; ${s.recordsIndexed} activity record(s) indexed by project and kind` : ''}.`
          : `${workspaceId}: migrated in ${s.seconds} s: ${s.tasks} task(s) (${s.written} written by this run, ${s.deleted} deleted ones kept for undo, ${s.withNotes} with notes), ${s.entries} search entries, ${s.counts} count items, ${s.recordsMoved} activity records moved (${s.recordsIndexed} indexed), ${s.numbered} numbered, ${s.removed} old items removed.`,
      );
    }
  },
};

export const WORKSPACE_COMMANDS: Readonly<Record<string, Command>> = {
  migrate,
  'workspace show': workspaceShow,
  'workspace disable': workspaceStatus('disabled'),
  'workspace enable': workspaceStatus('active'),
  'workspace key': workspaceKey,
  'tasks number': tasksNumber,
};
