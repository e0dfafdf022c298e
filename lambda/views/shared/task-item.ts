import type { ItemState, Notice, TaskActions } from './actions.js';
import { addDays, duePhrase, nextMonday, shortDate } from './dates.js';
import { h } from './dom.js';
import { shortRef, type Task, type TaskFile } from './model.js';

export interface ItemOptions {
  readonly today: string;
  readonly locale: string | undefined;
  readonly items: ItemState;
  readonly actions: TaskActions;
  /** Leave out what the surrounding list already says (its column's assignee, say; a subtask's parent right above it). */
  readonly hide?: { readonly assignee?: boolean; readonly project?: boolean; readonly parent?: boolean };
  /** How deep under a parent shown above it (the board by status). */
  readonly depth?: number;
  /** The statuses it can be moved to (the board by status): a Status control on the card. */
  readonly statuses?: readonly string[];
  /** What its subtasks on the board say ("1 of 2 subtasks done"). */
  readonly rollup?: string | undefined;
}

const statusControl = (t: Task, o: ItemOptions, names: readonly string[], disabled: boolean): HTMLElement => {
  const current = t.statusName ?? (t.status === 'done' ? 'Done' : 'Todo');
  return h(
    'label',
    { class: 'status-pick' },
    h('span', { class: 'quiet' }, 'Status '),
    h(
      'select',
      {
        'data-focus': `${t.taskId}:status`,
        'data-status': '',
        'aria-label': `Status of “${t.title}”`,
        disabled,
        onchange: (e: Event) => {
          const to = (e.target as HTMLSelectElement).value;
          if (to !== current) void o.actions.setStatus(t, to);
        },
      },
      ...names.map((n) => h('option', { value: n, selected: n === current }, n)),
    ),
  );
};

const movePanel = (t: Task, o: ItemOptions, disabled: boolean): HTMLElement => {
  const choice = (label: string, day: string, key: string) =>
    h(
      'button',
      {
        type: 'button',
        'data-focus': `${t.taskId}:${key}`,
        'data-move': key,
        disabled: disabled || t.dueDate === day,
        onclick: () => void o.actions.move(t, day),
      },
      label,
      h('span', { class: 'quiet' }, ` ${shortDate(day, o.locale)}`),
    );
  const picker = h('input', {
    type: 'date',
    id: `date-${t.taskId}`,
    value: t.dueDate ?? o.today,
    'data-focus': `${t.taskId}:date`,
    disabled,
  }) as HTMLInputElement;
  return h(
    'div',
    { class: 'panel', id: `move-${t.taskId}`, role: 'group', 'aria-label': `Move “${t.title}”` },
    choice('Today', o.today, 'today'),
    choice('Tomorrow', addDays(o.today, 1), 'tomorrow'),
    choice('Next Monday', nextMonday(o.today), 'monday'),
    h(
      'span',
      { class: 'pick' },
      h('label', { for: `date-${t.taskId}` }, 'Date'),
      picker,
      h(
        'button',
        {
          type: 'button',
          'data-focus': `${t.taskId}:pick`,
          'data-move': 'pick',
          disabled,
          onclick: () => {
            if (picker.value) void o.actions.move(t, picker.value);
          },
        },
        'Move',
      ),
    ),
    t.dueDate
      ? h(
          'button',
          { type: 'button', 'data-focus': `${t.taskId}:none`, 'data-move': 'none', disabled, onclick: () => void o.actions.move(t, null) },
          'No date',
        )
      : null,
  );
};

