import { shortDate } from './dates.js';
import type { ViewHost } from './host.js';
import { date, isObject, type Json, modelRef, str, type Task, toTask } from './model.js';

export interface Notice {
  readonly text: string;
  readonly kind: 'info' | 'error';
  /** Shown as an Undo button next to the text. */
  readonly undo?: () => void;
}

/** What a view keeps about its tasks' controls between renders. */
export interface ItemState {
  /** The panel open under a task. */
  readonly panels: Map<string, 'move' | 'details'>;
  /** A task read for its details, or why it could not be. */
  readonly details: Map<string, Task | string>;
  /** Tasks with a change on its way: their controls wait. */
  readonly busy: Set<string>;
  /** Images of attachments read through the host, as data URLs (or why they could not be). */
  readonly images: Map<string, { readonly src?: string; readonly failed?: string }>;
}

export const itemState = (): ItemState => ({ panels: new Map(), details: new Map(), busy: new Set(), images: new Map() });

export interface ActionsContext {
  readonly host: ViewHost;
  readonly items: ItemState;
  /** Reads the view's data again through the host and renders it. */
  reload(): Promise<void>;
  notify(notice: Notice | undefined): void;
  rerender(): void;
}

export interface TaskActions {
  setDone(task: Task, done: boolean): Promise<void>;
  move(task: Task, dueDate: string | null): Promise<void>;
  /** Moves it to another workflow status (the board by status). */
  setStatus(task: Task, status: string): Promise<void>;
  toggle(task: Task, panel: 'move' | 'details'): void;
  create(title: string, fields: Json): Promise<boolean>;
  /** Reads an image attachment through the host once, for the details panel. */
  loadImage(attachmentId: string): void;
  /** Attaches a file the user picked, through the host's tool call. */
  attach(task: Task, file: File): Promise<void>;
}

const dueText = (t: Task | undefined, locale: string | undefined): string =>
  t?.dueDate ? `due ${shortDate(t.dueDate, locale)}` : 'no due date';

/** What the other change did, as far as the view can tell from the task now. */
const whatChanged = (before: Task, now: Task, locale: string | undefined): string[] => {
  const changes: string[] = [];
  if (now.title !== before.title) changes.push(`renamed “${now.title}”`);
  if (now.statusName !== undefined && now.statusName !== before.statusName) changes.push(`moved to ${now.statusName}`);
  else if (now.status !== before.status) changes.push(now.status === 'done' ? 'marked done' : 'reopened');
  if (now.dueDate !== before.dueDate) changes.push(`now ${dueText(now, locale)}`);
  if (now.assigneeId !== before.assigneeId) changes.push(now.assigneeName ? `given to ${now.assigneeName}` : 'unassigned');
  if (now.priority !== before.priority && now.priority) changes.push(`priority ${now.priority}`);
  return changes;
};

/**
 * The writes a view makes, all through the host with the version the view showed. A stale version
 * is refused by the server as a conflict: the view then reads the task as it is now, says what the
 * other change did, and reloads, so the user decides again on what is really there.
 */
