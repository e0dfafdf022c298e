import { ConflictRefusal, InvalidArgumentRefusal, NotFoundRefusal, RoleTooLowRefusal, type ToolRefusal } from '../../errors.js';
import { ReadCeilingReached, WriteBusy, WriteRace, WriteTooLarge } from '../../platform/storage-errors.js';
import type { Role } from '../../vocabulary.js';
import { MAX_SUBTASKS, MAX_WRITE_UNITS_PER_CALL } from './limits.js';

/**
 * Every refusal of the workspace, worded once. Each carries a typed reason (errors.ts) and the data
 * a caller acts on, so code decides by `reason`, never by these words; the words say what happened
 * and what to do next, naming the argument or the cause. A parameter name, when given, leads
 * (`blockedBy: …`), and a bulk item's position before it (`item 3 blockedBy: …`).
 */

const lead = (param: string | undefined): string => (param ? `${param}: ` : '');

// ---- what a reference names -------------------------------------------------------------------

export const taskNotFound = (ref: string, param = 'taskId') =>
  new NotFoundRefusal(
    `${lead(param)}no task is ${ref} in this workspace (not found); tasks_search finds tasks and their keys.`,
    'not-found',
    {
      ref,
    },
  );

export const taskDeleted = (ref: string, deletedAt: string, param = 'taskId') =>
  new NotFoundRefusal(
    `${lead(param)}task ${ref} was deleted (${deletedAt}); activity_list with task shows who deleted it, and change_undo of that change restores it.`,
    'deleted',
    { ref, deletedAt },
  );

/** A subtask's restore while its parent is deleted: the parent's own undo brings it back with its subtasks. */
export const parentIsDeleted = (child: string, parent: string, deletedAt: string, param: string) =>
  new NotFoundRefusal(
    `${lead(param)}${child} is a subtask of ${parent}, which was deleted (${deletedAt}); restore ${parent} first (change_undo of its delete), then this one.`,
    'deleted',
    { ref: parent, deletedAt },
  );

export const notAKeyHere = (ref: string, param: string, workspaceKey: string) =>
  new InvalidArgumentRefusal(`${param}: ${ref} is not a key of this workspace; its tasks are ${workspaceKey}-<number> (or #<number>).`);

export const projectNotFound = (projectId: string, param?: string) =>
  new NotFoundRefusal(
    `${lead(param)}no project ${projectId} in this workspace (not found); projects_list lists projects and their ids.`,
    'not-found',
    {
      projectId,
    },
  );

export const projectDeleted = (projectId: string, deletedAt: string, param?: string) =>
  new NotFoundRefusal(
    `${lead(param)}project ${projectId} was deleted (${deletedAt}); activity_list kind project shows the change, and change_undo of it restores it.`,
    'deleted',
    { projectId, deletedAt },
  );

export const projectArchived = (param: string, name: string, projectId: string) =>
  new InvalidArgumentRefusal(
    `${param}: project ${name} [${projectId}] is archived; restore it with project_update (archived: false) first.`,
  );

export const projectHoldsTasks = (name: string, projectId: string) =>
  new ConflictRefusal(
    `Conflict: project ${name} [${projectId}] still holds tasks; move or delete them (tasks_search with project), or archive it instead. Nothing was changed.`,
    'conflict',
    { projectId },
  );

export const memberNotFound = (userId: string, param?: string) =>
  new NotFoundRefusal(
    `${lead(param)}no member ${userId} in this workspace (not found); members_list lists members and their ids.`,
    'not-found',
    {
      userId,
    },
  );

export const assigneeNotMember = (param: string, value: string) =>
  new InvalidArgumentRefusal(`${param}: no member ${value} in this workspace; use "me", "none" or a userId from members_list.`);

export const commentNotFound = (commentId: string, taskName: string) =>
  new NotFoundRefusal(`commentId: no comment ${commentId} on ${taskName} (not found); comments_list lists them.`, 'not-found', {
    commentId,
  });

export const notFoundCredential = (what: string) =>
  new NotFoundRefusal(`No ${what} in this workspace (not found); it may have been removed already.`, 'not-found');