const detailsPanel = (t: Task, o: ItemOptions): HTMLElement => {
  const read = o.items.details.get(t.taskId);
  const full = typeof read === 'object' ? read : undefined;
  const row = (term: string, value: string | undefined) => (value ? [h('dt', {}, term), h('dd', {}, value)] : []);
  const shown = full ?? t;
  return h(
    'div',
    { class: 'panel details', id: `details-${t.taskId}` },
    typeof read === 'string' ? h('p', { class: 'quiet' }, read) : null,
    h(
      'dl',
      {},
      row('Status', shown.statusName),
      row('Notes', shown.notes),
      row('Due', shown.dueDate ? `${shortDate(shown.dueDate, o.locale)}${shown.dueTime ? ` ${shown.dueTime}` : ''}` : 'none'),
      row('Priority', shown.priority),
      row('Assignee', shown.assigneeName ?? shown.assigneeId ?? 'none'),
      row('Project', shown.projectName ?? shown.projectId),
      row('Labels', shown.labels.length ? shown.labels.map((l) => `#${l}`).join(' ') : undefined),
      row('Repeats', shown.repeat),
      row('Subtask of', shown.parent),
      row('Subtasks', shown.subtasks ? `${shown.subtasks.done} of ${shown.subtasks.total} done` : undefined),
      ...(shown.files?.length ? [h('dt', {}, 'Files'), h('dd', {}, filesList(shown.files, o))] : []),
      row('Id', `${t.key ? `${t.key} · ` : ''}${t.taskId}${shown.version === undefined ? '' : ` · version ${shown.version}`}`),
    ),
    full ? attachControl(t, o) : null,
  );
};

const sizeText = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** A task's files: each by name and size, an image shown as read through the host (never a URL of the bucket). */
const filesList = (files: readonly TaskFile[], o: ItemOptions): HTMLElement =>
  h(
    'ul',
    { class: 'files' },
    ...files.map((f) => {
      const image = f.type.startsWith('image/');
      if (image) o.actions.loadImage(f.attachmentId);
      const shown = o.items.images.get(f.attachmentId);
      return h(
        'li',
        { 'data-attachment-id': f.attachmentId },
        h('span', { class: 'file-name' }, `📎 ${f.name}`),
        h('span', { class: 'quiet' }, ` ${sizeText(f.size)}`),
        image && shown?.src ? h('img', { src: shown.src, alt: f.name, class: 'file-image' }) : null,
        image && shown?.failed ? h('span', { class: 'quiet' }, ` ${shown.failed}`) : null,
      );
    }),
  );

/** "Attach a file": a file picker whose file goes to the server through the host's tool call. */
const attachControl = (t: Task, o: ItemOptions): HTMLElement => {
  const input = h('input', {
    type: 'file',
    id: `attach-${t.taskId}`,
    'data-focus': `${t.taskId}:attach`,
    'data-attach': '',
    disabled: o.items.busy.has(t.taskId),
    onchange: (e: Event) => {
      const file = (e.target as HTMLInputElement).files?.[0];
      if (file) void o.actions.attach(t, file);
    },
  });
  return h('div', { class: 'attach' }, h('label', { for: `attach-${t.taskId}` }, 'Attach a file '), input);
};

