import { fromItem } from '../../platform/dynamodb.js';
import {
  assigneeListPk,
  listSk,
  NOTES_ITEM_SK,
  projectListPk,
  TASK_ITEM_SK,
  taskPk,
  taskSk,
  workspaceListPk,
  wsPk,
} from '../../platform/item-keys.js';
import type { Attachment, SubtaskEntry, Task } from '../model/types.js';
import { notesWordsOf } from './words.js';

/**
 * A task as items, layout 2: the task item in the task's own partition carries everything a list
 * shows and the three list keys (gsi1 the workspace's, gsi2 the assignee's, gsi3 the project's, each
 * by priority); its notes are an item of their own beside it, read only where the whole task is
 * shown. The task item keeps the first words of the notes (`nw`) that search finds it by, and
 * whether it has notes at all. A deleted task is in no list.
 */

/** Sets as DynamoDB keeps them (no empty set exists: an empty one is no attribute). */
const asSet = (values: readonly string[] | undefined): Set<string> | undefined => (values?.length ? new Set(values) : undefined);

const SET_ATTRIBUTES = ['openBlockers', 'goneBlockers', 'blocks'] as const;

export const taskKey = (workspaceId: string, taskId: string) => ({ pk: taskPk(workspaceId, taskId), sk: TASK_ITEM_SK });
export const notesKey = (workspaceId: string, taskId: string) => ({ pk: taskPk(workspaceId, taskId), sk: NOTES_ITEM_SK });
/** Where a task of layout 1 lives (read until its workspace is migrated). */
export const legacyTaskKey = (workspaceId: string, taskId: string) => ({ pk: wsPk(workspaceId), sk: taskSk(taskId) });

/** The list keys of a task that is not deleted. */
export const listKeysOf = (t: Task): Record<string, string> => {
  const sk = listSk(t);
  return {
    gsi1pk: workspaceListPk(t.workspaceId, t.priority),
    gsi1sk: sk,
    gsi2pk: assigneeListPk(t.workspaceId, t.assigneeId, t.priority),
    gsi2sk: sk,
    gsi3pk: projectListPk(t.workspaceId, t.projectId, t.priority),
    gsi3sk: sk,
  };
};

export const LIST_KEY_ATTRIBUTES = ['gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk'] as const;

/** The task item (without its notes). */
export const taskItemOf = (t: Task, expiresAt?: number): Record<string, unknown> => {
  const { openBlockers, goneBlockers, blocks, notes: _notes, ...rest } = t;
  const { hasNotes, nw } = notesStateOf(t);
  return {
    ...taskKey(t.workspaceId, t.taskId),
    ...rest,
    ...(openBlockers?.length ? { openBlockers: asSet(openBlockers) } : {}),
    ...(goneBlockers?.length ? { goneBlockers: asSet(goneBlockers) } : {}),
    ...(blocks?.length ? { blocks: asSet(blocks) } : {}),
    ...(hasNotes ? { hasNotes: true } : {}),
    ...(nw.length ? { nw } : {}),
    ...(t.deletedAt ? (expiresAt ? { expiresAt } : {}) : listKeysOf(t)),
  };
};

/** The notes item of a task with notes. */
export const notesItemOf = (t: Task, expiresAt?: number): Record<string, unknown> => ({
  ...notesKey(t.workspaceId, t.taskId),
  notes: t.notes,
  ...(expiresAt ? { expiresAt } : {}),
});

/** The attributes of a task item that are not the task's own fields. */
const ITEM_ONLY = ['pk', 'sk', 'expiresAt', 'search', 'hasNotes', 'nw', ...LIST_KEY_ATTRIBUTES] as const;

/**
 * A task from its item (either layout) and, in layout 2, its notes item. Without the notes item a
 * task that has notes comes back without them (lists); `hasNotes` on the result says so.
 */
export const toTask = (item: Record<string, unknown>, notesItem?: Record<string, unknown>): Task & TaskItemExtras => {
  const raw = fromItem<Record<string, unknown>>(item);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!(ITEM_ONLY as readonly string[]).includes(k)) out[k] = v;
  for (const attr of SET_ATTRIBUTES) {
    if (out[attr] !== undefined) out[attr] = [...(out[attr] as Iterable<string>)].sort();
  }
  if (notesItem?.notes !== undefined) out.notes = notesItem.notes;
  const legacy = String(raw.sk).startsWith('TASK#');
  // A task of layout 1 holds its notes itself.
  const hasNotes = legacy ? raw.notes !== undefined : raw.hasNotes === true;
  return Object.assign(out as unknown as Task, {
    [EXTRAS]: { hasNotes, nw: (raw.nw as string[] | undefined) ?? notesWordsOf(raw.notes as string | undefined), legacy },
  }) as Task & TaskItemExtras;
};

/** What an item says of a task besides its fields, kept out of sight of every output (a symbol key). */
export const EXTRAS = Symbol('task item');
export interface TaskItemExtras {
  readonly [EXTRAS]?: {
    readonly hasNotes: boolean;
    readonly nw: readonly string[];
    readonly legacy: boolean;
    /** Its live subtasks' entries, when it was read with its partition (a single task's read). */
    subtasks?: readonly SubtaskEntry[];
    /** Its live attachments, the same way. */
    attachments?: readonly Attachment[];
    /** Who chose to watch it or not, the same way (store/inbox-store.ts). */
    watches?: readonly { readonly userId: string; readonly on: boolean }[];
  };
}

export const extrasOf = (t: Task): NonNullable<TaskItemExtras[typeof EXTRAS]> =>
  (t as Task & TaskItemExtras)[EXTRAS] ?? { hasNotes: t.notes !== undefined, nw: notesWordsOf(t.notes), legacy: false };

/** A task's live subtasks as its single read found them; undefined when it was read in a list (ask the store). */
export const subtaskEntriesOf = (t: Task): readonly SubtaskEntry[] | undefined => extrasOf(t).subtasks;

/** A task's live attachments as its single read found them (oldest first); undefined when it was read in a list. */
export const attachmentsOf = (t: Task): readonly Attachment[] | undefined => extrasOf(t).attachments;

/** A task's watch choices as its single read found them; undefined when it was read in a list. */
export const watchesOf = (t: Task): readonly { readonly userId: string; readonly on: boolean }[] | undefined => extrasOf(t).watches;

/** Whether a task as read holds its notes, or has none: it is whole (what a change of its notes needs). */
export const isWhole = (t: Task): boolean => t.notes !== undefined || !extrasOf(t).hasNotes;

/**
 * Whether a task has notes and the words search finds them by: from its notes where they were read,
 * else as its item said (a tree's delete or completion reads its subtasks without their notes).
 */
export const notesStateOf = (t: Task): { readonly hasNotes: boolean; readonly nw: readonly string[] } =>
  isWhole(t) ? { hasNotes: t.notes !== undefined, nw: notesWordsOf(t.notes) } : extrasOf(t);

/**
 * `next` with its notes as a change set them (text, or none): what its item and its word entries
 * derive from, not the state its task was read in.
 */
export const withNotesSet = (next: Task, notes: string | undefined): Task => {
  const { notes: _was, ...rest } = next;
  const extras = extrasOf(next);
  return Object.assign(notes === undefined ? rest : { ...rest, notes }, {
    [EXTRAS]: { ...extras, hasNotes: notes !== undefined, nw: notesWordsOf(notes) },
  }) as Task;
};
