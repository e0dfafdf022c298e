import {
  ConflictRefusal,
  InvalidArgumentRefusal,
  NeedsExtensionRefusal,
  NotFoundRefusal,
  RoleTooLowRefusal,
  type ToolRefusal,
} from '../../errors.js';
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
  new InvalidArgumentRefusal(`${param}: ${problem}`, 'limit', { param, ...data });

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

// ---- statuses: a project's set (model/status-sets.ts) and a status named (model/statuses.ts) ---------

const STATUSES_EXAMPLE = '[{name: "Todo", category: "unstarted"}, {name: "Done", category: "done"}]';

/** A project's statuses given as an empty list. */
export const statusesEmpty = (param: string) =>
  invalid(param, `is empty; a project needs at least one open and one done status, e.g. ${STATUSES_EXAMPLE}.`);

/** More statuses than a project may have. */
export const tooManyStatuses = (param: string, count: number, most: number) => invalid(param, `has ${count} statuses; at most ${most}.`);

/** A status name that is empty, too long or has control or invisible characters (shown cut, those characters as ?). */
export const statusNameUnfit = (param: string, given: string) =>
  invalid(
    param,
    `'${given.slice(0, 60).replace(/[\p{Cc}\p{Cf}]/gu, '?')}' is no name for a status: 1 to 40 characters, no control or invisible formatting characters.`,
  );

/** A status's `was` longer than any status's name. */
export const statusWasTooLong = (param: string) => invalid(param, 'names a status by its current name (at most 40 characters).');

/** A status named with a word searches reserve. */
export const statusNameReserved = (param: string, name: string) =>
  invalid(param, `'${name}' is a word searches reserve (open, any); choose another name.`);

/** A status named as a category it is not in. */
export const statusNamedAsCategory = (param: string, name: string, category: string) =>
  invalid(param, `'${name}' is the name of a category; a status so named must be in it (category: ${category}).`);

/** Two statuses of one list with the same name. */
export const statusNamedTwice = (param: string, name: string) =>
  invalid(param, `'${name}' is named twice; each status needs a name of its own.`);

/** A project's statuses with none in the done category. */
export const noDoneStatus = (param: string) =>
  invalid(param, `has no status in the done category; completing a task sets the first one, e.g. {name: "Done", category: "done"}.`);

/** A project's statuses with no open one. */
export const noOpenStatus = (param: string) =>
  invalid(
    param,
    `has no open status (backlog, unstarted or started); a new task starts in one, e.g. {name: "Todo", category: "unstarted"}.`,
  );

/** A status's `was` that names no current status of the project; `current` are their names. */
export const statusWasUnknown = (param: string, was: string, current: readonly string[]) =>
  invalid(param, `'${was}' is no status of this project; its statuses are ${current.join(', ') || 'none yet'}.`);

/** One current status claimed by two items of the list (positions `first` and `second`). */
export const statusGivenTwice = (param: string, name: string, first: number | undefined, second: number) =>
  invalid(param, `'${name}' is given twice (items ${first} and ${second}); name each status once.`);

/** A kept status given another category. */
export const statusKeepsCategory = (param: string, name: string, category: string, wanted: string) =>
  invalid(
    param,
    `'${name}' is ${category}, and a status keeps its category; to have one in ${wanted}, add it under a new name and remove '${name}' (its tasks go where moveTo says).`,
  );

/** A `moveTo` entry for a status the change does not remove; `removed` are the names it removes. */
export const moveToNotRemoved = (from: string, removed: readonly string[]) =>
  invalid(
    'moveTo',
    `'${from}' is no status this change removes; ${removed.length ? `it removes ${removed.join(', ')}` : 'it removes none'}.`,
  );

/** A `moveTo` target of another phase (open) or category (closed) than the status removed; `choices` are the names it may go to. */
export const moveToMismatch = (name: string, category: string, open: boolean, asked: string, choices: readonly string[]) =>
  invalid(
    'moveTo',
    `'${name}' → '${asked}': the tasks of a ${open ? 'open status go to an open one' : `${category} status go to a ${category} one`}; ${
      choices.length ? `here one of ${choices.join(', ')}` : 'this set has none, so they stay as they are'
    }.`,
  );

/** A change that would set aside more removed statuses than a project keeps. */
export const tooManyRetired = (param: string, retired: number, most: number) =>
  invalid(
    param,
    `this project has set aside ${retired} removed statuses (its tasks may still be in them), and at most ${most} are kept; rename a status (was) instead of replacing it.`,
  );

