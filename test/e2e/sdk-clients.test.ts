import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport, SdkHttpError } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { DEMO_WORKSPACE_ID } from '../../lambda/local/local-data.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { CONFORMANCE_FIXTURES } from '../conformance/fixtures.js';
import { startTestServer, urlOf } from '../helpers/local.js';
import { addToken } from '../helpers/workspace-fixtures.js';

/**
 * Real MCP clients against the local server (the handler Lambda runs) with a bearer token: the
 * official v1 SDK client, which speaks the 2025-11-25 handshake, and the official 2026-07-28 client
 * (`@modelcontextprotocol/client` 2.x, version negotiation `auto`). Both run on this Node (20).
 */
let server: LocalServer;
const bearer = () => ({ Authorization: `Bearer ${server.token}` });

before(async () => {
  server = await startTestServer({}, { fixtures: CONFORMANCE_FIXTURES });
});
after(() => server.close());

/** The server runs in UTC here; a test crossing midnight may see either day. */
const todayCandidates = (started: Date) => new Set([started.toISOString().slice(0, 10), new Date().toISOString().slice(0, 10)]);

const assertMe = (structured: unknown, started: Date) => {
  const me = structured as Record<string, any>;
  assert.equal(me.name, DEMO_OWNER.name);
  assert.equal(me.email, DEMO_OWNER.email);
  assert.equal(me.role, 'owner');
  assert.equal(me.workspace.workspaceId, DEMO_WORKSPACE_ID);
  assert.equal(me.timeZone, 'UTC');
  assert.ok(todayCandidates(started).has(me.today), `today was ${me.today}`);
};

type AnyClient = Pick<LegacyClient, 'callTool' | 'listTools'>;

/**
 * The bulk tools through a real client, which checks each result against the listed outputSchema:
 * three tasks of which one is refused (and one is due "next friday 3pm"), then two changes of which one is stale.
 */
const bulkRoundTrip = async (client: AnyClient, tag: string) => {
  await client.listTools();
  const created = await client.callTool({
    name: 'tasks_create',
    arguments: {
      tasks: [
        { title: `${tag} one`, priority: 'P2' },
        { title: `${tag} two`, dueDate: '2026-02-30' },
        { title: `${tag} three`, labels: ['sdk'], dueDate: 'next friday 3pm' },
      ],
    },
  });
  const items = (created.structuredContent as { items: { status: string; key?: string; version?: number }[] }).items;
  const [one, , three] = items;
  const updated = await client.callTool({
    name: 'tasks_update',
    arguments: {
      tasks: [
        { taskId: one!.key, version: one!.version, status: 'done' },
        { taskId: three!.key, version: 7, priority: 'P1' },
      ],
    },
  });
  return { created, items, updated };
};

/**
 * A recurring task through a real client (each result checked against its outputSchema by the
 * client): made from a phrase, completed twice (the due date advances a week each time), one
 * completion undone.
 */
const recurringRoundTrip = async (client: AnyClient, tag: string) => {
  await client.listTools();
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, false, JSON.stringify(r.content));
    return r.structuredContent as Record<string, any>;
  };
  const made = await call('task_create', { title: `${tag} water the plants`, repeat: 'every monday' });
  const once = await call('task_complete', { taskId: made.key });
  const twice = await call('task_complete', { taskId: made.key });
  await call('change_undo', { activityId: twice.activityId });
  const now = await call('task_get', { taskId: made.key });
  return { made, once, twice, now };
};

const assertRecurring = ({ made, once, twice, now }: Awaited<ReturnType<typeof recurringRoundTrip>>) => {
  const week = (d: string, n: number) => new Date(Date.parse(`${d}T00:00:00Z`) + n * 7 * 86_400_000).toISOString().slice(0, 10);
  assert.equal(made.repeat, 'every Monday');
  assert.equal(new Date(`${made.dueDate}T00:00:00Z`).getUTCDay(), 1, 'due on a Monday');
  assert.deepEqual([once.doneFor, once.dueDate, once.status], [made.dueDate, week(made.dueDate, 1), 'Todo']);
  assert.deepEqual([twice.doneFor, twice.dueDate], [week(made.dueDate, 1), week(made.dueDate, 2)]);
  assert.deepEqual([now.dueDate, now.repeat, now.status], [week(made.dueDate, 1), 'every Monday', 'Todo']);
};

