/**
 * The agenda view (`ui://doers/agenda`), rendered by a host beside `agenda_get`'s result: overdue,
 * today, upcoming and done today, each task with its controls, and a form to add one. It starts
 * from the result the host hands it (`structuredContent`) and reads the rest — upcoming and done
 * today, which `agenda_get` does not carry — with `tasks_search` through the host. A saved view
 * picked there adds a section of its tasks, under its name.
 */
import './styles.css';
import { itemState, type Notice, taskActions } from './shared/actions.js';
import { addDays, dayIn, shortDate } from './shared/dates.js';
import { h, renderInto } from './shared/dom.js';
import { startView, type ToolOutcome } from './shared/host.js';
import { date, isObject, type Json, num, str, type Task, toTasks } from './shared/model.js';
import { type SavedView, savedViewsOf, viewPicker } from './shared/saved-views.js';
import { addForm, noticeBar, taskItem } from './shared/task-item.js';

const root = document.getElementById('view')!;

const state = {
  args: {} as Json,
  day: undefined as string | undefined,
  timeZone: undefined as string | undefined,
  counts: {} as Record<string, number | undefined>,
  /** Unread inbox entries of the person looking (agenda_get's `unread`). */
  unread: 0,
  urgent: [] as Task[],
  truncated: false,
  upcoming: [] as Task[],
  doneToday: [] as Task[],
  /** Upcoming and done today have been read at least once. */
  complete: false,
  failed: undefined as string | undefined,
  notice: undefined as Notice | undefined,
  views: undefined as SavedView[] | undefined,
  view: undefined as SavedView | undefined,
  viewTasks: [] as Task[],
};
const items = itemState();

const host = startView('agenda', {
  input: (args) => {
    state.args = args;
  },
  result: (out: ToolOutcome) => {
    if (!out.ok) {
      state.failed = out.text || 'agenda_get was refused.';
      return render();
    }
    absorb(out.data);
    render();
    void loadMore().then(render).then(loadViews);
  },
  cancelled: (reason) => {
    state.failed = `The agenda was not read: ${reason}`;
    render();
  },
});

const actions = taskActions({ host, items, reload, notify, rerender: render });

/** `tasks_search`'s assignee for the agenda's (`anyone` is no filter at all). */
const whose = (): Json => {
  const a = str(state.args.assignee) ?? 'me';
  return a === 'anyone' ? {} : { assignee: a };
};

/** "Today" for moving a task: the user's real today, also when the agenda shows another day. */
const today = (): string => (state.args.date === undefined && state.day) || dayIn(new Date(), state.timeZone);

function absorb(data: Json): void {
  state.day = date(data.day) ?? state.day;
  state.timeZone = str(data.timeZone) ?? state.timeZone;
  state.counts = isObject(data.counts) ? Object.fromEntries(Object.entries(data.counts).map(([k, v]) => [k, num(v)])) : {};
  state.unread = num(data.unread) ?? 0;
  state.urgent = toTasks(data.tasks);
  state.truncated = data.truncated === true;
  state.failed = undefined;
}

/** Upcoming (due after the day) and what was finished on it, through the host's `tasks_search`. */
async function loadMore(): Promise<void> {
  const day = state.day;
  if (!day) return;
  // One after the other: a user's calls in flight are bounded (docs/limits.md), and the model may be calling too.
  const upcoming = await host.call('tasks_search', { status: 'open', dueAfter: addDays(day, 1), ...whose(), limit: 20 });
  const done = await host.call('tasks_search', { status: 'done', ...whose(), limit: 50 });
  if (upcoming.ok) state.upcoming = toTasks(upcoming.data.tasks);
  if (done.ok)
    state.doneToday = toTasks(done.data.tasks).filter((t) => t.completedAt && dayIn(new Date(t.completedAt), state.timeZone) === day);
  state.complete = true;
}

/** The saved views to pick from, read once through the host. */
async function loadViews(): Promise<void> {
  if (state.views) return;
  const out = await host.call('views_list', {});
  state.views = out.ok ? savedViewsOf(out.data) : [];
  render();
}