/** A status to set that the set does not have: `names` are its statuses', `categories` every category. */
export const statusUnknown = (param: string, given: string, names: readonly string[], categories: readonly string[]) =>
  invalid(param, `'${given}' is no status here; one of ${names.join(', ')} (or a category: ${categories.join(', ')}; or open, done).`);

const filterChoices = (names: readonly string[], categories: readonly string[]): string =>
  `one of ${names.join(', ')} (or a category: ${categories.join(', ')}; or open), or any`;

/** A search's status filter that names nothing. */
export const statusFilterEmpty = (param: string, names: readonly string[], categories: readonly string[]) =>
  invalid(param, `name a status; ${filterChoices(names, categories)}.`);

/** A word of a search's status filter that is no status, category or phase of any set searched. */
export const statusFilterUnknown = (param: string, given: string, names: readonly string[], categories: readonly string[]) =>
  invalid(param, `'${given}' is no status here; ${filterChoices(names, categories)}.`);

// ---- a task's dates, times and status (tasks/planner.ts, surface/task-input.ts) ---------------------

/** A repeat rule with no occurrence from the due date it would count from. */
export const noOccurrenceFrom = (param: string, given: string, dueDate: string) =>
  invalid(param, `'${given}' has no occurrence from ${dueDate} on.`);

/** A recurring task's due date more than a year back or ten years ahead (`from` … `to`). */
export const recurringDueOutOfRange = (param: string, dueDate: string, from: string, to: string) =>
  invalid(param, `${dueDate} is more than a year back or ten years ahead; a recurring task is due between ${from} and ${to}.`);

/** A new task's dueTime without a dueDate. */
export const dueTimeWithoutDate = (param: string) => invalid(param, 'needs a dueDate as well.');

/** A changed task's dueTime where it has no due date. */
export const dueTimeNoDueDate = (param: string) => invalid(param, 'the task has no due date; set dueDate as well.');

/** A recurring task's due date cleared while its rule stays (`words`: the rule as read). */
export const recurringNeedsDate = (param: string, words: string) =>
  invalid(param, `a recurring task is due at its next occurrence (${words}); to clear the date, stop the rule too (repeat: null).`);

/** A canceled task moved to a project that has no canceled status. */
export const canceledHasNowhere = (param: string, status: string) =>
  invalid(param, `the task is ${status} and that project has no canceled status; reopen or complete it first.`);

/** A canceled status (by key) where the task's project has none. */
export const noCanceledStatus = (param: string) => invalid(param, "the task's project has no canceled status; name another status.");

/** Two arguments that name different times of day (`from` says where each came from). */
export const timeGivenTwice = (
  param: string,
  first: { readonly from: string; readonly time: string },
  other: { readonly from: string; readonly time: string },
) => invalid(param, `${first.from} names a time (${first.time}) and ${other.from} another (${other.time}); give the time once.`);

// ---- links and subtasks (tasks/links.ts, tasks/subtasks.ts, tasks/task-writer.ts) -------------------

/** More blockers than a task may wait on. */
export const tooManyBlockers = (param: string, most: number) => limitReached(param, `at most ${most} tasks.`, { most });

/** A task given as its own blocker. */
export const waitsOnItself = (param: string, name: string) => invalid(param, `a task cannot wait on itself (${name}).`);

/** A blocker that has the most tasks waiting on it one task may have, named when the link is planned. */
export const blocksTheMost = (param: string, name: string, most: number) =>
  limitReached(param, `${name} already blocks ${most} tasks, the most one task can.`, { most });

/** A link that would close a cycle, named task by task. */
export const wouldCycle = (param: string, names: readonly string[]) =>
  invalid(param, `that would make a cycle (${names.join(' → ')}); a task cannot wait on itself.`);

/** Blockers whose chain is too long to check for a cycle. */
export const chainTooLong = (param: string, most: number) =>
  limitReached(
    param,
    `the tasks it would wait on lead on through more than ${most} others, too many to check for a cycle; link to a task nearer the end of that chain.`,
    { most },
  );

/** A change whose links and waiting tasks one all-or-nothing write cannot hold. */
export const linksTooManyWrites = (actions: number) =>
  limitReached(
    'blockedBy',
    `this change would write ${actions} tasks at once (its links and the tasks waiting on it), more than one all-or-nothing ` +
      'write holds; change the links and the status in two calls.',
    { actions },
  );

