import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { admin } from '../helpers/admin-cli.js';
import { caller, createTestWorkspace, startWorkspaceServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// `npm run admin -- import` of the CSV exports of Todoist, Asana, Linear and Jira (fixtures in
// test/fixtures/import/, written from each tool's documented columns) into a local stack: what a
// dry run says, what the tools then show, a re-run, and undoing an import.

const FIXTURES = new URL('../fixtures/import/', import.meta.url).pathname;

let dataDir: string;
let server: LocalServer;
let ws: TestWorkspace;
const cli = (...args: string[]) => admin(dataDir, ...args);
const tasksTitled = async (text: string) =>
  (await caller(server, ws.owner.token)('tasks_search', { text, status: 'any', limit: 100 })).structuredContent.tasks;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'doers-import-'));
  // No principal cache: projects the CLI makes show by name on the very next call.
  server = await startWorkspaceServer({ DOERS_DATA_DIR: dataDir, DOERS_AUTH_CACHE_SECONDS: '0' });
  ws = await createTestWorkspace(server, { timeZone: 'Europe/Berlin' });
  // The people the fixtures name: Grace is a member (by e-mail and by name), Alan and "Nobody Known" are not.
  await writesOf(server.app.services).directory.createMember({
    workspaceId: ws.workspaceId,
    userId: 'usr_grace',
    email: 'grace@example.test',
    name: 'Grace Hopper',
    role: 'member',
    timeZone: 'UTC',
    status: 'active',
    createdAt: new Date().toISOString(),
  });
});
after(async () => {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('importing another tool’s CSV export', { timeout: 120_000 }, () => {
  test('a dry run says what each row would become and what does not map, and writes nothing', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'todoist.csv'), '--workspace', ws.workspaceId, '--dry-run');

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /line 2: skipped: section 'Kitchen': doers has no sections/);
    assert.match(out.stdout, /line 3: would create 'Buy the paint' \(P2, due 2031-06-01, @usr_grace, #home #diy, 1 comment\(s\)\)/);
    assert.match(out.stdout, /line 5: would create 'Water the plants' \(P3, every Monday\)/);
    assert.match(out.stdout, /line 6: would create 'Sand the skirting' \(P4, subtask of 'Water the plants'\)/, 'INDENT 2: the task above');
    assert.match(out.stdout, /line 6: {3}assignee 'Nobody Known' is no member of the workspace; imported unassigned/);
    assert.match(out.stdout, /line 6: {3}due 'sometime soon' is not a date or rule this reads; imported without it/);
    assert.match(out.stdout, /line 7: skipped: a task with no CONTENT/);
    assert.match(out.stdout, /line 8: would create 'Call the landlord' \(P1\)/, 'an empty PRIORITY is p1, as Todoist reads it');
    assert.match(out.stderr, /Dry run: 4 task\(s\) would be created, 0 imported before, 2 row\(s\) skipped\. Nothing was written\./);
    assert.deepEqual(await tasksTitled('paint'), []);
  });

  test('Todoist: the tasks, labels, assignee, rule and comment arrive through the writer, and a re-run creates nothing twice', async () => {
    const first = await cli('import', '--file', join(FIXTURES, 'todoist.csv'), '--workspace', ws.workspaceId);
    const again = await cli('import', '--file', join(FIXTURES, 'todoist.csv'), '--workspace', ws.workspaceId);
    const [paint] = await tasksTitled('paint');
    const [plants] = await tasksTitled('plants');
    const comments = await caller(server, ws.owner.token)('comments_list', { taskId: paint.key });
    const history = await caller(server, ws.owner.token)('activity_list', { task: paint.key });

    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /^Imported 4 task\(s\) from .*todoist\.csv \(todoist\); 0 imported before, 2 row\(s\) skipped\./);
    assert.match(first.stdout, /: undo with change_undo act_[0-9a-z]{16}\n/);
    assert.deepEqual(
      [paint.title, paint.priority, paint.dueDate, paint.assigneeId, paint.labels],
      ['Buy the paint', 'P2', '2031-06-01', 'usr_grace', ['home', 'diy']],
    );
    assert.equal(plants.repeat, 'every Monday');
    assert.deepEqual(
      comments.structuredContent.comments.map((c: { body: string }) => c.body),
      ['Ask for the eggshell finish'],
    );
    assert.equal(history.structuredContent.entries.at(-1).tool, 'admin CLI: import from todoist');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`line 3: imported before as ${paint.key}; not again`));
    assert.match(again.stderr, /^Imported 0 task\(s\)/);
    assert.equal((await tasksTitled('paint')).length, 1);
  });

  test('Todoist rows without ids are known by what they say: a file with rows added and moved imports only the new one', async () => {
    const moved = join(dataDir, 'todoist-moved.csv');
    await writeFile(
      moved,
      [
        'TYPE,CONTENT,DESCRIPTION,PRIORITY,INDENT,AUTHOR,RESPONSIBLE,DATE,DATE_LANG,TIMEZONE',
        'task,Fix the gate,,2,1,Ada (100),,,en,',
        'task,Call the landlord,,,1,Ada (100),,,en,',
        'task,Buy the paint @home @diy,Two litres of white,2,1,Ada (100),Grace Hopper (200),2031-06-01,en,Europe/Berlin',
      ].join('\n'),
    );

    const out = await cli('import', '--file', moved, '--workspace', ws.workspaceId);

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /^Imported 1 task\(s\) .* 2 imported before/);
    assert.equal((await tasksTitled('landlord')).length, 1);
    assert.equal((await tasksTitled('gate')).length, 1);
    assert.match(out.stdout, /columns not imported \(doers keeps nothing of them\): AUTHOR, TIMEZONE/);
  });

  test('one id on two rows is imported once and the second row said', async () => {
    const twice = join(dataDir, 'asana-twice.csv');
    await writeFile(twice, 'Task ID,Name\n9001,Print the flyers\n9001,Print the flyers again\n');

    const out = await cli('import', '--file', twice, '--workspace', ws.workspaceId);

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /line 3: skipped: the same id as line 2; imported once/);
    assert.equal((await tasksTitled('flyers')).length, 1);
  });

  test('Asana: e-mail assignees, tags, projects made on the way, completions kept with their time', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'asana.csv'), '--workspace', ws.workspaceId);
    const [brochure] = await tasksTitled('brochure');
    const [photographer] = await tasksTitled('photographer');
    const [cover] = await tasksTitled('cover photo');

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /project 'Spring campaign': created/);
    assert.deepEqual(
      [brochure.assigneeId, brochure.labels, brochure.projectName, brochure.dueDate],
      ['usr_grace', ['print', 'q3-launch'], 'Spring campaign', '2031-07-15'],
    );
    assert.deepEqual([photographer.status, photographer.completedAt], ['Done', '2026-11-20T00:00:00.000Z']);
    assert.equal(cover.assigneeId, undefined);
    assert.equal(cover.parent, brochure.key, 'Parent task names the parent by its title');
    assert.match(out.stdout, /line 4 \(\w+-\d+\): assignee 'alan@example.test' is no member of the workspace; imported unassigned/);
  });

  test('Linear: priorities by name, multi-line descriptions, done and canceled issues, an unreadable due date said', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'linear.csv'), '--workspace', ws.workspaceId);
    const [login] = await tasksTitled('login redirect');
    const [cookie] = await tasksTitled('legacy cookie');
    const [rust] = await tasksTitled('rewrite rust');

    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(
      [login.priority, login.assigneeId, login.labels, login.projectName],
      ['P1', 'usr_grace', ['bug', 'auth'], 'Auth revamp'],
    );
    const full = await caller(server, ws.owner.token)('task_get', { taskId: login.key });
    assert.equal(full.structuredContent.notes, 'Users land on /home\ninstead of the page they asked for');
    assert.deepEqual([cookie.status, cookie.completedAt, cookie.priority], ['Done', '2026-11-05T12:30:00.000Z', 'P4']);
    assert.equal(cookie.parent, login.key, 'Parent issue names the parent by its ID');
    assert.deepEqual([rust.status, rust.completedAt], ['Canceled', '2026-11-06T08:00:00.000Z'], 'a canceled issue is canceled here');
    assert.equal(login.status, 'In progress', "Linear's workflow state maps to the status of that name");
    assert.match(out.stdout, /Priority 'Someday' is not one this reads; P4 given/);
    assert.match(out.stdout, /due 'not a date' is not a date or rule this reads; imported without it/);
  });

  test('Jira: its date format, repeated Labels columns, Done by status; the import is undone by its call id', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'jira.csv'), '--workspace', ws.workspaceId);
    const [ssl] = await tasksTitled('ssl certificate');
    const [backups] = await tasksTitled('rotate backups');
    const callId = /undo with change_undo (act_[0-9a-z]{16})/.exec(out.stdout)?.[1];

    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual([ssl.priority, ssl.dueDate, ssl.labels, ssl.assigneeId], ['P1', '2031-12-24', ['security', 'infra'], 'usr_grace']);
    assert.deepEqual([backups.status, backups.completedAt], ['Done', '2026-11-03T16:30:00.000Z']);
    assert.equal(backups.parent, ssl.key, 'Parent names the parent by its issue key');
    assert.ok(callId);

    const undone = await caller(server, ws.owner.token)('change_undo', { activityId: callId });

    assert.equal(undone.isError, false, toolText(undone));
    assert.deepEqual(await tasksTitled('ssl certificate'), []);
    assert.deepEqual(await tasksTitled('rotate backups'), []);
  });

  test('a file that is none of the four, an unknown --format, or a missing file is refused naming the cause', async () => {
    const other = join(dataDir, 'other.csv');
    await writeFile(other, 'When,What\n2026-12-01,Something\n');

    const unknown = await cli('import', '--file', other, '--workspace', ws.workspaceId);
    const badFormat = await cli('import', '--file', other, '--format', 'trello', '--workspace', ws.workspaceId);
    const missing = await cli('import', '--file', join(dataDir, 'nope.csv'), '--workspace', ws.workspaceId);

    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /its columns \(When, What…\) are none of Todoist's, Asana's, Linear's or Jira's export; give --format/);
    assert.match(badFormat.stderr, /--format: 'trello' is none of todoist, asana, linear, jira/);
    assert.match(missing.stderr, /--file: ENOENT/);
  });
});
