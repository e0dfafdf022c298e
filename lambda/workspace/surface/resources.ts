import type { ResourceTemplateDefinition } from '../../mcp/resource-registry.js';
import { TEXT_TYPES } from '../attachments/attachment-types.js';
import { objectKeyOf } from '../attachments/attachment-writer.js';
import { dateInZone } from '../model/time.js';
import { taskOfAttachment } from '../store/attachment-store.js';
import { loadNames } from '../store/lookups.js';
import { toSummary, toTaskOutput } from './outputs.js';
import { duePhrase } from './render.js';
import { MAX_ID_LENGTH } from './schemas.js';
import type { WorkspaceServices } from './services.js';

/**
 * Tasks and projects by reference, as Markdown. Nothing is enumerated (resources/list stays empty);
 * ids come from the tools. An id of another workspace is simply not there: `undefined`, which the
 * registry answers as an unknown resource.
 */
const MAX_COMMENTS = 20;
const MAX_TASKS = 50;

const esc = (s: string): string => s.replace(/\r?\n/g, ' ');

/** A URI segment as written; one that is not valid percent-encoding is taken as it is (and names nothing). */
const decoded = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

export const taskResource: ResourceTemplateDefinition<WorkspaceServices> = {
  uriTemplate: 'doers://tasks/{taskId}',
  name: 'task',
  title: 'Task',
  description:
    'One task with its notes and latest comments, as Markdown: doers://tasks/DEMO-42, or the taskId from tasks_search or agenda_get.',
  mimeType: 'text/markdown',
  scope: 'tasks:read',
  read: async ({ taskId }, uri, { services, principal, now }) => {
    // A longer id than the tools accept names nothing, and DynamoDB would refuse it as a key (a 500).
    if (taskId!.length > MAX_ID_LENGTH) return undefined;
    const ws = principal.workspaceId;
    // A key (DEMO-42) names the task too; one of another workspace's keys names nothing here.
    const id = await services.numbers.idOf(principal, decoded(taskId!), 'taskId').catch(() => undefined);
    if (id === undefined) return undefined;
    const [task, names, comments] = await Promise.all([
      services.tasks.get(ws, id),
      loadNames(services, principal),
      services.comments.list(ws, id, MAX_COMMENTS),
    ]);
    if (!task) return undefined;
    const t = toTaskOutput(task, names);
    const today = dateInZone(now, principal.timeZone);
    const lines = [
      `# ${esc(t.title)}`,
      '',
      `- ${t.key ? `Key: ${t.key}` : `Id: ${t.taskId}`} (version ${t.version})`,
      `- Status: ${t.status}${t.completedAt ? ` (completed ${t.completedAt})` : ''}`,
      `- Priority: ${t.priority}`,
      `- Due: ${t.dueDate ? `${t.dueDate}${t.dueTime ? ` ${t.dueTime}` : ''} (${duePhrase(t, today)})` : 'none'}`,
      `- Assignee: ${t.assigneeId ? `${t.assigneeName ?? t.assigneeId} (${t.assigneeId})` : 'none'}`,
      `- Project: ${t.projectId ? `${t.projectName ?? t.projectId} (${t.projectId})` : 'none'}`,
      `- Labels: ${t.labels.length ? t.labels.join(', ') : 'none'}`,
      `- Created: ${t.createdAt} by ${names.members.get(t.createdBy)?.name ?? t.createdBy}; updated ${t.updatedAt}`,
    ];
    if (t.notes) lines.push('', '## Notes', '', t.notes);
    if (comments.comments.length) {
      lines.push('', '## Comments', '');
      for (const c of comments.comments)
        lines.push(`- **${names.members.get(c.authorId)?.name ?? c.authorId}**, ${c.createdAt}: ${esc(c.body)}`);
      if (comments.next) lines.push(`- … more in comments_list`);
    }
    return [{ uri, mimeType: 'text/markdown', text: `${lines.join('\n')}\n` }];
  },
};

