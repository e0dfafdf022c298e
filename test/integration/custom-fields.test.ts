import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { planFields } from '../../lambda/workspace/model/custom-fields.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

/**
 * Custom fields through the tools (docs/workspace.md, "Custom fields"): an admin defines a project's
 * fields, tasks carry values checked by type, a rename keeps them, a removal takes them and an undo
 * brings both back, and a task moving to another project keeps the values whose field is there.
 */

let server: LocalServer;
let ws: TestWorkspace;
let projectId: string;
let otherId: string;

const refusal = (r: object) =>
  (r as { _meta: Record<string, { reason: string; data: Record<string, unknown> }> })._meta['sh.doers/refusal']!;

before(async () => {
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
  const admin = caller(server, ws.admin.token);
  const made = await admin('project_create', {
    name: 'Platform',
    fields: [
      { name: 'Story points', type: 'number' },
      { name: 'Type', type: 'select', options: ['Bug', 'Story', 'Task'] },
      { name: 'Sprint', type: 'text' },
      { name: 'Owner', type: 'person' },
    ],
  });
  assert.equal(made.isError, false, toolText(made));
  projectId = made.structuredContent.projectId;
  const other = await admin('project_create', {
    name: 'Support',
    fields: [
      { name: 'Story points', type: 'number' },
      { name: 'Type', type: 'text' },
    ],
  });
  otherId = other.structuredContent.projectId;
});
after(() => server.close());

describe('defining fields', () => {
  test('project_create keeps the fields in order with their types and options, and project_get shows them', async () => {
    // Act
    const got = await caller(server, ws.member.token)('project_get', { projectId });

    // Assert
    assert.deepEqual(got.structuredContent.project.fields, [
      { name: 'Story points', type: 'number' },
      { name: 'Type', type: 'select', options: ['Bug', 'Story', 'Task'] },
      { name: 'Sprint', type: 'text' },
      { name: 'Owner', type: 'person' },
    ]);
    assert.match(toolText(got), /Fields: Story points \(number\), Type \(select: Bug, Story, Task\)/);
  });

  for (const [what, fields, param, reason] of [
    ['an unknown type', [{ name: 'Estimate', type: 'hours' }], 'fields[0].type', 'invalid-argument'],
    [
      'a name twice',
      [
        { name: 'Size', type: 'text' },
        { name: 'size ', type: 'number' },
      ],
      'fields[1].name',
      'invalid-argument',
    ],
    ['a select without options', [{ name: 'Kind', type: 'select' }], 'fields[0].options', 'invalid-argument'],
    ['more than 20', Array.from({ length: 21 }, (_, i) => ({ name: `F${i}`, type: 'text' })), 'fields', 'limit'],
    ['a field whose type changes', [{ name: 'Story points', type: 'text' }], 'fields[0].type', 'invalid-argument'],
    ['a rename of a field that is not there', [{ name: 'Points', type: 'number', was: 'Pointz' }], 'fields[0].was', 'invalid-argument'],
  ] as const) {
    test(`${what} is refused naming ${param}, and nothing is written`, async () => {
      // Arrange
      const admin = caller(server, ws.admin.token);
      const before = (await admin('project_get', { projectId })).structuredContent.project;

      // Act
      const out = await admin('project_update', { projectId, version: before.version, fields });
      const afterwards = (await admin('project_get', { projectId })).structuredContent.project;

      // Assert
      assert.equal(out.isError, true, toolText(out));
      assert.equal(refusal(out).reason, reason);
      assert.equal(refusal(out).data.param, param);
      assert.equal(afterwards.version, before.version);
    });
  }

  test('a member cannot define fields', async () => {
    const out = await caller(server, ws.member.token)('project_update', { projectId, version: 1, fields: [] });
    assert.equal(out.isError, true);
    assert.equal(refusal(out).reason, 'role');
  });
});

