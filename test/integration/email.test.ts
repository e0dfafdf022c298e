import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { digestMail, noticeMail } from '../../lambda/delivery/email-body.js';
import { createEmailSender, EmailRejectedError, EmailUnavailableError } from '../../lambda/delivery/email-sender.js';
import type { Notice } from '../../lambda/delivery/notice.js';
import { type EmbeddedSes, startEmbeddedSes } from '../../lambda/local/embedded-ses.js';
import { sentMails } from '../helpers/local-mail.js';

// E-mail end to end on loopback: the bodies (lambda/delivery/email-body.ts) sent through the SES v2
// client (lambda/delivery/email-sender.ts) to the local SES API (lambda/local/embedded-ses.ts) and
// read back from its store (test/helpers/local-mail.ts).

const FROM = 'doers@localhost.localdomain';
const PUBLIC_URL = 'http://127.0.0.1:8787';

const notice = (over: Partial<Notice> = {}): Notice => ({
  id: 'act_1:assigned',
  kind: 'assigned',
  workspaceKey: 'DEMO',
  taskKey: 'DEMO-42',
  taskId: 'tsk_42',
  taskTitle: 'Acme quote',
  actorName: 'Ada',
  client: 'Claude 1.2',
  at: '2026-12-05T14:03:00.000Z',
  summary: 'Ada assigned DEMO-42 "Acme quote" to Grace',
  ...over,
});

/** What only a task's notes, a comment or a credential would carry: none of it may reach a mail. */
const SECRETS = {
  notes: 'NOTES-ONLY-PHRASE call the lawyer',
  body: 'COMMENT-ONLY-PHRASE the price is too high',
  commentText: 'COMMENT-ONLY-PHRASE again',
  token: 'dt_TOKENSECRET0123456789',
};
const SECRET_WORDS = ['NOTES-ONLY-PHRASE', 'COMMENT-ONLY-PHRASE', 'TOKENSECRET'];

/** A notice as a careless caller might pass it: an object that carries more than the Notice's fields. */
const noticeCarrying = (over: Partial<Notice> = {}): Notice => ({ ...notice(over), ...SECRETS }) as Notice;

let ses: EmbeddedSes;
before(async () => {
  ses = await startEmbeddedSes();
});
after(async () => {
  await ses.close();
});

