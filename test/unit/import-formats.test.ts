import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fieldValueOf, planProjectFields, typeOfValues } from '../../lambda/workspace/transfer/import-fields.js';
import { readExport, todoistFile } from '../../lambda/workspace/transfer/import-formats.js';
import { categoryOfSection } from '../../lambda/workspace/transfer/import-tasks.js';

// What each column of each tool's export becomes (what --dry-run lists), read from the fixtures.

const fixture = (name: string) => readFileSync(new URL(`../fixtures/import/${name}.csv`, import.meta.url), 'utf8');
const read = (name: string) => {
  const r = readExport(fixture(name));
  if ('error' in r) throw new Error(r.error);
  return r;
};

describe('the columns of each export', () => {
  test('every column of the file is listed once, with what it becomes', () => {
    const jira = read('jira');
    assert.deepEqual(
      jira.columns.map((c) => c.column),
      [...new Set(fixture('jira').split('\n')[0]!.split(','))],
    );
    const use = Object.fromEntries(jira.columns.map((c) => [c.column, c.use]));
    assert.equal(use['Outward issue link (Blocks)'], 'mapped');
    assert.equal(use.Sprint, 'field');
    assert.equal(use['Custom field (Story Points)'], 'field');
    assert.equal(use['Issue Type'], 'field');
    assert.equal(use.Attachment, 'kept');
    assert.equal(use.Reporter, 'ignored');
    assert.deepEqual(jira.unread, ['Project key', 'Resolution', 'Reporter', 'Created', 'Updated']);
  });

  test("Jira's issue type, story points, sprints and custom field columns become fields, typed", () => {
    const jira = read('jira');
    assert.deepEqual(jira.fields, [
      { name: 'Type', columns: ['Issue Type'], type: 'select', options: ['Task', 'Bug'] },
      { name: 'Story points', columns: ['Custom field (Story Points)'], type: 'number' },
      { name: 'Sprint', columns: ['Sprint'], type: 'text' },
      { name: 'Start date', columns: ['Custom field (Start date)'], type: 'date' },
    ]);
    assert.equal(
      jira.columns.find((c) => c.column === 'Issue Type')?.becomes,
      'custom field Type (select: Task, Bug)',
      'what --dry-run lists',
    );
    assert.deepEqual(jira.rows[0]!.values, [
      { field: 'Type', value: 'Task' },
      { field: 'Story points', value: '5' },
      { field: 'Sprint', value: 'OPS Sprint 12, OPS Sprint 13' },
      { field: 'Start date', value: '02/Nov/26' },
    ]);
    assert.deepEqual(jira.rows[0]!.labels, ['security', 'infra'], 'the issue type is a field, no label');
  });

  test("Asana's columns past its own are custom fields of their names, typed by their values", () => {
    const asana = read('asana');
    const custom = asana.columns.filter((c) => c.use === 'field').map((c) => `${c.column}: ${c.becomes}`);
    assert.deepEqual(custom, [
      'Start Date: custom field Start date (date)',
      'Priority: custom field Priority (select: High, Low)',
      'Estimated time: custom field Estimated time (number)',
    ]);
    assert.deepEqual(asana.rows[0]!.values, [
      { field: 'Start date', value: '2031-07-01' },
      { field: 'Priority', value: 'High' },
      { field: 'Estimated time', value: '8' },
    ]);
    assert.deepEqual(asana.rows[0]!.kept, []);
  });

  test('a field column empty in every row makes no field, saying so', () => {
    const r = readExport('Task ID,Name,Budget\n1,A,\n2,B,\n');
    assert.ok(!('error' in r));
    if ('error' in r) return;
    assert.deepEqual(r.fields, []);
    assert.deepEqual(r.columns[2], { column: 'Budget', use: 'ignored', becomes: 'empty in every row: no field' });
  });

  test("Linear's other columns: Estimate a number field, the cycle a text field, Related to kept, Blocked by as links", () => {
    const linear = read('linear');
    assert.deepEqual(
      linear.fields.map((f) => `${f.name}: ${f.type}`),
      ['Estimate: number', 'Cycle: text', 'Project milestone: text'],
    );
    assert.deepEqual(linear.rows[0]!.values.slice(0, 2), [
      { field: 'Estimate', value: '2' },
      { field: 'Cycle', value: 'Sprint 7 (7) 2026-11-02 – 2026-11-16' },
    ]);
    assert.deepEqual(linear.rows[0]!.kept, [{ field: 'Related to', value: 'ENG-3' }]);
    assert.deepEqual(
      linear.rows[3]!.blockedBy.map((b) => b.id),
      ['ENG-1', 'ENG-2'],
    );
    assert.equal(linear.columns.find((c) => c.column === 'SLA Status')?.use, 'ignored');
    assert.equal(linear.rows[2]!.project, 'Engineering', 'the team when the project is empty');
  });

  test('a column no reading knows is ignored, saying so', () => {
    const r = readExport('Summary,Issue key,Votes,Outward issue link (Relates)\nA,X-1,3,X-2\n');
    assert.ok(!('error' in r));
    if ('error' in r) return;
    assert.deepEqual(
      r.columns.slice(2).map((c) => `${c.column}: ${c.use}: ${c.becomes}`),
      ['Votes: ignored: not a field doers has', 'Outward issue link (Relates): ignored: doers links only blocked-by (Blocks)'],
    );
  });
});

