import {
  assigneeCountScope,
  completionCountSk,
  countsPk,
  dueCountSk,
  labelPk,
  labelSk,
  projectCountScope,
  wordPk,
  wordSk,
  workspaceCountScope,
} from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import { categoryOfKey, storedKey } from '../model/statuses.js';
import type { Task } from '../model/types.js';
import { Expression, Update } from './expressions.js';
import { notesStateOf } from './task-items.js';
import { labelKey, taskWords } from './words.js';

/**
 * What a task's change writes besides the task: its word and label entries (what text and label
 * searches read) and the counts of its scopes (what agenda and project summaries read), all in the
 * change's own transaction, so they are never out of step with the task. Each is derived from the
 * task before and after, so every door (a tool, bulk, undo, the migration) writes the same.
 *
 * Counts: each live task adds 1 to `D#<due>` (open ones: `o`) of the workspace's, its assignee's and
 * its project's counts; a done one adds 1 to its project's done total (`X`), and, while it is fresh
 * (completed in the last two days), to the quarter hour it was completed in (`C#…`, workspace and
 * assignee), which is what "done today" sums in any time zone. A change adds the difference.
 */

/** How long a completion's quarter hour counts are kept: longer than any day in any time zone reaches back. */
export const COMPLETION_COUNT_SECONDS = 3 * 24 * 3600;

/** `2026-12-02T10:37:12.000Z` → `2026-12-02T10:30`. */
export const quarterHourOf = (iso: string): string => {
  const m = Number(iso.slice(14, 16));
  return `${iso.slice(0, 14)}${String(m - (m % 15)).padStart(2, '0')}`;
};

type Counter = { pk: string; sk: string; attr: 'o' | 'x' | 'n'; expires?: boolean };

const countersOf = (t: Task | undefined, nowMs: number): Counter[] => {
  if (!t || t.deletedAt) return [];
  const ws = t.workspaceId;
  const scopes = [workspaceCountScope(t.taskId), assigneeCountScope(t.assigneeId), projectCountScope(t.projectId)];
  if (t.status === 'open') return scopes.map((s) => ({ pk: countsPk(ws, s), sk: dueCountSk(t.dueDate), attr: 'o' }));
  // A canceled task is closed and not done: it counts in neither (model/statuses.ts).
  if (categoryOfKey(storedKey(t)) === 'canceled') return [];
  const out: Counter[] = [{ pk: countsPk(ws, scopes[2]!), sk: 'X', attr: 'x' }];
  if (t.completedAt && nowMs - Date.parse(t.completedAt) < (COMPLETION_COUNT_SECONDS - 3600) * 1000) {
    const sk = completionCountSk(quarterHourOf(t.completedAt));
    out.push(
      { pk: countsPk(ws, scopes[0]!), sk, attr: 'n', expires: true },
      { pk: countsPk(ws, scopes[1]!), sk, attr: 'n', expires: true },
    );
  }
  return out;
};

/** A count's change: `delta` per attribute of one item. Two on one item combine (a bulk call's tasks due the same day). */
interface CountOp extends WriteOp {
  readonly count: { readonly key: string; readonly deltas: Readonly<Record<string, number>>; readonly expiresAt?: number };
}
const isCountOp = (op: WriteOp): op is CountOp => 'count' in op;

export const countOp = (table: string, pk: string, sk: string, deltas: Readonly<Record<string, number>>, expiresAt?: number): CountOp => {
  const x = new Expression();
  const update = new Update(x);
  for (const [attr, d] of Object.entries(deltas)) if (d) update.add(attr, d);
  if (expiresAt) update.set('expiresAt', expiresAt);
  const key = `${table}|${pk}|${sk}`;
  return {
    item: { Update: { TableName: table, Key: { pk, sk }, UpdateExpression: update.toString(), ...x.input() } },
    count: { key, deltas, ...(expiresAt ? { expiresAt } : {}) },
    merge: (other) => {
      if (!isCountOp(other) || other.count.key !== key) return undefined;
      const sum: Record<string, number> = { ...deltas };
      for (const [a, d] of Object.entries(other.count.deltas)) sum[a] = (sum[a] ?? 0) + d;
      if (Object.values(sum).every((d) => d === 0)) return undefined;
      return countOp(table, pk, sk, sum, Math.max(expiresAt ?? 0, other.count.expiresAt ?? 0) || undefined);
    },
  };
};

/** The counts a change moves, as one op per item touched. */
export const countOps = (table: string, before: Task | undefined, after: Task | undefined, nowMs: number): WriteOp[] => {
  const deltas = new Map<string, { pk: string; sk: string; expires: boolean; d: Record<string, number> }>();
  const add = (c: Counter, by: number) => {
    const k = `${c.pk}|${c.sk}`;
    const e = deltas.get(k) ?? { pk: c.pk, sk: c.sk, expires: !!c.expires, d: {} };
    e.d[c.attr] = (e.d[c.attr] ?? 0) + by;
    deltas.set(k, e);
  };
  for (const c of countersOf(before, nowMs)) add(c, -1);
  for (const c of countersOf(after, nowMs)) add(c, 1);
  const expiresAt = Math.floor(nowMs / 1000) + COMPLETION_COUNT_SECONDS;
  return [...deltas.values()]
    .filter((e) => Object.values(e.d).some((d) => d !== 0))
    .map((e) => countOp(table, e.pk, e.sk, e.d, e.expires ? expiresAt : undefined));
};

/** The word and label entries a change adds and removes. */
export const entryOps = (table: string, before: Task | undefined, after: Task | undefined): WriteOp[] => {
  const wordsOfTask = (t: Task | undefined) => (t && !t.deletedAt ? taskWords({ ...t, nw: notesStateOf(t).nw }) : []);
  const labelsOfTask = (t: Task | undefined) => (t && !t.deletedAt ? [...new Set(t.labels.map(labelKey))] : []);
  const ws = (after ?? before)!.workspaceId;
  const task = (after ?? before)!;
  const diff = (was: readonly string[], now: readonly string[]) => ({
    added: now.filter((w) => !was.includes(w)),
    removed: was.filter((w) => !now.includes(w)),
  });
  const words = diff(wordsOfTask(before), wordsOfTask(after));
  const labels = diff(labelsOfTask(before), labelsOfTask(after));
  const put = (pk: string, sk: string): WriteOp => ({ item: { Put: { TableName: table, Item: { pk, sk } } } });
  const del = (pk: string, sk: string): WriteOp => ({ item: { Delete: { TableName: table, Key: { pk, sk } } } });
  return [
    ...words.added.map((w) => put(wordPk(ws, w), wordSk(w, task))),
    ...words.removed.map((w) => del(wordPk(ws, w), wordSk(w, task))),
    ...labels.added.map((l) => put(labelPk(ws, l), labelSk(task))),
    ...labels.removed.map((l) => del(labelPk(ws, l), labelSk(task))),
  ];
};