/**
 * A parent with subtasks through a real client: made in one tasks_create (@1 names the parent), the
 * parent completed alone (its open subtasks named), reopened, then completed with its subtasks.
 */
const subtaskRoundTrip = async (client: AnyClient, tag: string) => {
  await client.listTools();
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, false, JSON.stringify(r.content));
    return r.structuredContent as Record<string, any>;
  };
  const made = await call('tasks_create', {
    tasks: [
      { title: `${tag} plan the offsite` },
      { title: `${tag} book the venue`, parent: '@1' },
      { title: `${tag} send invites`, parent: '@1' },
    ],
  });
  const [parent, venue, invites] = made.items.map((i: { key: string }) => i.key) as string[];
  // One subtask through the statuses: under way, in review (each answer checked against its outputSchema).
  const v1 = await call('task_get', { taskId: venue });
  const started = await call('task_update', { taskId: venue, version: v1.version, status: 'In progress' });
  const review = await call('tasks_update', { tasks: [{ taskId: venue, status: 'in review' }] });
  const reviewed = await call('task_get', { taskId: venue });
  const alone = await call('task_complete', { taskId: parent });
  await call('task_reopen', { taskId: parent });
  const all = await call('task_complete', { taskId: parent, withSubtasks: true });
  const got = await call('task_get', { taskId: parent });
  return { keys: { parent, venue, invites }, alone, all, got, started, review, reviewed };
};

const assertSubtasks = ({ keys, alone, all, got, started, review, reviewed }: Awaited<ReturnType<typeof subtaskRoundTrip>>) => {
  assert.deepEqual([started.status, started.statusCategory], ['In progress', 'started']);
  assert.equal(review.items[0].status, 'updated');
  assert.deepEqual([reviewed.status, reviewed.statusCategory], ['In review', 'started']);
  assert.deepEqual(alone.openSubtasks, [keys.venue, keys.invites]);
  assert.deepEqual(all.completedSubtasks, [keys.venue, keys.invites]);
  assert.deepEqual(
    got.subtasks.map((s: { key: string; status: string }) => [s.key, s.status]),
    [
      [keys.venue, 'Done'],
      [keys.invites, 'Done'],
    ],
  );
};

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * Files through a real client: a text file and a PNG added to a task, listed by task_get, read back
 * with resources/read (text and blob), one deleted and its delete undone, every result checked
 * against its outputSchema by the client.
 */
const attachmentRoundTrip = async (client: AnyClient & Pick<LegacyClient, 'readResource'>, tag: string) => {
  await client.listTools();
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, false, JSON.stringify(r.content));
    return r.structuredContent as Record<string, any>;
  };
  const t = await call('task_create', { title: `${tag} review the contract` });
  const txt = await call('attachment_add', { taskId: t.key, name: 'contract.md', text: '# Contract\nTerms.', type: 'text/markdown' });
  const png = await call('attachment_add', { taskId: t.key, name: 'signature.png', content: PNG.toString('base64') });
  const listed = await call('task_get', { taskId: t.key });
  const asText = (await client.readResource({ uri: txt.uri })).contents[0] as { text?: string; mimeType?: string };
  const asBlob = (await client.readResource({ uri: png.uri })).contents[0] as { blob?: string; mimeType?: string };
  const deleted = await call('attachment_delete', { attachmentId: png.attachmentId });
  const afterDelete = await call('task_get', { taskId: t.key });
  await call('change_undo', { activityId: deleted.activityId });
  const back = (await client.readResource({ uri: png.uri })).contents[0] as { blob?: string };
  return { listed, asText, asBlob, deleted, afterDelete, back };
};

const assertAttachments = ({ listed, asText, asBlob, deleted, afterDelete, back }: Awaited<ReturnType<typeof attachmentRoundTrip>>) => {
  assert.deepEqual(
    listed.files.map((f: { name: string; type: string }) => [f.name, f.type]),
    [
      ['contract.md', 'text/markdown'],
      ['signature.png', 'image/png'],
    ],
  );
  assert.deepEqual([asText.mimeType, asText.text], ['text/markdown', '# Contract\nTerms.']);
  assert.equal(asBlob.mimeType, 'image/png');
  assert.deepEqual(Buffer.from(asBlob.blob!, 'base64'), PNG);
  assert.equal(deleted.deleted, true);
  assert.equal(afterDelete.files.length, 1);
  assert.deepEqual(Buffer.from(back.blob!, 'base64'), PNG, 'the undo brought the same bytes back');
};

