/**
 * The project board (`ui://doers/board`), rendered by a host beside `project_get`'s or
 * `tasks_search`'s result: the tasks in columns by due date, by assignee or by status in the
 * project's own order (a toggle), each with its controls, and a form to add a task to the project.
 * `project_get` carries the project and its statuses but not its tasks, and a search may come paged,
 * so the board reads the tasks with `tasks_search` (the model's own search, every page) through the
 * host. By status, a card moves to another column by its Status control: a `task_update` of its
 * status with the version shown, which the server refuses as a conflict when someone changed the
 * task meanwhile (the view then says what they changed). A subtask whose parent is in its column
 * sits under it, and the parent shows how many of its subtasks on the board are done. A saved
 * view (tasks_search's `view`, or one picked on the board) is shown under its name, in its grouping.
 * A project's select and multi-select custom fields are groupings too: a column per option, in the
 * field's order, then the tasks without a value (a multi-select's task in each of its options' columns).
 */
import './styles.css';
import { itemState, type Notice, taskActions } from './shared/actions.js';
import { addDays } from './shared/dates.js';
import { h, renderInto } from './shared/dom.js';
import { startView, type ToolOutcome } from './shared/host.js';
import { date, isObject, type Json, str, type Task, toTasks } from './shared/model.js';
import { type SavedView, savedViewsOf, toSavedView, viewPicker } from './shared/saved-views.js';
import { addForm, noticeBar, taskItem } from './shared/task-item.js';

const root = document.getElementById('view')!;

/** At most this many pages of 100: a board of 500 tasks is already more than anyone reads. */
const MAX_PAGES = 5;

/** By due date, assignee or status, or by a select field of the project (`field:<name>`). */
type Grouping = 'due' | 'assignee' | 'status' | `field:${string}`;

/** A select or multi-select custom field of the project: what the board can group by. */
interface SelectField {
  readonly name: string;
  readonly options: readonly string[];
}

interface Status {
  readonly name: string;
  readonly category: string;
}

const state = {
  args: {} as Json,
  /** The search the board shows (undefined until a result says which). */
  query: undefined as Json | undefined,
  projectId: undefined as string | undefined,
  title: 'Board',
  today: undefined as string | undefined,
  tasks: [] as Task[],
  more: false,
  loaded: false,
  failed: undefined as string | undefined,
  notice: undefined as Notice | undefined,
  grouping: 'due' as Grouping,
  /** The project's statuses in order (project_get's), once known. */
  statuses: undefined as Status[] | undefined,
  /** The project's select fields (project_get's), once known. */
  fields: undefined as SelectField[] | undefined,
  /** Each shown task's status category (backlog … done, canceled) by task id, as the server gave it. */
  categories: new Map<string, string>(),
  /** The saved view the board shows, if it shows one. */
  view: undefined as SavedView | undefined,
  /** The saved views there are to open (views_list's), once read. */
  views: undefined as SavedView[] | undefined,
};

/** A view's grouping as the board's columns: a list is by due date. */
const groupingOf = (group: string): Grouping => (group === 'assignee' || group === 'status' ? group : 'due');
const items = itemState();

const host = startView('board', {
  input: (args) => {
    state.args = args;
  },
  result: (out: ToolOutcome) => {
    if (!out.ok) {
      state.failed = out.text || 'The tool call was refused.';
      return render();
    }
    absorb(out.data);
    render();
    void reload().then(loadViews);
  },
  cancelled: (reason) => {
    state.failed = `The board was not read: ${reason}`;
    render();
  },
});

const actions = taskActions({ host, items, reload, notify, rerender: render });

/** project_get's result names the project; tasks_search's carries the tasks and the search's own arguments. */
function absorb(data: Json): void {
  state.today = date(data.today) ?? state.today;
  const project = isObject(data.project) ? data.project : undefined;
  const { cursor: _c, limit: _l, ...search } = state.args;
  const searched = str(search.project);
  state.projectId = str(project?.projectId) ?? (searched && searched !== 'none' ? searched : undefined);
  state.query = project ? { project: state.projectId } : search;
  if (project) state.title = str(project.name) ?? 'Project';
  if (Array.isArray(data.statuses)) state.statuses = statusesOf(data.statuses);
  if (project) state.fields = selectFieldsOf(project.fields);
  if (Array.isArray(data.tasks)) {
    state.tasks = toTasks(data.tasks);
    state.categories = categoriesOf(data.tasks);
    state.title =
      (state.projectId && state.tasks.find((t) => t.projectName)?.projectName) || (state.projectId ? 'Project' : 'Search results');
  }
  const view = toSavedView(data.view);
  if (view) showView(view);
  state.failed = undefined;
}

