import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Browser, Frame, Page } from 'puppeteer-core';
import { DEMO_PROJECTS } from '../../lambda/local/demo-seed.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { type AppsHost, startAppsHost, viewCspHeader } from '../helpers/apps-host.js';
import { launchBrowser, screenshot } from '../helpers/browser.js';
import { startTestServer, urlOf } from '../helpers/local.js';

/**
 * The MCP Apps views in headless Chromium, inside a web host of our own built as the spec asks
 * (test/helpers/apps-host.ts): the host page with the official AppBridge and the official
 * 2026-07-28 client on one origin, the sandbox proxy on another with the view's CSP as a header,
 * the view in its inner iframe. Every change the view makes goes through the host to the server
 * and is read back with a separate client; any console error or CSP violation fails the test.
 */
// The page callbacks below run in the browser (puppeteer sends their source); this Node file has no DOM types.
declare const window: any;
declare const document: any;
declare const getComputedStyle: any;

let server: LocalServer;
let harness: AppsHost;
let browser: Browser;
let other: Client;

const DESKTOP = { width: 1024, height: 900 };
const PHONE = { width: 390, height: 844 };

before(async () => {
  // One user drives every view here, faster than a person would: more calls a minute than the default 120.
  server = await startTestServer({ DOERS_AUTH_CACHE_SECONDS: '0', DOERS_RATE_LIMIT_CALLS: '600' });
  harness = await startAppsHost(urlOf(server), server.token);
  browser = await launchBrowser();
  other = new Client({ name: 'another-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await other.connect(
    new StreamableHTTPClientTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${server.token}` } } }),
  );
});
after(async () => {
  await other.close();
  await browser.close();
  await harness.close();
  await server.close();
});

/** What the other client reads, to check what the view did. */
const read = async (name: string, args: Record<string, unknown>): Promise<any> => {
  const result = await other.callTool({ name, arguments: args });
  assert.equal(result.isError, false, JSON.stringify(result.content));
  return result.structuredContent;
};

interface Opened {
  readonly page: Page;
  readonly view: Frame;
  /** Console errors (CSP violations among them) and uncaught errors of the host, the sandbox and the view. */
  readonly problems: string[];
  readonly shown: { uri: string; mimeType: string; csp: unknown; prefersBorder: boolean };
}

/** Opens the host page and shows one tool call's result in its view, as a host does after the model called it. */
const open = async (tool: string, args: Record<string, unknown>, opts: { theme?: 'light' | 'dark'; viewport?: typeof DESKTOP } = {}) => {
  const page = await browser.newPage();
  await page.setViewport(opts.viewport ?? DESKTOP);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(harness.url);
  const shown = (await page.evaluate(
    (t, a, theme) => window.harness.show({ tool: t, args: a, theme }),
    tool,
    args,
    opts.theme ?? 'light',
  )) as Opened['shown'];
  let view: Frame | undefined;
  for (let i = 0; i < 100 && !view; i++) {
    view = page.frames().find((f) => f.parentFrame()?.url().includes('/sandbox.html'));
    if (!view) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(view, 'the view is loaded in the sandbox');
  await view.waitForSelector('main[aria-busy="false"]');
  // The host sizes its frame from the view's size-changed notifications (debounced): wait until it has.
  for (let i = 0; i < 60; i++) {
    const wanted = await view.evaluate(() => document.documentElement.scrollHeight);
    const has = await page.$eval('#view-frame', (f) => (f as any).offsetHeight);
    if (Math.abs(wanted - has) <= 2) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { page, view, problems, shown } satisfies Opened;
};

const titlesIn = (view: Frame, selector: string): Promise<string[]> =>
  view.$$eval(`${selector} li .title`, (els) => els.map((e) => e.textContent ?? ''));

const taskIdsIn = (view: Frame, selector: string): Promise<string[]> =>
  view.$$eval(`${selector} li[data-task-id]`, (els) => els.map((e) => e.getAttribute('data-task-id')!));

/** Waits until the task's row is in the given section (or column) of the view. */
const waitForTaskIn = (view: Frame, section: string, taskId: string) =>
  view.waitForSelector(`${section} li[data-task-id="${taskId}"]`, { timeout: 10_000 });

/** How the view names a task to the model: its key where the server gives one, and its id. */
const ref = (t: { taskId: string; key?: string }) => t.key ?? t.taskId;

const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

describe('the views follow the host', () => {
  // First, so the screenshots show the demo data as seeded.
  test('light and dark, desktop and phone width (screenshots in docs/screenshots/views/)', async () => {
    const shots = [
      { tool: 'agenda_get', args: {}, theme: 'light', viewport: DESKTOP, file: 'agenda', panels: true },
      { tool: 'agenda_get', args: {}, theme: 'dark', viewport: DESKTOP, file: 'agenda-dark' },
      { tool: 'agenda_get', args: {}, theme: 'light', viewport: PHONE, file: 'agenda-phone' },
      { tool: 'agenda_get', args: {}, theme: 'dark', viewport: PHONE, file: 'agenda-phone-dark' },
      { tool: 'project_get', args: { projectId: DEMO_PROJECTS.website.projectId }, theme: 'dark', viewport: DESKTOP, file: 'board-dark' },
      { tool: 'project_get', args: { projectId: DEMO_PROJECTS.website.projectId }, theme: 'light', viewport: PHONE, file: 'board-phone' },
    ] as const;
    for (const shot of shots) {
      // Arrange / Act
      const { page, view, problems } = await open(shot.tool, shot.args, { theme: shot.theme, viewport: shot.viewport });
      try {
        if ('panels' in shot) {
          // One task's move controls and another's details open, as a user sees them.
          await view.click('[data-section=today] li:first-child [data-toggle=move]');
          await view.click('[data-section=overdue] li:nth-child(3) [data-toggle=details]');
          await view.waitForFunction(() => !document.querySelector('.details p.quiet'));
        }
        const look = await view.evaluate(() => ({
          theme: document.documentElement.dataset.theme,
          background: getComputedStyle(document.documentElement).backgroundColor,
          width: document.documentElement.clientWidth,
          flow: getComputedStyle(document.querySelector('.columns') ?? document.body).gridAutoFlow,
        }));
        await screenshot(page, `views/${shot.file}`);

        // Assert
        assert.equal(look.theme, shot.theme, shot.file);
        const [r, g, b] = look.background.match(/\d+/g)!.map(Number) as [number, number, number];
        const light = (r + g + b) / 3 > 128;
        assert.equal(light, shot.theme === 'light', `${shot.file} background ${look.background}`);
        assert.ok(look.width <= shot.viewport.width, `${shot.file} fits the width (${look.width}px)`);
        if (shot.tool === 'project_get') assert.equal(look.flow, shot.viewport === PHONE ? 'row' : 'column', `${shot.file} columns`);
        assert.deepEqual(problems, []);
      } finally {
        await page.close();
      }
    }
  });
});

describe('the views follow the host while open', () => {
  test('a theme change the host sends reaches the open view', async () => {
    // Arrange
    const { page, view, problems } = await open('agenda_get', {}, { theme: 'light' });
    try {
      // Act
      await page.evaluate(() => window.harness.setTheme('dark'));
      await view.waitForFunction(() => document.documentElement.dataset.theme === 'dark');

      // Assert
      const background = await view.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
      const [r, g, b] = background.match(/\d+/g)!.map(Number) as [number, number, number];
      assert.ok((r + g + b) / 3 < 128, `dark background, not ${background}`);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});

describe('the agenda view (ui://doers/agenda) in a web host', () => {
  test("renders the demo user's overdue, due-today, upcoming and done-today tasks from agenda_get, under the view's own CSP", async () => {
    // Arrange: what the server says, read by another client
    const agenda = await read('agenda_get', {});
    const day: string = agenda.day;
    const upcoming = await read('tasks_search', { status: 'open', dueAfter: addDays(day, 1), assignee: 'me', limit: 20 });
    const done = await read('tasks_search', { status: 'done', assignee: 'me', limit: 50 });

    // Act
    const { page, view, problems, shown } = await open('agenda_get', {});

    // Assert
    try {
      assert.deepEqual(shown, { uri: 'ui://doers/agenda', mimeType: 'text/html;profile=mcp-app', csp: {}, prefersBorder: true });
      assert.equal(harness.cspSent.at(-1), viewCspHeader({}));
      const titles = (tasks: { title: string }[]) => tasks.map((t) => t.title);
      assert.deepEqual(await titlesIn(view, '[data-section=overdue]'), titles(agenda.tasks.filter((t: any) => t.dueDate < day)));
      assert.deepEqual(await titlesIn(view, '[data-section=today]'), titles(agenda.tasks.filter((t: any) => t.dueDate === day)));
      assert.deepEqual(await titlesIn(view, '[data-section=upcoming]'), titles(upcoming.tasks));
      assert.deepEqual(
        await titlesIn(view, '[data-section=done]'),
        titles(done.tasks.filter((t: any) => t.completedAt.slice(0, 10) === day)),
      );
      assert.ok((await titlesIn(view, '[data-section=done]')).length > 0, 'the demo has a task done today');
      const summary = await view.$eval('header .summary', (e) => e.textContent);
      assert.equal(
        summary,
        `${agenda.counts.open} open · ${agenda.counts.overdue} overdue · ${agenda.counts.dueToday} due today · ${agenda.counts.doneToday} done today`,
      );
      // Every control has a name a screen reader says.
      const unnamed = await view.$$eval('button, input', (els) =>
        els
          .filter((el) => {
            const named = el.getAttribute('aria-label') || el.textContent?.trim();
            const labelled = el.id && document.querySelector(`label[for="${el.id}"]`);
            return !named && !labelled && !el.closest('label');
          })
          .map((el) => el.outerHTML),
      );
      assert.deepEqual(unnamed, []);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

  test('completing a task from the keyboard completes it on the server, moves it to done today and tells the model', async () => {
    // Arrange
    const { page, view, problems } = await open('agenda_get', {});
    try {
      const [taskId] = await taskIdsIn(view, '[data-section=today]');
      assert.ok(taskId);
      const before = await read('task_get', { taskId });

      // Act: Tab-reachable checkbox, Space to tick it
      await view.focus(`li[data-task-id="${taskId}"] input.check`);
      await page.keyboard.press('Space');
      await waitForTaskIn(view, '[data-section=done]', taskId);

      // Assert
      const after = await read('task_get', { taskId });
      assert.equal(after.status, 'Done');
      assert.equal(after.version, before.version + 1);
      const focused = await view.evaluate(() => document.activeElement?.dataset.focus);
      assert.equal(focused, `${taskId}:done`, 'the keyboard stays on the task it used');
      const told = (await page.evaluate(() => window.harness.modelContext())) as string[];
      assert.match(told.at(-1)!, new RegExp(`completed “${before.title}” \\[${ref(before)}\\], now version ${after.version}`));
      assert.match(await view.$eval('#notice', (e) => e.textContent ?? ''), /Done: /);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

  test('moving an overdue task to tomorrow moves it to upcoming and on the server', async () => {
    // Arrange
    const { page, view, problems } = await open('agenda_get', {});
    try {
      const [taskId] = await taskIdsIn(view, '[data-section=overdue]');
      assert.ok(taskId);
      const { day } = await read('agenda_get', {});

      // Act
      await view.click(`li[data-task-id="${taskId}"] [data-toggle=move]`);
      await view.click(`li[data-task-id="${taskId}"] [data-move=tomorrow]`);
      await waitForTaskIn(view, '[data-section=upcoming]', taskId);

      // Assert
      assert.equal((await read('task_get', { taskId })).dueDate, addDays(day, 1));
      assert.deepEqual(await taskIdsIn(view, `[data-section=overdue] li[data-task-id="${taskId}"]`), []);
      const told = (await page.evaluate(() => window.harness.modelContext())) as string[];
      assert.match(told.at(-1)!, new RegExp(`moved to ${addDays(day, 1)} .*\\[${ref(await read('task_get', { taskId }))}\\]`));
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

  test('a task changed by another client meanwhile: the move is refused, the other change is shown, the view reloads and the retry works', async () => {
    // Arrange: the view shows a task; then someone else renames it
    const { page, view, problems } = await open('agenda_get', {});
    try {
      const [taskId] = await taskIdsIn(view, '[data-section=today]');
      assert.ok(taskId);
      const shown = await read('task_get', { taskId });
      const renamed = await read('task_update', { taskId, version: shown.version, title: 'Renamed by another client' });
      const { day } = await read('agenda_get', {});
      const monday = (() => {
        const d = new Date(`${day}T00:00:00Z`).getUTCDay();
        return addDays(day, (8 - d) % 7 || 7);
      })();

      // Act: the view still holds the old version
      await view.click(`li[data-task-id="${taskId}"] [data-toggle=move]`);
      await view.click(`li[data-task-id="${taskId}"] [data-move=monday]`);
      await view.waitForFunction(
        (id, v) => document.querySelector(`li[data-task-id="${id}"]`)?.getAttribute('data-version') === String(v),
        {},
        taskId,
        renamed.version,
      );
      const notice = await view.$eval('#notice', (e) => ({ kind: e.className, text: e.textContent ?? '' }));
      const refused = await read('task_get', { taskId });
      await view.click(`li[data-task-id="${taskId}"] [data-move=monday]`);
      await waitForTaskIn(view, '[data-section=upcoming]', taskId);

      // Assert
      assert.match(notice.kind, /error/);
      assert.match(notice.text, /Someone else changed “.+” meanwhile \(now version \d+\): renamed “Renamed by another client”/);
      assert.equal(refused.dueDate, shown.dueDate, 'the stale change was not made');
      assert.equal(await view.$eval(`li[data-task-id="${taskId}"] .title`, (e) => e.textContent), 'Renamed by another client');
      const moved = await read('task_get', { taskId });
      assert.equal(moved.dueDate, monday);
      assert.equal(moved.title, 'Renamed by another client');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});

describe('what a task holds is shown, never run', () => {
  test('a task whose title is markup shows it as text', async () => {
    // Arrange
    const { day } = await read('agenda_get', {});
    const title = '<img src=x onerror="document.title=\'pwned\'"><b>bold</b>';
    const created = await read('task_create', { title, dueDate: day, assignee: 'me' });

    // Act
    const { page, view, problems } = await open('agenda_get', {});

    // Assert
    try {
      const row = `li[data-task-id="${created.taskId}"]`;
      assert.equal(await view.$eval(`${row} .title`, (e) => e.textContent), title);
      assert.equal(await view.$$eval(`${row} img, ${row} b`, (els) => els.length), 0);
      assert.notEqual(await view.evaluate(() => document.title), 'pwned');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});

describe('the board view (ui://doers/board) in a web host', () => {
  test("shows the project's open tasks in columns by due date, toggles to columns by assignee, and moves a task to a picked date", async () => {
    // Arrange
    const projectId = DEMO_PROJECTS.website.projectId;
    const expected = await read('tasks_search', { project: projectId, status: 'open', limit: 100 });
    const { page, view, problems } = await open('project_get', { projectId });
    try {
      const byDue = await view.$$eval('[data-column]', (cols) => cols.map((c) => c.getAttribute('data-column')));
      const dueIds = await taskIdsIn(view, '.columns');

      // Act: the toggle, from the keyboard
      await view.focus('input[name=grouping][value=assignee]');
      await page.keyboard.press('Space');
      await view.waitForSelector('.columns[data-grouping=assignee]');
      const columns = await view.$$eval('[data-column]', (cols) =>
        cols.map((c) => ({
          title: c.querySelector('h2')!.firstChild!.textContent,
          ids: [...c.querySelectorAll('li[data-task-id]')].map((li) => li.getAttribute('data-task-id')),
        })),
      );
      const target = expected.tasks.find((t: any) => t.dueDate)!;
      await view.click(`li[data-task-id="${target.taskId}"] [data-toggle=move]`);
      const picked = addDays(target.dueDate, 9);
      await view.$eval(`#date-${target.taskId}`, (el, v) => ((el as any).value = v), picked);
      await view.click(`li[data-task-id="${target.taskId}"] [data-move=pick]`);
      await view.waitForFunction(
        (id, v) => document.querySelector(`li[data-task-id="${id}"]`)?.getAttribute('data-version') === String(v),
        {},
        target.taskId,
        target.version + 1,
      );

      // Assert
      assert.equal(await view.$eval('h1', (e) => e.textContent), DEMO_PROJECTS.website.name);
      assert.deepEqual([...dueIds].sort(), expected.tasks.map((t: any) => t.taskId).sort());
      assert.ok(byDue.includes('today') && byDue.every((c) => ['overdue', 'today', 'week', 'later', 'none', 'done'].includes(c!)));
      const names = [...new Set(expected.tasks.map((t: any) => t.assigneeName ?? 'Unassigned'))] as string[];
      assert.deepEqual(
        columns.map((c) => c.title),
        names.sort((a, b) => (a === 'Unassigned' ? 1 : b === 'Unassigned' ? -1 : a.localeCompare(b))),
      );
      for (const c of columns)
        for (const id of c.ids) assert.equal(expected.tasks.find((t: any) => t.taskId === id).assigneeName ?? 'Unassigned', c.title);
      assert.equal((await read('task_get', { taskId: target.taskId })).dueDate, picked);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

  test("by status: the project's own statuses in its order, subtasks under their parent; a card moves by a status update, and a stale one shows the other change", async () => {
    // Arrange: the website project has its own statuses (the demo seed's), a parent with two subtasks
    const projectId = DEMO_PROJECTS.website.projectId;
    const { statuses } = await read('project_get', { projectId });
    const all = await read('tasks_search', { project: projectId, status: 'any', limit: 100 });
    const parent = all.tasks.find((t: any) => all.tasks.filter((c: any) => c.parent === t.key).length >= 2 && t.statusCategory !== 'done');
    const card = all.tasks.find((t: any) => t.status === 'In design');
    assert.ok(parent && card, 'the demo project has a parent with subtasks and a task in design');
    const { page, view, problems } = await open('project_get', { projectId });
    try {
      // Act: columns by status, from the keyboard
      await view.focus('input[name=grouping][value=status]');
      await page.keyboard.press('Space');
      await view.waitForSelector('.columns[data-grouping=status]');
      await view.waitForSelector(`li[data-task-id="${card.taskId}"] select[data-status]`);
      const titles = await view.$$eval('[data-column] h2', (hs) => hs.map((h) => h.firstChild!.textContent));
      const column = async (taskId: string) =>
        view.$eval(`li[data-task-id="${taskId}"]`, (li) => li.closest('[data-column]')!.querySelector('h2')!.firstChild!.textContent);
      const underParent = await view.$$eval(`li[data-depth="1"]`, (lis) => lis.map((li) => li.getAttribute('data-task-id')));
      const rollup = await view.$eval(`li[data-task-id="${parent.taskId}"] .rollup`, (e) => e.textContent);

      // Act: move the card to In QA
      await view.select(`li[data-task-id="${card.taskId}"] select[data-status]`, 'In QA');
      await view.waitForFunction(
        (id, v) => document.querySelector(`li[data-task-id="${id}"]`)?.getAttribute('data-version') === String(v),
        {},
        card.taskId,
        card.version + 1,
      );
      const movedTo = await column(card.taskId);

      // Act: another client moves it on; the board still shows the version before
      const other1 = await read('task_update', { taskId: card.taskId, version: card.version + 1, status: 'In progress' });
      await view.select(`li[data-task-id="${card.taskId}"] select[data-status]`, 'Done');
      await view.waitForFunction(
        (id, v) => document.querySelector(`li[data-task-id="${id}"]`)?.getAttribute('data-version') === String(v),
        {},
        card.taskId,
        other1.version,
      );
      const notice = await view.$eval('#notice', (e) => ({ kind: e.className, text: e.textContent ?? '' }));

      // Assert
      assert.deepEqual(
        titles.slice(0, statuses.length),
        statuses.map((s: any) => s.name),
      );
      assert.equal(await column(parent.taskId), parent.status);
      const childrenHere = all.tasks.filter((c: any) => c.parent === parent.key && c.status === parent.status).map((c: any) => c.taskId);
      for (const id of childrenHere) assert.ok(underParent.includes(id), 'a subtask in its parent column sits under it');
      const kids = all.tasks.filter((c: any) => c.parent === parent.key);
      assert.equal(rollup, `${kids.filter((c: any) => c.statusCategory === 'done').length} of ${kids.length} subtasks done`);
      assert.equal(movedTo, 'In QA');
      assert.match(notice.kind, /error/);
      assert.match(notice.text, /Someone else changed “.+” meanwhile \(now version \d+\): moved to In progress/);
      const now = await read('task_get', { taskId: card.taskId });
      assert.equal(now.status, 'In progress', 'the stale move was not made');
      assert.equal(await column(card.taskId), 'In progress');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

  test('a search filtered to one project shows every page of it on the board', async () => {
    // Arrange: a search the model paged at 2
    const projectId = DEMO_PROJECTS.acme.projectId;
    const all = await read('tasks_search', { project: projectId, limit: 100 });

    // Act
    const { page, view, problems } = await open('tasks_search', { project: projectId, limit: 2 });

    // Assert
    try {
      assert.ok(all.tasks.length > 2);
      assert.deepEqual((await taskIdsIn(view, '.columns')).sort(), all.tasks.map((t: any) => t.taskId).sort());
      assert.equal(await view.$eval('h1', (e) => e.textContent), DEMO_PROJECTS.acme.name);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});

describe('saved views in the views', () => {
  test("a saved view opens on the board under its name, in its grouping, with the view's tasks", async () => {
    // Arrange: the demo's shared view, as the model ran it
    const expected = await read('tasks_search', { view: 'Overdue for the team', limit: 100 });

    // Act
    const { page, view, problems } = await open('tasks_search', { view: 'Overdue for the team' });

    // Assert
    try {
      await view.waitForSelector('.view-picker select');
      assert.ok(expected.tasks.length > 0, 'the demo has overdue tasks');
      assert.equal(await view.$eval('h1', (e) => e.textContent), 'Overdue for the team');
      assert.equal(await view.$eval('.view-query', (e) => e.textContent), 'is:overdue sort:priority');
      assert.equal(await view.$eval('.columns', (e) => e.getAttribute('data-grouping')), 'assignee');
      assert.deepEqual((await taskIdsIn(view, '.columns')).sort(), expected.tasks.map((t: any) => t.taskId).sort());
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

  test('a query opens on the board, and by status it keeps to what the query names', async () => {
    const query = 'project:"Website relaunch" -p4';
    const expected = await read('tasks_search', { query, limit: 100 });
    const { page, view, problems } = await open('tasks_search', { query });

    try {
      assert.ok(expected.tasks.length > 0);
      assert.deepEqual((await taskIdsIn(view, '.columns')).sort(), expected.tasks.map((t: any) => t.taskId).sort());
      await view.click('input[name="grouping"][value="status"]');
      await view.waitForSelector('.columns[data-grouping="status"]');
      await view.waitForSelector('main[aria-busy="false"]');
      assert.deepEqual((await taskIdsIn(view, '.columns')).sort(), expected.tasks.map((t: any) => t.taskId).sort());
      assert.equal(await view.$('.notice.error'), null, 'no refusal shown');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });

  test('picking a saved view on a project board, and on the agenda, shows its tasks under its name', async () => {
    const expected = await read('tasks_search', { view: 'My week', limit: 100 });
    const board = await open('project_get', { projectId: DEMO_PROJECTS.acme.projectId });
    const agenda = await open('agenda_get', {});

    try {
      for (const { view } of [board, agenda]) {
        await view.waitForSelector('.view-picker select');
        const viewId = await view.$$eval('.view-picker option', (os) => os.find((o) => o.textContent === 'My week')!.getAttribute('value'));
        await view.select('.view-picker select', viewId!);
      }
      await board.view.waitForFunction(() => document.querySelector('h1')?.textContent === 'My week');
      await board.view.waitForSelector('main[aria-busy="false"]');
      await agenda.view.waitForSelector('section[data-section="view"] h2');

      assert.ok(expected.tasks.length > 0, 'the demo owner has tasks this week');
      assert.deepEqual((await taskIdsIn(board.view, '.columns')).sort(), expected.tasks.map((t: any) => t.taskId).sort());
      assert.equal(await board.view.$eval('.columns', (e) => e.getAttribute('data-grouping')), 'due');
      assert.match(await agenda.view.$eval('section[data-section="view"] h2', (e) => e.textContent ?? ''), /^My week/);
      assert.deepEqual(
        (await taskIdsIn(agenda.view, 'section[data-section="view"]')).sort(),
        expected.tasks
          .slice(0, 20)
          .map((t: any) => t.taskId)
          .sort(),
      );
      assert.deepEqual([...board.problems, ...agenda.problems], []);
    } finally {
      await board.page.close();
      await agenda.page.close();
    }
  });
});

describe('recurring tasks in the views', () => {
  test('ticking a recurring task shows its rule and next date, and Undo puts the occurrence back', async () => {
    // Arrange: a task due today that repeats every day, for the demo user
    const { day } = await read('agenda_get', {});
    const made = await read('task_create', { title: 'Water the office plants', dueDate: day, repeat: 'every day', assignee: 'me' });
    const { page, view, problems } = await open('agenda_get', {});
    try {
      await waitForTaskIn(view, '[data-section=today]', made.taskId);
      const rule = await view.$eval(`li[data-task-id="${made.taskId}"] .repeat`, (e) => e.textContent ?? '');

      // Act: tick it
      await view.click(`li[data-task-id="${made.taskId}"] input.check`);
      await waitForTaskIn(view, '[data-section=upcoming]', made.taskId);

      // Assert: still open, due tomorrow, the notice says which occurrence was done
      assert.equal(rule, '↻ every day');
      const after = await read('task_get', { taskId: made.taskId });
      assert.equal(after.status, 'Todo');
      assert.equal(after.dueDate, addDays(day, 1));
      assert.match(await view.$eval('#notice', (e) => e.textContent ?? ''), /^Done for .*: “Water the office plants”, next due /);
      const told = (await page.evaluate(() => window.harness.modelContext())) as string[];
      assert.match(told.at(-1)!, new RegExp(`completed the ${day} occurrence of “Water the office plants” \\[${ref(made)}\\]`));

      // Act: Undo
      await view.click('#notice button:not(.quiet-button)');
      await waitForTaskIn(view, '[data-section=today]', made.taskId);

      // Assert: the occurrence is back
      assert.equal((await read('task_get', { taskId: made.taskId })).dueDate, day);
      assert.match(await view.$eval('#notice', (e) => e.textContent ?? ''), /^Undone: /);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});

describe('subtasks in the views', () => {
  test("a subtask's line names its parent, and the parent's details show how many of its subtasks are done", async () => {
    // Arrange: a parent due today with two subtasks, one done
    const { day } = await read('agenda_get', {});
    const parent = await read('task_create', { title: 'Prepare the quarterly review', dueDate: day, assignee: 'me' });
    const first = await read('task_create', { title: 'Collect the numbers', dueDate: day, assignee: 'me', parent: parent.key });
    const second = await read('task_create', { title: 'Draft the slides', parent: parent.key });
    await read('task_complete', { taskId: second.key });
    const { page, view, problems } = await open('agenda_get', {});
    try {
      await waitForTaskIn(view, '[data-section=today]', first.taskId);

      // Act: open the parent's details
      await view.click(`li[data-task-id="${parent.taskId}"] [data-toggle=details]`);
      await view.waitForFunction(
        (id: string) => document.querySelector(`#details-${id} dl`)?.textContent?.includes('of 2 done'),
        { timeout: 10_000 },
        parent.taskId,
      );

      // Assert
      assert.equal(await view.$eval(`li[data-task-id="${first.taskId}"] .parent`, (e) => e.textContent), `sub of ${ref(parent)}`);
      assert.match(await view.$eval(`#details-${parent.taskId} dl`, (e) => e.textContent ?? ''), /Subtasks1 of 2 done/);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});

describe('attachments in the views', () => {
  test("a task's paperclip counts its files; its details show an attached image read through the host, and attach a picked file", async () => {
    // Arrange: a task due today with a PNG, attached by another client
    const { day } = await read('agenda_get', {});
    const t = await read('task_create', { title: 'Fix the header on mobile', dueDate: day, assignee: 'me' });
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const shot = await read('attachment_add', { taskId: t.key, name: 'header.png', content: png.toString('base64') });
    const picked = join(tmpdir(), `doers-attach-${process.pid}.txt`);
    await writeFile(picked, 'Steps to reproduce: open on a phone.');
    const { page, view, problems } = await open('agenda_get', {});
    try {
      await waitForTaskIn(view, '[data-section=today]', t.taskId);
      const clip = await view.$eval(`li[data-task-id="${t.taskId}"] .files-count`, (e) => e.textContent);

      // Act: the details, then a file picked into the Attach control
      await view.click(`li[data-task-id="${t.taskId}"] [data-toggle=details]`);
      await view.waitForSelector(`li[data-attachment-id="${shot.attachmentId}"] img.file-image`, { timeout: 10_000 });
      const src = await view.$eval(`li[data-attachment-id="${shot.attachmentId}"] img`, (e) => (e as any).getAttribute('src'));
      const input = await view.$(`#attach-${t.taskId}`);
      await (input as any).uploadFile(picked);
      await view.waitForFunction(
        (id: string) => document.querySelectorAll(`#details-${id} li[data-attachment-id]`).length === 2,
        { timeout: 10_000 },
        t.taskId,
      );
      const notice = await view.$eval('#notice', (e) => e.textContent ?? '');

      // Assert
      assert.equal(clip, '📎 1');
      assert.equal(src, `data:image/png;base64,${png.toString('base64')}`, 'the bytes as read with resources/read, no URL of a bucket');
      assert.match(notice, /Attached doers-attach-\d+\.txt to “Fix the header on mobile”/);
      const now = await read('task_get', { taskId: t.key });
      assert.deepEqual(
        now.files.map((f: { name: string; type: string }) => [f.name, f.type]),
        [
          ['header.png', 'image/png'],
          [`doers-attach-${process.pid}.txt`, 'text/plain'],
        ],
      );
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
      await rm(picked, { force: true });
    }
  });
});

describe("the board's rollup in a web host", () => {
  test('a subtask in a canceled status of another name is not counted done, as task_get counts it', async () => {
    // Arrange: a project whose canceled status is "Dropped", a parent with one subtask shipped, one dropped, one ready
    const project = await read('project_create', {
      name: 'Rollup by category',
      statuses: [
        { name: 'Ready', category: 'unstarted' },
        { name: 'Shipped', category: 'done' },
        { name: 'Dropped', category: 'canceled' },
      ],
    });
    const { projectId } = project;
    const parent = await read('task_create', { title: 'Launch the newsletter', projectId });
    for (const [title, status] of [
      ['Write the first issue', 'Shipped'],
      ['Buy a mailing service', 'Dropped'],
      ['Design the header', 'Ready'],
    ] as const)
      await read('task_create', { title, projectId, parent: parent.key, status });
    const got = await read('task_get', { taskId: parent.key });
    const { page, view, problems } = await open('project_get', { projectId });
    try {
      // Act: columns by status, where the rollup shows
      await view.focus('input[name=grouping][value=status]');
      await page.keyboard.press('Space');
      // By status the board reads the closed tasks too: wait until it holds all three subtasks.
      await view.waitForFunction(
        (id: string) => / of 3 subtasks/.test(document.querySelector(`li[data-task-id="${id}"] .rollup`)?.textContent ?? ''),
        { timeout: 10_000 },
        parent.taskId,
      );
      const rollup = await view.$eval(`li[data-task-id="${parent.taskId}"] .rollup`, (e) => e.textContent);

      // Assert
      assert.equal(got.subtasks.filter((s: any) => s.statusCategory === 'done').length, 1, "task_get's count");
      assert.equal(rollup, '1 of 3 subtasks done');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});

describe('custom fields on the board', () => {
  test("a project's select field groups the board: its options in order, then the tasks without one; a multi-select's task is in each of its columns", async () => {
    // Arrange: a project with a select and a multi-select field, a task of each type and one without
    const { projectId } = await read('project_create', {
      name: 'Grouped by type',
      fields: [
        { name: 'Type', type: 'select', options: ['Bug', 'Story'] },
        { name: 'Area', type: 'multi-select', options: ['Web', 'API'] },
      ],
    });
    const bug = await read('task_create', { title: 'Fix the login', projectId, fields: { Type: 'Bug', Area: ['Web', 'API'] } });
    const story = await read('task_create', { title: 'Onboarding tour', projectId, fields: { Type: 'Story' } });
    const plain = await read('task_create', { title: 'Tidy the backlog', projectId });
    const { page, view, problems } = await open('project_get', { projectId });
    const columns = () =>
      view.$$eval('[data-column]', (cols) =>
        cols.map((c) => [
          c.querySelector('h2')!.firstChild!.textContent,
          [...c.querySelectorAll('li')].map((li) => li.dataset.taskId).sort(),
        ]),
      );
    try {
      // Act: columns by Type, then by Area
      await view.click('input[name=grouping][value="field:Type"]');
      await view.waitForSelector('.columns[data-field="Type"]');
      const byType = await columns();
      await view.click('input[name=grouping][value="field:Area"]');
      await view.waitForSelector('.columns[data-field="Area"]');
      const byArea = await columns();
      const ids = await view.$$eval('[id]', (els) => els.map((e) => e.id));

      // Assert
      assert.deepEqual(byType, [
        ['Bug', [bug.taskId]],
        ['Story', [story.taskId]],
        ['No Type', [plain.taskId]],
      ]);
      assert.deepEqual(byArea, [
        ['Web', [bug.taskId]],
        ['API', [bug.taskId]],
        ['No Area', [story.taskId, plain.taskId].sort()],
      ]);
      assert.equal(new Set(ids).size, ids.length, 'a card shown twice has ids of its own');
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
});