export const taskActions = (ctx: ActionsContext): TaskActions => {
  const { host, items } = ctx;

  const conflict = async (before: Task): Promise<void> => {
    const now = await host.call('task_get', { taskId: before.taskId });
    const current = now.ok ? toTask(now.data) : undefined;
    const changes = current ? whatChanged(before, current, host.locale()) : [];
    ctx.notify({
      kind: 'error',
      text: current
        ? `Someone else changed “${before.title}” meanwhile (now version ${current.version ?? '?'})${changes.length ? `: ${changes.join(', ')}` : ''}. Your change was not made; here is the task as it is now.`
        : `“${before.title}” was changed or deleted meanwhile; your change was not made.`,
    });
    await ctx.reload();
  };

  const write = async (
    task: Task,
    tool: string,
    fields: Json,
    said: (after: Task, data: Json) => { user: string; model: string; undo?: (after: Task) => void },
  ): Promise<void> => {
    items.busy.add(task.taskId);
    ctx.rerender();
    try {
      const out = await host.call(tool, {
        taskId: task.taskId,
        ...(task.version === undefined ? {} : { version: task.version }),
        ...fields,
      });
      if (out.ok) {
        const after = toTask(out.data) ?? task;
        const told = said(after, isObject(out.data) ? out.data : {});
        host.tellModel(`${told.model} ${modelRef(after)}${after.version === undefined ? '' : `, now version ${after.version}`}`);
        const undo = told.undo;
        ctx.notify({ kind: 'info', text: told.user, ...(undo ? { undo: () => undo(after) } : {}) });
        items.details.delete(task.taskId);
        await ctx.reload();
      } else if (/\bconflict\b/i.test(out.text)) {
        await conflict(task);
      } else {
        ctx.notify({ kind: 'error', text: out.text || 'The change was refused.' });
      }
    } finally {
      items.busy.delete(task.taskId);
      ctx.rerender();
    }
  };

  /** Takes one change back by its record (change_undo), as the server's own Undo line says. */
  const undoChange = async (task: Task, activityId: string): Promise<void> => {
    items.busy.add(task.taskId);
    ctx.rerender();
    try {
      const out = await host.call('change_undo', { activityId });
      if (out.ok) {
        host.tellModel(`undid ${activityId} on ${modelRef(task)}`);
        ctx.notify({ kind: 'info', text: `Undone: “${task.title}” is back as it was.` });
        await ctx.reload();
      } else ctx.notify({ kind: 'error', text: out.text || 'The undo was refused.' });
    } finally {
      items.busy.delete(task.taskId);
      ctx.rerender();
    }
  };

  const actions: TaskActions = {
    setDone: (task, done) =>
      write(task, done ? 'task_complete' : 'task_reopen', {}, (after, data) => {
        // A recurring task stays open, due at its next occurrence: undone by its change, not by reopening.
        const doneFor = date(data.doneFor);
        const activityId = str(data.activityId);
        if (done && doneFor && activityId)
          return {
            user: `Done for ${shortDate(doneFor, host.locale())}: “${task.title}”, next ${dueText(after, host.locale())}.`,
            model: `completed the ${doneFor} occurrence of`,
            undo: () => void undoChange(task, activityId),
          };
        return {
          user: `${done ? 'Done' : 'Reopened'}: “${task.title}”.`,
          model: done ? 'completed' : 'reopened',
          undo: (after) => void actions.setDone(after, !done),
        };
      }),
    move: (task, dueDate) =>
      write(task, 'task_update', { dueDate }, (after) => ({
        user: `Moved “${task.title}”: ${dueText(after, host.locale())}.`,
        model: dueDate ? `moved to ${dueDate}` : 'took the due date off',
        undo: (moved) => void actions.move(moved, task.dueDate ?? null),
      })),
    setStatus: (task, status) =>
      write(task, 'task_update', { status }, (after) => ({
        user: `Moved “${task.title}” to ${after.statusName ?? status}.`,
        model: `moved to status ${after.statusName ?? status}`,
        ...(task.statusName ? { undo: (moved: Task) => void actions.setStatus(moved, task.statusName!) } : {}),
      })),
    toggle: (task, panel) => {
      const open = items.panels.get(task.taskId) === panel;
      if (open) items.panels.delete(task.taskId);
      else items.panels.set(task.taskId, panel);
      if (!open && panel === 'details') {
        items.details.set(task.taskId, 'Loading…');
        void host.call('task_get', { taskId: task.taskId }).then((out) => {
          items.details.set(task.taskId, (out.ok && toTask(out.data)) || out.text || 'The task could not be read.');
          ctx.rerender();
        });
      }
      ctx.rerender();
    },
    loadImage: (attachmentId) => {
      if (items.images.has(attachmentId)) return;
      items.images.set(attachmentId, {});
      void host.read(`doers://attachments/${attachmentId}`).then((c) => {
        items.images.set(
          attachmentId,
          c?.blob && c.mimeType?.startsWith('image/')
            ? { src: `data:${c.mimeType};base64,${c.blob}` }
            : { failed: 'The image could not be read.' },
        );
        ctx.rerender();
      });
    },
    attach: async (task, file) => {
      // The server takes 4 MB at most (its own bound may be lower, and it says so): a larger file is not read at all.
      if (file.size > 4 * 1024 * 1024) {
        ctx.notify({ kind: 'error', text: `${file.name} is larger than 4 MB, the most a file attached here may be.` });
        return;
      }
      items.busy.add(task.taskId);
      ctx.rerender();
      try {
        const bytes = new Uint8Array(await file.arrayBuffer());
        let binary = '';
        for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
        const out = await host.call('attachment_add', { taskId: task.taskId, name: file.name, content: btoa(binary) });
        if (!out.ok) {
          ctx.notify({ kind: 'error', text: out.text || 'The file could not be attached.' });
          return;
        }
        host.tellModel(`attached ${file.name} to ${modelRef(task)}`);
        ctx.notify({ kind: 'info', text: `Attached ${file.name} to “${task.title}”.` });
        // The details read again: the panel lists the new file.
        items.details.set(task.taskId, 'Loading…');
        const again = await host.call('task_get', { taskId: task.taskId });
        items.details.set(task.taskId, (again.ok && toTask(again.data)) || again.text || 'The task could not be read.');
        await ctx.reload();
      } finally {
        items.busy.delete(task.taskId);
        ctx.rerender();
      }
    },
    create: async (title, fields) => {
      const out = await host.call('task_create', { title, ...fields });
      const created = out.ok ? toTask(out.data) : undefined;
      if (!created) {
        ctx.notify({ kind: 'error', text: out.text || 'The task could not be added.' });
        return false;
      }
      host.tellModel(`added ${modelRef(created)}${created.dueDate ? ` due ${created.dueDate}` : ''}`);
      ctx.notify({ kind: 'info', text: `Added “${created.title}”.` });
      await ctx.reload();
      return true;
    },
  };
  return actions;
};