describe('values', () => {
  test('a task carries values checked by type, its select value spelled as the option, a person as "me"', async () => {
    // Act
    const made = await caller(server, ws.member.token)('task_create', {
      title: 'Cache the token lookups',
      projectId,
      fields: { 'story points': '3', Type: 'bug', Owner: 'me' },
    });
    const got = await caller(server, ws.member.token)('task_get', { taskId: made.structuredContent.key });

    // Assert
    assert.equal(made.isError, false, toolText(made));
    assert.deepEqual(got.structuredContent.fields, { 'Story points': 3, Type: 'Bug', Owner: ws.member.userId });
    assert.match(toolText(got), /Fields: Story points: 3 · Type: Bug/);
  });

  for (const [what, fields, param] of [
    ['a select value not among its options', { Type: 'Epic' }, 'fields.Type'],
    ['words in a number field', { 'Story points': 'three' }, 'fields.Story points'],
    ['a field the project does not have', { Severity: 'high' }, 'fields.Severity'],
    ['someone who is no member', { Owner: 'usr_nobody' }, 'fields.Owner'],
  ] as const) {
    test(`${what} is refused naming ${param}, and no task is made`, async () => {
      const asMember = caller(server, ws.member.token);
      const title = `Refused: ${what}`;

      const out = await asMember('task_create', { title, projectId, fields });
      const found = await asMember('tasks_search', { text: title });

      assert.equal(out.isError, true, toolText(out));
      assert.equal(refusal(out).data.param, param);
      assert.equal(found.structuredContent.returned, 0);
    });
  }

  test('null clears one value; undo puts it back', async () => {
    // Arrange
    const asMember = caller(server, ws.member.token);
    const made = await asMember('task_create', { title: 'Rotate the keys', projectId, fields: { 'Story points': 5, Sprint: 'S12' } });

    // Act
    const cleared = await asMember('task_update', { taskId: made.structuredContent.key, version: 1, fields: { Sprint: null } });
    const afterClear = await asMember('task_get', { taskId: made.structuredContent.key });
    await asMember('change_undo', { activityId: cleared.structuredContent.activityId });
    const afterUndo = await asMember('task_get', { taskId: made.structuredContent.key });

    // Assert
    assert.deepEqual(afterClear.structuredContent.fields, { 'Story points': 5 });
    assert.deepEqual(afterUndo.structuredContent.fields, { 'Story points': 5, Sprint: 'S12' });
  });

  test('a rename keeps the values; a removal takes them and its undo brings the field and the values back', async () => {
    // Arrange
    const admin = caller(server, ws.admin.token);
    const made = await admin('task_create', { title: 'Split the monolith', projectId, fields: { Sprint: 'S13' } });
    const project = (await admin('project_get', { projectId })).structuredContent.project;
    const others = project.fields.filter((f: { name: string }) => f.name !== 'Sprint');

    // Act
    const renamed = await admin('project_update', {
      projectId,
      version: project.version,
      fields: [...others, { name: 'Iteration', type: 'text', was: 'Sprint' }],
    });
    const afterRename = await admin('task_get', { taskId: made.structuredContent.key });
    const removed = await admin('project_update', { projectId, version: project.version + 1, fields: others });
    const afterRemove = await admin('task_get', { taskId: made.structuredContent.key });
    const undone = await admin('change_undo', { activityId: removed.structuredContent.activityId });
    const afterUndo = await admin('task_get', { taskId: made.structuredContent.key });

    // Assert
    assert.equal(renamed.isError, false, toolText(renamed));
    assert.deepEqual(afterRename.structuredContent.fields, { Iteration: 'S13' });
    assert.equal(afterRemove.structuredContent.fields, undefined);
    assert.equal(undone.isError, false, toolText(undone));
    assert.deepEqual(afterUndo.structuredContent.fields, { Iteration: 'S13' });
  });

  test('moving to another project keeps the values of a field of the same name and type, and says which stayed behind', async () => {
    // Arrange
    const asMember = caller(server, ws.member.token);
    const made = await asMember('task_create', { title: 'Answer the ticket', projectId, fields: { 'Story points': 2, Type: 'Story' } });

    // Act
    const moved = await asMember('task_update', { taskId: made.structuredContent.key, version: 1, projectId: otherId });
    const got = await asMember('task_get', { taskId: made.structuredContent.key });

    // Assert
    assert.equal(moved.isError, false, toolText(moved));
    assert.deepEqual(got.structuredContent.fields, { 'Story points': 2 });
    assert.match(toolText(moved), /Fields left behind .*: Type\./);
  });
});

