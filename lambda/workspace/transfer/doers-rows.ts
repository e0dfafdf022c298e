import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as z from 'zod/mini';
import { MEMBER_PREFIX, NOTES_ITEM_SK, PROJECT_PREFIX, TASK_ITEM_SK, TASK_PREFIX } from '../../platform/item-keys.js';
import type { FieldDef } from '../model/custom-fields.js';
import type { Comment, Project, Task } from '../model/types.js';
import type { FieldCell, FileField } from './import-fields.js';
import { type ColumnUse, type ImportRow, type KeptValue, labelsOf, type SkippedRow, stateOf } from './import-formats.js';
import { EXPORT_FORMAT, fromBase64 } from './workspace-export.js';

/**
 * A doers export (lambda/workspace/transfer/workspace-export.ts) read as rows, so that
 * workspace_import brings another workspace's tasks into this one through the same import as a CSV:
 * each live task a row (its notes, status, priority, due date or repeat rule, labels, assignee by
 * e-mail, project by name, parent and blocked-by links, custom field values, comments by their
 * authors), each claimed by its task id, so the same export imported again creates nothing twice.
 * What belongs to the other workspace alone (its history, attachments, views, webhooks, members
 * and their tokens) is not imported; the admin CLI's `import` makes a whole workspace of an export.
 */

const COMMENT_PREFIX = 'COMMENT#';

/** What each kind of item becomes, as a dry run lists a CSV's columns. */
const KINDS: readonly ColumnUse[] = [
  {
    column: 'tasks',
    use: 'mapped',
    becomes:
      'tasks: title, notes, status, priority, due date or repeat rule, labels, assignee (by e-mail), project (by name), parent, blocked-by links',
  },
  { column: 'custom field values', use: 'field', becomes: "fields of the tasks' projects, by name and type" },
  { column: 'comments', use: 'mapped', becomes: 'comments, each by its author where they are a member here' },
  {
    column: 'activity, attachments, saved views, webhooks, members',
    use: 'ignored',
    becomes: "the other workspace's own; the admin CLI's import makes a whole workspace of the export",
  },
];

type Item = Record<string, unknown>;

export type DoersRows =
  | { format: 'doers'; rows: ImportRow[]; skipped: SkippedRow[]; unread: string[]; columns: ColumnUse[]; fields: FileField[] }
  | { error: string; header: string[]; unknownFormat?: true };

/** Whether a text is a doers export: its first line names the format. */
export const isDoersExport = (text: string): boolean => {
  const first = text.replace(/^\uFEFF/, '').split('\n', 1)[0] ?? '';
  try {
    return (JSON.parse(first) as { format?: unknown }).format === EXPORT_FORMAT;
  } catch {
    return false;
  }
};

const valueWords = (v: unknown): string => (Array.isArray(v) ? v.join(', ') : String(v));

/**
 * What an item must be to be read: the file is anyone's to make (an attachment), so each kind is
 * checked before a field of it is used; an item that is not what it says is left out (a task: said
 * as a skipped row), and its values go through the same checks as a CSV's (labels, priority).
 */
const text = z.string();
const TaskItem = z.object({
  taskId: text,
  title: text.check(z.minLength(1), z.maxLength(300)),
  number: z.optional(z.number()),
  notes: z.optional(text),
  status: z.optional(text),
  state: z.optional(text),
  priority: z.optional(text),
  dueDate: z.optional(text.check(z.regex(/^\d{4}-\d{2}-\d{2}$/))),
  dueTime: z.optional(text),
  assigneeId: z.optional(text),
  projectId: z.optional(text),
  labels: z.optional(z.array(text)),
  parentId: z.optional(text),
  blockedBy: z.optional(z.record(text, z.unknown())),
  repeat: z.optional(z.object({ words: text })),
  fields: z.optional(z.record(text, z.unknown())),
  completedAt: z.optional(text),
});
const CommentItem = z.object({ taskId: text, body: text, createdAt: text, authorId: z.optional(text) });
const FieldItem = z.object({
  fieldId: text,
  name: text,
  type: z.enum(['text', 'number', 'date', 'select', 'multi-select', 'person', 'url']),
  options: z.optional(z.array(text)),
});
const ProjectItem = z.object({ projectId: text, name: text.check(z.minLength(1)), fields: z.optional(z.array(FieldItem)) });
const MemberItem = z.object({ userId: text, name: z.optional(text), email: z.optional(text) });
const PRIORITIES = new Set(['P1', 'P2', 'P3', 'P4']);