export const changeNotFound = (activityId: string) =>
  new NotFoundRefusal(
    `activityId: change ${activityId} was not found in this workspace; activity_list shows the changes there are.`,
    'not-found',
    {
      activityId,
    },
  );

export const workspaceNotFound = (workspaceId: string) =>
  new NotFoundRefusal(`Workspace ${workspaceId} was not found`, 'not-found', { workspaceId });

// ---- versions and races ----------------------------------------------------------------------

/** `name` is how the caller knows it (DEMO-7, a project's name and id); `readTool` re-reads it. */
export const versionConflict = (name: string, current: number, expected: number, readTool: string, param?: string) =>
  new ConflictRefusal(
    `${lead(param)}Conflict: ${name} is at version ${current}, not ${expected}; someone changed it. Read it again (${readTool}) and retry with version ${current}.`,
    'version-conflict',
    { current, expected },
  );

export const linksMoved = (name: string) =>
  new ConflictRefusal(
    `Conflict: the tasks linked to ${name} changed meanwhile, so nothing was changed; read it again and retry.`,
    'links-moved',
  );

export const race = () =>
  new ConflictRefusal(
    'Conflict: the data changed while this change was being written, so nothing was changed; read it again and retry.',
    'race',
  );

export const blockerMoved = (name: string) =>
  new ConflictRefusal(
    `Conflict: task ${name}, which is waited on, changed or was deleted while the link was being written; nothing was changed, read it and retry.`,
    'links-moved',
  );

/** A blocker that has the most tasks waiting on it one task may have (each of its changes writes them all). */
export const blockerFull = (name: string, most: number) =>
  limitReached('blockedBy', `${name} already blocks ${most} tasks, the most one task can; this one was not linked to it.`, { most });

export const hasSubtasks = (name: string, count: number) =>
  new ConflictRefusal(
    `Conflict: ${name} has ${count} subtask(s), which a delete takes with it; task_delete ${name} deletes them together (and asks first), or move them off it (parent) before.`,
    'conflict',
    { subtasks: count },
  );

export const parentMoved = (name: string) =>
  new ConflictRefusal(
    `Conflict: task ${name}, a parent in this change, was moved, deleted or reached its ${MAX_SUBTASKS} subtasks while the change was ` +
      'being written; nothing was changed, read it and retry.',
    'links-moved',
  );

/** A new item whose id is taken (a door that names its ids: the seed, an import): nothing was written. */
export const exists = (what: string) => new ConflictRefusal(`Conflict: ${what} exists already; nothing was written.`, 'taken');

/**
 * DynamoDB did not say whether the write happened (it kept answering that the transaction was in
 * progress, or timed out): `check` says how to find out.
 */
export const unconfirmed = (check: string, claimed = false) =>
  new ConflictRefusal(
    `Not confirmed: the database did not confirm this change in time, so it may or may not have been written. ${check} ` +
      (claimed ? 'Calling it again with the same arguments is safe: it is never written twice.' : 'Read it before calling again.'),
    'unconfirmed',
  );

/** New task numbers could not be taken (a workspace with many creates at once): nothing was written. */
export const numbersBusy = () =>
  new ConflictRefusal(
    'Busy: many tasks are being created in this workspace right now, so no task number could be taken and nothing was written; try again in a few seconds.',
    'busy',
    { retryAfterSeconds: 2 },
  );

/** The same call (same caller, tool and arguments) is being made right now: its answer comes in a moment. */
export const callInProgress = (at: string, retryAfterSeconds: number) =>
  new ConflictRefusal(
    `In progress: this same call (same arguments) was started ${at} and is still being made, so nothing was written again; call it again in ${retryAfterSeconds} s for its answer.`,
    'in-progress',
    { retryAfterSeconds },
  );

/** The same call was made and its answer lost (a write not confirmed in time, or a fault after it): nothing is written again. */
export const callMadeUnanswered = (at: string, callId: string) =>
  new ConflictRefusal(
    `Made already: this same call (same arguments) was made ${at} (change ${callId}) but its answer was lost, so nothing was written again; activity_list shows what it changed.`,
    'made-already',
    { callId },
  );

export const busyTarget = (what: string) =>
  new ConflictRefusal(`Conflict: ${what} is being changed by someone else right now; try again in a few seconds.`, 'busy');