/** An item whose task would wait on one the same call did not create. */
export const waitsOnNotCreated = () => invalid('blockedBy', 'a task it waits on in this call was not created, so this one is not either.');

/** A task given as its own parent. */
export const ownParent = (param: string, name: string) => invalid(param, `a task cannot be its own parent (${name}).`);

/** A parent below the task itself; `path` from the task down to it, each the parent of the next. */
export const belowItself = (param: string, name: string, path: readonly string[]) =>
  invalid(
    param,
    `${name} would be below itself (${path.join(' → ')}, each the parent of the next); a task cannot be a subtask of its own subtask.`,
  );

const levelWord = (n: number): string => (n === 1 ? 'top level' : `level ${n}`);

/**
 * A parent too deep for the task and its own subtasks: the parent at `level` (below the tasks
 * `above` it, nearest first), the task with subtasks `height` levels deep.
 */
export const nestsTooDeep = (
  param: string,
  parent: string,
  level: number,
  above: readonly string[],
  self: string,
  height: number,
  most: number,
) => {
  const where = level === 1 ? 'at the top level' : `at ${levelWord(level)} (below ${above.join(' below ')})`;
  const own = height ? `, and ${self} has ${height === 1 ? 'subtasks' : 'subtasks with subtasks'} of its own` : '';
  return invalid(param, `${parent} is ${where}${own}: tasks nest ${most} levels deep at most, so ${self} cannot go below ${parent}.`);
};

// ---- task references (surface/task-input.ts, store/task-numbers.ts) ----------------------------------

/** `@n` naming an item not before this one (`position`: how many items come before it). */
export const itemNotBefore = (param: string, ref: string, item: number, position: number) =>
  invalid(
    param,
    position === 0
      ? `${ref} names item ${item} of this call, and this is its first item: an item can name only items before it.`
      : `${ref} names item ${item} of this call; an item can name only items before it (${position === 1 ? '@1' : `@1 … @${position}`}).`,
  );

/** `@n` naming an item that creates no task. */
export const itemNotACreate = (param: string, ref: string, item: number) =>
  invalid(param, `${ref}: item ${item} of this call is not a task to create.`);

/** `@n` outside a tasks_create call. */
export const itemRefOutsideCreate = (param: string, ref: string) =>
  invalid(param, `${ref} names an item of the same tasks_create call, and only tasks_create items can use it.`);

// ---- searches and lists (surface/tools/tasks.ts, surface/tools/activity.ts, store/words.ts, surface/cursor.ts)

/** A due-date range that ends before it starts. */
export const dueRangeReversed = (after: string, before: string) =>
  invalid('dueAfter', `is later than dueBefore (${after} > ${before}), so nothing can match.`);

/** `overdue` with only closed statuses asked for. */
export const overdueOnlyOpen = () => invalid('overdue', 'only open tasks are overdue; leave status out, or name open statuses.');

/** A search's text with no word long and rare enough to search by (shown cut). */
export const nothingToSearchBy = (text: string, shortest: number) =>
  invalid(
    'text',
    `"${text.slice(0, 60)}" has no word to search by: give a word of ${shortest} letters or more (very common words like "the" are not searched).`,
  );

/** A search's text with more words than a search takes. */
export const tooManySearchWords = (most: number) =>
  invalid('text', `at most ${most} words; the fewest that say what you look for find the most.`);

/** Member or token changes asked for with a token that cannot read the team. */
export const kindNeedsTeamRead = (kind: string) => invalid('kind', `${kind} changes need a token with the scope team:read.`);

/** A date or time in the ISO form that is no real one (the 31st of April). */
export const notARealWhen = (param: string, value: string) => invalid(param, `${value} is not a real date or time.`);

/** A date that starts like one in the ISO form and is not one. */
export const notAWhen = (param: string, value: string) =>
  invalid(param, `expected YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][offset] (or words), not ${value}.`);

/** A range of changes that ends before it starts. */
export const sinceAfterUntil = () => invalid('since', 'is later than until, so nothing can match.');

/** `actor` given as none. */
export const actorIsSomeone = () => invalid('actor', '"me" or a userId (changes are always made by someone).');

/** An activityId that is not the shape of one. */
export const notAnActivityId = (id: string) =>
  invalid('activityId', `${id} is not an activity id (act_ and 16 letters and digits); activity_list shows them.`);

