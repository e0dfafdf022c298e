import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import Provider, { type AdapterPayload } from 'oidc-provider';
import { DynamoGrantStore } from '../../lambda/auth/grants.js';
import { ensureTables } from '../../lambda/local/bootstrap.js';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { createAdapterFactory } from '../../lambda/oauth/dynamodb-adapter.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { OAUTH_SK, oauthPk } from '../../lambda/platform/item-keys.js';
import { accountIdOf, memberRefOfAccountId } from '../../lambda/vocabulary.js';

// The authorization server's storage on the embedded DynamoDB, with a clock the test sets so
// expiry and the idle lifetime of registered clients are checked without waiting.

const config = loadConfig({});
const table = config.tables.workspace;
let dynamo: EmbeddedDynamo;
let db: DynamoDBDocumentClient;
before(async () => {
  dynamo = await startEmbeddedDynamo(':memory:');
  db = createDocumentClient({ endpoint: dynamo.endpoint });
  await ensureTables(db, config);
});
after(async () => {
  db.destroy();
  await dynamo.close();
});

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const seconds = (ms: number) => Math.floor(ms / 1000);
const uid = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;

/** Adapters on a clock the test moves with `clock.at`. */
const withClock = (start = T0, opts: { clientIdleDays?: number; client?: DynamoDBDocumentClient } = {}) => {
  const clock = { at: start };
  const adapter = createAdapterFactory(opts.client ?? db, table, {
    now: () => clock.at,
    ...(opts.clientIdleDays === undefined ? {} : { clientIdleDays: opts.clientIdleDays }),
  });
  return { clock, adapter };
};

const rawItem = async (model: string, id: string) =>
  (await db.send(new GetCommand({ TableName: table, Key: { pk: oauthPk(model, id), sk: OAUTH_SK }, ConsistentRead: true }))).Item;

const token = (grantId: string, extra: AdapterPayload = {}): AdapterPayload => ({
  iat: seconds(T0),
  exp: seconds(T0) + 3600,
  grantId,
  ...extra,
});

describe('accountId', () => {
  test('round-trips a member whose ids hold the separator, and refuses what it could not have made', () => {
    const ref = { workspaceId: 'ws/odd', userId: 'usr_a#b' };

    const accountId = accountIdOf(ref);

    assert.deepEqual(memberRefOfAccountId(accountId), ref);
    for (const bad of ['', 'ws', 'a/b/c', '/usr', 'ws/', 'ws/%E0%A4%A', '%77s/usr'])
      assert.equal(memberRefOfAccountId(bad), undefined, bad);
  });
});