export const upgrading = (moving: boolean) =>
  new ConflictRefusal(
    moving
      ? 'This workspace is being moved to a new data layout by its operator (npm run admin -- migrate); reads work, changes to ' +
          'tasks are refused until it finishes, usually within minutes. Try again shortly.'
      : 'This workspace is still in the data layout of an earlier version of doers: reads work, and changes to tasks wait until ' +
          'its operator runs npm run admin -- migrate (docs/deploy-and-operations.md, "Upgrading"). Ask them to.',
    'upgrading',
  );

// ---- roles -------------------------------------------------------------------------------------

export const roleTooLow = (action: string, needed: string, role: string) =>
  new RoleTooLowRefusal(`Refused, role too low: ${action} needs the role ${needed} or higher, and you are ${role} in this workspace.`, {
    needed,
    role,
  });

export const onlyOwnItems = (action: string) =>
  new RoleTooLowRefusal(`Refused, role too low: as a member you may only ${action} that you created yourself; ask an admin.`, {
    needed: 'admin',
  });

/**
 * A tree's change that one all-or-nothing write cannot hold: `subtasks` it would change at least,
 * `actions` it would write at least. Said before the tree is read beyond its counts.
 */
export const treeTooBig = (name: string, change: 'delete' | 'complete', subtasks: number, actions: number, most: number, param: string) =>
  limitReached(
    param,
    `${change === 'delete' ? 'deleting' : 'completing'} ${name} with its subtasks would change ${subtasks} subtask(s) and write ` +
      `at least ${actions} items, more than one all-or-nothing write holds (${most}); ${
        change === 'delete'
          ? 'delete some of its subtasks first (task_delete each) or move them off it (parent: null)'
          : 'complete some of its subtasks first (tasks_update with status done)'
      }, then it. Nothing was changed.`,
    { subtasks, actions, most },
  );

export const othersSubtasks = (name: string, theirs: readonly string[]) =>
  new RoleTooLowRefusal(
    `Refused, role too low: ${name} has subtasks others created (${theirs.join(', ')}), which its delete would take with it; as a member ` +
      'you may delete only tasks you created. Move them off it (parent: null) or ask an admin.',
    { needed: 'admin', subtasks: theirs },
  );

/** A token asked with scopes its member's role cannot use: nothing was made. */
export const scopesAboveRole = (role: Role, above: readonly string[], allowed: readonly string[]) =>
  new RoleTooLowRefusal(
    `scopes: ${above.join(', ')} ${above.length === 1 ? 'is' : 'are'} more than a ${role} can use (a ${role}'s tokens can carry ${allowed.join(', ')}); ` +
      'the token was not made. Ask for those, or change the role first.',
    { role, scopes: above, allowed },
  );

/** A disabled member gets no new way in. */
export const memberInactive = (email: string) =>
  new InvalidArgumentRefusal(`email: ${email} is disabled; enable the user first (npm run admin -- user enable), then make the token.`);

export const ownerOnly = (what: string) => new RoleTooLowRefusal(`Refused, role too low: only an owner can ${what}.`, { needed: 'owner' });

export const notTheirs = (what: string) =>
  new RoleTooLowRefusal(
    `Refused, role too low: ${what} belongs to someone else; only its owner, or an admin who may change that member (an owner for an owner's), may do this.`,
  );

export const lastOwner = (name: string, userId: string) =>
  new ConflictRefusal(
    `Conflict: ${name} [${userId}] is the last owner of this workspace who is active; make someone else owner first.`,
    'last-owner',
    { userId },
  );

export const notYourself = () =>
  new ConflictRefusal('Conflict: you cannot disable or enable yourself; ask another admin or owner.', 'conflict');

export const memberMoved = (userId: string, nowRole: string, expected: string) =>
  new ConflictRefusal(
    `Conflict: member ${userId} is now ${nowRole}, no longer ${expected}; someone changed it. Read members_list and retry.`,
    'version-conflict',
    { current: nowRole, expected },
  );

export const emailTaken = (email: string) =>
  new ConflictRefusal(`Conflict: ${email} cannot be invited; the address is already in use.`, 'taken', { email });

// ---- arguments ----------------------------------------------------------------------------------