describe('the query language', () => {
  test('"story points">=3 and type:bug filter by the fields, sort:"story points"-desc orders by them; a field no project has is refused naming it', async () => {
    // Arrange
    const asMember = caller(server, ws.member.token);
    for (const [title, points, type] of [
      ['Qfield one', 1, 'Bug'],
      ['Qfield two', 3, 'Story'],
      ['Qfield three', 5, 'Bug'],
      ['Qfield four', 8, 'Task'],
    ] as const)
      await asMember('task_create', { title, projectId, fields: { 'Story points': points, Type: type } });

    // Act
    const big = await asMember('tasks_search', { query: '"story points">=3 qfield sort:"story points"-desc' });
    const bugs = await asMember('tasks_search', { query: 'type:bug qfield sort:title' });
    const unknown = await asMember('tasks_search', { query: 'severity:high' });

    // Assert
    assert.equal(big.isError, false, toolText(big));
    assert.deepEqual(
      big.structuredContent.tasks.map((t: { title: string }) => t.title),
      ['Qfield four', 'Qfield three', 'Qfield two'],
    );
    assert.deepEqual(
      bugs.structuredContent.tasks.map((t: { title: string }) => t.title),
      ['Qfield one', 'Qfield three'],
    );
    assert.equal(unknown.isError, true);
    assert.equal(refusal(unknown).data.param, 'query');
    assert.match(toolText(unknown), /severity/);
  });
});

describe('planning fields (model/custom-fields.ts)', () => {
  const current = [{ fieldId: 'fld_a', name: 'A', type: 'text' as const }];

  test('a rename and a new field of the old name are two fields: the rename keeps the id, the new one gets its own', () => {
    const plan = planFields(current, [
      { name: 'B', type: 'text', was: 'A' },
      { name: 'A', type: 'text' },
    ]);
    assert.equal(plan.fields[0]!.fieldId, 'fld_a');
    assert.notEqual(plan.fields[1]!.fieldId, 'fld_a');
    assert.deepEqual(plan.removed, []);
  });

  test('a name a field of every task has, more than 50 options, or an option over 100 characters is refused naming it', () => {
    const refused = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return err as { data: Record<string, unknown> };
      }
      assert.fail('not refused');
    };
    assert.equal(refused(() => planFields([], [{ name: 'Priority', type: 'text' }])).data.param, 'fields[0].name');
    const many = Array.from({ length: 51 }, (_, i) => `O${i}`);
    assert.equal(refused(() => planFields([], [{ name: 'Size', type: 'select', options: many }])).data.param, 'fields[0].options');
    assert.equal(
      refused(() => planFields([], [{ name: 'Size', type: 'select', options: ['x'.repeat(101)] }])).data.param,
      'fields[0].options',
    );
  });

  test('options differing only in case are one', () => {
    const plan = planFields([], [{ name: 'Kind', type: 'select', options: ['Bug', 'bug', 'Story'] }]);
    assert.deepEqual(plan.fields[0]!.options, ['Bug', 'Story']);
  });
});

describe('moving and setting at once', () => {
  test('a move to another project that sets a value there keeps the values whose field is there too, and says which stayed behind', async () => {
    // Arrange
    const asMember = caller(server, ws.member.token);
    const made = await asMember('task_create', { title: 'Move and set', projectId, fields: { 'Story points': 3, Type: 'Bug' } });

    // Act
    const moved = await asMember('task_update', {
      taskId: made.structuredContent.key,
      version: 1,
      projectId: otherId,
      fields: { Type: 'a customer bug' },
    });
    const got = await asMember('task_get', { taskId: made.structuredContent.key });

    // Assert
    assert.equal(moved.isError, false, toolText(moved));
    assert.deepEqual(got.structuredContent.fields, { 'Story points': 3, Type: 'a customer bug' });
  });
});