const assertBulk = ({ created, items, updated }: Awaited<ReturnType<typeof bulkRoundTrip>>) => {
  assert.equal(created.isError, false);
  assert.deepEqual(
    items.map((i) => i.status),
    ['created', 'refused', 'created'],
  );
  assert.match((created.content as { text: string }[])[0]!.text, /^Created 2 of 3; 1 refused: item 2 dueDate: 2026-02-30 is not a date/);
  // Words are read by the server, in the member's zone, and the text says what they were read as.
  assert.match(
    (created.content as { text: string }[])[0]!.text,
    /\nitem 3 dueDate 'next friday 3pm' read as \w{3} \d{1,2} \w{3} \d{4} 15:00 \(/,
  );
  assert.ok(
    items.every((i) => i.status === 'refused' || /^DEMO-\d+$/.test(i.key!)),
    JSON.stringify(items),
  );
  const results = (updated.structuredContent as { items: { status: string; version?: number; reason?: string }[] }).items;
  assert.deepEqual(
    results.map((r) => r.status),
    ['updated', 'refused'],
  );
  assert.equal(results[0]!.version, 2);
  assert.match(results[1]!.reason!, /^version: Conflict: DEMO-\d+ is at version 1, not 7/);
};

/** Ten queries a person would type, on the demo workspace: each must read (and find something, mostly). */
const TEN_QUERIES = [
  'assignee:me -status:done due<friday sort:due',
  'is:overdue',
  'assignee:grace is:open',
  'project:"Website relaunch" status:started',
  'no:assignee',
  'p1 OR priority:2',
  '(due:today OR is:overdue) p1',
  'is:done completed>=-7d sort:completed-desc',
  'label:design OR label:seo',
  'has:subtasks',
];

/**
 * The query language and saved views through a real client, which checks every result against the
 * listed outputSchema: ten queries, a shared view saved by the owner and run by another member.
 */
const queriesRoundTrip = async (owner: AnyClient, member: AnyClient, tag: string) => {
  await Promise.all([owner.listTools(), member.listTools()]);
  const found: number[] = [];
  for (const query of TEN_QUERIES) {
    const r = await owner.callTool({ name: 'tasks_search', arguments: { query } });
    assert.equal(r.isError, false, `${query}: ${JSON.stringify(r.content)}`);
    found.push((r.structuredContent as { returned: number }).returned);
  }
  const saved = await owner.callTool({
    name: 'view_save',
    arguments: { name: `${tag} overdue by person`, query: 'is:overdue', group: 'assignee', shared: true },
  });
  const run = await member.callTool({ name: 'tasks_search', arguments: { view: `${tag} overdue by person` } });
  const direct = await member.callTool({ name: 'tasks_search', arguments: { query: 'is:overdue' } });
  const listed = await member.callTool({ name: 'views_list', arguments: {} });
  return { found, saved, run, direct, listed };
};

/**
 * Custom fields through a real client, which checks every result against the listed outputSchema: a
 * project with three fields, tasks with values, a filter and a sort by them, and a refused value.
 */
const fieldsRoundTrip = async (client: AnyClient, tag: string) => {
  await client.listTools();
  const project = await client.callTool({
    name: 'project_create',
    arguments: {
      name: `${tag} platform`,
      fields: [
        { name: 'Story points', type: 'number' },
        { name: 'Type', type: 'select', options: ['Bug', 'Story'] },
        { name: 'Labels', type: 'multi-select', options: ['api', 'ui'] },
      ],
    },
  });
  const projectId = (project.structuredContent as { projectId: string }).projectId;
  const made = [];
  for (const [n, points, type] of [
    [1, 2, 'bug'],
    [2, 8, 'Story'],
    [3, 5, 'Bug'],
  ] as const)
    made.push(
      await client.callTool({
        name: 'task_create',
        arguments: { title: `${tag} fielded ${n}`, projectId, fields: { 'Story points': points, Type: type, Labels: ['api'] } },
      }),
    );
  const bugs = await client.callTool({
    name: 'tasks_search',
    arguments: { query: `project:"${tag} platform" type:bug sort:"story points"-desc` },
  });
  const got = await client.callTool({ name: 'task_get', arguments: { taskId: (made[0]!.structuredContent as { key: string }).key } });
  const refused = await client.callTool({
    name: 'task_create',
    arguments: { title: `${tag} refused`, projectId, fields: { Type: 'Epic' } },
  });
  return { project, made, bugs, got, refused };
};

const assertFields = (out: Awaited<ReturnType<typeof fieldsRoundTrip>>, tag: string) => {
  assert.equal(out.project.isError, false, JSON.stringify(out.project.content));
  for (const m of out.made) assert.equal(m.isError, false, JSON.stringify(m.content));
  assert.deepEqual(
    (out.bugs.structuredContent as any).tasks.map((t: any) => [t.title, t.fields['Story points']]),
    [
      [`${tag} fielded 3`, 5],
      [`${tag} fielded 1`, 2],
    ],
  );
  assert.deepEqual((out.got.structuredContent as any).fields, { 'Story points': 2, Type: 'Bug', Labels: ['api'] });
  assert.equal(out.refused.isError, true);
  assert.match(JSON.stringify(out.refused.content), /fields\.Type/);
};

const memberToken = () => addToken(server, DEMO_WORKSPACE_ID, 'usr_alan', ['tasks:read', 'tasks:write']);

describe('official v1 SDK client (@modelcontextprotocol/sdk, 2025-11-25 handshake)', () => {
  test('connects with a bearer token, lists tools and calls me_get', async () => {
    const started = new Date();
    const client = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' });
    const transport = new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } });

    await client.connect(transport);
    const { tools } = await client.listTools();
    const result = await client.callTool({ name: 'me_get', arguments: {} });
    await client.close();

    assert.equal(transport.protocolVersion, '2025-11-25');
    assert.equal(transport.sessionId, undefined);
    assert.equal(client.getServerVersion()?.name, 'doers');
    assert.ok(tools.some((t) => t.name === 'me_get'));
    assert.equal(result.isError, false);
    assertMe(result.structuredContent, started);
    assert.match((result.content as { text: string }[])[0]!.text, new RegExp(`${DEMO_OWNER.name}.*owner`));
  });

  test('a refusal on the 2025-11-25 handshake carries the same reason and data in _meta["sh.doers/refusal"]', async () => {
    // Arrange
    const client = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    // Act
    const missing = await client.callTool({ name: 'task_get', arguments: { taskId: 'DEMO-999999' } });
    await client.close();

    // Assert
    assert.equal(missing.isError, true);
    assert.deepEqual(missing._meta?.['sh.doers/refusal'], { reason: 'not-found', code: 'ERR_NOT_FOUND', data: { ref: 'DEMO-999999' } });
  });

  test('creates and changes tasks in bulk, each item on its own, every result valid against its outputSchema', async () => {
    const client = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const outcome = await bulkRoundTrip(client, 'SDK v1');
    await client.close();

    assertBulk(outcome);
  });

  test('makes a recurring task from a phrase, completes it twice and undoes one completion, every result valid', async () => {
    const client = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const outcome = await recurringRoundTrip(client, 'SDK v1');
    await client.close();

    assertRecurring(outcome);
  });

  test('makes a parent and its subtasks in one call, completes it without and with them, every result valid', async () => {
    const client = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const outcome = await subtaskRoundTrip(client, 'SDK v1');
    await client.close();

    assertSubtasks(outcome);
  });
});