/** A list cursor of another tool, other arguments, an earlier format or a key no longer kept. */
export const cursorNotValid = (tool: string) =>
  new InvalidArgumentRefusal(
    `cursor: not valid for this call. A cursor only continues the list of the same tool with the same arguments (apart from limit); ` +
      `call ${tool} again without cursor to start over.`,
  );

// ---- queries and views (model/query.ts, surface/task-query.ts, saved-views/view-writer.ts) ----------------

/** Where a refusal of a query points: the character (from 1) and the part as written. */
const queryLead = (at: number, part: string) => `query: at character ${at + 1}, '${part}'`;
const queryRefusal = (at: number, part: string, problem: string, example: string, extra: Readonly<Record<string, unknown>> = {}) =>
  new InvalidArgumentRefusal(`${queryLead(at, part)} ${problem}; write it like ${example}.`, 'invalid-argument', {
    param: 'query',
    at,
    part,
    example,
    ...extra,
  });

/** A query the grammar cannot read: an unclosed quote or parenthesis, or a stray one. */
export const queryUnreadable = (at: number, part: string, problem: string, example: string) => queryRefusal(at, part, problem, example);

/** A term whose field the language does not have. */
export const queryFieldUnknown = (at: number, part: string, field: string, known: readonly string[]) =>
  new InvalidArgumentRefusal(
    `${queryLead(at, part)}: '${field}' is no field; the fields are ${known.join(', ')} (and plain words search titles, labels and notes).`,
    'invalid-argument',
    { param: 'query', at, part, known },
  );

/** A term of a known field with a value or an operator it does not take. */
export const queryTermBad = (at: number, part: string, problem: string, example: string) => queryRefusal(at, part, problem, example);

/** A query of more terms than a query takes. */
export const queryTooLong = (at: number, most: number) =>
  new InvalidArgumentRefusal(
    `query: at character ${at + 1}, more than ${most} terms; a query takes at most ${most} (the fewest that say what you look for find the most).`,
    'limit',
    { param: 'query', at, most },
  );

/** A term naming a person, project or task that the workspace does not have (the inner refusal's words kept). */
export const queryTermNamesNothing = (at: number, part: string, problem: string, known?: readonly string[]) =>
  new InvalidArgumentRefusal(`${queryLead(at, part)}: ${problem}`, 'invalid-argument', {
    param: 'query',
    at,
    part,
    ...(known ? { known } : {}),
  });

/** A name that fits more than one member or project. */
export const queryTermAmbiguous = (at: number, part: string, what: string, fits: readonly string[]) =>
  queryRefusal(at, part, `fits ${fits.length} ${what}s (${fits.slice(0, 5).join(', ')})`, `${part.split(/[:=]/)[0]}:"${fits[0]}"`, {
    fits,
  });

/** Two ways of choosing tasks in one search. */
export const queryWithFilters = (given: readonly string[]) =>
  new InvalidArgumentRefusal(
    `query: a query says everything a search asks; leave out ${given.join(', ')} or write them into the query (assignee:me, due<friday).`,
    'invalid-argument',
    { param: 'query', given },
  );

/** A view name the workspace has a view of already (a person's own, or a shared one). */
export const viewNameTaken = (name: string, viewId: string) =>
  new ConflictRefusal(
    `name: a view named '${name}' exists already (${viewId}); choose another name, or view_delete it first. Nothing was written.`,
    'taken',
    {
      param: 'name',
      viewId,
    },
  );

/** A view name or id that names no view this member can see. */
export const viewNotFound = (ref: string, param = 'view') =>
  new NotFoundRefusal(`${param}: no view '${ref}' here (views_list lists the views you can open).`, 'not-found', { param, ref });

/** A view of another member's that is not shared: it cannot be changed or deleted by this member. */
export const viewNotYours = (name: string) =>
  new RoleTooLowRefusal(`Refused: the view '${name}' is another member's; only they, or an admin for a shared one, can delete it.`, {
    needed: 'owner of the view',
  });

/** A shared view made private by someone other than its owner (it would vanish from their sight into the owner's). */
export const viewUnshareNotYours = (name: string) =>
  new RoleTooLowRefusal(`Refused: only the owner of the view '${name}' can make it private again (an admin may delete it).`, {
    needed: 'owner of the view',
  });

/** A workspace at its number of views. */
export const viewsFull = (most: number, shared: boolean, param: string) =>
  limitReached(
    param,
    shared
      ? `this workspace has ${most} shared views, the most it keeps; view_delete one nobody uses first.`
      : `you have ${most} views of your own, the most kept for a member; view_delete one you no longer use first.`,
    { most, shared },
  );