export const invalid = (param: string, problem: string) => new InvalidArgumentRefusal(`${param}: ${problem}`);

export const nothingToChange = () => new InvalidArgumentRefusal('arguments: name at least one field to change.');

export const limitReached = (param: string, problem: string, data: Readonly<Record<string, unknown>> = {}) =>
  new InvalidArgumentRefusal(`${param}: ${problem}`, 'limit', data);

/** An item of a bulk call (or a bulk undo) past the write units one call may spend: it and every later one is left. */
export const callCeiling = (param: string) =>
  limitReached(
    param,
    `not written: this call reached the ${MAX_WRITE_UNITS_PER_CALL} write units one call may spend (long notes cost the most); send this and the rest in another call.`,
    { most: MAX_WRITE_UNITS_PER_CALL },
  );

/** An imported row another run of the same file created meanwhile. */
export const importedMeanwhile = (line: number) => invalid('file', `line ${line} was imported by another run meanwhile`);

/** An attachment's content that is not base64 as RFC 4648 writes it. */
export const notBase64 = () =>
  invalid('content', 'is not base64 (A–Z, a–z, 0–9, + and /, and = padding only to fill the last group of four).');

export const twiceInOneCall = (positions: readonly number[], ref: string) =>
  new InvalidArgumentRefusal(
    `items ${positions.length > 2 ? `${positions.slice(0, -1).join(', ')} and ${positions.at(-1)} all` : `${positions.join(' and ')} both`} name ${ref}; give each task once.`,
  );

// ---- undo ----------------------------------------------------------------------------------------

export const changeExpired = (activityId: string, days: number) =>
  new InvalidArgumentRefusal(
    `activityId: change ${activityId} is older than the ${days} days changes are kept for; it cannot be undone.`,
    'not-undoable',
  );

export const alreadyUndone = (activityId: string, by: string) =>
  new InvalidArgumentRefusal(`activityId: change ${activityId} was undone already by ${by}; to redo it, undo ${by}.`, 'not-undoable', {
    undoneBy: by,
  });

export const undoneMeanwhile = (activityId: string, by: string | undefined) =>
  new ConflictRefusal(`Conflict: ${activityId} was undone meanwhile${by ? ` (by ${by})` : ''}; nothing was changed.`, 'undone-meanwhile', {
    ...(by ? { undoneBy: by } : {}),
  });

/** `later` are the changes made since, worded for a person (who, through what, when, what). */
export const changedSince = (label: string, activityId: string, later: readonly string[], laterIds: readonly string[]) =>
  new ConflictRefusal(
    `Conflict: '${label}' has changed since ${activityId} (${later.length ? later.join('; ') : 'changed by a later change'}), so undoing it ` +
      'would overwrite that; nothing was changed. Undo the later change first, or change it back by hand.',
    'changed-since',
    { later: laterIds },
  );

export const notUndoable = (activityId: string, why: string) =>
  new InvalidArgumentRefusal(`activityId: ${activityId} ${why}`, 'not-undoable');

export const answeredAnotherState = () =>
  new ConflictRefusal(
    'Conflict: it changed between the question and the answer, so nothing was changed; read it again and ask once more.',
    'version-conflict',
  );

// ---- dates in words ---------------------------------------------------------------------------

/** A date argument whose words cannot be read as one day: the words, why, and what is read. */
export const dateUnreadable = (param: string, words: string, problem: string) =>
  new InvalidArgumentRefusal(
    `${param}: ${/^[\d-]+$/.test(words) ? words : `'${words}'`} ${problem}. Dates read here: 'friday', 'next friday 3pm', 'in 2 weeks', 'end of month', 'dec 24', '24/12' (day/month) or 2026-12-24.`,
    'invalid-argument',
    { param, words },
  );

/** A `repeat` argument that is no rule a task can have: the words, why, and rules that are read. */
export const repeatUnreadable = (param: string, words: string, problem: string, examples: string) =>
  new InvalidArgumentRefusal(`${param}: '${words}' ${problem}. Rules read here: ${examples}; null stops one.`, 'invalid-argument', {
    param,
    words,
  });

// ---- attachments ------------------------------------------------------------------------------------