describe('DynamoDB adapter', () => {
  test('upsert then find returns the payload as given, odd keys included', async () => {
    const { adapter } = withClock();
    const id = uid('at');
    const payload = JSON.parse(
      '{"__proto__":{"polluted":true},"":"empty key","x5t#S256":"thumb","claims":{"id_token":{"a.b":null,"deep":[1,{"c":""}]}},"big":123456789012345678901234567890123456789012}',
    ) as AdapterPayload;

    await adapter('AccessToken').upsert(id, { ...token('g'), ...payload }, 3600);
    const found = await adapter('AccessToken').find(id);

    assert.deepEqual(found, { ...token('g'), ...payload });
    assert.ok(found && Object.hasOwn(found, '__proto__'));
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
  });

  test('an item past its expiry is not found though TTL has not deleted it yet', async () => {
    const { clock, adapter } = withClock();
    const id = uid('code');
    await adapter('AuthorizationCode').upsert(id, token('g'), 60);

    clock.at = T0 + 59_000;
    const before = await adapter('AuthorizationCode').find(id);
    clock.at = T0 + 60_000;
    const after = await adapter('AuthorizationCode').find(id);

    assert.ok(before);
    assert.equal(after, undefined);
    assert.equal((await rawItem('AuthorizationCode', id))?.expiresAt, seconds(T0) + 60);
  });

  test('consume records when it happened and find shows it; consuming a missing item fails', async () => {
    const { clock, adapter } = withClock();
    const id = uid('code');
    await adapter('AuthorizationCode').upsert(id, token('g'), 600);

    clock.at = T0 + 5_000;
    await adapter('AuthorizationCode').consume(id);
    const found = await adapter('AuthorizationCode').find(id);

    assert.equal(found?.consumed, seconds(T0) + 5);
    assert.equal(found?.grantId, 'g');
    await assert.rejects(adapter('AuthorizationCode').consume(uid('missing')), (err: { error?: string }) => err.error === 'invalid_grant');
  });

  test('a code or refresh token is consumed once: a second consume is refused and revokes its grant', async () => {
    // Arrange
    const { adapter } = withClock();
    const grantId = uid('grant');
    const [code, refresh, other] = [uid('code'), uid('rt'), uid('rt')];
    await adapter('AuthorizationCode').upsert(code, token(grantId), 600);
    await adapter('RefreshToken').upsert(refresh, token(grantId), 600);
    await adapter('RefreshToken').upsert(other, token(uid('grant')), 600);
    await adapter('AuthorizationCode').consume(code);

    // Act
    const second = adapter('AuthorizationCode').consume(code);

    // Assert
    await assert.rejects(second, (err: { error?: string }) => err.error === 'invalid_grant');
    assert.equal(await rawItem('RefreshToken', refresh), undefined);
    assert.notEqual(await rawItem('RefreshToken', other), undefined);
  });

  test('destroy removes the item', async () => {
    const { adapter } = withClock();
    const id = uid('sess');
    await adapter('Session').upsert(id, { uid: uid('u'), iat: seconds(T0), exp: seconds(T0) + 3600 }, 3600);

    await adapter('Session').destroy(id);

    assert.equal(await adapter('Session').find(id), undefined);
    assert.equal(await rawItem('Session', id), undefined);
  });

  test('findByUid finds the session of a uid, the current one after its id rotated, and only of its model', async () => {
    const { adapter } = withClock();
    const sessionUid = uid('u');
    const [oldId, newId, interactionId] = [uid('sess'), uid('sess'), uid('int')];
    await adapter('Session').upsert(oldId, { uid: sessionUid, accountId: 'a/b', iat: seconds(T0), exp: seconds(T0) + 3600 }, 3600);
    const first = await adapter('Session').findByUid(sessionUid);

    await adapter('Session').upsert(
      newId,
      { uid: sessionUid, accountId: 'a/b', rotated: true, iat: seconds(T0), exp: seconds(T0) + 3600 },
      3600,
    );
    await adapter('Session').destroy(oldId);
    await adapter('Interaction').upsert(interactionId, { uid: uid('other'), iat: seconds(T0), exp: seconds(T0) + 3600 }, 3600);
    const rotated = await adapter('Session').findByUid(sessionUid);

    assert.equal(first?.uid, sessionUid);
    assert.equal(rotated?.rotated, true);
    assert.equal(await adapter('Session').findByUid(uid('nobody')), undefined);
    assert.equal(await adapter('Interaction').findByUid(sessionUid), undefined);
  });

  test('findByUserCode finds nothing (the device flow is off)', async () => {
    const { adapter } = withClock();

    assert.equal(await adapter('DeviceCode').findByUserCode('ABCD-EFGH'), undefined);
  });

  test('revokeByGrantId removes that grant’s items of its own model only', async () => {
    const { adapter } = withClock();
    const [grant, otherGrant] = [uid('grant'), uid('grant')];
    const [at1, at2, rt, otherAt] = [uid('at'), uid('at'), uid('rt'), uid('at')];
    await adapter('AccessToken').upsert(at1, token(grant), 3600);
    await adapter('AccessToken').upsert(at2, token(grant), 3600);
    await adapter('RefreshToken').upsert(rt, token(grant), 86_400);
    await adapter('AccessToken').upsert(otherAt, token(otherGrant), 3600);

    await adapter('AccessToken').revokeByGrantId(grant);

    assert.equal(await adapter('AccessToken').find(at1), undefined);
    assert.equal(await adapter('AccessToken').find(at2), undefined);
    assert.ok(await adapter('RefreshToken').find(rt));
    assert.ok(await adapter('AccessToken').find(otherAt));
  });

  test('revokeByGrantId pages through more tokens than one query page or batch holds', async () => {
    const { adapter } = withClock();
    const grant = uid('grant');
    const ids = Array.from({ length: 60 }, () => uid('rt'));
    const bulky = 'x'.repeat(20_000); // 60 × 20 kB passes the 1 MB a query page returns
    await Promise.all(ids.map((id) => adapter('RefreshToken').upsert(id, token(grant, { bulky }), 86_400)));

    await adapter('RefreshToken').revokeByGrantId(grant);

    const left = await Promise.all(ids.map((id) => rawItem('RefreshToken', id)));
    assert.deepEqual(left.filter(Boolean), []);
  });

  test('a registered client gets an idle expiry, a find a day later pushes it forward, and an unused one lapses', async () => {
    const { clock, adapter } = withClock();
    const id = uid('client');
    await adapter('Client').upsert(id, { client_id: id, redirect_uris: ['http://127.0.0.1:5555/cb'] });
    const registered = (await rawItem('Client', id))?.expiresAt;

    clock.at = T0 + 12 * 3_600_000;
    await adapter('Client').find(id);
    const sameDay = (await rawItem('Client', id))?.expiresAt;
    clock.at = T0 + 10 * DAY;
    const found = await adapter('Client').find(id);
    const extended = (await rawItem('Client', id))?.expiresAt;
    clock.at = T0 + 41 * DAY;
    const lapsed = await adapter('Client').find(id);

    assert.equal(registered, seconds(T0 + 30 * DAY));
    assert.equal(sameDay, registered);
    assert.deepEqual(found, { client_id: id, redirect_uris: ['http://127.0.0.1:5555/cb'] });
    assert.equal(extended, seconds(T0 + 40 * DAY));
    assert.equal(lapsed, undefined);
  });

  test('the idle lifetime is configurable, and a client given a lifetime keeps it', async () => {
    const { clock, adapter } = withClock(T0, { clientIdleDays: 7 });
    const [idle, fixed] = [uid('client'), uid('client')];
    await adapter('Client').upsert(idle, { client_id: idle });
    await adapter('Client').upsert(fixed, { client_id: fixed }, 3 * 86_400);

    clock.at = T0 + 2.5 * DAY;
    await adapter('Client').find(idle);
    await adapter('Client').find(fixed);

    assert.equal((await rawItem('Client', idle))?.expiresAt, seconds(T0 + 9.5 * DAY));
    assert.equal((await rawItem('Client', fixed))?.expiresAt, seconds(T0 + 3 * DAY));
  });

  test('a client is still found when pushing its expiry forward fails', async () => {
    const failingUpdates = new Proxy(db, {
      get: (target, prop, receiver) =>
        prop === 'send'
          ? (command: unknown) =>
              command instanceof UpdateCommand ? Promise.reject(new Error('write refused')) : target.send(command as never)
          : Reflect.get(target, prop, receiver),
    });
    const { clock, adapter } = withClock(T0, { client: failingUpdates });
    const id = uid('client');
    await adapter('Client').upsert(id, { client_id: id });

    clock.at = T0 + 10 * DAY;
    const found = await adapter('Client').find(id);

    assert.deepEqual(found, { client_id: id });
    assert.equal((await rawItem('Client', id))?.expiresAt, seconds(T0 + 30 * DAY));
  });
});

