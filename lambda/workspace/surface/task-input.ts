import type { Caller } from '../model/caller.js';
import { carryValues, type FieldValues, valuesAfter } from '../model/custom-fields.js';
import { readDay, readLine } from '../model/date-words.js';
import { readMentions } from '../model/mentions.js';
import { itemNotACreate, itemNotBefore, timeGivenTwice, tooManyReminders } from '../model/refusals.js';
import { MAX_REMINDERS, readReminders } from '../model/reminder-words.js';
import { type RepeatRead, readRepeat } from '../model/repeat-rules.js';
import { parseTaskRef } from '../model/task-refs.js';
import type { Priority, Task, TaskReminder } from '../model/types.js';
import { loadNames } from '../store/lookups.js';
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
  /** The parent task's key (or `@n`, an earlier item of a bulk create); null: top level. */
  readonly parent?: string | null | undefined;
  /** A rule as given: a phrase or an RRULE; null stops it. */
  readonly repeat?: string | null | undefined;
  /** The rule, read (readWords puts it here). */
  readonly rule?: RepeatRead | null | undefined;
  /** A workflow status as given: a name, a category, open or done (the writer reads it against the task's statuses). */
  readonly status?: string | undefined;
  /** The caller's reminders in words; null takes the caller's away. */
  readonly remind?: string | readonly string[] | null | undefined;
  /** Every reminder the task is to have, read (readTellings puts it here). */
  readonly reminders?: readonly TaskReminder[] | undefined;
  /** Custom field values by field name, as given (null clears one). */
  readonly fields?: Readonly<Record<string, unknown>> | undefined;
  /** Every value the task is to have, by field id, checked (readFieldValues puts it here). */
  readonly fieldValues?: FieldValues | undefined;
  /** Fields whose values stay behind as the task moves to another project (readFieldValues says). */
  readonly fieldsLeft?: readonly string[] | undefined;
}

/**
 * `fields` read against the fields of the project the task ends in: names to ids, each value
 * checked by its field's type, laid over the values the task has. A task in no project has none.
 */
export const readFieldValues = async <F extends ToolTaskFields>(
  stores: WorkspaceStores,
  caller: Caller,
  fields: F,
  task?: Task,
  prefix = '',
): Promise<F & Pick<ToolTaskFields, 'fieldValues' | 'fieldsLeft'>> => {
  if (fields.fields === undefined) return fields;
  const projectId = fields.projectId !== undefined ? (fields.projectId ?? undefined) : task?.projectId;
  const names = await loadNames(stores, caller);
  const project = projectId ? names.projects.get(projectId) : undefined;
  const member = (ref: string): string | undefined => {
    const id = ref === 'me' ? caller.userId : ref;
    return names.members.get(id)?.status === 'active' ? id : undefined;
  };
  // Moving to another project and setting values there: the values it had come along where a field
  // of the same name and type is there, as in a move without values.
  const moving = !!task && task.projectId !== projectId;
  const from = task?.projectId ? (names.projects.get(task.projectId)?.fields ?? []) : [];
  const carried = moving ? carryValues(task!.fields, from, project?.fields ?? []) : undefined;
  const base = moving ? carried!.values : task?.fields;
  const values = valuesAfter(project?.fields ?? [], base, fields.fields, `${prefix}fields`, member, project?.name);
  return { ...fields, fieldValues: values, ...(carried?.left.length ? { fieldsLeft: carried.left } : {}) };
};

/**
 * What tells people, read: the notes' mentions turned into references to members (`<@usr_…>`; one
 * of nobody here stays text, and the answer says so), and `remind` read in the caller's zone against
 * the due date the task will have. A change's reminders replace the caller's own on the task and
 * keep everyone else's.
 */
