import type { Caller } from '../model/caller.js';
import { type DayRead, readDay, readLine } from '../model/date-words.js';
import { invalid } from '../model/refusals.js';
import { parseTaskRef } from '../model/task-refs.js';
import type { Priority } from '../model/types.js';
import type { WorkspaceStores } from '../store/stores.js';
import type { NewTask, TaskPatch } from '../tasks/planner.js';

/**
 * What the task tools take, turned into what the task writer takes: keys and `me` into ids (the
 * writer then checks each against the workspace's rules). One place for task_create, task_update
 * and both bulk tools, so the four read their arguments alike.
 */

export interface ToolTaskFields {
  readonly title?: string | undefined;
  readonly notes?: string | null | undefined;
  readonly priority?: Priority | undefined;
  readonly dueDate?: string | null | undefined;
  readonly dueTime?: string | null | undefined;
  readonly assignee?: string | null | undefined;
  readonly projectId?: string | null | undefined;
  readonly labels?: readonly string[] | undefined;
  readonly blockedBy?: readonly string[] | undefined;
}

/**
 * The fields with `dueDate` read as a day (words in the caller's zone: "next friday 3pm" gives the
 * date and, when the words name one, the time), and the line the answer shows for words it read.
 * A time in the words and a `dueTime` besides are refused: which one was meant is not for the
 * server to guess. `prefix` leads a bulk item's note ("item 3 "); its refusals are placed by the item.
 */
export const readDueDate = async <F extends ToolTaskFields>(
  fields: F,
  caller: Pick<Caller, 'timeZone'>,
  now: Date,
  prefix = '',
): Promise<{ readonly fields: F; readonly note?: string }> => {
  if (typeof fields.dueDate !== 'string') return { fields };
  const read: DayRead = await readDay(fields.dueDate, 'dueDate', { now, timeZone: caller.timeZone, forward: true });
  if (read.time && typeof fields.dueTime === 'string' && fields.dueTime !== read.time)
    throw invalid(
      'dueTime',
      `dueDate '${read.words}' names a time (${read.time}) and dueTime another (${fields.dueTime}); give the time once.`,
    );
  return {
    fields: { ...fields, dueDate: read.date, ...(read.time ? { dueTime: read.time } : {}) },
    ...(read.words ? { note: `${prefix}${readLine('dueDate', read, caller.timeZone)}` } : {}),
  };
};

/** Task references as ids, and how each id was written (for refusals). `@n` names item n of the call, given in `items`. */
export interface ResolvedRefs {
  readonly ids: string[];
  readonly refOf: (id: string) => string;
  /** Positions (from 0) of the call's items named by `@n`. */
  readonly items: number[];
}

export const resolveRefs = async (
  stores: WorkspaceStores,
  caller: Caller,
  refs: readonly string[],
  param: string,
  items?: { readonly position: number; readonly idOf: (n: number) => string | undefined },
): Promise<ResolvedRefs> => {
  const written = new Map<string, string>();
  const positions: number[] = [];
  const ids = await Promise.all(
    refs.map(async (ref) => {
      const parsed = parseTaskRef(ref);
      if ('item' in parsed && items) {
        if (parsed.item < 1 || parsed.item > items.position) {
          throw invalid(
            param,
            items.position === 0
              ? `${ref} names item ${parsed.item} of this call, and this is its first item: a task can wait only on items before it.`
              : `${ref} names item ${parsed.item} of this call; a task can wait only on items before it (${items.position === 1 ? '@1' : `@1 … @${items.position}`}).`,
          );
        }
        const id = items.idOf(parsed.item - 1);
        if (!id) throw invalid(param, `${ref}: item ${parsed.item} of this call is not a task to create.`);
        positions.push(parsed.item - 1);
        written.set(id, ref);
        return id;
      }
      const id = await stores.numbers.idOrRefuse(caller, ref, param);
      written.set(id, ref);
      return id;
    }),
  );
  return { ids, refOf: (id) => written.get(id) ?? id, items: positions };
};

/** `me` as the caller, `none` or null as nobody, else the user id as given (the writer checks it is a member). */
const assigneeOf = (caller: Caller, value: string | null | undefined): string | null | undefined =>
  value === undefined ? undefined : value === null || value === 'none' ? null : value === 'me' ? caller.userId : value;

export const newTaskOf = (
  caller: Caller,
  fields: ToolTaskFields & { readonly title: string; readonly priority: Priority },
  blockedBy?: ResolvedRefs,
): NewTask => {
  const assigneeId = assigneeOf(caller, fields.assignee);
  return {
    title: fields.title,
    ...(fields.notes ? { notes: fields.notes } : {}),
    priority: fields.priority,
    ...(fields.dueDate ? { dueDate: fields.dueDate } : {}),
    ...(fields.dueTime ? { dueTime: fields.dueTime } : {}),
    ...(assigneeId ? { assigneeId } : {}),
    ...(fields.projectId ? { projectId: fields.projectId } : {}),
    ...(fields.labels ? { labels: fields.labels } : {}),
    ...(blockedBy ? { blockedBy: blockedBy.ids } : {}),
  };
};

export const patchOf = (caller: Caller, fields: ToolTaskFields, blockedBy?: ResolvedRefs): TaskPatch => ({
  ...(fields.title !== undefined ? { title: fields.title } : {}),
  ...(fields.notes !== undefined ? { notes: fields.notes } : {}),
  ...(fields.priority !== undefined ? { priority: fields.priority } : {}),
  ...(fields.dueDate !== undefined ? { dueDate: fields.dueDate } : {}),
  ...(fields.dueTime !== undefined ? { dueTime: fields.dueTime } : {}),
  ...(fields.assignee !== undefined ? { assigneeId: assigneeOf(caller, fields.assignee) } : {}),
  ...(fields.projectId !== undefined ? { projectId: fields.projectId } : {}),
  ...(fields.labels !== undefined ? { labels: fields.labels } : {}),
  ...(blockedBy ? { blockedBy: blockedBy.ids } : {}),
});

/** Whether a change names at least one field. */
export const namesAField = (fields: Readonly<Record<string, unknown>>): boolean => Object.values(fields).some((v) => v !== undefined);

/** A note as a result's `textNotes` (the lines its text shows after the first). */
export const notesOf = (note: string | undefined): { textNotes?: string[] } => (note ? { textNotes: [note] } : {});