describe('grant store', () => {
  const ws = uid('ws');
  const otherWs = uid('ws');
  const alice = 'usr_a';
  const aliceHash = 'usr_a#b'; // her prefix must not list this person's grants
  const now = seconds(Date.now());
  // Built in the tests: the table's client exists only once `before` has run.
  const adapter = (model: string) => withClock(now * 1000).adapter(model);
  const storeOf = () => new DynamoGrantStore(db, table);

  const grant = async (workspaceId: string, userId: string, resources: Record<string, string>, extra: AdapterPayload = {}) => {
    const id = uid('grant');
    const payload = {
      jti: id,
      kind: 'Grant',
      accountId: accountIdOf({ workspaceId, userId }),
      clientId: 'client-1',
      resources,
      iat: now,
      exp: now + 86_400,
      ...extra,
    };
    await adapter('Grant').upsert(id, payload, 86_400);
    return id;
  };

  test('lists the grants of a workspace, and of one person in it, with their scopes and times', async () => {
    const mcp = 'http://127.0.0.1/mcp';
    const a1 = await grant(ws, alice, { [mcp]: 'tasks:read tasks:write', 'urn:other': 'team:read tasks:read' });
    const a2 = await grant(ws, alice, { [mcp]: 'tasks:read team:admin' }, { rejected: { resources: { [mcp]: 'team:admin' } } });
    const b1 = await grant(ws, aliceHash, { [mcp]: 'team:read' });
    const elsewhere = await grant(otherWs, alice, { [mcp]: 'tasks:read' });

    const store = storeOf();

    const all = await store.list(ws);
    const hers = await store.list(ws, alice);
    const other = await store.list(otherWs);

    assert.deepEqual(all.map((g) => g.grantId).sort(), [a1, a2, b1].sort());
    assert.deepEqual(hers.map((g) => g.grantId).sort(), [a1, a2].sort());
    assert.deepEqual(
      other.map((g) => g.grantId),
      [elsewhere],
    );
    assert.deepEqual(
      hers.find((g) => g.grantId === a1),
      {
        grantId: a1,
        workspaceId: ws,
        userId: alice,
        clientId: 'client-1',
        scopes: ['tasks:read', 'tasks:write', 'team:read'],
        createdAt: new Date(now * 1000).toISOString(),
        expiresAt: new Date((now + 86_400) * 1000).toISOString(),
      },
    );
    assert.deepEqual(hers.find((g) => g.grantId === a2)?.scopes, ['tasks:read']);
    assert.equal((await store.get(b1))?.userId, aliceHash);
  });

  test('revoke removes the grant and its items of every model, and leaves other grants alone', async () => {
    const revoked = await grant(ws, alice, { 'http://127.0.0.1/mcp': 'tasks:read' });
    const kept = await grant(ws, alice, { 'http://127.0.0.1/mcp': 'tasks:read' });
    const issued = [
      ['AccessToken', uid('at'), revoked],
      ['RefreshToken', uid('rt'), revoked],
      ['AuthorizationCode', uid('code'), revoked],
      ['AccessToken', uid('at'), kept],
    ] as const;
    for (const [model, id, grantId] of issued) await adapter(model).upsert(id, token(grantId, { exp: now + 3600 }), 3600);
    const store = storeOf();

    const existed = await store.revoke(revoked);
    const again = await store.revoke(revoked);

    assert.equal(existed, true);
    assert.equal(again, false);
    assert.equal(await store.get(revoked), undefined);
    assert.ok(await store.get(kept));
    assert.deepEqual(
      (await store.list(ws, alice)).some((g) => g.grantId === revoked),
      false,
    );
    const left = await Promise.all(issued.map(([model, id]) => adapter(model).find(id)));
    assert.deepEqual(left.map(Boolean), [false, false, false, true]);
  });
});

