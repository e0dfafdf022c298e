import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Webhook as Verifier } from 'standardwebhooks';
import type { LocalServer } from '../../lambda/local/server.js';
import { notifyRecords } from '../../lambda/workspace/notify/notifier.js';
import { writesOf } from '../../lambda/workspace/store/writes.js';
import { addWebhook } from '../../lambda/workspace/webhooks/webhook-writer.js';
import { startTestServer, urlOf } from '../helpers/local.js';
import { sentMails } from '../helpers/local-mail.js';
import {
  addMember,
  addToken,
  caller,
  createTestWorkspace,
  type TestWorkspace,
  toolText,
  writeContextOf,
} from '../helpers/workspace-fixtures.js';

/**
 * Telling people end to end (docs/notifications.md): Ada assigns and mentions, the notifier turns
 * her changes' records into Grace's inbox entries and mail, and Grace reads them through the official
 * 2026-07-28 client; reminders fire at their minute under a clock the test moves; nobody is told of
 * their own change, and a record handed over twice tells nobody twice.
 */

let server: LocalServer;
let ws: TestWorkspace;
let ada: { userId: string; token: string; name: string };
let grace: { userId: string; token: string; name: string; email: string };

before(async () => {
  server = await startTestServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' }, { demo: false, notifierPolls: false });
  ws = await createTestWorkspace(server, { timeZone: 'Europe/Berlin' });
  // Two named people, so mentions by name have someone to find.
  const { directory } = writesOf(server.app.services);
  const person = async (name: string) => {
    const userId = `usr_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    const email = `${name.split(' ')[0]!.toLowerCase()}-${userId.slice(-4)}@example.test`;
    await directory.createMember({
      workspaceId: ws.workspaceId,
      userId,
      email,
      name,
      role: 'member',
      timeZone: 'Europe/Berlin',
      status: 'active',
      createdAt: new Date().toISOString(),
    });
    return { userId, email, name, token: await addToken(server, ws.workspaceId, userId, ['tasks:read', 'tasks:write', 'team:read']) };
  };
  ada = await person('Ada Lovelace');
  grace = await person('Grace Hopper');
});
after(() => server.close());

const modern = async (token: string) => {
  const client = new ModernClient({ name: 'doers-e2e-inbox', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new ModernTransport(new URL(urlOf(server, '')), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
};

/** A tool refusal's typed reason and data (every revision carries them in `_meta`). */
const refusal = (r: object) => (r as { _meta: Record<string, { data: Record<string, unknown> }> })._meta['sh.doers/refusal']!;

type Entry = { entryId: string; kind: string; task: string; by: string; client: string; state: string; detail?: string };

describe('the inbox through the official v2 client', () => {
  test("Grace sees Ada's assignment and mention, unread first, with who, how and which task; Ada is told nothing of her own changes", async () => {
    // Arrange
    const asAda = caller(server, ada.token);
    const made = await asAda('task_create', { title: 'Acme quote', assignee: grace.userId });
    assert.equal(made.isError, false, toolText(made));
    const other = await asAda('task_create', { title: 'Budget review' });
    const mention = await asAda('comment_add', { taskId: other.structuredContent.key, body: 'Numbers look off, @grace can you check?' });
    assert.equal(mention.isError, false, toolText(mention));

    // Act
    const read = await server.notifier.drain();
    const client = await modern(grace.token);
    const listed = (await client.callTool({ name: 'inbox_list', arguments: {} })) as {
      isError?: boolean;
      structuredContent: { entries: Entry[]; unread: number };
      content: { text: string }[];
    };
    const me = (await client.callTool({ name: 'me_get', arguments: {} })) as { structuredContent: { unread: number } };
    const adaInbox = await caller(server, ada.token)('inbox_list', {});
    await client.close();

    // Assert
    assert.ok(read >= 3, `records read: ${read}`);
    assert.equal(listed.isError, false, listed.content[0]!.text);
    const kinds = listed.structuredContent.entries.map((e) => `${e.kind} ${e.task}`);
    assert.deepEqual(kinds, [`mentioned ${other.structuredContent.key}`, `assigned ${made.structuredContent.key}`]);
    for (const e of listed.structuredContent.entries) {
      assert.equal(e.by, 'Ada Lovelace');
      assert.equal(e.state, 'unread');
      assert.notEqual(e.client, 'unknown client');
    }
    assert.equal(listed.structuredContent.unread, 2);
    assert.equal(me.structuredContent.unread, 2);
    assert.match(listed.content[0]!.text, /Ada Lovelace mentioned you/);
    assert.equal(adaInbox.structuredContent.entries.length, 0, 'your own changes never notify you');
    // The comment keeps a reference and shows the name now.
    const comments = await asAda('comments_list', { taskId: other.structuredContent.key });
    assert.match(comments.structuredContent.comments[0].body, /@Grace Hopper can you check/);
  });

  test('a record handed over twice files nothing twice', async () => {
    // Arrange
    const before = await caller(server, grace.token)('inbox_list', {});
    const all = await server.app.services.activity.since(ws.workspaceId, 'act_', 'act_~', 100);

    // Act: the stream hands every record so far over again.
    await notifyRecords({ stores: server.app.services, publicUrl: server.url, activityDays: 90 }, all);
    const afterwards = await caller(server, grace.token)('inbox_list', {});

    // Assert
    assert.deepEqual(
      afterwards.structuredContent.entries.map((e: Entry) => e.entryId),
      before.structuredContent.entries.map((e: Entry) => e.entryId),
    );
  });

  test('inbox_mark marks up to an entry read, and done entries leave the list', async () => {
    // Arrange
    const asGrace = caller(server, grace.token);
    const list = await asGrace('inbox_list', {});
    const [newest, oldest] = list.structuredContent.entries as Entry[];

    // Act
    const marked = await asGrace('inbox_mark', { upTo: oldest!.entryId, state: 'read' });
    const afterRead = await asGrace('inbox_list', {});
    const done = await asGrace('inbox_mark', { entries: [newest!.entryId], state: 'done' });
    const afterDone = await asGrace('inbox_list', {});
    const neither = await asGrace('inbox_mark', { state: 'read' });

    // Assert
    assert.equal(marked.structuredContent.marked, 1);
    assert.deepEqual(
      afterRead.structuredContent.entries.map((e: Entry) => [e.entryId, e.state]),
      [
        [newest!.entryId, 'unread'],
        [oldest!.entryId, 'read'],
      ],
    );
    assert.equal(done.structuredContent.unread, 0);
    assert.deepEqual(
      afterDone.structuredContent.entries.map((e: Entry) => e.entryId),
      [oldest!.entryId],
    );
    assert.equal(neither.isError, true);
    assert.equal(refusal(neither).data.param, 'entries');
  });
});

/** The instant of a wall-clock time in Berlin on `date` (the members' zone). */
const berlin = (date: string, time: string): Date => {
  const guess = new Date(`${date}T${time}:00Z`);
  const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', hourCycle: 'h23' }).format(guess);
  return new Date(guess.getTime() - (Number(local) - guess.getUTCHours()) * 3_600_000);
};
const tomorrowInBerlin = (): string => {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
  return new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
};

describe('watching', () => {
  test('watch through tasks_update tells of comments and due dates, task_get lists the watchers, and watch: false stops it', async () => {
    // Arrange
    const asAda = caller(server, ada.token);
    const asGrace = caller(server, grace.token);
    const made = await asAda('task_create', { title: 'Plan the offsite' });
    const key = made.structuredContent.key;
    const watching = await asGrace('tasks_update', { tasks: [{ taskId: key, watch: true }] });
    assert.equal(watching.isError, false, toolText(watching));

    // Act
    await asAda('comment_add', { taskId: key, body: 'Venue shortlist attached' });
    await asAda('task_update', { taskId: key, version: 1, dueDate: tomorrowInBerlin() });
    await server.notifier.drain();
    const told = (await asGrace('inbox_list', { unread: true })).structuredContent.entries.filter((e: Entry) => e.task === key);
    const got = await asGrace('task_get', { taskId: key });
    const stop = await asGrace('task_update', { taskId: key, version: 2, watch: false });
    await asAda('comment_add', { taskId: key, body: 'Booked' });
    await server.notifier.drain();
    const after = (await asGrace('inbox_list', { unread: true })).structuredContent.entries.filter((e: Entry) => e.task === key);

    // Assert
    assert.deepEqual(told.map((e: Entry) => e.kind).sort(), ['comment', 'due']);
    assert.deepEqual(got.structuredContent.watchers.map((w: { name: string }) => w.name).sort(), ['Ada Lovelace', 'Grace Hopper']);
    assert.match(toolText(stop), /You no longer watch/);
    assert.equal(after.length, told.length, 'no entry after watch: false');
  });
});

describe('e-mail through the local SES API', () => {
  test('a member who wants each event gets one mail per entry, once; a digest at their hour holds what is unread', async () => {
    // Arrange
    const asGrace = caller(server, grace.token);
    const asAda = caller(server, ada.token);
    const each = await asGrace('me_update', { email: 'each' });
    assert.equal(each.isError, false, toolText(each));
    const made = await asAda('task_create', { title: 'Order toner', assignee: grace.userId });

    // Act
    await server.notifier.drain();
    await server.notifier.drain();
    const mails = await sentMails(server.sesUrl, { to: grace.email });

    // Assert
    const toner = mails.filter((m) => m.subject.includes(made.structuredContent.key));
    assert.equal(toner.length, 1, mails.map((m) => m.subject).join('\n'));
    assert.match(toner[0]!.subject, /Ada Lovelace assigned you/);
    assert.match(toner[0]!.text, /Order toner/);

    // Arrange: a digest at 07:00 Berlin time.
    const digest = await asGrace('me_update', { email: 'digest', digestHour: 7 });
    assert.equal(digest.structuredContent.notify.digestHour, 7);
    const later = await asAda('task_create', { title: 'Book the venue', assignee: grace.userId });
    await server.notifier.drain();
    // Tomorrow at 07:00: before the reminders' minutes below, so the minute job need not catch up on a day.
    const seven = berlin(tomorrowInBerlin(), '07:00');

    // Act
    await server.notifier.minute(new Date(seven.getTime() - 120_000));
    await server.notifier.minute(seven);
    const digests = (await sentMails(server.sesUrl, { to: grace.email })).filter((m) => !m.subject.includes('assigned you'));

    // Assert
    assert.equal(digests.length, 1, digests.map((m) => m.subject).join('\n'));
    assert.match(digests[0]!.text, new RegExp(later.structuredContent.key));
  });
});

describe('reminders', () => {
  test('a reminder in words fires once, at its minute, into its member’s inbox; a relative one follows the due date', async () => {
    // Arrange
    const asGrace = caller(server, grace.token);
    const day = tomorrowInBerlin();
    const made = await asGrace('task_create', {
      title: 'Call the printer',
      dueDate: `${day} 15:00`,
      remind: ['tomorrow 9am', '1 hour before'],
    });
    assert.equal(made.isError, false, toolText(made));
    const got = await asGrace('task_get', { taskId: made.structuredContent.key });
    const at = got.structuredContent.reminders.map((r: { at: string }) => r.at);
    assert.deepEqual(at, [berlin(day, '09:00').toISOString(), berlin(day, '14:00').toISOString()]);
    assert.match(toolText(made), /remind 'tomorrow 9am' at/);

    // Act
    const early = await server.notifier.minute(new Date(berlin(day, '09:00').getTime() - 60_000));
    const beforeNine = (await asGrace('inbox_list', { kind: 'reminder' })).structuredContent.entries;
    await server.notifier.minute(berlin(day, '09:00'));
    await server.notifier.minute(new Date(berlin(day, '09:00').getTime() + 30_000));
    const afterNine = (await asGrace('inbox_list', { kind: 'reminder' })).structuredContent.entries;

    // Assert
    assert.ok(early.minutes >= 1);
    assert.equal(beforeNine.length, 0, 'not before its minute');
    assert.equal(afterNine.length, 1, 'once, at its minute');
    assert.equal(afterNine[0].task, made.structuredContent.key);
    assert.equal(afterNine[0].detail, 'tomorrow 9am');
  });

  test('moving the due date moves a relative reminder; undo puts reminders back; a reminder in the past is refused naming remind', async () => {
    // Arrange
    const asGrace = caller(server, grace.token);
    const day = tomorrowInBerlin();
    const made = await asGrace('task_create', { title: 'Send the invoice', dueDate: `${day} 12:00`, remind: '30 minutes before' });

    // Act
    const moved = await asGrace('task_update', { taskId: made.structuredContent.key, version: 1, dueDate: `${day} 16:00` });
    const afterMove = await asGrace('task_get', { taskId: made.structuredContent.key });
    const cleared = await asGrace('task_update', { taskId: made.structuredContent.key, version: 2, remind: null });
    const undone = await asGrace('change_undo', { activityId: cleared.structuredContent.activityId });
    const afterUndo = await asGrace('task_get', { taskId: made.structuredContent.key });
    const past = await asGrace('task_update', {
      taskId: made.structuredContent.key,
      version: afterUndo.structuredContent.version,
      remind: 'yesterday 9am',
    });

    // Assert
    assert.equal(moved.isError, false, toolText(moved));
    assert.equal(afterMove.structuredContent.reminders[0].at, berlin(day, '15:30').toISOString());
    assert.equal(undone.isError, false, toolText(undone));
    assert.deepEqual(
      afterUndo.structuredContent.reminders.map((r: { at: string; words: string }) => [r.words, r.at]),
      [['30 minutes before', berlin(day, '15:30').toISOString()]],
    );
    assert.equal(past.isError, true);
    assert.equal(refusal(past).data.param, 'remind');
  });
});

describe('webhooks through the notifier', () => {
  test('a receiver verifies every signature and sees each event exactly once, the first answered 500 and tried again the next minute; no notes leave', async () => {
    // Arrange: a receiver on loopback that verifies each delivery with the standardwebhooks package.
    const got: { id: string; type: string; verified: boolean; status: number; body: string }[] = [];
    let secret = '';
    let failNext = true;
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verified = false;
        try {
          new Verifier(secret).verify(body, req.headers as Record<string, string>);
          verified = true;
        } catch {}
        const status = failNext ? 500 : 200;
        failNext = false;
        got.push({ id: String(req.headers['webhook-id']), type: JSON.parse(body).type, verified, status, body });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/doers`;
    const owner = await writeContextOf(server, ws.workspaceId, ws.owner);
    const added = await addWebhook(owner, { url, events: ['assigned', 'completed'] }, { allowLoopback: true });
    secret = added.webhook.secret;
    // Its record names the host only: the path of a webhook's URL is as secret as its secret.
    const history = await caller(server, ws.viewer.token)('activity_list', { kind: 'workspace' });
    assert.ok(JSON.stringify(history.structuredContent).includes('webhook to 127.0.0.1'), JSON.stringify(history.structuredContent));
    assert.ok(!JSON.stringify(history.structuredContent).includes('/doers'), 'no path of the URL in the history');
    const asAda = caller(server, ada.token);
    const made = await asAda('task_create', { title: 'Renew the domain', notes: 'password hint: 4711', assignee: grace.userId });
    const done = await asAda('task_complete', { taskId: made.structuredContent.key });
    assert.equal(done.isError, false, toolText(done));

    try {
      // Act: the changes told (the first delivery answered 500), then the minute job a minute on.
      await server.notifier.drain();
      await server.notifier.drain();
      const firstRound = got.length;
      await server.notifier.minute(new Date(Date.now() + 61_000));
      await server.notifier.minute(new Date(Date.now() + 122_000));

      // Assert
      assert.equal(firstRound, 1, "the completion waits behind its task's assignment, still to be delivered");
      assert.ok(
        got.every((g) => g.verified),
        'every delivery is signed with the webhook secret',
      );
      const delivered = got.filter((g) => g.status === 200);
      assert.deepEqual(
        delivered.map((g) => g.type),
        ['task.assigned', 'task.completed'],
        'in order per task',
      );
      assert.equal(new Set(delivered.map((g) => g.id)).size, delivered.length, 'each event exactly once');
      assert.equal(got.length, 3, 'the one answered 500, tried again once');
      assert.ok(
        got.every((g) => !g.body.includes('4711')),
        'no notes leave in a webhook',
      );
      assert.ok(
        delivered.every((g) => g.id.startsWith('act_')),
        'the webhook-id is the record, for deduplication',
      );
    } finally {
      receiver.close();
    }
  });
});

describe("reminders in their member's zone", () => {
  test('a change by a member in another zone keeps a reminder at its own member’s time of day', async () => {
    // Arrange: Grace (Berlin) is reminded the day before at 17:00; a colleague in New York moves the due date.
    const colleague = await addMember(server, ws.workspaceId, 'member', 'America/New_York');
    const asGrace = caller(server, grace.token);
    const day = tomorrowInBerlin();
    const later = new Date(Date.parse(`${day}T00:00:00Z`) + 3 * 86_400_000).toISOString().slice(0, 10);
    const made = await asGrace('task_create', { title: 'Prepare the board pack', dueDate: later, remind: 'the day before at 17:00' });
    assert.equal(made.isError, false, toolText(made));
    const evenLater = new Date(Date.parse(`${later}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

    // Act
    const moved = await caller(server, colleague.token)('task_update', {
      taskId: made.structuredContent.key,
      version: 1,
      dueDate: evenLater,
    });
    const got = await asGrace('task_get', { taskId: made.structuredContent.key });

    // Assert
    assert.equal(moved.isError, false, toolText(moved));
    assert.equal(got.structuredContent.reminders[0].at, berlin(later, '17:00').toISOString());
  });
});