/** The board of a saved view: its tasks (read by the view, so a change to it shows), its name, its grouping. */
function showView(view: SavedView): void {
  state.view = view;
  state.query = { view: view.viewId };
  state.projectId = undefined;
  state.statuses = undefined;
  state.fields = undefined;
  state.title = view.name;
  state.grouping = groupingOf(view.group);
}

/** The saved views to pick from, read once through the host (a host without views_list shows no picker). */
async function loadViews(): Promise<void> {
  if (state.views) return;
  const out = await host.call('views_list', {});
  state.views = out.ok ? savedViewsOf(out.data) : [];
  render();
}

function openView(view: SavedView | undefined): void {
  if (!view) return;
  showView(view);
  state.loaded = false;
  render();
  void reload();
}

/** The status category of each task of a result that says it (servers before statuses do not). */
const categoriesOf = (v: unknown, into = new Map<string, string>()): Map<string, string> => {
  if (Array.isArray(v))
    for (const t of v) if (isObject(t) && str(t.taskId) && str(t.statusCategory)) into.set(str(t.taskId)!, str(t.statusCategory)!);
  return into;
};

const statusesOf = (v: unknown[]): Status[] =>
  v.flatMap((s) => (isObject(s) && str(s.name) && str(s.category) ? [{ name: str(s.name)!, category: str(s.category)! }] : []));

/** A project's select and multi-select fields (project_get's `project.fields`); none when it has none. */
const selectFieldsOf = (v: unknown): SelectField[] =>
  Array.isArray(v)
    ? v.flatMap((f) =>
        isObject(f) && str(f.name) && (f.type === 'select' || f.type === 'multi-select') && Array.isArray(f.options)
          ? [{ name: str(f.name)!, options: f.options.filter((o): o is string => typeof o === 'string') }]
          : [],
      )
    : [];

/**
 * The board's project's statuses and select fields, both from one project_get through the host: read
 * when the board shows a project whose fields it does not know yet, and by status when it lacks its
 * statuses. A project the host cannot read offers no field columns (and statuses of the tasks shown).
 */
async function loadProject(): Promise<void> {
  if (!state.projectId || (state.fields && (state.statuses || state.grouping !== 'status'))) return;
  const out = await host.call('project_get', { projectId: state.projectId });
  if (out.ok && Array.isArray(out.data.statuses)) state.statuses = statusesOf(out.data.statuses);
  state.fields = out.ok && isObject(out.data.project) ? selectFieldsOf(out.data.project.fields) : (state.fields ?? []);
}

async function reload(): Promise<void> {
  if (!state.query) return;
  const tasks: Task[] = [];
  const categories = new Map<string, string>();
  let cursor: string | undefined;
  let pages = 0;
  // By status every column is shown, the closed ones too (a view or a query shows what it names).
  const named = state.view !== undefined || state.query.query !== undefined;
  const query = state.grouping === 'status' && !named ? { ...state.query, status: 'any' } : state.query;
  await loadProject();
  do {
    const out = await host.call('tasks_search', { ...query, limit: 100, ...(cursor ? { cursor } : {}) });
    if (!out.ok) {
      state.notice = { kind: 'error', text: out.text || 'The tasks could not be read.' };
      return render();
    }
    state.today = date(out.data.today) ?? state.today;
    tasks.push(...toTasks(out.data.tasks));
    categoriesOf(out.data.tasks, categories);
    cursor = str(out.data.nextCursor);
  } while (cursor && ++pages < MAX_PAGES);
  state.tasks = tasks;
  state.categories = categories;
  state.more = cursor !== undefined;
  state.loaded = true;
  render();
}

function notify(notice: Notice | undefined): void {
  state.notice = notice;
  render();
}

interface Column {
  readonly id: string;
  readonly title: string;
  readonly tasks: Task[];
}

const byDue = (tasks: readonly Task[], today: string): Column[] => {
  const week = addDays(today, 7);
  const columns: Column[] = [
    { id: 'overdue', title: 'Overdue', tasks: [] },
    { id: 'today', title: 'Today', tasks: [] },
    { id: 'week', title: 'Next 7 days', tasks: [] },
    { id: 'later', title: 'Later', tasks: [] },
    { id: 'none', title: 'No date', tasks: [] },
    { id: 'done', title: 'Done', tasks: [] },
  ];
  const [overdue, todays, soon, later, undated, done] = columns.map((c) => c.tasks) as [Task[], Task[], Task[], Task[], Task[], Task[]];
  for (const t of tasks) {
    if (t.status === 'done') done.push(t);
    else if (!t.dueDate) undated.push(t);
    else if (t.dueDate < today) overdue.push(t);
    else if (t.dueDate === today) todays.push(t);
    else if (t.dueDate <= week) soon.push(t);
    else later.push(t);
  }
  return columns.filter((c) => c.tasks.length || c.id === 'today');
};

