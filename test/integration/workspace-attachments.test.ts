import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type EmbeddedS3, LOCAL_ATTACHMENT_BUCKET, startEmbeddedS3 } from '../../lambda/local/embedded-s3.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { type StoreWrites, writesOf } from '../../lambda/workspace/store/writes.js';
import { modernCall, urlOf } from '../helpers/local.js';
import { type S3Proxy, startS3Proxy } from '../helpers/s3-proxy.js';
import { caller, createTestWorkspace, startOwnWorkspacesServer, type TestWorkspace, toolText } from '../helpers/workspace-fixtures.js';

// Attachments end to end against the embedded DynamoDB and the embedded S3 API (s3rver, behind a
// proxy that counts its requests and can throttle): adding text and images, reading them back with
// resources/read, deleting with confirmation and undo, every refusal with nothing stored, S3 down.
// A task's 100 files, one by one, are a volume test of their own (attachments-volume.test.ts).

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let s3: EmbeddedS3;
let proxy: S3Proxy;
let server: LocalServer;
let ws: TestWorkspace;
let other: TestWorkspace;
let bucket: S3Client;

before(async () => {
  s3 = await startEmbeddedS3(':memory:');
  proxy = await startS3Proxy(s3.endpoint);
  server = await startOwnWorkspacesServer({
    DOERS_S3_ENDPOINT: proxy.endpoint,
    DOERS_ATTACHMENT_BUCKET: LOCAL_ATTACHMENT_BUCKET,
    DOERS_ATTACHMENT_MAX_MB: '1',
    DOERS_ATTACHMENT_QUOTA_MB: '2',
  });
  [ws, other] = await Promise.all([createTestWorkspace(server), createTestWorkspace(server)]);
  bucket = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
});
after(async () => {
  bucket?.destroy();
  await server?.close();
  await proxy?.stop();
  await s3?.close();
});

const text = toolText;
const m = () => caller(server, ws.member.token);
type Added = { attachmentId: string; taskId: string; name: string; type: string; size: number; uri: string; activityId: string };
type Task = {
  key: string;
  taskId: string;
  version: number;
  attachments?: number;
  files?: { attachmentId: string; name: string; type: string; size: number }[];
};