describe('official v1 SDK client: queries and views', () => {
  test('ten queries, a shared view saved by the owner and run by another member, every result valid against its outputSchema', async () => {
    const owner = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' });
    const member = new LegacyClient({ name: 'doers-e2e-v1-member', version: '1.0.0' });
    await owner.connect(new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));
    await member.connect(
      new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${await memberToken()}` } } }),
    );

    const out = await queriesRoundTrip(owner, member, 'SDK v1');
    await Promise.all([owner.close(), member.close()]);

    assert.ok(out.found.filter((n) => n > 0).length >= 8, `found ${out.found.join(', ')}`);
    assert.equal(out.saved.isError, false, JSON.stringify(out.saved.content));
    assert.equal(out.run.isError, false, JSON.stringify(out.run.content));
    assert.equal((out.run.structuredContent as any).view.name, 'SDK v1 overdue by person');
    assert.deepEqual((out.run.structuredContent as any).tasks, (out.direct.structuredContent as any).tasks);
    assert.ok((out.listed.structuredContent as any).views.some((v: any) => v.name === 'SDK v1 overdue by person' && v.shared));
  });
});

describe('official v1 SDK client: custom fields', () => {
  test('defines fields, sets, filters and sorts by them, every result valid against its outputSchema', async () => {
    const client = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const out = await fieldsRoundTrip(client, 'SDK v1');
    await client.close();

    assertFields(out, 'SDK v1');
  });
});

describe('official v1 SDK client: attachments', () => {
  test('adds a text file and a PNG, lists them, reads both back, deletes one and undoes it, every result valid', async () => {
    const client = new LegacyClient({ name: 'doers-e2e-v1', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const outcome = await attachmentRoundTrip(client, 'SDK v1');
    await client.close();

    assertAttachments(outcome);
  });
});

describe('official 2026-07-28 client: custom fields', () => {
  test('defines fields, sets, filters and sorts by them, every result valid against its outputSchema', async () => {
    const client = new ModernClient({ name: 'doers-e2e-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const out = await fieldsRoundTrip(client as unknown as AnyClient, 'SDK v2');
    await client.close();

    assertFields(out, 'SDK v2');
  });
});

describe('official 2026-07-28 client: queries and views', () => {
  test('ten queries, a shared view saved by the owner and run by another member, every result valid against its outputSchema', async () => {
    const client = (name: string) => new ModernClient({ name, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const owner = client('doers-e2e-v2');
    const member = client('doers-e2e-v2-member');
    await owner.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));
    await member.connect(
      new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${await memberToken()}` } } }),
    );

    const out = await queriesRoundTrip(owner as unknown as AnyClient, member as unknown as AnyClient, 'SDK v2');
    await Promise.all([owner.close(), member.close()]);

    assert.ok(out.found.filter((n) => n > 0).length >= 8, `found ${out.found.join(', ')}`);
    assert.equal(out.saved.isError, false, JSON.stringify(out.saved.content));
    assert.equal((out.run.structuredContent as any).view.group, 'assignee');
    assert.deepEqual((out.run.structuredContent as any).tasks, (out.direct.structuredContent as any).tasks);
    assert.ok((out.listed.structuredContent as any).views.some((v: any) => v.name === 'SDK v2 overdue by person'));
  });
});