describe('a notice by e-mail', () => {
  test('arrives to the member, from the sender, saying who, through what, when and how to see it', async () => {
    // Arrange
    const sender = createEmailSender({ from: FROM, endpoint: ses.url });
    const mail = noticeMail(noticeCarrying(), { recipientName: 'Grace', publicUrl: PUBLIC_URL });

    // Act
    await sender.send({ to: 'grace@example.com', ...mail });

    // Assert
    const [got, ...more] = await sentMails(ses.url, { to: 'grace@example.com' });
    assert.deepEqual(more, []);
    assert.equal(got!.from, FROM);
    assert.equal(got!.subject, '[DEMO] Ada assigned you DEMO-42 "Acme quote"');
    for (const body of [got!.text, got!.html]) {
      assert.match(body, /Grace/);
      assert.match(body, /Ada assigned DEMO-42 (&quot;|")Acme quote(&quot;|") to Grace/);
      assert.match(body, /Claude 1\.2/);
      assert.match(body, /Sat 5 Dec 2026, 14:03 UTC/);
      assert.match(body, /2026-12-05T14:03:00\.000Z/);
      assert.match(body, /ask your assistant for your inbox/);
      assert.match(body, /DEMO-42/);
      assert.match(body, /http:\/\/127\.0\.0\.1:8787/);
      for (const word of SECRET_WORDS) assert.ok(!body.includes(word), `${word} in ${body}`);
    }
    assert.match(got!.text, /^Who: +Ada$/m);
    assert.match(got!.text, /^Through: +Claude 1\.2$/m);
    assert.match(got!.html, /<time datetime="2026-12-05T14:03:00\.000Z">/);
  });

  test('each kind has its own subject, to the recipient', () => {
    const subjects = Object.fromEntries(
      (['assigned', 'mentioned', 'status', 'completed', 'comment', 'due', 'unblocked', 'reminder'] as const).map((kind) => [
        kind,
        noticeMail(notice({ kind }), { recipientName: 'Grace', publicUrl: PUBLIC_URL }).subject,
      ]),
    );
    assert.deepEqual(subjects, {
      assigned: '[DEMO] Ada assigned you DEMO-42 "Acme quote"',
      mentioned: '[DEMO] Ada mentioned you on DEMO-42 "Acme quote"',
      status: '[DEMO] Ada changed the status of DEMO-42 "Acme quote"',
      completed: '[DEMO] Ada completed DEMO-42 "Acme quote"',
      comment: '[DEMO] Ada commented on DEMO-42 "Acme quote"',
      due: '[DEMO] DEMO-42 "Acme quote" is due',
      unblocked: '[DEMO] DEMO-42 "Acme quote" is no longer blocked',
      reminder: '[DEMO] Reminder: DEMO-42 "Acme quote"',
    });
  });

  test('markup in a title or a name stays text in the HTML, and a line break never reaches the subject', () => {
    const mail = noticeMail(notice({ taskTitle: `<script>alert("x")</script> & 'q'\r\nBcc: eve@example.com`, actorName: '<b>Ada</b>' }), {
      recipientName: 'Grace & "Co"',
      publicUrl: 'http://127.0.0.1:8787/?a=1&b="2"',
    });

    assert.ok(!/[\r\n]/.test(mail.subject), mail.subject);
    assert.equal(mail.subject, `[DEMO] <b>Ada</b> assigned you DEMO-42 "<script>alert("x")</script> & 'q' Bcc: eve@example.com"`);
    assert.ok(!mail.html.includes('<script>'), mail.html);
    assert.ok(!mail.html.includes('<b>Ada'), mail.html);
    assert.match(mail.html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &#39;q&#39;/);
    assert.match(mail.html, /Hello Grace &amp; &quot;Co&quot;,/);
    assert.match(mail.html, /href="http:\/\/127\.0\.0\.1:8787\/\?a=1&amp;b=&quot;2&quot;"/);
    // The text part is not HTML: it keeps the characters as they are.
    assert.match(mail.text, /<script>alert\("x"\)<\/script> & 'q'/);
  });

  test('a long title is cut in the subject, not in the body', () => {
    const title = 'x'.repeat(200);
    const mail = noticeMail(notice({ taskTitle: title }), { recipientName: 'Grace', publicUrl: PUBLIC_URL });
    assert.equal(mail.subject, `[DEMO] Ada assigned you DEMO-42 "${'x'.repeat(79)}…"`);
    assert.ok(mail.text.includes(title));
  });
});

describe('a daily digest by e-mail', () => {
  test('lists the day’s notices grouped by task, oldest first, and nothing but their fields', async () => {
    // Arrange: three notices on two tasks, out of order
    const notices = [
      noticeCarrying({
        id: 'a3',
        kind: 'comment',
        at: '2026-12-05T15:00:00.000Z',
        actorName: 'Linus',
        summary: 'Linus commented on DEMO-42 "Acme quote"',
      }),
      noticeCarrying({
        id: 'a2',
        kind: 'completed',
        taskKey: 'DEMO-7',
        taskId: 'tsk_7',
        taskTitle: 'Ship <v2>',
        at: '2026-12-05T10:00:00.000Z',
        client: 'account page',
        summary: 'Ada completed DEMO-7 "Ship <v2>"',
      }),
      noticeCarrying({ id: 'a1', at: '2026-12-05T09:00:00.000Z' }),
    ];
    const sender = createEmailSender({ from: FROM, endpoint: ses.url });
    const mail = digestMail(notices, { recipientName: 'Grace', date: '2026-12-05', publicUrl: PUBLIC_URL, workspaceKey: 'DEMO' });

    // Act
    await sender.send({ to: 'digest@example.com', ...mail });

    // Assert
    const [got, ...more] = await sentMails(ses.url, { to: 'digest@example.com' });
    assert.deepEqual(more, []);
    assert.equal(got!.from, FROM);
    assert.equal(got!.subject, '[DEMO] Your digest for 2026-12-05: 3 updates on 2 tasks');
    const lines = got!.text.split('\n');
    const at = (needle: string) => lines.findIndex((l) => l.includes(needle));
    assert.equal(lines[at('DEMO-42 "Acme quote"')], 'DEMO-42 "Acme quote"');
    assert.equal(
      lines[at('DEMO-42 "Acme quote"') + 1],
      '  5 Dec 09:00 UTC  Ada assigned DEMO-42 "Acme quote" to Grace (through Claude 1.2)',
    );
    assert.equal(lines[at('DEMO-42 "Acme quote"') + 2], '  5 Dec 15:00 UTC  Linus commented on DEMO-42 "Acme quote" (through Claude 1.2)');
    assert.equal(lines[at('DEMO-7 "Ship <v2>"')], 'DEMO-7 "Ship <v2>"');
    assert.equal(lines[at('DEMO-7 "Ship <v2>"') + 1], '  5 Dec 10:00 UTC  Ada completed DEMO-7 "Ship <v2>" (through account page)');
    assert.ok(at('DEMO-42 "Acme quote"') < at('DEMO-7 "Ship <v2>"'), 'the task with the earliest notice comes first');
    assert.match(got!.text, /ask your assistant for your inbox/);
    assert.match(got!.html, /<h3[^>]*>DEMO-7 &quot;Ship &lt;v2&gt;&quot;<\/h3>/);
    assert.equal(got!.html.match(/<li>/g)?.length, 3);
    for (const body of [got!.text, got!.html]) for (const word of SECRET_WORDS) assert.ok(!body.includes(word), `${word} in ${body}`);
  });

  test('one notice reads in the singular; none says nothing is new', () => {
    const opts = { recipientName: 'Grace', date: '2026-12-05', publicUrl: PUBLIC_URL, workspaceKey: 'DEMO' };
    assert.equal(digestMail([notice()], opts).subject, '[DEMO] Your digest for 2026-12-05: 1 update on 1 task');
    const empty = digestMail([], opts);
    assert.equal(empty.subject, '[DEMO] Your digest for 2026-12-05: nothing new');
    assert.match(empty.text, /Nothing new in DEMO on 2026-12-05\./);
  });
});

describe('what a failed send is', () => {
  test('the local SES unreachable is a retryable EmailUnavailableError', async () => {
    // Arrange: a local SES that has stopped, so its port refuses connections
    const gone = await startEmbeddedSes();
    await gone.close();
    const sender = createEmailSender({ from: FROM, endpoint: gone.url });

    // Act + Assert
    await assert.rejects(
      sender.send({ to: 'grace@example.com', subject: 's', text: 't', html: '<p>h</p>' }),
      (err: unknown) => err instanceof EmailUnavailableError && err.retryable && err.code === 'ERR_EMAIL_UNAVAILABLE',
    );
  });

  /** A loopback stand-in for SES answering every request with one SES v2 error. */
  const failingSes = async (status: number, type: string): Promise<{ url: string; server: Server; requests: () => number }> => {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
        res.end(JSON.stringify({ message: `${type} from the stand-in` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests: () => requests };
  };

  for (const [status, type] of [
    [400, 'MessageRejected'],
    [400, 'MailFromDomainNotVerifiedException'],
    [400, 'AccountSuspendedException'],
  ] as const) {
    test(`${type} is an EmailRejectedError, not retried`, async () => {
      const stub = await failingSes(status, type);
      try {
        const sender = createEmailSender({ from: FROM, endpoint: stub.url });
        await assert.rejects(
          sender.send({ to: 'nobody@example.com', subject: 's', text: 't', html: '<p>h</p>' }),
          (err: unknown) => err instanceof EmailRejectedError && !err.retryable && err.code === 'ERR_EMAIL_REJECTED' && err.reason === type,
        );
        assert.equal(stub.requests(), 1, 'a rejected mail is not sent again');
      } finally {
        stub.server.close();
      }
    });
  }

  for (const [status, type] of [
    [429, 'TooManyRequestsException'],
    [500, 'InternalServiceErrorException'],
  ] as const) {
    test(`${type} is a retryable EmailUnavailableError`, async () => {
      const stub = await failingSes(status, type);
      try {
        const sender = createEmailSender({ from: FROM, endpoint: stub.url });
        await assert.rejects(
          sender.send({ to: 'grace@example.com', subject: 's', text: 't', html: '<p>h</p>' }),
          (err: unknown) => err instanceof EmailUnavailableError && err.retryable,
        );
      } finally {
        stub.server.close();
      }
    });
  }
});

test('two local SES APIs in one process keep their mail apart', async () => {
  const other = await startEmbeddedSes();
  try {
    await createEmailSender({ from: FROM, endpoint: other.url }).send({
      to: 'apart@example.com',
      subject: 's',
      text: 't',
      html: '<p>h</p>',
    });

    assert.equal((await sentMails(other.url, { to: 'apart@example.com' })).length, 1);
    assert.deepEqual(await sentMails(ses.url, { to: 'apart@example.com' }), []);
  } finally {
    await other.close();
  }
});