const task = async (title: string, call = m()) => (await call('task_create', { title })).structuredContent as Task;
const get = async (key: string, call = m()) => (await call('task_get', { taskId: key })).structuredContent as Task;
const add = async (args: Record<string, unknown>, call = m()) => call('attachment_add', args);
const objects = async (prefix: string) =>
  ((await bucket.send(new ListObjectsV2Command({ Bucket: LOCAL_ATTACHMENT_BUCKET, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);
const read = (uri: string, token = ws.member.token) => modernCall(server, 'resources/read', { uri }, { token });

/** A 2026-07-28 client of the official SDK that can show forms and answers every question with `answer`. */
const asking = async (token: string, answer: unknown) => {
  const client = new Client(
    { name: 'doers-files', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  const asked: { message: string }[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params as { message: string });
    return answer as never;
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(urlOf(server)), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return { client, asked };
};

describe('attachments', () => {
  test('a text file and a PNG are added, listed by task_get, and read back by resources/read: text as text, the image as its bytes', async () => {
    // Arrange
    const t = await task('Fix the login bug');

    // Act
    const notes = await add({ taskId: t.key, name: 'steps.md', text: '# Steps\n1. Open the page\n', type: 'text/markdown' });
    const shot = await add({ taskId: t.key, name: 'screenshot.png', content: PNG.toString('base64') });
    const listed = await get(t.key);
    const [asText, asBlob] = [await read((notes.structuredContent as Added).uri), await read((shot.structuredContent as Added).uri)];

    // Assert
    assert.equal(notes.isError, false, text(notes));
    assert.equal(shot.isError, false, text(shot));
    assert.deepEqual([(shot.structuredContent as Added).type, (shot.structuredContent as Added).size], ['image/png', PNG.byteLength]);
    assert.equal(listed.attachments, 2);
    assert.deepEqual(
      listed.files?.map((f) => [f.name, f.type, f.size]),
      [
        ['steps.md', 'text/markdown', 25],
        ['screenshot.png', 'image/png', PNG.byteLength],
      ],
    );
    assert.match(text(await m()('task_get', { taskId: t.key })), /Files \(2\): steps\.md \(text\/markdown, 25 B\) doers:\/\/attachments\//);
    assert.match(text(await m()('tasks_search', { text: 'login' })), /📎2/);
    const c1 = asText.json.result.contents[0];
    assert.deepEqual([c1.mimeType, c1.text], ['text/markdown', '# Steps\n1. Open the page\n']);
    const c2 = asBlob.json.result.contents[0];
    assert.equal(c2.mimeType, 'image/png');
    assert.deepEqual(Buffer.from(c2.blob, 'base64'), PNG, 'the same bytes');
    assert.match(text(await m()('activity_list', { task: t.key, limit: 1 })), /attached 'screenshot\.png' to TEST-\d+/);
  });

  test('the type comes from the bytes, not the name, and a declared text type that the bytes are not is refused', async () => {
    // Arrange
    const t = await task('Named wrong');

    // Act
    const png = await add({ taskId: t.key, name: 'notes.txt', content: PNG.toString('base64') });
    const claimed = await add({ taskId: t.key, name: 'notes.txt', content: PNG.toString('base64'), type: 'text/plain' });
    const binary = await add({ taskId: t.key, name: 'data.bin', content: Buffer.from([0, 1, 2, 3, 255]).toString('base64') });

    // Assert
    assert.equal((png.structuredContent as Added).type, 'image/png');
    assert.equal(claimed.isError, true);
    assert.match(text(claimed), /type: says text\/plain, but the bytes are image\/png/);
    assert.equal((binary.structuredContent as Added).type, 'application/octet-stream');
  });

  test('bad input is refused naming the argument, and nothing is stored: no item, no object', async () => {
    // Arrange
    const t = await task('Refusals');
    const theirs = await task('Not yours', caller(server, other.member.token));
    const big = Buffer.alloc(1024 * 1024 + 1, 65).toString('base64');

    // Act and Assert
    for (const [args, said] of [
      [{ name: 'empty.txt', content: '' }, /content: is empty/],
      [{ name: 'x.bin', content: 'not base64!' }, /content: is not base64/],
      [{ name: 'big.txt', content: big }, /content: decodes to more than 1\.0 MB; a file is at most 1\.0 MB \(DOERS_ATTACHMENT_MAX_MB\)/],
      [{ name: '../etc/passwd', text: 'x' }, /name: '\.\.\/etc\/passwd' has path parts/],
      [{ name: 'a\u0007b.txt', text: 'x' }, /name: has control or invisible formatting characters/],
      [{ name: 'x'.repeat(1000), text: 'x' }, /name: .*255/],
      [{ name: 'both.txt', text: 'x', content: 'eA==' }, /content: give the file either as content \(base64\) or as text/],
      [{ name: 'a.txt', text: 'x', commentId: 'cmt-nowhere' }, /commentId: no comment cmt-nowhere on TEST-\d+/],
    ] as const) {
      const r = await add({ taskId: t.key, ...args });
      assert.equal(r.isError, true, JSON.stringify(args).slice(0, 80));
      assert.match(text(r), said);
    }
    const foreign = await add({ taskId: theirs.taskId, name: 'a.txt', text: 'x' });
    assert.equal(foreign.isError, true);
    assert.match(text(foreign), /taskId: no task is .* in this workspace \(not found\)/);
    assert.equal((await get(t.key)).attachments, undefined);
    assert.deepEqual(await objects(`workspaces/${ws.workspaceId}/tasks/${t.taskId}/`), []);
    assert.deepEqual(await objects(`workspaces/${other.workspaceId}/`), []);
  });

  test("a workspace's quota is held by each add: the one that would pass it is refused and stores nothing", async () => {
    // Arrange: 2 MB for the workspace, 1 MB a file
    const own = await createTestWorkspace(server);
    const call = caller(server, own.member.token);
    const t = await task('Quota', call);
    const mb = Buffer.alloc(1024 * 1024, 66).toString('base64');

    // Act
    const first = await add({ taskId: t.key, name: 'one.bin', content: mb }, call);
    const second = await add({ taskId: t.key, name: 'two.bin', content: mb }, call);
    const third = await add({ taskId: t.key, name: 'three.bin', content: mb }, call);

    // Assert
    assert.equal(first.isError, false, text(first));
    assert.equal(second.isError, false, text(second));
    assert.equal(third.isError, true);
    assert.match(text(third), /content: the workspace's attachments would take 3\.0 MB of its 2\.0 MB \(DOERS_ATTACHMENT_QUOTA_MB\)/);
    assert.equal((await get(t.key, call)).attachments, 2);
    assert.equal((await objects(`workspaces/${own.workspaceId}/`)).length, 2, 'the refused one left no object');
  });

  test('delete asks first, keeps the bytes for its undo, and the undo brings the same file back', async () => {
    // Arrange
    const t = await task('Delete me');
    const a = (await add({ taskId: t.key, name: 'contract.txt', text: 'The contract.' })).structuredContent as Added;
    const { client, asked } = await asking(ws.member.token, { action: 'accept', content: { confirm: true } });

    // Act
    const del = await client.callTool({ name: 'attachment_delete', arguments: { attachmentId: a.attachmentId } });
    await client.close();
    const gone = await read(a.uri);
    const afterDelete = await get(t.key);
    const liveObjects = await objects(`workspaces/${ws.workspaceId}/tasks/${t.taskId}/`);
    const undo = await m()('change_undo', { activityId: (del.structuredContent as { activityId: string }).activityId });
    const back = await read(a.uri);

    // Assert
    assert.equal(del.isError, false, JSON.stringify(del.content));
    assert.match(asked[0]!.message, /Delete the attachment 'contract\.txt' \(13 B\) of TEST-\d+\? You can undo this for 90 days\./);
    assert.equal(gone.json.error?.code, -32602, 'a deleted file is not found');
    assert.equal(afterDelete.attachments, undefined);
    assert.deepEqual(liveObjects, [], 'its bytes left the task (a copy waits in the trash for the undo)');
    assert.equal(undo.isError, false, text(undo));
    assert.equal(back.json.result.contents[0].text, 'The contract.');
    assert.equal((await get(t.key)).attachments, 1);
  });

  test('undoing an add deletes the file; a task with files is deleted only after them', async () => {
    // Arrange
    const t = await task('Undo the add');
    const a = (await add({ taskId: t.key, name: 'oops.txt', text: 'wrong file' })).structuredContent as Added;

    // Act
    const refusedDelete = await m()('task_delete', { taskId: t.key });
    const undo = await m()('change_undo', { activityId: a.activityId });
    const deleted = await m()('task_delete', { taskId: t.key });

    // Assert
    assert.equal(refusedDelete.isError, true);
    assert.match(text(refusedDelete), /taskId: TEST-\d+ has 1 attachment\(s\); delete them first \(attachment_delete/);
    assert.equal(undo.isError, false, text(undo));
    assert.equal((await read(a.uri)).json.error?.code, -32602);
    assert.equal(deleted.isError, false, text(deleted));
  });

  test("another workspace's attachment is not found, by id, by resource and by delete, exactly as one of nowhere", async () => {
    // Arrange
    const t = await task('Secret file');
    const a = (await add({ taskId: t.key, name: 'secret.txt', text: 'SECRET-CONTENT' })).structuredContent as Added;
    const as2 = caller(server, other.owner.token);
    const nowhere = `${t.taskId}.zzzzzzzzzz`;

    // Act
    const [res, control] = [await read(a.uri, other.owner.token), await read(`doers://attachments/${nowhere}`, other.owner.token)];
    const [del, delControl] = [
      await as2('attachment_delete', { attachmentId: a.attachmentId }),
      await as2('attachment_delete', { attachmentId: nowhere }),
    ];

    // Assert
    assert.equal(res.json.error?.code, -32602);
    assert.equal(
      JSON.stringify(res.json.error).replaceAll(a.attachmentId, '<id>'),
      JSON.stringify(control.json.error).replaceAll(nowhere, '<id>'),
    );
    assert.ok(!res.text.includes('SECRET-CONTENT'));
    assert.equal(del.isError, true);
    assert.equal(text(del).replaceAll(a.attachmentId, '<id>'), text(delControl).replaceAll(nowhere, '<id>'));
    assert.equal((await read(a.uri)).json.result.contents[0].text, 'SECRET-CONTENT', 'still there for its own workspace');
  });

  test('an add is one S3 PUT; a failed metadata write takes its object out again', async () => {
    // Arrange
    const t = await task('Failing write');
    const writes = writesOf(server.app.services) as { commit: StoreWrites['commit'] };
    const original = writes.commit;
    proxy.seen.length = 0;
    writes.commit = async () => {
      throw Object.assign(new Error('boom'), { name: 'ValidationException' });
    };

    // Act
    let r: Awaited<ReturnType<typeof add>> | undefined;
    try {
      r = await add({ taskId: t.key, name: 'lost.txt', text: 'never kept' }).catch((e: unknown) => ({ isError: true, error: e }) as never);
    } finally {
      writes.commit = original;
    }
    const seen = [...proxy.seen];
    proxy.seen.length = 0;
    await add({ taskId: t.key, name: 'kept.txt', text: 'kept' });

    // Assert
    assert.equal(r?.isError, true, 'the injected write failure refused the add');
    assert.deepEqual(seen, ['PUT', 'DELETE'], 'its object was put, then taken out');
    assert.deepEqual(proxy.seen, ['PUT'], 'an add is one S3 request');
    assert.equal((await objects(`workspaces/${ws.workspaceId}/tasks/${t.taskId}/`)).length, 1);
  });

  test('a body over 1 MiB is taken only as one attachment_add call: a batch of them, or another tool naming it, is 413', async () => {
    // Arrange: 1.1 MiB of base64, within the attachment limit of the transport
    const t = await task('Big bodies');
    const content = Buffer.alloc(850 * 1024, 9).toString('base64');
    const one = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'attachment_add', arguments: { taskId: t.key, name: 'a.bin', content } },
    };
    const other = { ...one, params: { name: 'comment_add', arguments: { taskId: t.key, body: 'attachment_add', padding: content } } };
    const post = (body: unknown) =>
      fetch(urlOf(server), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${ws.member.token}`,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify(body),
      });

    // Act
    const [single, batch, spoofed] = [await post(one), await post([one, { ...one, id: 2 }]), await post(other)];

    // Assert
    assert.equal(single.status, 200, await single.text());
    assert.equal(batch.status, 413);
    assert.equal(spoofed.status, 413);
    assert.equal((await get(t.key)).attachments, 1, 'only the single call attached its file');
  });

  test('S3 throttling is a 503 with Retry-After, and nothing is half-written', async () => {
    // Arrange
    const t = await task('S3 is down');
    proxy.mode = 'slowdown';

    // Act
    let res: Awaited<ReturnType<typeof modernCall>>;
    try {
      res = await modernCall(
        server,
        'tools/call',
        { name: 'attachment_add', arguments: { taskId: t.key, name: 'a.txt', text: 'x' } },
        { token: ws.member.token },
      );
    } finally {
      proxy.mode = 'pass';
    }

    // Assert
    assert.equal(res.status, 503, res.text);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    assert.doesNotMatch(res.text, /SlowDown|s3rver|127\.0\.0\.1/);
    assert.equal((await get(t.key)).attachments, undefined);
  });

  describe('red-team findings (each failed before its fix)', () => {
    test('two deletes at once: one deletes, and its undo still brings the bytes back', async () => {
      // Arrange
      const t = await task('Deleted twice at once');
      const a = (await add({ taskId: t.key, name: 'twice.txt', text: 'Keep me.' })).structuredContent as Added;

      // Act
      const both = await Promise.all([
        m()('attachment_delete', { attachmentId: a.attachmentId }),
        m()('attachment_delete', { attachmentId: a.attachmentId }),
      ]);
      const won = both.find((r) => !r.isError)!;
      const undo = await m()('change_undo', { activityId: (won.structuredContent as { activityId: string }).activityId });

      // Assert
      assert.equal(both.filter((r) => r.isError).length, 1);
      assert.equal(undo.isError, false, text(undo));
      assert.equal((await read(a.uri)).json.result.contents[0].text, 'Keep me.');
    });

    test('two undos of one delete at once: one restores, and the file it restored stays readable', async () => {
      // Arrange
      const t = await task('Restored twice at once');
      const a = (await add({ taskId: t.key, name: 'back.txt', text: 'Back again.' })).structuredContent as Added;
      const del = (await m()('attachment_delete', { attachmentId: a.attachmentId })).structuredContent as { activityId: string };

      // Act
      const both = await Promise.all([
        m()('change_undo', { activityId: del.activityId }),
        m()('change_undo', { activityId: del.activityId }),
      ]);

      // Assert
      assert.equal(both.filter((r) => !r.isError).length, 1, both.map(text).join(' | '));
      assert.equal((await read(a.uri)).json.result.contents[0].text, 'Back again.');
      assert.equal((await get(t.key)).attachments, 1);
    });

    test('undoing an add after the file was deleted is refused naming the later change, not a 500', async () => {
      // Arrange
      const t = await task('Undo after delete');
      const a = (await add({ taskId: t.key, name: 'gone.txt', text: 'x' })).structuredContent as Added;
      await m()('attachment_delete', { attachmentId: a.attachmentId });

      // Act
      const undo = await m()('change_undo', { activityId: a.activityId });

      // Assert
      assert.equal(undo.isError, true);
      assert.match(text(undo), /changed since/);
    });

    test('a file attached while its task is being deleted refuses the delete', async () => {
      // Arrange: the delete's write waits until an add has landed
      const t = await task('Deleted while attached to');
      const services = writesOf(server.app.services) as { commit: StoreWrites['commit'] };
      const original = services.commit;
      let raced = false;
      services.commit = async (ops) => {
        if (!raced) {
          raced = true;
          await add({ taskId: t.key, name: 'late.txt', text: 'late' });
        }
        return original(ops);
      };

      // Act
      let del: Awaited<ReturnType<typeof add>>;
      try {
        del = await m()('task_delete', { taskId: t.key });
      } finally {
        services.commit = original;
      }

      // Assert
      assert.equal(del.isError, true);
      assert.match(text(del), /has 1 attachment\(s\); delete them first/);
      assert.equal((await get(t.key)).attachments, 1);
    });

    test('base64 that decodes to nothing, or with padding where none belongs, is refused; a BOM is kept', async () => {
      // Act
      const empty = await add({ taskId: (await task('Empty')).key, name: 'e.txt', content: '==' });
      const badPadding = await add({ taskId: (await task('Bad padding')).key, name: 'b.txt', content: 'abcde=' });
      const strayBits = await add({ taskId: (await task('Stray bits')).key, name: 's.txt', content: 'YR==' });
      const bom = (await add({ taskId: (await task('BOM')).key, name: 'bom.txt', text: '\uFEFFhello' })).structuredContent as Added;

      // Assert
      for (const r of [empty, badPadding, strayBits]) {
        assert.equal(r.isError, true);
        assert.match(text(r), /^content: is not base64 \(A–Z, a–z, 0–9, \+ and \/, and = padding only to fill the last group of four\)\.$/);
      }
      assert.equal((await read(bom.uri)).json.result.contents[0].text, '\uFEFFhello');
    });
  });
});
