/**
 * How tasks are named: `DEMO-42` is the task whose number is 42 in a workspace whose key is DEMO.
 * A reference a caller gives is a key in any spelling (`DEMO-42`, `demo-42`, `#42`, `42`) or the
 * task's id; within one bulk call, `@3` names the task its third item creates (no key has that form).
 */

/** `DEMO-42`, `demo-42`, `#42`, `42`: a key in any of its spellings. */
const KEY_FORM = /^(?:([A-Za-z]{2,6})-|#)?(\d{1,9})$/;
/** `@3`: the third item of the same bulk call. */
const ITEM_FORM = /^@(\d{1,2})$/;

export type TaskRef = { readonly number: number; readonly prefix?: string } | { readonly item: number } | { readonly id: string };

/** A task reference as given: a key (any spelling), an item of the same call, or an id. */
export const parseTaskRef = (ref: string): TaskRef => {
  const trimmed = ref.trim();
  const item = ITEM_FORM.exec(trimmed);
  if (item) return { item: Number(item[1]) };
  const m = KEY_FORM.exec(trimmed);
  if (!m) return { id: ref };
  return { number: Number(m[2]), ...(m[1] ? { prefix: m[1].toUpperCase() } : {}) };
};

/** How a task is shown: its key, or (not numbered yet) undefined. */
export const keyOf = (workspaceKey: string, number: number | undefined): string | undefined =>
  number === undefined ? undefined : `${workspaceKey}-${number}`;

/** `{ key }` for an output that names a task, or nothing for one not numbered yet. */
export const keyField = (workspaceKey: string, number: number | undefined): { key?: string } => {
  const key = keyOf(workspaceKey, number);
  return key ? { key } : {};
};

/** What a text calls a task: its key, else its id in brackets. */
export const taskNameOf = (workspaceKey: string, t: { readonly number?: number | undefined; readonly taskId: string }): string =>
  keyOf(workspaceKey, t.number) ?? `[${t.taskId}]`;