describe('rows', () => {
  test("Jira's links in both directions become one blocked-by link on the waiting row", () => {
    const jira = read('jira');
    assert.deepEqual(
      jira.rows[2]!.blockedBy.map((b) => b.id),
      ['OPS-7'],
    );
    assert.deepEqual(jira.rows[0]!.blockedBy, []);
  });

  test("Todoist's uncompletable items and its files", () => {
    const todoist = read('todoist');
    assert.deepEqual([todoist.rows.at(-1)!.title, todoist.rows.at(-1)!.labels], ['Before the move', ['uncompletable']]);
    assert.equal(
      todoistFile('[[file {"file_name":"a b.png","file_type":"image/png","file_url":"https://f.test/a b.png"}]]'),
      '![a b.png](https://f.test/a%20b.png)',
    );
    assert.equal(todoistFile('{"not":"a file"}'), undefined);
    assert.equal(todoistFile('just text'), undefined);
  });

  test('an Asana section’s status category, by its name', () => {
    assert.deepEqual(
      ['Done', 'Completed', 'In progress', 'Doing', 'Backlog', 'Canceled', 'To do', 'Design', 'Ideas'].map(categoryOfSection),
      ['done', 'done', 'started', 'started', 'backlog', 'canceled', 'unstarted', 'unstarted', 'unstarted'],
    );
  });
});

describe('custom fields of an import', () => {
  test('a column is typed by its values: numbers, dates (ISO and Jira’s), URLs, a few repeated values, else text', () => {
    assert.deepEqual(typeOfValues(['3', '0.5', '-2']), { type: 'number' });
    assert.deepEqual(typeOfValues(['2026-11-02', '2026-11-03T09:00:00.000Z', '24/Dec/26 10:15 AM', '1/Jan/2027']), { type: 'date' });
    assert.deepEqual(typeOfValues(['2026-02-30']), { type: 'text' }, 'no such day');
    assert.deepEqual(typeOfValues(['https://a.test/x', 'http://b.test']), { type: 'url' });
    assert.deepEqual(typeOfValues(['Web', 'API', 'web ']), { type: 'select', options: ['Web', 'API'] }, 'one option whatever its case');
    assert.deepEqual(typeOfValues(['Web', 'API']), { type: 'text' }, 'no value seen twice');
    const many = Array.from({ length: 21 }, (_, i) => `V${i}`);
    assert.deepEqual(typeOfValues([...many, ...many]), { type: 'text' }, 'more than 20 distinct');
    assert.deepEqual(typeOfValues(['3', 'three']), { type: 'text' });
  });

  const wanted = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `F${i + 1}`, type: 'text' as const, columns: [`F${i + 1}`] }));

  test('a project takes 20 fields at most: the rest stay lines of the notes, said', () => {
    const plan = planProjectFields([], wanted(22));

    assert.equal(plan.fields.length, 20);
    assert.deepEqual(plan.left, [
      { name: 'F21', why: 'a project holds 20 fields at most' },
      { name: 'F22', why: 'a project holds 20 fields at most' },
    ]);
    assert.equal(plan.use.has('f20'), true);
    assert.equal(plan.use.has('f21'), false);
  });

  test('the project’s own fields count: merged by name and type, another type kept out, a select’s options added', () => {
    const current = [
      { fieldId: 'fld_type', name: 'Type', type: 'select' as const, options: ['Epic', 'Bug'] },
      { fieldId: 'fld_pts', name: 'story points', type: 'text' as const },
      ...wanted(17).map((w, i) => ({ fieldId: `fld_${i}`, name: `Own ${i}`, type: w.type })),
    ];

    const plan = planProjectFields(current, [
      { name: 'Type', type: 'select', options: ['Task', 'BUG'], columns: ['Issue Type'] },
      { name: 'Story points', type: 'number', columns: ['Custom field (Story Points)'] },
      { name: 'Sprint', type: 'text', columns: ['Sprint'] },
      { name: 'Team', type: 'text', columns: ['Custom field (Team)'] },
    ]);

    assert.deepEqual(plan.fields[0], { fieldId: 'fld_type', name: 'Type', type: 'select', options: ['Epic', 'Bug', 'Task'] });
    assert.deepEqual(
      plan.grown.map((f) => f.name),
      ['Type'],
    );
    assert.deepEqual(
      plan.added.map((f) => f.name),
      ['Sprint'],
    );
    assert.deepEqual(plan.left, [
      { name: 'Story points', why: "the project's field 'story points' is text, not number" },
      { name: 'Team', why: 'a project holds 20 fields at most' },
    ]);
    assert.equal(plan.use.get('type')?.fieldId, 'fld_type', 'the values go to the field the project has');
  });

  test('a value is checked by its field: a stray word in a number field is not taken', () => {
    const points = { fieldId: 'fld_p', name: 'Story points', type: 'number' as const };
    const start = { fieldId: 'fld_s', name: 'Start date', type: 'date' as const };
    const type = { fieldId: 'fld_t', name: 'Type', type: 'select' as const, options: ['Bug'] };

    assert.equal(fieldValueOf(points, ' 5 '), 5);
    assert.equal(fieldValueOf(points, 'five'), undefined);
    assert.equal(fieldValueOf(start, '24/Dec/26 10:15 AM'), '2026-12-24');
    assert.equal(fieldValueOf(type, 'bug'), 'Bug', 'as the option is spelled');
    assert.equal(fieldValueOf(type, 'Story'), undefined);
  });
});
