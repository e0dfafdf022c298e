import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, before } from 'node:test';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook as Verifier } from 'standardwebhooks';
import type { InboxKind, Notice } from '../../lambda/delivery/notice.js';
import { ensureTables } from '../../lambda/local/bootstrap.js';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { wsPk } from '../../lambda/platform/item-keys.js';
import { dataDirKeySource } from '../../lambda/platform/key-ring.js';
import type { Role } from '../../lambda/vocabulary.js';
import { createWorkspace } from '../../lambda/workspace/membership/workspaces.js';
import { callerOf } from '../../lambda/workspace/model/caller.js';
import { createWorkspaceStores } from '../../lambda/workspace/store/create-stores.js';
import type { WorkspaceStores, WriteContext } from '../../lambda/workspace/store/stores.js';
import { createWebhookDispatch, type WebhookDispatchOptions } from '../../lambda/workspace/webhooks/webhook-dispatch.js';
import { addWebhook } from '../../lambda/workspace/webhooks/webhook-writer.js';

// The world outbound webhooks are tested in (test/integration/webhooks.test.ts and
// webhooks-volume.test.ts): a receiver on 127.0.0.1 that verifies every signature it gets with the
// standardwebhooks package, as a receiver would, and for each test a DynamoDB, a workspace and a
// dispatcher of its own.

const config = loadConfig({});
const table = config.tables.workspace;

// ---- the receiver ----------------------------------------------------------------------------------

interface Received {
  readonly path: string;
  readonly id: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly verified: boolean;
  readonly status: number;
}

interface Reply {
  readonly status?: number;
  readonly delayMs?: number;
  readonly headers?: Record<string, string>;
}

let receiverOrigin = '';
/** The receiver's origin (`http://127.0.0.1:<port>`), once `useWebhookWorld`'s before hook ran. */
export const origin = (): string => receiverOrigin;
const received: Received[] = [];
/** Each path's secret (set once its webhook is added): every request is verified with it. */
export const secrets = new Map<string, string>();
/** Each path's next replies, in order; past them, 200. */
export const script = new Map<string, Reply[]>();

const startReceiver = async () => {
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '';
      const secret = secrets.get(path);
      let verified = false;
      try {
        if (secret) {
          new Verifier(secret).verify(body, req.headers as Record<string, string>);
          verified = true;
        }
      } catch {
        verified = false;
      }
      const reply = script.get(path)?.shift() ?? {};
      const status = reply.status ?? 200;
      received.push({ path, id: String(req.headers['webhook-id']), headers: req.headers, body, verified, status });
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(status, reply.headers ?? {});
        res.end('ok');
      }, reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverOrigin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  receiver.unref();
};

export const at = (path: string) => received.filter((r) => r.path === path);
export const delivered = (path: string) => at(path).filter((r) => r.status >= 200 && r.status < 300);

// ---- a DynamoDB, a workspace and a dispatcher of each test's own ------------------------------------

interface World {
  readonly stores: WorkspaceStores;
  readonly workspaceId: string;
  ctx(role: Role): Promise<WriteContext>;
  dispatcher(opts?: Partial<WebhookDispatchOptions>): ReturnType<typeof createWebhookDispatch>;
  /** Adds a webhook receiving at `path` of the receiver, as the owner; its secret registered. */
  hook(path: string, fields?: { events?: string[]; format?: string }): Promise<string>;
  /** Every item of the workspace's partition whose sort key starts so. */
  items(prefix: string): Promise<Record<string, unknown>[]>;
}

const closers: (() => Promise<void>)[] = [];
/**
 * The receiver for the file's tests, started before them; after each test, every request it got
 * must have carried a valid signature, and the test's DynamoDBs are closed.
 */
export const useWebhookWorld = (): void => {
  before(startReceiver);
  afterEach(async () => {
    for (const r of received) assert.ok(r.verified, `an unverified delivery to ${r.path}`);
    while (closers.length) await closers.pop()!();
  });
};

export const world = async (): Promise<World> => {
  const dynamo = await startEmbeddedDynamo(':memory:');
  const db = createDocumentClient({ endpoint: dynamo.endpoint });
  closers.push(async () => {
    db.destroy();
    await dynamo.close();
  });
  await ensureTables(db, config);
  const stores = createWorkspaceStores(db, table, dataDirKeySource(':memory:'), 30);
  const workspaceId = `ws_${randomUUID().slice(0, 8)}`;
  const source = { actorId: 'operator', actorName: 'Operator', client: 'test', tool: 'test', now: new Date() };
  await createWorkspace(stores, source, { workspaceId, name: 'Hooks' });
  const ctx = async (role: Role): Promise<WriteContext> => {
    const ws = (await stores.directory.getWorkspace(workspaceId))!;
    const who = { userId: `usr_${role}`, name: `The ${role}`, role };
    return {
      stores,
      caller: callerOf(ws, who),
      source: { actorId: who.userId, actorName: who.name, client: 'test', tool: 'test', now: new Date() },
    };
  };
  return {
    stores,
    workspaceId,
    ctx,
    dispatcher: (opts = {}) => createWebhookDispatch({ db, table, allowLoopback: true, timeoutMs: 2_000, ...opts }),
    async hook(path, fields = {}) {
      const { webhook } = await addWebhook(await ctx('owner'), { url: `${receiverOrigin}${path}`, ...fields }, { allowLoopback: true });
      secrets.set(path, webhook.secret);
      return webhook.webhookId;
    },
    async items(prefix) {
      const out = await db.send(
        new QueryCommand({
          TableName: table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
          ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':p': prefix },
          ConsistentRead: true,
        }),
      );
      return out.Items ?? [];
    },
  };
};

let serial = 0;
export const noticeOf = (kind: InboxKind, taskId: string, at: Date, summary = `Ada did ${kind} on ${taskId}`): Notice => ({
  id: `act_${String(++serial).padStart(6, '0')}:${kind}`,
  kind,
  workspaceKey: 'HOOK',
  taskKey: `HOOK-${taskId.slice(-2)}`,
  taskId,
  taskTitle: `Task ${taskId}`,
  actorName: 'Ada',
  client: 'test',
  at: at.toISOString(),
  summary,
});

export const MINUTE = 60_000;
/**
 * A clock that starts a second into the next minute: tries are due by the minute, so "5 s later"
 * stays in the same one, and its notices are later than the webhooks the test adds now (a webhook
 * hears of what happened since it was added).
 */
export const clock = () => {
  const t0 = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 1_000);
  return (ms = 0) => new Date(t0.getTime() + ms);
};