/** The picked view's tasks, read by the view through the host. */
async function loadView(): Promise<void> {
  if (!state.view) return;
  const out = await host.call('tasks_search', { view: state.view.viewId, limit: 20 });
  if (out.ok) state.viewTasks = toTasks(out.data.tasks);
  else state.notice = { kind: 'error', text: out.text || 'The view could not be read.' };
}

function openView(view: SavedView | undefined): void {
  state.view = view;
  state.viewTasks = [];
  render();
  void loadView().then(render);
}

async function reload(): Promise<void> {
  const { cursor: _c, ...args } = state.args;
  const out = await host.call('agenda_get', args);
  if (out.ok) absorb(out.data);
  else state.notice = { kind: 'error', text: out.text || 'The agenda could not be read.' };
  await loadMore();
  await loadView();
  render();
}

function notify(notice: Notice | undefined): void {
  state.notice = notice;
  render();
}

let form: HTMLElement | undefined;

const section = (id: string, title: string, tasks: readonly Task[], empty: string, extra?: Node | null) =>
  h(
    'section',
    { 'aria-labelledby': `h-${id}`, 'data-section': id },
    h('h2', { id: `h-${id}` }, title, h('span', { class: 'count' }, String(tasks.length))),
    tasks.length
      ? h(
          'ul',
          {},
          ...tasks.map((t) =>
            taskItem(t, { today: today(), locale: host.locale(), items, actions, hide: { assignee: !!whose().assignee } }),
          ),
        )
      : h('p', { class: 'empty' }, empty),
    extra ?? null,
  );

function render(): void {
  root.setAttribute('aria-busy', state.complete || state.failed ? 'false' : 'true');
  if (state.failed) {
    renderInto(root, h('p', { class: 'empty', role: 'alert' }, state.failed));
    return;
  }
  const day = state.day;
  if (!day) {
    renderInto(root, h('p', { class: 'empty' }, 'Loading the agenda…'));
    return;
  }
  const overdue = state.urgent.filter((t) => t.dueDate !== undefined && t.dueDate < day);
  const dueToday = state.urgent.filter((t) => t.dueDate === day);
  const c = state.counts;
  const summary = [
    `${c.open ?? overdue.length + dueToday.length} open`,
    `${c.overdue ?? overdue.length} overdue`,
    `${c.dueToday ?? dueToday.length} due today`,
    `${c.doneToday ?? state.doneToday.length} done today`,
    ...(state.unread ? [`${state.unread >= 100 ? '99+' : state.unread} unread in your inbox`] : []),
  ].join(' · ');
  const isToday = day === dayIn(new Date(), state.timeZone);
  form ??= addForm(day, (title, dueDate) => actions.create(title, { ...whose(), ...(dueDate ? { dueDate } : {}) }));
  renderInto(
    root,
    h(
      'header',
      {},
      h('h1', {}, isToday ? 'Today' : 'Agenda', h('span', { class: 'quiet' }, ` · ${shortDate(day, host.locale())}`)),
      h('span', { class: 'summary' }, summary),
      state.views?.length ? viewPicker(state.views, state.view?.viewId, openView) : null,
    ),
    noticeBar(state.notice, () => notify(undefined)),
    state.view ? section('view', state.view.name, state.viewTasks, 'Nothing matches this view.') : null,
    section('overdue', 'Overdue', overdue, 'Nothing overdue.'),
    section(
      'today',
      isToday ? 'Today' : shortDate(day, host.locale()),
      dueToday,
      'Nothing due.',
      state.truncated ? h('p', { class: 'quiet' }, 'More overdue and due tasks than shown here: ask for the rest.') : null,
    ),
    section('upcoming', 'Upcoming', state.upcoming, 'Nothing scheduled later.'),
    section('done', isToday ? 'Done today' : 'Done that day', state.doneToday, 'Nothing finished yet.'),
    form,
  );
}

render();
