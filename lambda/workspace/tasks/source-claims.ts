import type { WriteOp } from '../../platform/transact.js';
import { importedMeanwhile } from '../model/refusals.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Task } from '../model/types.js';
import type { WriteContext } from '../store/stores.js';
import { writesOf } from '../store/writes.js';

/** Where an imported row's claim is kept: `IMPORT#<format>#<row id>` in the workspace's partition. */
export const sourceClaimSk = (format: string, sourceId: string): string => `IMPORT#${format}#${sourceId}`;

/**
 * What a task imported from a file's row writes besides itself (a CreateItem's `also`): the row's
 * claim, with the task's key, so a re-run of the same file finds it and creates nothing twice, and
 * two runs at once cannot both create one row.
 */
export const sourceRowClaim =
  (ctx: WriteContext, format: string, sourceId: string, line: number) =>
  (task: Task): WriteOp[] => [
    writesOf(ctx.stores).tasks.sourceClaimOp(
      ctx.caller.workspaceId,
      sourceClaimSk(format, sourceId),
      { taskId: task.taskId, key: taskNameOf(ctx.caller.workspaceKey, task), line, importedAt: ctx.source.now.toISOString() },
      () => {
        throw importedMeanwhile(line);
      },
    ),
  ];