// ---- projects, members, workspaces ----------------------------------------------------------------

/** `moveTo` given without the statuses it belongs to. */
export const moveToWithoutStatuses = () => invalid('moveTo', 'says where the tasks of a removed status go; give it with statuses.');

/** A time zone that is not an IANA one. */
export const notATimeZone = (timeZone: string) => invalid('timeZone', `${timeZone} is not an IANA time zone (e.g. Europe/Berlin).`);

/** A new workspace's key that is not 2 to 6 capital letters. */
export const workspaceKeyUnfit = (key: string) => invalid('key', `${key} is not 2 to 6 capital letters, like DEMO or ACME.`);

/** A workspace's new key that is not 2 to 6 letters. */
export const workspaceKeyNotLetters = (key: string) => invalid('key', `${key} is not 2 to 6 letters (A–Z), like DEMO or ACME.`);

// ---- comments (store/comment-store.ts) -------------------------------------------------------------

/** A new comment whose fresh id was taken: nothing was added. */
export const commentIdTaken = () =>
  new ConflictRefusal('The comment could not be stored (its id was taken); nothing was added, call comment_add again');

/** A comment's delete that finds it gone from its task. */
export const commentNotOnTask = (commentId: string, taskId: string) =>
  new NotFoundRefusal(`Comment ${commentId} was not found on task ${taskId}`);

/** A comment's restore that finds it restored (or gone) meanwhile. */
export const commentNotDeleted = (commentId: string) =>
  new ConflictRefusal(`Conflict: comment ${commentId} is no longer deleted; nothing was changed.`);

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

/** An undo that finds the target as it was already: nothing to write. */
export const nothingToUndo = (activityId: string) =>
  notUndoable(activityId, 'changed nothing that is still different; nothing was written.');

/** A task change whose task is gone for good. */
export const taskGoneForGood = (activityId: string) =>
  notUndoable(activityId, 'changed a task that is gone for good (its undo window is over).');

/** An attachment change whose attachment is gone for good. */
export const attachmentGoneForGood = (activityId: string) =>
  notUndoable(activityId, 'changed an attachment that is gone for good (its undo window is over).');

/** A revoked token or a disconnected app: a revoked credential stays revoked. */
export const revokeNotUndoable = (activityId: string) =>
  notUndoable(
    activityId,
    'revoked a token or disconnected an app, which cannot be undone: a revoked credential stays revoked. Make a new token on the account page, or connect the app again.',
  );

/** A token's creation whose token is revoked already. */
export const tokenRevokedAlready = (activityId: string) =>
  notUndoable(activityId, 'made a token that is revoked already; nothing was written.');

/** A workspace switched off or on: only an operator changes that. */
export const workspaceSwitchNotUndoable = (activityId: string) =>
  notUndoable(
    activityId,
    'switched the whole workspace off or on, which only an operator changes (npm run admin -- workspace enable|disable).',
  );

export const answeredAnotherState = () =>
  new ConflictRefusal(
    'Conflict: it changed between the question and the answer, so nothing was changed; read it again and ask once more.',
    'version-conflict',
  );

// ---- dates in words ---------------------------------------------------------------------------

/** A date argument whose words cannot be read as one day: the words, why, and what is read. */
/** Words as a refusal quotes them: an ISO-looking date bare, anything else in quotes. */
export const quotedWords = (words: string): string => (/^[\d-]+$/.test(words) ? words : `'${words}'`);

/** Words that are no date: `problem` says why, and rides in the data for a door that words it its own way (reminders). */
export const dateUnreadable = (param: string, words: string, problem: string) =>
  new InvalidArgumentRefusal(
    `${param}: ${quotedWords(words)} ${problem}. Dates read here: 'friday', 'next friday 3pm', 'in 2 weeks', 'end of month', 'dec 24', '24/12' (day/month) or 2026-12-24.`,
    'invalid-argument',
    { param, words, problem },
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
    { param, used, adding, quota },
  );

/** A file's name that is empty. */
export const fileNameEmpty = () => invalid('name', 'is empty; give the file a name, e.g. screenshot.png.');

/** A file's name with path parts (shown cut). */
export const fileNameHasPath = (name: string) =>
  invalid('name', `'${name.slice(0, 80)}' has path parts; give the file's name alone, e.g. report.pdf.`);