export const attachmentNotFound = (attachmentId: string, param = 'attachmentId') =>
  new NotFoundRefusal(
    `${lead(param)}no attachment ${attachmentId} in this workspace (not found); task_get lists a task's attachments and their ids.`,
    'not-found',
    { ref: attachmentId },
  );

export const attachmentDeleted = (attachmentId: string, deletedAt: string, param = 'attachmentId') =>
  new NotFoundRefusal(
    `${lead(param)}attachment ${attachmentId} was deleted (${deletedAt}); activity_list with its task shows who deleted it, and change_undo of that change restores it.`,
    'deleted',
    { ref: attachmentId, deletedAt },
  );

/** Deleted (or restored) by another call meanwhile: nothing was changed. */
export const attachmentGone = (attachmentId: string) =>
  new ConflictRefusal(`Conflict: attachment ${attachmentId} was deleted by another call meanwhile; nothing was changed.`, 'race');

export const attachmentRaced = (attachmentId: string) =>
  new ConflictRefusal(`Conflict: attachment ${attachmentId} changed meanwhile; nothing was changed, read the task again.`, 'race');

export const attachmentQuotaFull = (used: number, adding: number, quota: number, param = 'content') =>
  new InvalidArgumentRefusal(
    `${param}: the workspace's attachments would take ${mb(used + adding)} of its ${mb(quota)} (DOERS_ATTACHMENT_QUOTA_MB); nothing was stored. Delete attachments it no longer needs, or ask its operator for more.`,
    'limit',
    { used, adding, quota },
  );

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;

/** Its attachments would outlive it in the file store: they go first, each undoable on its own. */
export const hasAttachments = (name: string, count: number) =>
  new InvalidArgumentRefusal(
    `taskId: ${name} has ${count} attachment(s); delete them first (attachment_delete, each undoable), then the task.`,
    'invalid-argument',
    { attachments: count },
  );

// ---- what the storage layer could not do (platform/storage-errors.ts) ----------------------------

/** A write DynamoDB could not take now (throttled, or meeting others after its retries): this item was not written. */
export const notWrittenBusy = () =>
  new ConflictRefusal(
    'Not written: the database was too busy or did not answer in time, so this item was not written; read it before retrying.',
    'busy',
    { retryAfterSeconds: 1 },
  );

/** A change too large for one all-or-nothing write. */
export const writeTooLarge = (err: WriteTooLarge) =>
  err.what === 'actions'
    ? limitReached(
        'arguments',
        `this change would write ${err.size} items at once, more than one all-or-nothing write holds (${err.most}); make it in smaller steps.`,
        { actions: err.size, most: err.most },
      )
    : err.what === 'item'
      ? limitReached(
          'arguments',
          `one item of this change would be ${Math.ceil(err.size / 1024)} KB, more than the ${err.most / 1024} KB an item can be; shorten the text.`,
          { bytes: err.size, most: err.most },
        )
      : limitReached(
          'arguments',
          `this change would write ${Math.ceil(err.size / 1024)} KB at once, more than one all-or-nothing write holds (4 MB); make it in smaller steps.`,
          { bytes: err.size, most: err.most },
        );

/** A call that read past its ceiling: what it asked is more than one call reads. */
export const readCeiling = (err: ReadCeilingReached) =>
  limitReached(
    'arguments',
    `this call read more than one call may (${err.ceiling.units} read units, ${Math.round(err.ceiling.bytes / 1024 / 1024)} MB), so it stopped ` +
      'and nothing was changed; ask for less at once (a narrower filter, fewer items, a smaller tree).',
    { readUnits: err.spent.units, readBytes: err.spent.bytes, mostUnits: err.ceiling.units, mostBytes: err.ceiling.bytes },
  );

/**
 * The refusal a storage error means, in the workspace's words: the one place where what a store
 * could not do becomes what the caller reads. Anything else is not a refusal (undefined).
 */
export const refusalOfStorage = (err: unknown): ToolRefusal | undefined => {
  if (err instanceof WriteRace) return race();
  if (err instanceof WriteBusy) return notWrittenBusy();
  if (err instanceof WriteTooLarge) return writeTooLarge(err);
  if (err instanceof ReadCeilingReached) return readCeiling(err);
  return undefined;
};
