import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { copyWorkspace } from '../../cli/workspace-copy.js';
import { ACTIVITY_SHARDS, shardOf, WORKSPACE_COUNT_SHARDS } from '../../lambda/platform/item-keys.js';

// `import --as KEY`: an export's items as a copy under another workspace, every id new and the same everywhere.

const TASK = '0ebb429f-7c2d-4e8a-9b1f-3a6d2c5e8f01';
const OTHER = '5d1c7a3e-2b4f-4c8e-9a61-0f3e8b7d2c10';
const COMMENT = '0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b';
const CALL = 'act_01m926akvd89arwv';

const items = [
  { pk: 'WS#ws_demo', sk: 'META', workspaceId: 'ws_demo', name: 'Demo workspace', key: 'DEMO', taskCounter: 2 },
  { pk: 'WS#ws_demo', sk: 'USER#usr_ada', workspaceId: 'ws_demo', userId: 'usr_ada', email: 'ada@example.com' },
  {
    pk: `WS#ws_demo#T#${TASK}`,
    sk: 'TASK',
    taskId: TASK,
    title: 'Demo the ws_demo id',
    blockedBy: { [OTHER]: 2 },
    gsi1pk: 'WS#ws_demo#L#P1',
  },
  { pk: `WS#ws_demo#T#${OTHER}`, sk: 'TASK', taskId: OTHER, blocks: new Set([TASK]) },
  { pk: `WS#ws_demo#T#${TASK}`, sk: `ATT#${TASK}.abcdefghij`, attachmentId: `${TASK}.abcdefghij`, taskId: TASK },
  { pk: 'WS#ws_demo', sk: `COMMENT#${TASK}#${COMMENT}`, commentId: COMMENT, taskId: TASK },
  {
    pk: `WS#ws_demo#R${shardOf(CALL, ACTIVITY_SHARDS)}`,
    sk: `ACT#${CALL}.02`,
    activityId: `${CALL}.02`,
    targetId: TASK,
    bytes: new Uint8Array([1, 2]),
  },
  { pk: 'EMAIL#ada@example.com', sk: 'EMAIL', workspaceId: 'ws_demo', userId: 'usr_ada' },
];

describe('copyWorkspace', () => {
  const copy = copyWorkspace('ws_demo', items, { workspaceId: 'ws_copy', key: 'COPY' });
  const text = JSON.stringify(copy.items, (_k, v) => (v instanceof Set ? [...v] : v));

  test('the workspace id, its partitions and index keys are the copy’s; a title that names the old id as a word stays', () => {
    assert.doesNotMatch(text, /WS#ws_demo/);
    assert.equal(copy.items[0]!.pk, 'WS#ws_copy');
    assert.equal(copy.items[2]!.gsi1pk, 'WS#ws_copy#L#P1');
    assert.equal(copy.items[2]!.title, 'Demo the ws_demo id');
    assert.equal(copy.items[7]!.workspaceId, 'ws_copy');
  });

  test('the key is the copy’s, the export’s joins its past keys; member ids stay', () => {
    assert.deepEqual([copy.items[0]!.key, copy.items[0]!.pastKeys], ['COPY', ['DEMO']]);
    assert.equal(copy.items[1]!.userId, 'usr_ada');
  });

  test('every task, comment and record id is new, the same wherever it appears, in the same shard and time', () => {
    for (const old of [TASK, OTHER, COMMENT, CALL]) assert.ok(!text.includes(old), old);
    const task = String(copy.items[2]!.taskId);
    const other = String(copy.items[3]!.taskId);
    assert.equal(copy.items[2]!.pk, `WS#ws_copy#T#${task}`);
    assert.deepEqual(copy.items[2]!.blockedBy, { [other]: 2 }, 'a map keyed by id');
    assert.deepEqual([...(copy.items[3]!.blocks as Set<string>)], [task], 'a set of ids');
    assert.equal(copy.items[4]!.taskId, task);
    assert.equal(shardOf(task, WORKSPACE_COUNT_SHARDS), shardOf(TASK, WORKSPACE_COUNT_SHARDS), 'its counts stay in their shard');
    const comment = String(copy.items[5]!.commentId);
    assert.equal(comment.slice(0, 15), COMMENT.slice(0, 15), 'a UUIDv7 keeps its time');
    assert.match(comment, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const record = String(copy.items[6]!.activityId);
    assert.equal(record.slice(0, 14), CALL.slice(0, 14), 'a record keeps its time');
    assert.ok(record.endsWith('.02'));
    assert.equal(
      copy.items[6]!.pk,
      `WS#ws_copy#R${shardOf(record.slice(0, -3), ACTIVITY_SHARDS)}`,
      'its call’s shard is the partition it is in',
    );
    assert.deepEqual(copy.items[6]!.bytes, new Uint8Array([1, 2]));
  });

  test('an attachment’s new id leads back to its file (named by the old one)', () => {
    const id = String(copy.items[4]!.attachmentId);
    assert.equal(copy.oldAttachmentId.get(id), `${TASK}.abcdefghij`);
    assert.ok(id.endsWith('.abcdefghij'));
  });

  test('two copies of one export share no id', () => {
    const again = copyWorkspace('ws_demo', items, { workspaceId: 'ws_twin', key: 'TWIN' });
    assert.notEqual(again.items[2]!.taskId, copy.items[2]!.taskId);
  });
});

describe('copyWorkspace and what people wrote', () => {
  test('a UUID in a title, notes or a URL that is no id of the workspace stays as written; one that is an id of it is the copy’s', () => {
    // Arrange
    const sentry = '123e4567-e89b-12d3-a456-426614174000';
    const teams = `https://example.webhook.office.com/webhookb2/${sentry}@9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a/IncomingWebhook/abc`;
    const written = [
      ...items,
      { pk: `WS#ws_demo#T#${TASK}`, sk: 'NOTES', notes: `Fix Sentry ${sentry}; see ${teams}; blocked by ${OTHER}` },
    ];

    // Act
    const copy = copyWorkspace('ws_demo', written, { workspaceId: 'ws_copy', key: 'COPY' });
    const notes = String(copy.items.at(-1)!.notes);
    const other = String(copy.items[3]!.taskId);

    // Assert
    assert.ok(notes.includes(`Fix Sentry ${sentry}`), notes);
    assert.ok(notes.includes(teams), notes);
    assert.ok(notes.endsWith(`blocked by ${other}`), 'a task of the workspace named in text is the copy’s task');
  });
});