export const readTellings = async <F extends ToolTaskFields>(
  stores: WorkspaceStores,
  caller: Caller,
  now: Date,
  fields: F,
  task?: Task,
  prefix = '',
): Promise<{ readonly fields: F; readonly note?: string }> => {
  const lines: string[] = [];
  let out: F = fields;
  if (typeof fields.notes === 'string' && fields.notes.includes('@')) {
    const names = await loadNames(stores, caller);
    const members = [...names.members.values()].filter((m) => m.status === 'active');
    const read = readMentions(fields.notes, members, `${prefix}notes`);
    out = { ...out, notes: read.text };
    if (read.unmatched.length) lines.push(`${prefix}${unmatchedLine(read.unmatched)}`);
  }
  if (fields.remind !== undefined) {
    const dueDate = fields.dueDate === undefined ? task?.dueDate : (fields.dueDate ?? undefined);
    const dueTime = fields.dueTime === undefined ? (fields.dueDate === null ? undefined : task?.dueTime) : (fields.dueTime ?? undefined);
    const mine =
      fields.remind === null
        ? []
        : (
            await readReminders(fields.remind, {
              now,
              timeZone: caller.timeZone,
              ...(dueDate ? { due: { date: dueDate, ...(dueTime ? { time: dueTime } : {}) } } : {}),
              param: `${prefix}remind`,
            })
          ).map((r) => ({ ...r, userId: caller.userId, zone: caller.timeZone }));
    const others = (task?.reminders ?? []).filter((r) => r.userId !== caller.userId);
    if (others.length + mine.length > MAX_REMINDERS) throw tooManyReminders(`${prefix}remind`, others.length + mine.length, MAX_REMINDERS);
    out = { ...out, reminders: [...others, ...mine] };
    for (const r of mine) lines.push(`${prefix}remind '${r.words}' at ${instantWords(r.at, caller.timeZone)} (${caller.timeZone}).`);
  }
  return { fields: out, ...(lines.length ? { note: lines.join('\n') } : {}) };
};

const unmatchedLine = (unmatched: readonly string[]): string =>
  `notes: @${unmatched.join(', @')} ${unmatched.length === 1 ? 'names' : 'name'} no one in this workspace (or more than one): left as text, nobody told.`;

/** An instant as the member's wall clock reads it: `Fri 4 Dec 09:00`. */
const instantWords = (iso: string, timeZone: string): string =>
  new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
    .format(new Date(iso))
    .replace(',', '');

/**
 * The fields with the words in them read: `dueDate` as a day (words in the caller's zone: "next
 * friday 3pm" gives the date and, when the words name one, the time) and `repeat` as a rule, with
 * the lines the answer shows for what it read. A time named twice (in the words, a rule's "at 9:00"
 * and `dueTime`) and differently is refused: which one was meant is not for the server to guess.
 * `prefix` leads a bulk item's note ("item 3 "); its refusals are placed by the item.
 */
export const readWords = async <F extends ToolTaskFields>(
  fields: F,
  caller: Pick<Caller, 'timeZone'>,
  now: Date,
  prefix = '',
): Promise<{ readonly fields: F; readonly note?: string }> => {
  const [read, rule] = await Promise.all([
    typeof fields.dueDate === 'string' ? readDay(fields.dueDate, 'dueDate', { now, timeZone: caller.timeZone, forward: true }) : undefined,
    typeof fields.repeat === 'string' ? readRepeat(fields.repeat, 'repeat', { now, timeZone: caller.timeZone }) : undefined,
  ]);
  const times = [
    read?.time ? { from: `dueDate '${read.words}'`, time: read.time } : undefined,
    rule?.time ? { from: `repeat '${rule.given}'`, time: rule.time } : undefined,
    typeof fields.dueTime === 'string' ? { from: 'dueTime', time: fields.dueTime } : undefined,
  ].filter((t) => t !== undefined);
  const clash = times.find((t) => t.time !== times[0]!.time);
  if (clash) throw timeGivenTwice(typeof fields.dueTime === 'string' ? 'dueTime' : 'repeat', times[0]!, clash);
  const lines = [
    ...(read?.words ? [`${prefix}${readLine('dueDate', read, caller.timeZone)}`] : []),
    ...(rule
      ? [`${prefix}repeat '${rule.given}' read as ${rule.words}${rule.time ? `, due at ${rule.time}` : ''} (${caller.timeZone}).`]
      : []),
  ];
  return {
    fields: {
      ...fields,
      ...(read ? { dueDate: read.date, ...(read.time ? { dueTime: read.time } : {}) } : {}),
      ...(rule ? { rule } : fields.repeat === null ? { rule: null } : {}),
    },
    ...(lines.length ? { note: lines.join('\n') } : {}),
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
          throw itemNotBefore(param, ref, parsed.item, items.position);
        }
        const id = items.idOf(parsed.item - 1);
        if (!id) throw itemNotACreate(param, ref, parsed.item);
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

/** The references a task's fields name (blockers and parent), resolved: `@n` only where `items` is given (a bulk create). */
export const resolveTaskRefs = async (
  stores: WorkspaceStores,
  caller: Caller,
  fields: ToolTaskFields,
  items?: { readonly position: number; readonly idOf: (n: number) => string | undefined },
): Promise<{ blockedBy?: ResolvedRefs; parent?: ResolvedRefs }> => {
  const [blockedBy, parent] = await Promise.all([
    fields.blockedBy ? resolveRefs(stores, caller, fields.blockedBy, 'blockedBy', items) : undefined,
    typeof fields.parent === 'string' ? resolveRefs(stores, caller, [fields.parent], 'parent', items) : undefined,
  ]);
  return { ...(blockedBy ? { blockedBy } : {}), ...(parent ? { parent } : {}) };
};

/** How the references of both were written, for refusals. */
export const refOfBoth = (refs: { blockedBy?: ResolvedRefs; parent?: ResolvedRefs }): ((id: string) => string) | undefined =>
  refs.blockedBy || refs.parent
    ? (id) => {
        const asParent = refs.parent?.refOf(id);
        return asParent !== undefined && asParent !== id ? asParent : (refs.blockedBy?.refOf(id) ?? id);
      }
    : undefined;

export const newTaskOf = (
  caller: Caller,
  fields: ToolTaskFields & { readonly title: string; readonly priority: Priority },
  blockedBy?: ResolvedRefs,
  parent?: ResolvedRefs,
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
    ...(parent ? { parentId: parent.ids[0] } : {}),
    ...(fields.rule ? { repeat: fields.rule } : {}),
    ...(fields.status ? { state: fields.status } : {}),
    ...(fields.reminders?.length ? { reminders: fields.reminders } : {}),
    ...(fields.fieldValues && Object.keys(fields.fieldValues).length ? { fields: fields.fieldValues } : {}),
  };
};