const byAssignee = (tasks: readonly Task[]): Column[] => {
  const columns = new Map<string, Column>();
  for (const t of tasks) {
    const id = t.assigneeId ?? '';
    if (!columns.has(id)) columns.set(id, { id: id || 'unassigned', title: id ? (t.assigneeName ?? id) : 'Unassigned', tasks: [] });
    columns.get(id)!.tasks.push(t);
  }
  return [...columns.entries()].sort(([a, x], [b, y]) => (!a ? 1 : !b ? -1 : x.title.localeCompare(y.title))).map(([, c]) => c);
};

/** The status a card shows: its name, or (from a server before statuses) open or done. */
const statusName = (t: Task): string => t.statusName ?? (t.status === 'done' ? 'Done' : 'Todo');

const byStatus = (tasks: readonly Task[], statuses: readonly Status[]): Column[] => {
  const columns = new Map<string, Column>(statuses.map((s, i) => [s.name, { id: `status-${i}`, title: s.name, tasks: [] }]));
  for (const t of tasks) {
    const name = statusName(t);
    if (!columns.has(name)) columns.set(name, { id: `status-${columns.size}`, title: name, tasks: [] });
    columns.get(name)!.tasks.push(t);
  }
  return [...columns.values()];
};

/** By a select field: its options in order (an option no longer there after them), then the tasks without one. */
const byField = (tasks: readonly Task[], field: SelectField): Column[] => {
  const columns = new Map<string, Column>(field.options.map((o, i) => [o, { id: `field-${i}`, title: o, tasks: [] }]));
  const none: Column = { id: 'field-none', title: `No ${field.name}`, tasks: [] };
  for (const t of tasks) {
    const value = t.fields?.[field.name];
    const chosen = (Array.isArray(value) ? value : typeof value === 'string' ? [value] : []) as readonly string[];
    for (const o of chosen) {
      if (!columns.has(o)) columns.set(o, { id: `field-${columns.size}`, title: o, tasks: [] });
      columns.get(o)!.tasks.push(t);
    }
    if (!chosen.length) none.tasks.push(t);
  }
  return [...columns.values(), none];
};

/** The select field the board groups by, if it groups by one the project (still) has. */
const fieldGrouping = (): SelectField | undefined =>
  state.grouping.startsWith('field:') ? state.fields?.find((f) => `field:${f.name}` === state.grouping) : undefined;

/**
 * A multi-select's task is in several columns: each card after its first gets its own element ids and
 * focus keys, so labels name their own control and the keyboard comes back to the card it was on.
 */
const distinct = (card: HTMLElement, copy: number): HTMLElement => {
  if (!copy) return card;
  for (const el of [card, ...card.querySelectorAll<HTMLElement>('[id], [for], [aria-controls], [data-focus]')])
    for (const attr of ['id', 'for', 'aria-controls', 'data-focus']) {
      const v = el.getAttribute(attr);
      if (v) el.setAttribute(attr, `${v}~${copy}`);
    }
  return card;
};

/** A column's cards with each subtask under its parent when the parent is in the same column. */
const nested = (column: readonly Task[]): { task: Task; depth: number }[] => {
  const here = new Set(column.flatMap((t) => (t.key ? [t.key] : [])));
  const childrenOf = (key: string | undefined) => column.filter((t) => key !== undefined && t.parent === key);
  const out: { task: Task; depth: number }[] = [];
  const place = (t: Task, depth: number) => {
    out.push({ task: t, depth });
    if (depth < 3) for (const c of childrenOf(t.key)) place(c, depth + 1);
  };
  for (const t of column) if (!t.parent || !here.has(t.parent)) place(t, 0);
  return out;
};

/**
 * Done, not canceled, by its status's category (as task_get counts subtasks), whatever the status is
 * called; a task from a server before statuses is done when it is closed.
 */
const isDone = (t: Task): boolean => t.status === 'done' && (state.categories.get(t.taskId) ?? 'done') === 'done';