/** One task with its controls: done, move (today, tomorrow, next Monday, a date) and details. */
export const taskItem = (t: Task, o: ItemOptions): HTMLElement => {
  const busy = o.items.busy.has(t.taskId);
  const panel = o.items.panels.get(t.taskId);
  const done = t.status === 'done';
  const overdue = !done && t.dueDate !== undefined && t.dueDate < o.today;
  const meta = [
    h('span', { class: 'ref' }, shortRef(t)),
    t.priority ? h('span', { class: `prio prio-${t.priority.toLowerCase()}` }, t.priority) : null,
    t.dueDate && !done ? h('span', { class: overdue ? 'due overdue' : 'due' }, duePhrase(t.dueDate, o.today, o.locale)) : null,
    t.dueTime && !done ? h('span', {}, t.dueTime) : null,
    !o.hide?.assignee && t.assigneeName ? h('span', {}, `@${t.assigneeName}`) : null,
    !o.hide?.project && t.projectName ? h('span', {}, t.projectName) : null,
    ...t.labels.map((l) => h('span', { class: 'label' }, `#${l}`)),
    t.repeat ? h('span', { class: 'repeat', title: `Repeats ${t.repeat}` }, `↻ ${t.repeat}`) : null,
    t.parent && !o.hide?.parent ? h('span', { class: 'parent' }, `sub of ${t.parent}`) : null,
    t.attachments ? h('span', { class: 'files-count', title: `${t.attachments} file(s)` }, `📎 ${t.attachments}`) : null,
    o.rollup ? h('span', { class: 'rollup' }, o.rollup) : null,
  ];
  const toggle = (which: 'move' | 'details', label: string, aria: string) =>
    h(
      'button',
      {
        type: 'button',
        class: 'toggle',
        'data-focus': `${t.taskId}:${which}-toggle`,
        'data-toggle': which,
        'aria-expanded': panel === which ? 'true' : 'false',
        'aria-controls': `${which}-${t.taskId}`,
        'aria-label': aria,
        onclick: () => o.actions.toggle(t, which),
      },
      label,
    );
  return h(
    'li',
    {
      class: `task${done ? ' done' : ''}${o.depth ? ' subtask' : ''}`,
      'data-task-id': t.taskId,
      'data-version': t.version,
      'aria-busy': busy ? 'true' : 'false',
      ...(o.depth ? { 'data-depth': o.depth } : {}),
    },
    h(
      'div',
      { class: 'row' },
      h('input', {
        type: 'checkbox',
        class: 'check',
        checked: done,
        disabled: busy,
        'data-focus': `${t.taskId}:done`,
        'aria-label': `Done: ${t.title}`,
        onchange: (e: Event) => void o.actions.setDone(t, (e.target as HTMLInputElement).checked),
      }),
      h('div', { class: 'main' }, h('span', { class: 'title' }, t.title), h('div', { class: 'meta' }, meta)),
      h(
        'div',
        { class: 'tools' },
        o.statuses ? statusControl(t, o, o.statuses, busy) : null,
        done ? null : toggle('move', 'Move', `Move “${t.title}” to another day`),
        toggle('details', 'Details', `Details of “${t.title}”`),
      ),
    ),
    panel === 'move' && !done ? movePanel(t, o, busy) : null,
    panel === 'details' ? detailsPanel(t, o) : null,
  );
};

/** The line that says what just happened, with Undo where it can be undone, and a way to dismiss it. */
export const noticeBar = (notice: Notice | undefined, dismiss: () => void): HTMLElement =>
  h(
    'div',
    { id: 'notice', class: notice ? `notice ${notice.kind}` : 'notice', role: 'status' },
    notice ? h('span', { class: 'text' }, notice.text) : null,
    notice?.undo ? h('button', { type: 'button', 'data-focus': 'notice:undo', onclick: notice.undo }, 'Undo') : null,
    notice
      ? h(
          'button',
          { type: 'button', class: 'quiet-button', 'aria-label': 'Dismiss', 'data-focus': 'notice:dismiss', onclick: dismiss },
          '×',
        )
      : null,
  );

/** The small form that adds a task (title and due date). */
export const addForm = (
  defaultDue: string | undefined,
  add: (title: string, dueDate: string | undefined) => Promise<boolean>,
): HTMLElement => {
  const title = h('input', {
    id: 'new-title',
    name: 'title',
    required: true,
    maxlength: 300,
    autocomplete: 'off',
    'data-focus': 'new:title',
  }) as HTMLInputElement;
  const due = h('input', { id: 'new-due', name: 'due', type: 'date', value: defaultDue, 'data-focus': 'new:due' }) as HTMLInputElement;
  const submit = h('button', { type: 'submit', 'data-focus': 'new:add' }, 'Add');
  return h(
    'form',
    {
      class: 'add',
      'aria-label': 'Add a task',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const text = title.value.trim();
        if (!text) return;
        submit.setAttribute('disabled', '');
        void add(text, due.value || undefined).finally(() => submit.removeAttribute('disabled'));
      },
    },
    h('label', { for: 'new-title' }, 'New task'),
    title,
    h('label', { for: 'new-due' }, 'Due'),
    due,
    submit,
  );
};
