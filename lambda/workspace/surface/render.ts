import type { ToolReader } from '../../mcp/tool-registry.js';
import { dayPhrase, whenPhrase } from '../activity/render.js';
import { dateInZone, daysBetween } from '../model/time.js';
import type { CommentOutput, MemberOutput, ProjectOutput, TaskOutput, TaskSummaryOutput } from './schemas.js';

/**
 * The compact text of `content[0]`: one line per entry with its identifier, so a model that reads
 * only the text can still act; never the JSON again (that would double the tokens).
 */

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * An instant as the reader reads it ("today 14:02", "yesterday 09:10", "Tue 09:14", "Tue 25 Nov
 * 09:14"), in their zone; in UTC where no reader is known.
 */
export const instantPhrase = (at: string, reader?: ToolReader): string => {
  if (!reader) return `${at.slice(0, 16).replace('T', ' ')} UTC`;
  const when = whenPhrase(at, reader.now, reader.timeZone);
  const ago = daysBetween(dateInZone(new Date(at), reader.timeZone), dateInZone(reader.now, reader.timeZone));
  return ago === 0 ? `today ${when.slice(-5)}` : ago === 1 ? `yesterday ${when.slice(-5)}` : when;
};

/**
 * "2 days overdue", "due today 14:00", "due tomorrow", "due in 5 days (2026-09-27)", "no due date":
 * relative to `today`, the day a list is of. A list of another day than the reader's today says its
 * dates in words instead ("due Fri 11 Dec", "overdue by then: due Mon 7 Dec"), never "today".
 */
export const duePhrase = (
  t: Pick<TaskSummaryOutput, 'dueDate' | 'dueTime' | 'status' | 'statusCategory' | 'completedAt'>,
  today?: string,
  reader?: ToolReader,
): string => {
  if (isClosed(t)) {
    const word = t.statusCategory === 'done' ? 'done' : t.status;
    return t.completedAt ? `${word} ${instantPhrase(t.completedAt, reader)}` : word;
  }
  // An open task's status, where it is not where open tasks start (Todo).
  const status = t.statusCategory === 'unstarted' ? '' : `${t.status}, `;
  const readersToday = reader && dateInZone(reader.now, reader.timeZone);
  return status + (today && readersToday && today !== readersToday ? otherDayPhrase(t, today) : openDuePhrase(t, today));
};

const isClosed = (t: Pick<TaskSummaryOutput, 'statusCategory'>) => t.statusCategory === 'done' || t.statusCategory === 'canceled';

const openDuePhrase = (t: Pick<TaskSummaryOutput, 'dueDate' | 'dueTime'>, today?: string): string => {
  if (!t.dueDate) return 'no due date';
  const at = t.dueTime ? ` ${t.dueTime}` : '';
  if (!today) return `due ${t.dueDate}${at}`;
  const d = daysBetween(today, t.dueDate);
  if (d < 0) return `${plural(-d, 'day')} overdue`;
  if (d === 0) return `due today${at}`;
  if (d === 1) return `due tomorrow${at}`;
  return `due in ${d} days (${t.dueDate}${at})`;
};

/** Due dates of a list of another day (`day`): in words, overdue by then where they are before it. */
const otherDayPhrase = (t: Pick<TaskSummaryOutput, 'dueDate' | 'dueTime'>, day: string): string => {
  if (!t.dueDate) return 'no due date';
  const due = `due ${dayPhrase(t.dueDate)}${t.dueTime ? ` ${t.dueTime}` : ''}`;
  return t.dueDate < day ? `overdue by then: ${due}` : due;
};

/** How text names a task: its key (DEMO-42), or its id while it has no number yet. */
export const taskName = (t: Pick<TaskSummaryOutput, 'key' | 'taskId'>): string => t.key ?? `[${t.taskId}]`;

/** The line a write answers with: the task as written, with every link it has (not only the open ones). */
export const sizeWords = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export const writtenLine = (t: TaskSummaryOutput, reader?: ToolReader): string =>
  taskLine(t, undefined, { allLinks: true, ...(reader ? { reader } : {}) }).slice(2);

/**
 * One line a task: `- DEMO-7 Review the redlines · P1, 1 day overdue · @Ada Lovelace · Acme renewal
 * · #legal · v1`. `omitAssignee` drops the assignee where the heading already names them.
 */
export const taskLine = (
  t: TaskSummaryOutput,
  today?: string,
  opts: { omitAssignee?: boolean; allLinks?: boolean; reader?: ToolReader } = {},
): string => {
  const waiting = (t.blockedBy ?? []).filter((b) => b.open);
  const links =
    opts.allLinks && t.blockedBy?.length
      ? `waits on ${t.blockedBy.map((b) => `${taskName(b)} (${b.deleted ? 'deleted' : b.open ? 'open' : 'done'})`).join(', ')}`
      : undefined;
  const extras = [
    t.assigneeId && !opts.omitAssignee ? `@${t.assigneeName ?? t.assigneeId}` : undefined,
    t.projectId ? (t.projectName ?? t.projectId) : undefined,
    t.labels.length ? t.labels.map((l) => `#${l}`).join(' ') : undefined,
    t.repeat ? `↻ ${t.repeat}` : undefined,
    t.parent ? `sub of ${t.parent}` : undefined,
    t.attachments ? `📎${t.attachments}` : undefined,
    links ?? (waiting.length ? `blocked by ${waiting.map((b) => `${taskName(b)} (open)`).join(', ')}` : undefined),
  ].filter(Boolean);
  return `- ${taskName(t)} ${t.title} · ${t.priority}, ${duePhrase(t, today, opts.reader)}${extras.length ? ` · ${extras.join(' · ')}` : ''} · v${t.version}`;
};

/** A truncated list's last line: how many were shown, and the cursor that goes on (the text holds what the JSON holds). */
export const moreLine = (list: {
  readonly truncated: boolean;
  readonly returned: number;
  readonly nextCursor?: string | undefined;
}): string =>
  list.truncated && list.nextCursor
    ? `\n(${list.returned} shown; more follow: call again with cursor "${list.nextCursor}", or narrow it.)`
    : '';

/** The line a change's text ends with: how to take it back. */
export const undoLine = (activityId: string | undefined): string => (activityId ? `\nUndo: change_undo ${activityId}` : '');

export const taskBlock = (t: TaskOutput, reader?: ToolReader): string => {
  const lines = [
    `${taskName(t)} ${t.title} (v${t.version})`,
    [
      isClosed(t) ? duePhrase(t, undefined, reader) : t.status,
      `Priority ${t.priority}`,
      t.dueDate ? `due ${t.dueDate}${t.dueTime ? ` ${t.dueTime}` : ''}` : 'no due date',
      t.assigneeId ? `assigned to ${t.assigneeName ?? t.assigneeId} [${t.assigneeId}]` : 'unassigned',
      t.projectId ? `project ${t.projectName ?? t.projectId} [${t.projectId}]` : 'no project',
    ].join(' · '),
  ];
  if (t.repeat) lines.push(`Repeats ${t.repeat}`);
  if (t.labels.length) lines.push(`Labels: ${t.labels.join(', ')}`);
  if (t.fields && Object.keys(t.fields).length)
    lines.push(
      `Fields: ${Object.entries(t.fields)
        .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : v}`)
        .join(' · ')}`,
    );
  if (t.parent) lines.push(`Subtask of ${t.parent}`);
  if (t.subtasks?.length) {
    // Canceled is closed and not done: the rollup counts done ones (model/statuses.ts).
    const done = t.subtasks.filter((s) => s.statusCategory === 'done').length;
    lines.push(
      `Subtasks (${done} of ${t.subtasks.length} done): ${t.subtasks.map((s) => `${taskName(s)} ${s.title} (${s.status})`).join('; ')}`,
    );
  }
  if (t.blockedBy?.length)
    lines.push(`Blocked by: ${t.blockedBy.map((b) => `${taskName(b)} (${b.deleted ? 'deleted' : b.open ? 'open' : 'done'})`).join(', ')}`);
  if (t.files?.length)
    lines.push(
      `Files (${t.files.length}): ${t.files.map((f) => `${f.name} (${f.type}, ${sizeWords(f.size)}) doers://attachments/${f.attachmentId}`).join('; ')}`,
    );
  lines.push(
    `Created ${instantPhrase(t.createdAt, reader)} by ${t.createdByName ?? t.createdBy}, updated ${instantPhrase(t.updatedAt, reader)}`,
  );
  if (t.watchers?.length) lines.push(`Watching: ${t.watchers.map((w) => w.name ?? w.userId).join(', ')}`);
  if (t.reminders?.length)
    lines.push(`Reminders: ${t.reminders.map((r) => `${r.words} → ${instantPhrase(r.at, reader)} (${r.name ?? r.userId})`).join('; ')}`);
  if (t.notes) lines.push(`Notes:\n${t.notes}`);
  return lines.join('\n');
};

export const projectLine = (p: ProjectOutput): string =>
  `- [${p.projectId}] ${p.name}${p.status === 'archived' ? ' (archived)' : ''} · v${p.version}`;

export const projectBlock = (p: ProjectOutput): string =>
  [
    `[${p.projectId}] ${p.name} (v${p.version}, ${p.status})`,
    ...(p.description ? [p.description] : []),
    // Custom fields in a line: `Fields: Story points (number), Type (select: Bug, Story)`.
    ...(p.fields?.length
      ? [`Fields: ${p.fields.map((f) => `${f.name} (${f.type}${f.options?.length ? `: ${f.options.join(', ')}` : ''})`).join(', ')}`]
      : []),
  ].join('\n');

export const commentLine = (c: CommentOutput): string =>
  `- [${c.commentId}] ${c.authorName ?? c.authorId}, ${c.createdAt.slice(0, 16).replace('T', ' ')} UTC: ${c.body}`;

export const memberLine = (m: MemberOutput): string =>
  `- [${m.userId}] ${m.name} <${m.email}> · ${m.role}${m.status === 'disabled' ? ' (disabled)' : ''} · ${m.timeZone}`;