describe('official 2026-07-28 client (@modelcontextprotocol/client 2.x, versionNegotiation auto)', () => {
  const modernClient = (capabilities: Record<string, unknown> = {}) =>
    new ModernClient({ name: 'doers-e2e-v2', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } });

  test('negotiates 2026-07-28, lists tools and calls me_get', async () => {
    const started = new Date();
    const client = modernClient();

    await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));
    const negotiated = {
      era: client.getProtocolEra(),
      version: client.getNegotiatedProtocolVersion(),
      server: client.getServerVersion()?.name,
    };
    const { tools } = await client.listTools();
    const result = await client.callTool({ name: 'me_get', arguments: {} });
    await client.close();

    assert.deepEqual(negotiated, { era: 'modern', version: '2026-07-28', server: 'doers' });
    assert.ok(tools.some((t) => t.name === 'me_get'));
    assert.equal(result.isError, false);
    assertMe(result.structuredContent, started);
  });

  test('creates and changes tasks in bulk, each item on its own, every result valid against its outputSchema', async () => {
    const client = modernClient();
    await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const outcome = await bulkRoundTrip(client as unknown as AnyClient, 'SDK v2');
    await client.close();

    assertBulk(outcome);
  });

  test('makes a recurring task from a phrase, completes it twice and undoes one completion, every result valid', async () => {
    const client = modernClient();
    await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const outcome = await recurringRoundTrip(client as unknown as AnyClient, 'SDK v2');
    await client.close();

    assertRecurring(outcome);
  });

  test('makes a parent and its subtasks in one call, completes it without and with them, every result valid', async () => {
    const client = modernClient();
    await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const outcome = await subtaskRoundTrip(client as unknown as AnyClient, 'SDK v2');
    await client.close();

    assertSubtasks(outcome);
  });

  test('adds a text file and a PNG, lists them, reads both back, deletes one (asked, confirmed) and undoes it, every result valid', async () => {
    const client = modernClient({ elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push((request.params as { message: string }).message);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));

    const outcome = await attachmentRoundTrip(client as unknown as Parameters<typeof attachmentRoundTrip>[0], 'SDK v2');
    await client.close();

    assertAttachments(outcome);
    assert.equal(asked.length, 1);
    assert.match(asked[0]!, /^Delete the attachment 'signature\.png' \(70 B\) of DEMO-\d+\?/);
  });

  test('a refusal carries its reason and data in _meta["sh.doers/refusal"]: the client branches on the reason, retries with the version the data names, and tells not-found and invalid arguments apart', async () => {
    // Arrange: a task, changed once behind the client's back.
    const client = modernClient();
    await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));
    const made = (await client.callTool({ name: 'task_create', arguments: { title: `Typed refusal ${Date.now()}` } }))
      .structuredContent as {
      key: string;
    };
    await client.callTool({ name: 'task_update', arguments: { taskId: made.key, version: 1, priority: 'P2' } });
    const refusalOf = (r: { isError?: boolean; _meta?: Record<string, unknown> }) =>
      r.isError ? (r._meta?.['sh.doers/refusal'] as { reason: string; code: string; data: Record<string, any> }) : undefined;

    // Act: a stale version; then what the data says; then a task that is not there; then an unknown argument.
    const stale = await client.callTool({ name: 'task_update', arguments: { taskId: made.key, version: 1, title: 'Renamed' } });
    const conflict = refusalOf(stale);
    const retried =
      conflict?.reason === 'version-conflict'
        ? await client.callTool({ name: 'task_update', arguments: { taskId: made.key, version: conflict.data.current, title: 'Renamed' } })
        : undefined;
    const missing = refusalOf(await client.callTool({ name: 'task_get', arguments: { taskId: 'DEMO-999999' } }));
    const invalid = refusalOf(await client.callTool({ name: 'task_get', arguments: { taskId: made.key, colour: 'red' } }));
    await client.close();

    // Assert
    assert.deepEqual(conflict, { reason: 'version-conflict', code: 'ERR_CONFLICT', data: { current: 2, expected: 1 } });
    assert.equal(retried?.isError, false);
    assert.equal((retried?.structuredContent as { title: string } | undefined)?.title, 'Renamed');
    assert.equal(missing?.reason, 'not-found');
    assert.equal(missing?.code, 'ERR_NOT_FOUND');
    assert.equal(invalid?.reason, 'invalid-argument');
    assert.deepEqual(invalid?.data, { issues: [{ param: 'colour', problem: 'not a parameter of this call' }] });
  });

  test('without a token, connecting fails with the HTTP 401 the server answered', async () => {
    const client = modernClient();

    const failure = await client.connect(new ModernTransport(new URL(urlOf(server)))).then(
      () => assert.fail('connected without a credential'),
      (err: unknown) => err,
    );

    assert.ok(failure instanceof SdkHttpError, String(failure));
    assert.equal(failure.code, 'CLIENT_HTTP_AUTHENTICATION');
    assert.equal(failure.status, 401);
    assert.equal(JSON.parse(String(failure.data.text)).error.code, -32001);
  });

  test('completes a multi round-trip call: the client answers the elicitation and the tool finishes', async () => {
    const client = modernClient({ elicitation: { form: {} } });
    const asked: unknown[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { name: 'Alice' } };
    });

    await client.connect(new ModernTransport(new URL(urlOf(server)), { requestInit: { headers: bearer() } }));
    const result = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
    await client.close();

    assert.equal(asked.length, 1);
    assert.equal((asked[0] as { message: string }).message, 'What is your name?');
    assert.equal(result.isError, false);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Alice!' }]);
  });
});
