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
  test('a dry run lists every column and what it becomes, says what each row would become, and writes nothing', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'todoist.csv'), '--workspace', ws.workspaceId, '--dry-run');

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^columns of the file and what each becomes:\n {2}TYPE: task, or a note/);
    assert.match(out.stdout, /\n {2}AUTHOR: a note’s comment author \(a member by name, else the operator\)\n/);
    assert.match(out.stdout, /\n {2}TIMEZONE: ignored: dates are read in the first owner’s time zone\n/);
    assert.match(out.stdout, /\n {2}DURATION: ignored: doers has no duration\n/);
    assert.equal(out.stdout.match(/^ {2}\S/gm)?.length, 12, 'each of the 12 columns once');
    assert.match(out.stdout, /line 2: skipped: section 'Kitchen': doers has no sections/);
    assert.match(out.stdout, /project 'todoist': would be created/, "Todoist's project is the file's name");
    assert.match(
      out.stdout,
      /line 3: would create 'Buy the paint' \(P2, due 2031-06-01, @usr_grace, project 'todoist', #home #diy, 2 comment\(s\)\)/,
    );
    assert.match(out.stdout, /line 6: would create 'Water the plants' \(P3, every Monday, project 'todoist'\)/);
    assert.match(
      out.stdout,
      /line 7: would create 'Sand the skirting' \(P4, project 'todoist', subtask of 'Water the plants'\)/,
      'INDENT 2: the task above',
    );
    assert.match(out.stdout, /line 7: {3}assignee 'Nobody Known' is no member of the workspace; imported unassigned/);
    assert.match(out.stdout, /line 7: {3}due 'sometime soon' is not a date or rule this reads; imported without it/);
    assert.match(out.stdout, /line 8: skipped: a task with no CONTENT/);
    assert.match(
      out.stdout,
      /line 9: would create 'Call the landlord' \(P1, project 'todoist'\)/,
      'an empty PRIORITY is p1, as Todoist reads it',
    );
    assert.match(out.stdout, /line 10: would create 'Before the move' \(P4, project 'todoist', #uncompletable\)/);
    assert.match(out.stderr, /Dry run: 5 task\(s\) would be created, 0 imported before, 2 row\(s\) skipped\. Nothing was written\./);
    assert.deepEqual(await tasksTitled('paint'), []);
  });

  test('a dry run lists the field each column becomes, the fields each project would get, and each row’s values', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'jira.csv'), '--workspace', ws.workspaceId, '--dry-run');

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /\n {2}Issue Type: field: custom field Type \(select: Task, Bug\)\n/);
    assert.match(out.stdout, /\n {2}Custom field \(Story Points\): field: custom field Story points \(number\)\n/);
    assert.match(out.stdout, /\n {2}Custom field \(Start date\): field: custom field Start date \(date\)\n/);
    assert.match(out.stdout, /\n {2}Sprint: field: custom field Sprint \(text\)\n/);
    assert.match(out.stdout, /\n {2}Attachment: kept: a line of the notes/);
    assert.match(
      out.stdout,
      /\nproject 'Operations': would add the fields Type \(select: Task, Bug\), Story points \(number\), Sprint \(text\), Start date \(date\)\n/,
    );
    assert.match(
      out.stdout,
      /line 11: would create 'Load balancer drops TLS 1\.2 clients' \(P2, project 'Operations', in progress, waits on 1, fields: Type 'Bug', Story points 3, Sprint 'OPS Sprint 13', Start date '2026-11-03'\)/,
    );
    assert.deepEqual(await tasksTitled('load balancer'), []);
  });

  test('Todoist: tasks, labels, assignee, rule, comments by their authors and a file as a link, into --project; a re-run creates nothing twice', async () => {
    const first = await cli('import', '--file', join(FIXTURES, 'todoist.csv'), '--workspace', ws.workspaceId, '--project', 'Home');
    const again = await cli('import', '--file', join(FIXTURES, 'todoist.csv'), '--workspace', ws.workspaceId, '--project', 'Home');
    const [paint] = await tasksTitled('paint');
    const [plants] = await tasksTitled('plants');
    const [move] = await tasksTitled('before the move');
    const comments = await caller(server, ws.owner.token)('comments_list', { taskId: paint.key });
    const history = await caller(server, ws.owner.token)('activity_list', { task: paint.key });

    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stderr,
      /^Imported 5 task\(s\) from .*todoist\.csv \(todoist\); 0 imported before, 2 row\(s\) skipped\. 1 comment\(s\) whose author is no member here were added by the operator/,
    );
    assert.match(first.stdout, /: undo with change_undo act_[0-9a-z]{16}\n/);
    assert.match(first.stdout, /project 'Home': created/);
    assert.match(first.stdout, /line 3 \(\w+-\d+\): a comment by 'Ada', no member here: added by the operator/);
    assert.deepEqual(
      [paint.title, paint.priority, paint.dueDate, paint.assigneeId, paint.labels, paint.projectName],
      ['Buy the paint', 'P2', '2031-06-01', 'usr_grace', ['home', 'diy'], 'Home'],
    );
    assert.deepEqual([move.title, move.labels], ['Before the move', ['uncompletable']], "'* ' first: uncompletable, without the '* '");
    assert.equal(plants.repeat, 'every Monday');
    assert.deepEqual(
      comments.structuredContent.comments.map((c: { body: string; authorId: string }) => [c.body, c.authorId]),
      [
        ['Ask for the eggshell finish', 'usr_grace'],
        ['[colour chart.pdf](https://files.todoist.com/Xk2Lp/colour%20chart.pdf)', 'operator'],
      ],
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
        'TYPE,CONTENT,DESCRIPTION,PRIORITY,INDENT,AUTHOR,RESPONSIBLE,DATE,DATE_LANG,TIMEZONE,DURATION,DURATION_UNIT',
        'task,Fix the gate,,2,1,Ada (100),,,en,,,',
        'task,Call the landlord,,,1,Ada (100),,,en,,,',
        'task,Buy the paint @home @diy,Two litres of white,2,1,Ada (100),Grace Hopper (200),2031-06-01,en,Europe/Berlin,,',
      ].join('\n'),
    );

    const out = await cli('import', '--file', moved, '--workspace', ws.workspaceId, '--project', 'Home');

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /^Imported 1 task\(s\) .* 2 imported before/);
    assert.equal((await tasksTitled('landlord')).length, 1);
    assert.equal((await tasksTitled('gate')).length, 1);
    assert.match(out.stdout, /columns not imported \(doers keeps nothing of them\): TIMEZONE, DURATION, DURATION_UNIT/);
  });

  test('one id on two rows is imported once and the second row said', async () => {
    const twice = join(dataDir, 'asana-twice.csv');
    await writeFile(twice, 'Task ID,Name\n9001,Print the flyers\n9001,Print the flyers again\n');

    const out = await cli('import', '--file', twice, '--workspace', ws.workspaceId);

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /line 3: skipped: the same id as line 2; imported once/);
    assert.equal((await tasksTitled('flyers')).length, 1);
  });

  test('Asana: the project made with its sections as statuses and its custom field columns as fields, dependencies as links', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'asana.csv'), '--workspace', ws.workspaceId);
    const call = caller(server, ws.owner.token);
    const [brochure] = await tasksTitled('draft the brochure');
    const [photographer] = await tasksTitled('photographer');
    const [cover] = await tasksTitled('cover photo');
    const [print] = await tasksTitled('send the brochure');
    const project = await call('project_get', { projectId: brochure.projectId });
    const drafted = (await call('task_get', { taskId: brochure.key })).structuredContent;
    const printed = (await call('task_get', { taskId: print.key })).structuredContent;

    assert.equal(out.code, 0, out.stderr);
    assert.match(
      out.stdout,
      /project 'Spring campaign': created with the statuses Design \(unstarted\), Done \(done\), In progress \(started\)/,
    );
    assert.deepEqual(
      project.structuredContent.statuses.map((x: { name: string; category: string }) => `${x.name}:${x.category}`),
      ['Design:unstarted', 'Done:done', 'In progress:started'],
    );
    assert.deepEqual(
      [brochure.assigneeId, brochure.labels, brochure.projectName, brochure.dueDate, brochure.status],
      ['usr_grace', ['print', 'q3-launch'], 'Spring campaign', '2031-07-15', 'Design'],
    );
    assert.deepEqual(project.structuredContent.project.fields, [
      { name: 'Start date', type: 'date' },
      // Named like a field every task has (the query language's priority:): kept apart by its name.
      { name: 'Priority (custom)', type: 'select', options: ['High', 'Low'] },
      { name: 'Estimated time', type: 'number' },
    ]);
    assert.match(
      out.stdout,
      /project 'Spring campaign': added the fields Start date \(date\), Priority \(custom\) \(select: High, Low\), Estimated time \(number\)\n/,
    );
    assert.equal(drafted.notes, 'First draft by Friday', 'no lines kept: every value is a field');
    assert.deepEqual(drafted.fields, { 'Start date': '2031-07-01', 'Priority (custom)': 'High', 'Estimated time': 8 });
    assert.deepEqual(printed.fields, { 'Priority (custom)': 'Low', 'Estimated time': 2 });
    assert.deepEqual([photographer.status, photographer.completedAt], ['Done', '2026-11-20T00:00:00.000Z']);
    assert.equal(print.status, 'In progress', 'the section In progress is a started status');
    assert.deepEqual(
      printed.blockedBy.map((b: { key: string }) => b.key).sort(),
      [brochure.key, photographer.key].sort(),
      'Blocked By (Dependencies) and the other side of Blocking (Dependencies)',
    );
    assert.equal(cover.assigneeId, undefined);
    assert.equal(cover.parent, brochure.key, 'Parent task names the parent by its title');
    assert.match(out.stdout, /line 4 \(\w+-\d+\): assignee 'alan@example.test' is no member of the workspace; imported unassigned/);
  });

  test('Linear: priorities, estimate and cycle as fields (a stray word kept in the notes), the team as the project, blocked-by links, a formula-escaped title', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'linear.csv'), '--workspace', ws.workspaceId);
    const call = caller(server, ws.owner.token);
    const [login] = await tasksTitled('login redirect');
    const [cookie] = await tasksTitled('legacy cookie');
    const [rust] = await tasksTitled('rewrite rust');
    const [editor] = await tasksTitled('editor');

    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(
      [login.priority, login.assigneeId, login.labels, login.projectName],
      ['P1', 'usr_grace', ['bug', 'auth'], 'Auth revamp'],
    );
    const full = await call('task_get', { taskId: login.key });
    assert.equal(
      full.structuredContent.notes,
      'Users land on /home\ninstead of the page they asked for\n\nKept from Linear:\n- Related to: ENG-3',
    );
    assert.deepEqual(full.structuredContent.fields, {
      Estimate: 2,
      Cycle: 'Sprint 7 (7) 2026-11-02 – 2026-11-16',
      'Project milestone': 'Beta',
    });
    assert.deepEqual(rust.fields, { Estimate: 8 }, 'the team’s project has the field too');
    assert.deepEqual([cookie.status, cookie.completedAt, cookie.priority], ['Done', '2026-11-05T12:30:00.000Z', 'P4']);
    assert.equal(cookie.parent, login.key, 'Parent issue names the parent by its ID');
    assert.deepEqual([rust.status, rust.completedAt, rust.projectName], ['Canceled', '2026-11-06T08:00:00.000Z', 'Engineering']);
    assert.equal(editor.title, '=1+1 shows as 2 in the editor', "Linear's ' before a formula-like text is not the title's");
    const edited = (await call('task_get', { taskId: editor.key })).structuredContent;
    assert.deepEqual(edited.blockedBy.map((b: { key: string }) => b.key).sort(), [login.key, cookie.key].sort());
    assert.equal(edited.fields, undefined);
    assert.equal(edited.notes, 'Kept from Linear:\n- Estimate: XL', 'a word in a number column: a line of the notes');
    assert.match(
      out.stdout,
      new RegExp(`line 6 \\(${editor.key}\\): Estimate 'XL': the field Estimate \\(number\\) does not take it; kept in the notes`),
    );
    assert.equal(login.status, 'In progress', "Linear's workflow state maps to the status of that name");
    assert.match(out.stdout, /Priority 'Someday' is not one this reads; P4 given/);
    assert.match(out.stdout, /due 'not a date' is not a date or rule this reads; imported without it/);
  });

  test('Jira: wiki markup as Markdown, issue type, story points, sprints and custom fields as fields, both link directions, comments by their authors; undone by its call id', async () => {
    const out = await cli('import', '--file', join(FIXTURES, 'jira.csv'), '--workspace', ws.workspaceId);
    const call = caller(server, ws.owner.token);
    const [ssl] = await tasksTitled('ssl certificate');
    const [backups] = await tasksTitled('rotate backups');
    const [tls] = await tasksTitled('load balancer');
    const callId = /undo with change_undo (act_[0-9a-z]{16})/.exec(out.stdout)?.[1];
    const full = (await call('task_get', { taskId: ssl.key })).structuredContent;
    const comments = (await call('comments_list', { taskId: ssl.key })).structuredContent.comments;
    const project = (await call('project_get', { projectId: ssl.projectId })).structuredContent.project;
    const bugs = (await call('tasks_search', { query: 'type:bug' })).structuredContent.tasks;

    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual([ssl.priority, ssl.dueDate, ssl.labels, ssl.assigneeId], ['P1', '2031-12-24', ['security', 'infra'], 'usr_grace']);
    assert.deepEqual(tls.labels, [], 'the issue type is the Type field, no label');
    assert.deepEqual(project.fields, [
      { name: 'Type', type: 'select', options: ['Task', 'Bug'] },
      { name: 'Story points', type: 'number' },
      { name: 'Sprint', type: 'text' },
      { name: 'Start date', type: 'date' },
    ]);
    assert.deepEqual(full.fields, {
      Type: 'Task',
      'Story points': 5,
      Sprint: 'OPS Sprint 12, OPS Sprint 13',
      'Start date': '2026-11-02',
    });
    assert.deepEqual(tls.fields, { Type: 'Bug', 'Story points': 3, Sprint: 'OPS Sprint 13', 'Start date': '2026-11-03' });
    assert.deepEqual(backups.fields, { Type: 'Task' });
    assert.deepEqual(
      bugs.map((t: { key: string }) => t.key),
      [tls.key],
      'type:bug finds the bugs',
    );
    assert.equal(
      full.notes,
      [
        '## Steps',
        '1. Order the certificate from **the usual CA**',
        '1. Install it on `lb-1`',
        '- check the _expiry_ date',
        'See [the runbook](https://wiki.example.test/ops/ssl) and ![cert-chain.png](https://acme.atlassian.net/secure/attachment/10042/cert-chain.png)',
        '```bash',
        'openssl x509 -in cert.pem -noout -enddate',
        '```',
        '',
        'Kept from Jira:',
        '- Attachment: [cert-chain.png](https://acme.atlassian.net/secure/attachment/10042/cert-chain.png)',
      ].join('\n'),
    );
    assert.deepEqual(
      comments.map((c: { body: string; authorId: string }) => [c.body, c.authorId]),
      [
        ['Ordered, **arrives Friday**', 'usr_grace'],
        ['```\nticket #4711\n```', 'operator'],
      ],
    );
    assert.deepEqual(
      (await call('task_get', { taskId: tls.key })).structuredContent.blockedBy.map((b: { key: string }) => b.key),
      [ssl.key],
      'OPS-7 blocks OPS-9, said on both rows: one link',
    );
    assert.deepEqual([backups.status, backups.completedAt], ['Done', '2026-11-03T16:30:00.000Z']);
    assert.equal(backups.parent, ssl.key, 'Parent names the parent by its issue key');
    assert.match(out.stderr, /1 comment\(s\) whose author is no member here were added by the operator/);
    assert.ok(callId);

    const undone = await call('change_undo', { activityId: callId });

    assert.equal(undone.isError, false, toolText(undone));
    assert.deepEqual(await tasksTitled('ssl certificate'), []);
    assert.deepEqual(await tasksTitled('rotate backups'), []);
  });

  test('into a project that has fields: merged by name and type, another type and a 21st field kept as lines of the notes, said', async () => {
    const call = caller(server, ws.owner.token);
    const made = await call('project_create', {
      name: 'Crowded',
      fields: [
        { name: 'Size', type: 'text' },
        { name: 'Kind', type: 'select', options: ['A'] },
      ],
    });
    assert.equal(made.isError, false, toolText(made));
    const file = join(dataDir, 'asana-crowded.csv');
    const extra = Array.from({ length: 19 }, (_, i) => `C${i + 1}`);
    await writeFile(
      file,
      [
        ['Task ID', 'Name', 'Projects', 'Size', 'Kind', ...extra].join(','),
        ...[1, 2, 3].map((n) =>
          [`700${n}`, `Crowded row ${n}`, 'Crowded', String(n), n === 2 ? 'A' : 'B', ...extra.map((c) => `${c}-${n}`)].join(','),
        ),
      ].join('\n'),
    );

    const dry = await cli('import', '--file', file, '--workspace', ws.workspaceId, '--dry-run');
    const out = await cli('import', '--file', file, '--workspace', ws.workspaceId);
    const again = await cli('import', '--file', file, '--workspace', ws.workspaceId);
    const project = (await call('project_get', { projectId: made.structuredContent.projectId })).structuredContent.project;
    const first = (await tasksTitled('crowded row')).find((t: { title: string }) => t.title === 'Crowded row 1');
    const full = (await call('task_get', { taskId: first.key })).structuredContent;

    assert.equal(out.code, 0, out.stderr);
    assert.match(
      dry.stdout,
      /project 'Crowded': field C19 would not be added \(a project holds 20 fields at most\): its values kept in the notes/,
    );
    assert.match(
      dry.stderr,
      /The values of 2 field\(s\) stay lines of the notes \(said above\): Size in 'Crowded', C19 in 'Crowded'\. Nothing was written\./,
    );
    assert.match(out.stdout, /project 'Crowded': added options to its field Kind \(select: A, B\)\n/);
    assert.match(
      out.stdout,
      /project 'Crowded': field Size not added \(the project's field 'Size' is text, not number\): its values kept in the notes\n/,
    );
    assert.match(
      out.stdout,
      /project 'Crowded': field C19 not added \(a project holds 20 fields at most\): its values kept in the notes\n/,
    );
    assert.match(out.stderr, /The values of 2 field\(s\) stay lines of the notes \(said above\): Size in 'Crowded', C19 in 'Crowded'\./);
    assert.equal(project.fields.length, 20);
    assert.deepEqual(project.fields.slice(0, 3), [
      { name: 'Size', type: 'text' },
      { name: 'Kind', type: 'select', options: ['A', 'B'] },
      { name: 'C1', type: 'text' },
    ]);
    assert.deepEqual([full.fields.Kind, full.fields.C18, full.fields.Size], ['B', 'C18-1', undefined]);
    assert.equal(full.notes, 'Kept from Asana:\n- Size: 1\n- C19: C19-1');
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stdout, /project 'Crowded'/, 'a re-run changes no project');
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

describe('a large export', { timeout: 120_000 }, () => {
  test('2,000 generated Linear rows with parents, links and two custom fields: all imported, progress on stderr, within 60 write units a row', async () => {
    // A Linear-shaped file (its columns, its ids) with a subtask every tenth row and a link every seventh.
    const ROWS = 2_000;
    const file = join(dataDir, 'linear-large.csv');
    const lines = [
      'ID,Team,Title,Description,Status,Estimate,Priority,Project,Assignee,Labels,Cycle Name,Due Date,Parent issue,Blocked by',
    ];
    for (let i = 1; i <= ROWS; i++)
      lines.push(
        [
          `GEN-${i}`,
          'Gen',
          `Generated issue ${i}`,
          `Row ${i} of the scale test`,
          i % 5 === 0 ? 'Done' : 'In Progress',
          String(i % 8),
          ['Urgent', 'High', 'Medium', 'Low'][i % 4],
          `Scale ${i % 3}`,
          i % 2 ? 'grace@example.test' : '',
          i % 3 ? 'gen' : '',
          `Sprint ${i % 10}`,
          `2031-0${1 + (i % 9)}-1${i % 10}`,
          i % 10 === 0 ? `GEN-${i - 1}` : '',
          i % 7 === 0 ? `GEN-${i - 3}` : '',
        ].join(','),
      );
    await writeFile(file, lines.join('\n'));

    const out = await cli('import', '--file', file, '--workspace', ws.workspaceId);

    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, new RegExp(`Imported ${ROWS} task\\(s\\) from `));
    assert.equal(out.stderr.match(/^… \d+ of 2000 rows \(\d+ rows\/s\)$/gm)?.length, ROWS / 500, 'a progress line every 500 rows');
    const units = Number(/(\d+) write units as estimated/.exec(out.stderr)?.[1]);
    assert.ok(units > 0 && units / ROWS <= 60, `${units / ROWS} write units a row`);
    // Written in the file's order (each row after its parent and blocker, which come before it): GEN-n is the n-th key.
    const [, key, firstNumber] = /(\w+)-(\d+) … \w+-\d+: undo/.exec(out.stdout)!;
    const get = async (n: number) =>
      (await caller(server, ws.owner.token)('task_get', { taskId: `${key}-${Number(firstNumber) + n - 1}` })).structuredContent;
    const [child, parent, blocker] = await Promise.all([get(1470), get(1469), get(1467)]);
    assert.deepEqual([child.title, parent.title, blocker.title], ['Generated issue 1470', 'Generated issue 1469', 'Generated issue 1467']);
    assert.equal(child.parent, parent.key, 'Parent issue GEN-1469');
    assert.deepEqual(child.fields, { Estimate: 6, Cycle: 'Sprint 0' }, 'Estimate and Cycle Name as fields: part of the units measured');
    assert.deepEqual(
      child.blockedBy.map((b: { key: string }) => b.key),
      [blocker.key],
      'Blocked by GEN-1467',
    );
  });
});