/** "1 of 2 subtasks done", of the subtasks the board holds. */
const rollupOf = (t: Task, all: readonly Task[]): string | undefined => {
  const children = t.key ? all.filter((c) => c.parent === t.key) : [];
  return children.length ? `${children.filter(isDone).length} of ${children.length} subtasks done` : undefined;
};

const groupingToggle = (): HTMLElement => {
  const option = (value: Grouping, label: string) =>
    h(
      'label',
      {},
      h('input', {
        type: 'radio',
        name: 'grouping',
        value,
        checked: state.grouping === value,
        'data-focus': `grouping:${value}`,
        onchange: () => {
          const reread = (value === 'status') !== (state.grouping === 'status');
          state.grouping = value;
          render();
          // By status the board reads every status's tasks; back from it, the search as asked.
          if (reread) void reload();
        },
      }),
      ` ${label}`,
    );
  return h(
    'fieldset',
    { class: 'grouping' },
    h('legend', {}, 'Columns by'),
    option('due', 'Due date'),
    option('assignee', 'Assignee'),
    option('status', 'Status'),
    // A project's select fields (a saved view or a search across projects has none).
    ...((state.projectId && state.fields) || []).map((f) => option(`field:${f.name}`, f.name)),
  );
};

let form: HTMLElement | undefined;

function render(): void {
  root.setAttribute('aria-busy', state.loaded || state.failed ? 'false' : 'true');
  if (state.failed) {
    renderInto(root, h('p', { class: 'empty', role: 'alert' }, state.failed));
    return;
  }
  const today = state.today;
  if (!today) {
    renderInto(root, h('p', { class: 'empty' }, 'Loading the board…'));
    return;
  }
  const statuses = state.statuses ?? [...new Set(state.tasks.map(statusName))].map((name) => ({ name, category: '' }));
  // A field the project no longer has (or not yet known to have) shows the tasks by due date.
  const field = fieldGrouping();
  if (state.grouping.startsWith('field:') && !field && state.fields) state.grouping = 'due';
  const columns = field
    ? byField(state.tasks, field)
    : state.grouping === 'assignee'
      ? byAssignee(state.tasks)
      : state.grouping === 'status'
        ? byStatus(state.tasks, statuses)
        : byDue(state.tasks, today);
  const byStatusNow = state.grouping === 'status';
  const shown = new Map<string, number>();
  const copyOf = (taskId: string): number => {
    const n = shown.get(taskId) ?? 0;
    shown.set(taskId, n + 1);
    return n;
  };
  const open = state.tasks.filter((t) => t.status === 'open').length;
  if (state.projectId)
    form ??= addForm(undefined, (title, dueDate) => actions.create(title, { projectId: state.projectId, ...(dueDate ? { dueDate } : {}) }));
  renderInto(
    root,
    h(
      'header',
      {},
      h(
        'div',
        { class: 'heading' },
        h('h1', {}, state.title),
        h('span', { class: 'summary' }, `${open} open${state.more ? ', more than shown' : ''}`),
      ),
      state.view ? h('p', { class: 'quiet view-query' }, state.view.query || 'every open task') : null,
      state.views?.length ? viewPicker(state.views, state.view?.viewId, openView) : null,
      groupingToggle(),
    ),
    noticeBar(state.notice, () => notify(undefined)),
    h(
      'div',
      { class: 'columns', 'data-grouping': field ? 'field' : state.grouping, ...(field ? { 'data-field': field.name } : {}) },
      ...columns.map((c) =>
        h(
          'section',
          { class: 'column', 'aria-labelledby': `col-${c.id}`, 'data-column': c.id },
          h('h2', { id: `col-${c.id}` }, c.title, h('span', { class: 'count' }, String(c.tasks.length))),
          c.tasks.length
            ? h(
                'ul',
                {},
                ...(byStatusNow ? nested(c.tasks) : c.tasks.map((task) => ({ task, depth: 0 }))).map(({ task: t, depth }) =>
                  distinct(
                    taskItem(t, {
                      today,
                      locale: host.locale(),
                      items,
                      actions,
                      hide: { assignee: state.grouping === 'assignee', project: !!state.projectId, parent: depth > 0 },
                      depth,
                      ...(byStatusNow ? { statuses: statuses.map((s) => s.name), rollup: rollupOf(t, state.tasks) } : {}),
                    }),
                    copyOf(t.taskId),
                  ),
                ),
              )
            : h('p', { class: 'empty' }, 'Nothing here.'),
        ),
      ),
    ),
    form ?? null,
  );
}

render();
