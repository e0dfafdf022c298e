/**
 * What the views read of the tools' results, leniently: hosts cache a view by URI, so this build
 * may meet the results of an older or newer server. A field missing or of another type is
 * treated as absent, unknown fields are ignored, and an entry without an id and title is skipped.
 */

export interface Task {
  readonly taskId: string;
  /** The short key (`DEMO-42`) of newer servers. */
  readonly key?: string;
  readonly title: string;
  /** Open or closed (done or canceled): what the views sort by. */
  readonly status: 'open' | 'done';
  /** Its workflow status by name (In progress), from servers that have them. */
  readonly statusName?: string;
  readonly priority?: string;
  readonly dueDate?: string;
  readonly dueTime?: string;
  readonly assigneeId?: string;
  readonly assigneeName?: string;
  readonly projectId?: string;
  readonly projectName?: string;
  readonly labels: readonly string[];
  /** A recurring task's rule in words ("every Monday"). */
  readonly repeat?: string;
  /** The parent's key, when it is a subtask. */
  readonly parent?: string;
  /** Its subtasks, where the whole task was read (task_get): how many, and how many are done. */
  readonly subtasks?: { readonly total: number; readonly done: number };
  /** How many files it has (newer servers). */
  readonly attachments?: number;
  /** Its files, where the whole task was read (task_get). */
  readonly files?: readonly TaskFile[];
  readonly completedAt?: string;
  readonly version?: number;
  readonly notes?: string;
  readonly updatedAt?: string;
  /** Its project's custom field values by field name (newer servers): text, a number, an option, options. */
  readonly fields?: Readonly<Record<string, FieldValue>>;
}

/** A custom field's value as a task summary carries it (a multi-select's is its options). */
export type FieldValue = string | number | readonly string[];

export interface TaskFile {
  readonly attachmentId: string;
  readonly name: string;
  readonly type: string;
  readonly size: number;
}

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

const DATE = /^\d{4}-\d{2}-\d{2}$/;
export const date = (v: unknown): string | undefined => (typeof v === 'string' && DATE.test(v) ? v : undefined);

export const toTask = (v: unknown): Task | undefined => {
  if (!isObject(v)) return undefined;
  const taskId = str(v.taskId);
  const title = str(v.title);
  if (!taskId || !title) return undefined;
  const optional = {
    key: str(v.key),
    priority: str(v.priority),
    dueDate: date(v.dueDate),
    dueTime: str(v.dueTime),
    assigneeId: str(v.assigneeId),
    assigneeName: str(v.assigneeName),
    projectId: str(v.projectId),
    projectName: str(v.projectName),
    repeat: str(v.repeat),
    parent: str(v.parent),
    subtasks: Array.isArray(v.subtasks)
      ? { total: v.subtasks.length, done: v.subtasks.filter((s) => isObject(s) && isClosed(s)).length }
      : undefined,
    statusName: typeof v.statusCategory === 'string' ? str(v.status) : undefined,
    attachments: num(v.attachments),
    files: Array.isArray(v.files)
      ? v.files.flatMap((f) =>
          isObject(f) && str(f.attachmentId) && str(f.name)
            ? [
                {
                  attachmentId: str(f.attachmentId)!,
                  name: str(f.name)!,
                  type: str(f.type) ?? 'application/octet-stream',
                  size: num(f.size) ?? 0,
                },
              ]
            : [],
        )
      : undefined,
    completedAt: str(v.completedAt),
    version: num(v.version),
    notes: str(v.notes),
    updatedAt: str(v.updatedAt),
    fields: fieldValues(v.fields),
  };
  return {
    taskId,
    title,
    status: isClosed(v) ? 'done' : 'open',
    labels: Array.isArray(v.labels) ? v.labels.filter((l): l is string => typeof l === 'string') : [],
    ...(Object.fromEntries(Object.entries(optional).filter(([, x]) => x !== undefined)) as Partial<Task>),
  };
};

/** A task's custom field values, each a string, a finite number or a list of strings (others are left out). */
const fieldValues = (v: unknown): Record<string, FieldValue> | undefined => {
  if (!isObject(v)) return undefined;
  const out: Record<string, FieldValue> = {};
  for (const [name, x] of Object.entries(v)) {
    if (typeof x === 'string' || num(x) !== undefined) out[name] = x as string | number;
    else if (Array.isArray(x)) out[name] = x.filter((o): o is string => typeof o === 'string');
  }
  return Object.keys(out).length ? out : undefined;
};

/** A task's category says whether it is closed (done or canceled); a server before statuses says done. */
const isClosed = (v: Record<string, unknown>): boolean =>
  v.statusCategory === undefined ? v.status === 'done' : v.statusCategory === 'done' || v.statusCategory === 'canceled';

export const toTasks = (v: unknown): Task[] => (Array.isArray(v) ? v.map(toTask).filter((t): t is Task => !!t) : []);

/** The key newer servers give a task, else the start of its id: short enough to scan, unique enough to tell apart. */
export const shortRef = (t: Task): string => t.key ?? t.taskId.slice(0, 8);

/** How the view names a task to the model: by key, as the server's own text does (the id only for a task without one). */
export const modelRef = (t: Task): string => `“${t.title}” [${t.key ?? t.taskId}]`;
