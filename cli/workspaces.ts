import { InvalidArgumentRefusal } from '../lambda/errors.js';
import type { Status } from '../lambda/vocabulary.js';
import { workspaceKeyOf } from '../lambda/vocabulary.js';
import { doorSource } from '../lambda/workspace/activity/records.js';
import { numberExistingTasks, setWorkspaceKey } from '../lambda/workspace/admin/numbering.js';
import { OPERATOR } from '../lambda/workspace/membership/rules.js';
import { buildRecord } from '../lambda/workspace/model/activity.js';
import { type Command, required, workspaceOf } from './args.js';
import { CliError, usage } from './errors.js';

/** A whole workspace switched off (every member refused) and on again. */
const workspaceStatus = (status: Status): Command => ({
  options: ['workspace'],
  async run(o, target, out, now) {
    const workspaceId = workspaceOf(o.workspace, target);
    const before = await target.directory.getWorkspace(workspaceId);
    const record =
      before &&
      buildRecord(
        doorSource('admin CLI', OPERATOR, `workspace ${status === 'disabled' ? 'disable' : 'enable'}`, now),
        workspaceId,
        {
          kind: 'workspace',
          action: status === 'disabled' ? 'disabled' : 'enabled',
          targetId: workspaceId,
          targetLabel: before.name,
          changes: [{ field: 'status', before: before.status, after: status }],
          before: { ...before },
        },
        target.activity.expiresAtFor(now),
      );
    if (!record || !(await target.directory.setWorkspaceStatus(workspaceId, status, [target.activity.recordOp(record)]))) {
      throw new CliError(`--workspace: no workspace ${workspaceId} in ${target.where}`);
    }
    out.stdout(`Workspace ${workspaceId} is ${status}.`);
  },
});

/** The workspace's task key (DEMO in DEMO-42); the old key keeps naming its tasks. */
const workspaceKey: Command = {
  options: ['key', 'workspace'],
  async run(o, target, out, now) {
    const workspaceId = workspaceOf(o.workspace, target);
    const key = required(o.key, 'key');
    const before = await target.directory.getWorkspace(workspaceId);
    if (!before) throw new CliError(`--workspace: no workspace ${workspaceId} in ${target.where}`);
    const old = workspaceKeyOf(before);
    const record = buildRecord(
      doorSource('admin CLI', OPERATOR, 'workspace key', now),
      workspaceId,
      {
        kind: 'workspace',
        action: 'changed',
        targetId: workspaceId,
        targetLabel: before.name,
        changes: [{ field: 'key', before: old, after: key.toUpperCase() }],
        before: { ...before },
      },
      target.activity.expiresAtFor(now),
    );
    try {
      await setWorkspaceKey(target.db, target.table, before, key, [target.activity.recordOp(record)]);
    } catch (err) {
      if (err instanceof InvalidArgumentRefusal) throw usage(`--${err.message}`);
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
    const before = await target.directory.getWorkspace(workspaceId);
    if (!before) throw new CliError(`--workspace: no workspace ${workspaceId} in ${target.where}`);
    const source = doorSource('admin CLI', OPERATOR, 'tasks number', now);
    const { numbered, counter } = await numberExistingTasks(target.db, target.table, workspaceId, (n) =>
      n === 0
        ? []
        : [
            target.activity.recordOp(
              buildRecord(
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
            ),
          ],
    );
    const key = workspaceKeyOf(before);
    out.stdout(
      numbered
        ? `Numbered ${numbered} task(s) of ${workspaceId}; they are ${key}-1 … ${key}-${counter} with the ones numbered before.`
        : `Every task of ${workspaceId} has a number already; nothing changed.`,
    );
  },
};

export const WORKSPACE_COMMANDS: Readonly<Record<string, Command>> = {
  'workspace disable': workspaceStatus('disabled'),
  'workspace enable': workspaceStatus('active'),
  'workspace key': workspaceKey,
  'tasks number': tasksNumber,
};