/** A file's name with control or invisible formatting characters. */
export const fileNameUnprintable = () => invalid('name', 'has control or invisible formatting characters; give a plain file name.');

/** An attachment to a comment the task does not have. */
export const noCommentToAttachTo = (commentId: string, taskName: string) =>
  invalid('commentId', `no comment ${commentId} on ${taskName}; comments_list lists them.`);

/** A file given as both content and text, or as neither. */
export const contentOrText = () => invalid('content', 'give the file either as content (base64) or as text, not both and not neither.');

/** A file's content or text that is empty. */
export const attachmentEmpty = (param: 'content' | 'text') => invalid(param, 'is empty; an attachment needs content.');

/** A file's text above the most a file may be (`size` and `most` in words). */
export const textTooBig = (size: string, most: string) =>
  limitReached('text', `is ${size}; a file is at most ${most} (DOERS_ATTACHMENT_MAX_MB).`);

/** A file's content that decodes to more than a file may be (`most` in words). */
export const contentTooBig = (most: string) =>
  limitReached('content', `decodes to more than ${most}; a file is at most ${most} (DOERS_ATTACHMENT_MAX_MB).`);

/** A file's content that decodes to no bytes. */
export const decodesToNothing = () => invalid('content', 'decodes to nothing; an attachment needs content.');

/** A text type declared for bytes of a known binary type. */
export const typeIsNotBytes = (declared: string, sniffed: string) =>
  invalid('type', `says ${declared}, but the bytes are ${sniffed}; leave type out for a file that is not text.`);

/** Text declared (as type, or by giving text) for bytes that are not text. */
export const bytesNotText = (param: 'type' | 'text') =>
  invalid(param, `says text, but the bytes are not text (UTF-8 without control characters).`);

/** A task that holds the most attachments one task may. */
export const attachmentsFull = (taskName: string, most: number) =>
  limitReached('taskId', `${taskName} holds ${most} files, the most a task holds; delete one first.`, { limit: most });

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

// ---- reminders and mentions (model/reminder-words.ts, model/mentions.ts) ------------------------

const REMINDER_FORMS =
  "Reminders read here: a time in your zone ('friday 9am', 'tomorrow at 8', 'in 2 hours', 'dec 24 at noon', '2026-12-24 17:00'; " +
  "a day without a time is 09:00) or one set by the due date ('1 hour before', '30 minutes before', '2 days before', " +
  "'the day before at 17:00', 'on the day at 8am', 'when due')";

/** A reminder whose words are no time and no time before the due date: `said` is the words and why. */
export const reminderUnreadable = (param: string, words: string, said: string) =>
  new InvalidArgumentRefusal(`${param}: ${said}. ${REMINDER_FORMS}.`, 'invalid-argument', { param, words });

/** A reminder at or before the minute it was given in: `when` is its time in the member's words. */
export const reminderInPast = (param: string, words: string, when: string, at: string) =>
  new InvalidArgumentRefusal(`${param}: '${words}' is in the past (${when}); give a time still ahead.`, 'invalid-argument', {
    param,
    words,
    at,
  });

/** A reminder set by the due date, on a task that has none. */
export const reminderNeedsDue = (param: string, words: string) =>
  new InvalidArgumentRefusal(
    `${param}: '${words}' needs a due date; give the task a dueDate, or the reminder as a time ('friday 9am').`,
    'invalid-argument',
    { param, words },
  );

/** More reminders than a task holds. */
export const tooManyReminders = (param: string, count: number, most: number) =>
  limitReached(param, `${count} reminders; a task holds at most ${most}.`, { count, most });

/** A text that mentions more people than one text may (each of them would be told). */
export const mentionStorm = (param: string, count: number, most: number) =>
  limitReached(param, `mentions ${count} people; a text mentions at most ${most}, since each one is told. Mention fewer.`, {
    count,
    most,
  });

// ---- webhooks (workspace/webhooks/, docs/notifications.md "Webhooks") ----------------------------

/** Why a webhook's URL is refused, in words; the codes are the address guard's (lambda/delivery/address-guard.ts). */
const WEBHOOK_URL_WORDS: Readonly<Record<string, string>> = {
  'invalid-url': 'is not a URL (at most 2048 characters)',
  'not-https': 'must be https (plain http only to this machine, on the local server)',
  'credentials-in-url': "carries a user name or password; put the receiver's credentials elsewhere (deliveries are signed)",
  unresolvable: 'names a host that does not resolve',
  'forbidden-address': 'reaches an address webhooks may not reach',
};

