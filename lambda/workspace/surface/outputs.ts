import type { Member } from '../../vocabulary.js';
import { valuesByName } from '../model/custom-fields.js';
import { showMentions } from '../model/mentions.js';
import { setOf, statusOf } from '../model/statuses.js';
import type { Attachment, Comment, Project, SubtaskEntry, Task } from '../model/types.js';
import type { Names } from '../store/names.js';
import type { CommentOutput, MemberOutput, ProjectOutput, StatusesOutput, TaskOutput, TaskSummaryOutput } from './schemas.js';

/** What the tools answer of each kind of target (`structuredContent`), from the domain's objects and the names they show. */

/** A task's workflow status by name, and its category (what agenda, overdue and blocked go by). */
const statusFields = (t: Pick<Task, 'status' | 'state' | 'projectId'>, names: Names) => {
  const s = statusOf(t, setOf(t.projectId ? names.projects.get(t.projectId) : undefined));
  return { status: s.name, statusCategory: s.category };
};

export const toSummary = (t: Task, names: Names): TaskSummaryOutput => ({
  ...(t.number !== undefined && names.workspaceKey ? { key: `${names.workspaceKey}-${t.number}` } : {}),
  taskId: t.taskId,
  title: t.title,
  ...statusFields(t, names),
  priority: t.priority,
  ...(t.dueDate ? { dueDate: t.dueDate } : {}),
  ...(t.dueTime ? { dueTime: t.dueTime } : {}),
  ...(t.assigneeId ? { assigneeId: t.assigneeId, ...optionalName(names.members.get(t.assigneeId)?.name, 'assigneeName') } : {}),
  ...(t.projectId ? { projectId: t.projectId, ...optionalName(names.projects.get(t.projectId)?.name, 'projectName') } : {}),
  labels: [...t.labels],
  ...(t.repeat ? { repeat: t.repeat.words } : {}),
  ...(t.completedAt ? { completedAt: t.completedAt } : {}),
  ...(t.parentId ? { parent: keyOf(names, t.parentId, t.parentNumber) } : {}),
  ...(t.attachmentCount ? { attachments: t.attachmentCount } : {}),
  ...fieldsOf(t, names),
  ...(t.blockedBy && Object.keys(t.blockedBy).length
    ? {
        blockedBy: Object.entries(t.blockedBy).map(([taskId, n]) => ({
          ...(n && names.workspaceKey ? { key: `${names.workspaceKey}-${n}` } : {}),
          taskId,
          open: (t.openBlockers ?? []).includes(taskId),
          ...((t.goneBlockers ?? []).includes(taskId) ? { deleted: true } : {}),
        })),
      }
    : {}),
  version: t.version,
});

/** A task's custom field values by name, as its project's fields now name them (none: nothing). */
const fieldsOf = (t: Pick<Task, 'fields' | 'projectId'>, names: Names): { fields?: Record<string, string | number | string[]> } => {
  if (!t.fields || !t.projectId) return {};
  const shown = Object.entries(valuesByName(names.projects.get(t.projectId)?.fields ?? [], t.fields));
  return shown.length ? { fields: Object.fromEntries(shown.map(([k, v]) => [k, Array.isArray(v) ? [...v] : (v as string | number)])) } : {};
};

/** How an output names a task it refers to: its key, or its id in brackets before numbers. */
const keyOf = (names: Names, taskId: string, n: number | undefined): string =>
  n && names.workspaceKey ? `${names.workspaceKey}-${n}` : `[${taskId}]`;

/** Stored text with its mentions shown by the member's name now. */
export const shownText = (text: string, names: Names): string =>
  text.includes('<@') ? showMentions(text, (id) => names.members.get(id)?.name) : text;

export const toTaskOutput = (
  t: Task,
  names: Names,
  subtasks?: readonly SubtaskEntry[],
  attachments?: readonly Attachment[],
  watchers?: readonly string[],
): TaskOutput => ({
  ...toSummary(t, names),
  ...(t.notes ? { notes: shownText(t.notes, names) } : {}),
  ...(subtasks?.length
    ? {
        subtasks: subtasks.map((s) => ({
          ...(s.number && names.workspaceKey ? { key: `${names.workspaceKey}-${s.number}` } : {}),
          taskId: s.taskId,
          title: s.title,
          ...statusFields(s, names),
        })),
      }
    : {}),
  ...(attachments?.length
    ? {
        files: attachments.map((a) => ({
          attachmentId: a.attachmentId,
          name: a.name,
          type: a.type,
          size: a.size,
          addedBy: a.addedBy,
          addedAt: a.addedAt,
          ...(a.commentId ? { commentId: a.commentId } : {}),
        })),
      }
    : {}),
  createdBy: t.createdBy,
  ...optionalName(names.members.get(t.createdBy)?.name, 'createdByName'),
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
  ...(t.completedBy ? { completedBy: t.completedBy } : {}),
  ...(watchers?.length
    ? { watchers: watchers.map((userId) => ({ userId, ...optionalName(names.members.get(userId)?.name, 'name') })) }
    : {}),
  ...(t.reminders?.length
    ? {
        reminders: t.reminders.map((r) => ({
          reminderId: r.reminderId,
          at: r.at,
          words: r.words,
          userId: r.userId,
          ...optionalName(names.members.get(r.userId)?.name, 'name'),
        })),
      }
    : {}),
});

export const toProjectOutput = (p: Project): ProjectOutput => {
  const { workspaceId: _ws, deletedAt: _d, statuses: _s, retiredStatuses: _r, fields, ...rest } = p;
  return {
    ...rest,
    ...(fields?.length
      ? { fields: fields.map((f) => ({ name: f.name, type: f.type, ...(f.options ? { options: [...f.options] } : {}) })) }
      : {}),
  };
};

/** A project's statuses in order, by name and category (its own, or the workspace's). */
export const toStatusesOutput = (p: Project): StatusesOutput => setOf(p).statuses.map(({ name, category }) => ({ name, category }));

export const toCommentOutput = (c: Comment, nameOf: (userId: string) => string | undefined): CommentOutput => ({
  commentId: c.commentId,
  taskId: c.taskId,
  authorId: c.authorId,
  ...optionalName(nameOf(c.authorId), 'authorName'),
  body: c.body.includes('<@') ? showMentions(c.body, nameOf) : c.body,
  createdAt: c.createdAt,
});

export const toMemberOutput = (m: Member): MemberOutput => ({
  userId: m.userId,
  name: m.name,
  email: m.email,
  role: m.role,
  timeZone: m.timeZone,
  status: m.status,
});

const optionalName = <K extends string>(name: string | undefined, key: K): Partial<Record<K, string>> =>
  (name === undefined ? {} : { [key]: name }) as Partial<Record<K, string>>;