export const readDoersExport = (text: string): DoersRows => {
  const lines = text.replace(/^\uFEFF/, '').split('\n');
  const items: { item: Item; line: number }[] = [];
  for (const [i, raw] of lines.entries()) {
    if (i === 0 || !raw.trim()) continue;
    try {
      const parsed = JSON.parse(raw, fromBase64) as { item?: Parameters<typeof unmarshall>[0] };
      items.push({ item: unmarshall(parsed.item ?? {}), line: i + 1 });
    } catch {
      return { error: `a doers export whose line ${i + 1} holds no item`, header: [] };
    }
  }
  const sk = (it: Item) => String(it.sk ?? '');
  const members = new Map<string, { email?: string; name?: string }>();
  const projects = new Map<string, Project>();
  const notes = new Map<string, string>();
  const comments = new Map<string, Comment[]>();
  const tasks: { task: Task; line: number; pk: string }[] = [];
  const skipped: SkippedRow[] = [];
  for (const { item, line } of items) {
    const k = sk(item);
    if (k.startsWith(MEMBER_PREFIX)) {
      const m = z.safeParse(MemberItem, item);
      if (m.success)
        members.set(m.data.userId, { ...(m.data.email ? { email: m.data.email } : {}), ...(m.data.name ? { name: m.data.name } : {}) });
    } else if (k.startsWith(PROJECT_PREFIX) && !item.deletedAt) {
      const p = z.safeParse(ProjectItem, item);
      if (p.success) projects.set(p.data.projectId, p.data as unknown as Project);
    } else if (k === NOTES_ITEM_SK && typeof item.notes === 'string') notes.set(String(item.pk), item.notes);
    else if (k.startsWith(COMMENT_PREFIX) && !item.deletedAt) {
      const c = z.safeParse(CommentItem, item);
      if (c.success) comments.set(c.data.taskId, [...(comments.get(c.data.taskId) ?? []), c.data as unknown as Comment]);
    } else if ((k === TASK_ITEM_SK || k.startsWith(TASK_PREFIX)) && !item.deletedAt) {
      const t = z.safeParse(TaskItem, item);
      if (!t.success)
        skipped.push({
          line,
          reason: `not a task this reads (${t.error.issues[0]?.path.join('.') || 'item'}: ${t.error.issues[0]?.message})`,
        });
      else
        tasks.push({
          task: t.data as unknown as Task,
          line,
          pk: String(item.pk),
        });
    }
  }
  // A task's notes are an item of their own (layout 2), before or after it in the file: joined once all are read.
  for (const t of tasks) {
    const n = notes.get(t.pk);
    if (n !== undefined && t.task.notes === undefined) t.task = { ...t.task, notes: n };
  }
  const numberOf = new Map(tasks.map(({ task }) => [task.taskId, task.number]));
  const ref = (taskId: string, what: string) => ({
    id: taskId,
    label: `${what} ${numberOf.get(taskId) ? `#${numberOf.get(taskId)}` : taskId}`,
  });

  const fields = new Map<string, FileField>();
  const defsOf = (projectId: string | undefined): Map<string, FieldDef> =>
    new Map((projectId ? (projects.get(projectId)?.fields ?? []) : []).map((d) => [d.fieldId, d]));
  for (const p of projects.values())
    for (const d of p.fields ?? [])
      if (!fields.has(d.name.toLowerCase()))
        fields.set(d.name.toLowerCase(), { name: d.name, type: d.type, ...(d.options ? { options: d.options } : {}), columns: [] });

  const rows: ImportRow[] = tasks.map(({ task: t, line }) => {
    const problems: string[] = [];
    const kept: KeptValue[] = [];
    const defs = defsOf(t.projectId);
    const values: FieldCell[] = [];
    for (const [fieldId, value] of Object.entries(t.fields ?? {})) {
      const def = defs.get(fieldId);
      if (!def) continue;
      // A person is a member of the other workspace: named, and kept in the notes unless this one has them.
      const words = def.type === 'person' ? (members.get(String(value))?.email ?? String(value)) : valueWords(value);
      values.push({ field: def.name, value: words });
    }
    const repeats = t.repeat?.words && /^every\b|^daily|^weekly|^monthly|^yearly/i.test(t.repeat.words);
    if (t.repeat && !repeats) kept.push({ field: 'Repeat', value: t.repeat.words });
    if (t.dueTime) kept.push({ field: 'Due time', value: t.dueTime });
    const assignee = t.assigneeId ? members.get(t.assigneeId) : undefined;
    const status = t.state ? stateOf(t.state, problems) : {};
    if (!PRIORITIES.has(t.priority)) problems.push(`priority '${String(t.priority)}' is none of P1 to P4; P4 given`);
    return {
      line,
      sourceId: t.taskId,
      title: t.title,
      ...(t.notes ? { notes: t.notes } : {}),
      priority: PRIORITIES.has(t.priority) ? t.priority : 'P4',
      ...(repeats ? { due: t.repeat!.words } : t.dueDate ? { due: t.dueDate } : {}),
      labels: labelsOf(t.labels ?? [], problems),
      ...(assignee ? { assignee } : {}),
      ...(t.projectId && projects.get(t.projectId) ? { project: projects.get(t.projectId)!.name } : {}),
      // A time as this server writes one, or the import's own: the file's words never make an index key.
      ...(t.status === 'done'
        ? { done: t.completedAt && !Number.isNaN(Date.parse(t.completedAt)) ? { at: new Date(t.completedAt).toISOString() } : {} }
        : {}),
      ...status,
      comments: (comments.get(t.taskId) ?? [])
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
        .map((c) => ({ body: c.body, ...(members.get(c.authorId) ? { author: members.get(c.authorId)! } : {}) })),
      ...(t.parentId ? { parent: ref(t.parentId, 'parent') } : {}),
      blockedBy: Object.keys(t.blockedBy ?? {}).map((id) => ref(id, 'blocked by')),
      kept,
      values,
      problems,
    };
  });
  return { format: 'doers', rows, skipped, unread: [], columns: [...KINDS], fields: [...fields.values()] };
};