/** A URL a webhook may not have: `cause` is the guard's code, `addressClass` the class of the address refused. */
/**
 * A refusal of one field of a webhook form: `problem` (the sentence after the field's name) rides in
 * the data, so the account page shows it beside its field without taking the words apart.
 */
const webhookFieldRefused = (param: string, problem: string, data: Readonly<Record<string, unknown>>) =>
  new InvalidArgumentRefusal(`${param}: ${problem}`, 'invalid-argument', { param, problem, ...data });

export const webhookUrlRefused = (cause: string, addressClass?: string) =>
  webhookFieldRefused(
    'url',
    `${WEBHOOK_URL_WORDS[cause] ?? cause}${addressClass ? ` (a ${addressClass} address)` : ''}; webhooks go to public https addresses only. Nothing was written.`,
    { cause, ...(addressClass ? { addressClass } : {}) },
  );

export const webhooksFull = (most: number) =>
  limitReached('url', `this workspace has ${most} webhooks, the most it may have; remove one first (webhook remove).`, { most });

export const webhookEventsUnknown = (unknown: readonly string[], known: readonly string[]) =>
  webhookFieldRefused(
    'events',
    `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} no event; the events are ${known.join(', ')}.`,
    {
      unknown,
      known,
    },
  );

export const webhookFormatUnknown = (given: string, known: readonly string[]) =>
  webhookFieldRefused('format', `${given} is no format; the formats are ${known.join(', ')}.`, { known });

export const webhookNotFound = (webhookId: string) =>
  new NotFoundRefusal(`id: no webhook ${webhookId} in this workspace (not found); webhook list shows them.`, 'not-found', { param: 'id' });

// ---- the inbox and a member's own settings (docs/notifications.md) -------------------------------

export const inboxMarkNeedsOne = () =>
  new InvalidArgumentRefusal(
    'entries, upTo: give one of them: the entries to mark, or the newest entryId to mark up to. Nothing was marked.',
    'invalid-argument',
    {
      param: 'entries',
    },
  );

export const timeZoneUnknown = (given: string) =>
  new InvalidArgumentRefusal(`timeZone: ${given} is not an IANA time zone (like Europe/Berlin or America/New_York).`, 'invalid-argument', {
    param: 'timeZone',
  });

export const digestHourNeeded = () =>
  new InvalidArgumentRefusal('digestHour: a daily digest needs the local hour (0-23) it is sent at.', 'invalid-argument', {
    param: 'digestHour',
  });

export const emailIsOff = () =>
  new InvalidArgumentRefusal(
    'email: this deployment sends no e-mail (its operator has not set a sender: doers:emailFrom); your inbox still has everything.',
    'invalid-argument',
    { param: 'email', cause: 'email-off' },
  );

/** A webhook added or removed: its secret is shown once, so putting one back would be a new webhook. */
export const webhookChangeNotUndoable = (activityId: string, action: 'created' | 'removed') =>
  notUndoable(
    activityId,
    action === 'created'
      ? 'added a webhook; an admin removes it with npm run admin -- webhook remove (or on the account page).'
      : 'removed a webhook, whose secret is gone with it; an admin adds it again with npm run admin -- webhook add (a new secret).',
  );

// ---- custom fields (model/custom-fields.ts) ------------------------------------------------------

export const tooManyFields = (param: string, count: number, most: number) =>
  limitReached(param, `${count} fields; a project has at most ${most}. Nothing was written.`, { count, most });

export const fieldNameTwice = (param: string, name: string) =>
  new InvalidArgumentRefusal(
    `${param}: the field '${name}' is named twice; each field of a project has a name of its own. Nothing was written.`,
    'invalid-argument',
    {
      param,
      name,
    },
  );

export const fieldTypeUnknown = (param: string, given: string, known: readonly string[]) =>
  new InvalidArgumentRefusal(
    `${param}: '${given}' is no field type; the types are ${known.join(', ')}. Nothing was written.`,
    'invalid-argument',
    {
      param,
      known,
    },
  );

export const fieldOptionsNeeded = (param: string, name: string) =>
  new InvalidArgumentRefusal(
    `${param}: the field '${name}' chooses from options: give them (options: ["Bug", "Story"]). Nothing was written.`,
    'invalid-argument',
    {
      param,
    },
  );