export const projectResource: ResourceTemplateDefinition<WorkspaceServices> = {
  uriTemplate: 'doers://projects/{projectId}',
  name: 'project',
  title: 'Project',
  description: 'One project with its description and open tasks, as Markdown. The projectId comes from projects_list.',
  mimeType: 'text/markdown',
  scope: 'tasks:read',
  read: async ({ projectId }, uri, { services, principal, now }) => {
    if (projectId!.length > MAX_ID_LENGTH) return undefined;
    const ws = principal.workspaceId;
    const [project, names, open, done] = await Promise.all([
      services.projects.get(ws, projectId!),
      loadNames(services, principal),
      services.tasks.search(principal, { status: 'open', projectId: projectId! }, MAX_TASKS),
      services.tasks.search(principal, { status: 'done', projectId: projectId! }, 10),
    ]);
    if (!project) return undefined;
    const today = dateInZone(now, principal.timeZone);
    const lines = [`# ${esc(project.name)}`, '', `- Id: ${project.projectId} (version ${project.version})`, `- Status: ${project.status}`];
    if (project.description) lines.push('', project.description);
    lines.push('', '## Open tasks', '');
    if (!open.tasks.length) lines.push('None.');
    for (const task of open.tasks) {
      const s = toSummary(task, names);
      lines.push(
        `- ${s.key ?? `[${s.taskId}]`} ${esc(s.title)} · ${duePhrase(s, today)}, ${s.priority}${s.assigneeName ? ` · ${s.assigneeName}` : ''}`,
      );
    }
    if (open.next) lines.push(`- … more with tasks_search (project ${project.projectId})`);
    if (done.tasks.length) {
      lines.push('', '## Recently done', '');
      for (const task of done.tasks) {
        const s = toSummary(task, names);
        lines.push(`- ${s.key ?? `[${task.taskId}]`} ${esc(task.title)} · ${s.status} ${task.completedAt}`);
      }
    }
    return [{ uri, mimeType: 'text/markdown', text: `${lines.join('\n')}\n` }];
  },
};

/**
 * What resources/read returns of one file: Lambda answers at most 6 MB, and base64 makes 4 MB about
 * 5.4; every attachment fits (DOERS_ATTACHMENT_MAX_MB is at most 4), and one that would not (a bound
 * lowered later) is answered with a line that says so rather than cut.
 */
export const MAX_READ_BYTES = 4 * 1024 * 1024;

export const attachmentResource: ResourceTemplateDefinition<WorkspaceServices> = {
  uriTemplate: 'doers://attachments/{attachmentId}',
  name: 'attachment',
  title: 'Attachment',
  description:
    "A file attached to a task: text as text, anything else as a blob with its type. Ids come from task_get's files (attachmentId).",
  scope: 'tasks:read',
  read: async ({ attachmentId }, uri, { services, principal }) => {
    if (attachmentId!.length > MAX_ID_LENGTH) return undefined;
    const id = decoded(attachmentId!);
    // The id names its task: the file's item and its task are read together.
    const taskId = taskOfAttachment(id);
    if (!taskId) return undefined;
    const [a, task] = await Promise.all([
      services.attachments.get(principal.workspaceId, id),
      services.tasks.get(principal.workspaceId, taskId),
    ]);
    // Deleted, or its task deleted: not there, as for a task (an id of another workspace is never there).
    if (!a || a.deletedAt || !task) return undefined;
    if (a.size > MAX_READ_BYTES)
      return [
        {
          uri,
          mimeType: 'text/plain',
          text: `${a.name} is ${a.size} bytes; resources/read returns files of at most ${MAX_READ_BYTES} bytes.`,
        },
      ];
    const bytes = await services.files.store.get(objectKeyOf(a));
    if (!bytes) return undefined;
    const meta = { _meta: { 'doers/name': a.name, 'doers/size': a.size } };
    return [
      TEXT_TYPES.includes(a.type as (typeof TEXT_TYPES)[number])
        ? { uri, mimeType: a.type, text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes), ...meta }
        : { uri, mimeType: a.type, blob: Buffer.from(bytes).toString('base64'), ...meta },
    ];
  },
};

export const WORKSPACE_RESOURCE_TEMPLATES = [taskResource, projectResource, attachmentResource];