describe('with oidc-provider', () => {
  let server: Server;
  let issuer: string;
  let provider: Provider;

  before(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    provider = new Provider(issuer, {
      adapter: createAdapterFactory(db, table),
      // RSA: registered clients default to RS256 ID tokens, and registration checks a key exists for it.
      jwks: {
        keys: [{ ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' }],
      },
      features: { registration: { enabled: true }, devInteractions: { enabled: false } },
    });
    server.on('request', provider.callback());
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a client registered through the registration endpoint is stored in the table and found again', async () => {
    const body = { redirect_uris: ['http://127.0.0.1:5555/cb'], token_endpoint_auth_method: 'none' };

    const res = await fetch(`${issuer}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const registered = (await res.json()) as { client_id: string };
    const item = await rawItem('Client', registered.client_id);
    const found = await provider.Client.find(registered.client_id);

    assert.equal(res.status, 201);
    assert.ok(item);
    const stored = JSON.parse(item.payload as string) as Record<string, unknown>;
    assert.equal(stored.client_id, registered.client_id);
    assert.deepEqual(stored.redirect_uris, body.redirect_uris);
    assert.equal(stored.token_endpoint_auth_method, 'none');
    assert.equal(item.idleExpiry, true);
    assert.ok(Math.abs((item.expiresAt as number) - seconds(Date.now() + 30 * DAY)) < 60);
    assert.equal(found?.clientId, registered.client_id);
    assert.deepEqual(found?.redirectUris, body.redirect_uris);
  });
});