export const fieldWasUnknown = (param: string, was: string, known: readonly string[]) =>
  new InvalidArgumentRefusal(
    `${param}: the project has no field '${was}' to rename; its fields are ${known.length ? known.join(', ') : 'none yet'}. Nothing was written.`,
    'invalid-argument',
    { param, known },
  );

export const fieldTypeChanged = (param: string, name: string, was: string, given: string) =>
  new InvalidArgumentRefusal(
    `${param}: the field '${name}' is ${was}; a field keeps its type (its values are ${was}s): remove it and add one of type ${given}. Nothing was written.`,
    'invalid-argument',
    { param, was, given },
  );

export const fieldValueInvalid = (param: string, name: string, type: string, expected: string, options?: readonly string[]) =>
  new InvalidArgumentRefusal(
    `${param}: the field '${name}' (${type}) takes ${expected}${options?.length ? `: ${options.join(', ')}` : ''}. Nothing was written.`,
    'invalid-argument',
    { param, field: name, type, ...(options ? { options } : {}) },
  );

export const fieldNotHere = (param: string, name: string, projectName: string | undefined, known: readonly string[]) =>
  new InvalidArgumentRefusal(
    projectName === undefined
      ? `${param}: the task is in no project, and fields are a project's: give it a projectId first. Nothing was written.`
      : `${param}: project '${projectName}' has no field '${name}'; its fields are ${known.length ? known.join(', ') : 'none (project_update fields adds them)'}. Nothing was written.`,
    'invalid-argument',
    { param, known },
  );

export const fieldNameEmpty = (param: string) =>
  new InvalidArgumentRefusal(`${param}: a field's name is 1 to 40 characters. Nothing was written.`, 'invalid-argument', { param });

export const fieldNameBuiltIn = (param: string, name: string) =>
  new InvalidArgumentRefusal(
    `${param}: '${name}' is a field every task has (the query language's ${name.toLowerCase()}:); name the custom field otherwise, e.g. '${name} (custom)'. Nothing was written.`,
    'invalid-argument',
    { param, name },
  );

export const tooManyOptions = (param: string, name: string, most: number, longest: number) =>
  limitReached(param, `the field '${name}' may have at most ${most} options of at most ${longest} characters each. Nothing was written.`, {
    most,
    longest,
  });

// ---- long work ------------------------------------------------------------------------------------

/** The admin CLI's commands for what workspace_import and workspace_export do, for a client that cannot follow a task. */
const CLI_OF: Readonly<Record<string, string>> = {
  workspace_import: 'npm run admin -- import --file <export.csv> [--format jira|linear|asana|todoist] [--dry-run]',
  workspace_export: 'npm run admin -- export --file <export.jsonl>',
};

/** A long tool asked by a client that did not declare the tasks extension on a revision without it (the handshake era). */
export const needsTasks = (tool: string) =>
  new NeedsExtensionRefusal(
    `${tool} runs as a task of the io.modelcontextprotocol/tasks extension, which needs protocol 2026-07-28 and a client that declares the extension; ` +
      `this client cannot follow a task. Ask the workspace's operator to run it with the admin CLI: ${CLI_OF[tool] ?? 'npm run admin -- --help'}.`,
    { extension: 'io.modelcontextprotocol/tasks', cli: CLI_OF[tool] },
  );

/** The message of the -32021 a 2026-07-28 client without the extension is answered. */
export const needsTasksMessage = (tool: string): string =>
  `${tool} runs as a task of the io.modelcontextprotocol/tasks extension: declare it in this request's capabilities ` +
  `(_meta["io.modelcontextprotocol/clientCapabilities"].extensions), or have the operator run the admin CLI: ${CLI_OF[tool] ?? 'npm run admin -- --help'}.`;

/** Another job of the same long tool holds the workspace's turn. */
export const longWorkRunning = (tool: string) =>
  new ConflictRefusal(
    `Conflict: another ${tool} is running in this workspace, and one runs at a time; wait for it to end, then try again.`,
    'busy',
    { tool },
  );

/** The attachment is not a file an import reads: which formats it could be, and the columns it saw. */
export const notAnImportFile = (name: string, problem: string, columns: readonly string[]) =>
  new InvalidArgumentRefusal(`attachmentId: ${name} ${problem}`, 'invalid-argument', { param: 'attachmentId', problem, columns });

export const exportTooBig = (size: string, max: string) =>
  limitReached(
    'workspace_export',
    `the export is ${size}, more than an attachment may be (${max}); the admin CLI writes an export of any size: ${CLI_OF.workspace_export}.`,
  );