export const patchOf = (caller: Caller, fields: ToolTaskFields, blockedBy?: ResolvedRefs, parent?: ResolvedRefs): TaskPatch => ({
  ...(fields.title !== undefined ? { title: fields.title } : {}),
  ...(fields.notes !== undefined ? { notes: fields.notes } : {}),
  ...(fields.priority !== undefined ? { priority: fields.priority } : {}),
  ...(fields.dueDate !== undefined ? { dueDate: fields.dueDate } : {}),
  ...(fields.dueTime !== undefined ? { dueTime: fields.dueTime } : {}),
  ...(fields.assignee !== undefined ? { assigneeId: assigneeOf(caller, fields.assignee) } : {}),
  ...(fields.projectId !== undefined ? { projectId: fields.projectId } : {}),
  ...(fields.labels !== undefined ? { labels: fields.labels } : {}),
  ...(blockedBy ? { blockedBy: blockedBy.ids } : {}),
  ...(parent ? { parentId: parent.ids[0] } : fields.parent === null ? { parentId: null } : {}),
  ...(fields.rule !== undefined ? { repeat: fields.rule } : {}),
  ...(fields.status !== undefined ? { state: fields.status } : {}),
  ...(fields.reminders !== undefined ? { reminders: fields.reminders } : {}),
  ...(fields.fieldValues !== undefined ? { fields: fields.fieldValues } : {}),
});

/** Whether a change names at least one field. */
export const namesAField = (fields: Readonly<Record<string, unknown>>): boolean => Object.values(fields).some((v) => v !== undefined);

/** A note as a result's `textNotes` (the lines its text shows after the first). */
export const notesOf = (note: string | undefined): { textNotes?: string[] } => (note ? { textNotes: [note] } : {});

/** Notes of several readers, one per line (none: undefined). */
export const joinNotes = (...notes: (string | undefined)[]): string | undefined => notes.filter(Boolean).join('\n') || undefined;

/** What `watch` did, in words. */
export const watchNote = (key: string, watch: boolean): string =>
  watch ? `You watch ${key}: its changes come to your inbox.` : `You no longer watch ${key}; assigned or mentioned, you are still told.`;

/** What a move to another project left behind, in words (the fields whose values stayed). */
export const leftBehindNote = (left: readonly string[] | undefined, prefix = ''): string | undefined =>
  left?.length ? `${prefix}Fields left behind (the project it moved to has none of that name and type): ${left.join(', ')}.` : undefined;
