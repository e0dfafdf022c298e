import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactGetCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { createTableInput } from '../../lambda/platform/tables.js';
import { javaAvailable, type SharedDynamo, startDynamoDbLocal } from '../helpers/limits-harness.js';

// The transaction API the embedded DynamoDB of `npm start` gains from patches/dynalite+4.0.0.patch,
// held to what Amazon's DynamoDB Local answers: every scenario runs on both, asserting one outcome.

const backends: { name: string; start: () => Promise<EmbeddedDynamo | SharedDynamo> }[] = [
  { name: 'the embedded dynalite', start: () => startEmbeddedDynamo(':memory:') },
];
if (javaAvailable()) {
  // The JVM takes seconds to come up: start it now, while the dynalite scenarios run.
  const starting = startDynamoDbLocal();
  starting.catch(() => {}); // reported by the suite that awaits it
  backends.push({ name: 'DynamoDB Local', start: () => starting });
} else
  process.stdout.write(
    '\n######## NOTICE: `java` is not on PATH. The transaction tests ran on dynalite ONLY; ' +
      'the DynamoDB Local variant did not run. Install a JRE (CI has one) to run it. ########\n\n',
  );

const TABLE = 'doers-transactions-test';

/** What the SDK rejects with: the error's name and, for a cancelled transaction, its reasons. */
interface DynamoRejection {
  readonly name: string;
  readonly message: string;
  readonly CancellationReasons?: readonly { Code: string; Message?: string; Item?: Record<string, unknown> }[];
  readonly $metadata: { httpStatusCode?: number };
}

const rejectionOf = async (p: Promise<unknown>): Promise<DynamoRejection> => {
  try {
    await p;
  } catch (err) {
    return err as DynamoRejection;
  }
  assert.fail('expected the request to be rejected');
};

for (const backend of backends) {
  describe(`transactions on ${backend.name}`, () => {
    let dynamo: EmbeddedDynamo | SharedDynamo;
    let db: DynamoDBDocumentClient;
    before(async () => {
      dynamo = await backend.start();
      // One attempt: a retry must not hide (or repeat) what the first answer was. A request left
      // waiting on a lock never released fails after 10 s instead of hanging the suite.
      db = DynamoDBDocumentClient.from(
        new DynamoDBClient({
          endpoint: dynamo.endpoint,
          region: 'local',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          maxAttempts: 1,
          requestHandler: { requestTimeout: 10_000, throwOnRequestTimeout: true },
        }),
      );
      await db.send(new CreateTableCommand(createTableInput('workspace', TABLE)));
    });
    after(async () => {
      db.destroy();
      await dynamo.close();
    });

    const get = async (pk: string, sk: string) =>
      (await db.send(new GetCommand({ TableName: TABLE, Key: { pk, sk }, ConsistentRead: true }))).Item;
    const put = (item: Record<string, unknown>) => db.send(new PutCommand({ TableName: TABLE, Item: item }));
    const transact = (
      TransactItems: NonNullable<TransactWriteCommandInput['TransactItems']>,
      extra: Partial<TransactWriteCommandInput> = {},
    ) => db.send(new TransactWriteCommand({ TransactItems, ...extra }));
    const queryIndex = async (index: 'gsi1' | 'gsi2', partition: string) =>
      (
        await db.send(
          new QueryCommand({
            TableName: TABLE,
            IndexName: index,
            KeyConditionExpression: '#p = :p',
            ExpressionAttributeNames: { '#p': `${index}pk` },
            ExpressionAttributeValues: { ':p': partition },
          }),
        )
      ).Items ?? [];

    test('a transaction writes every item and its activity record together, and the index sees them', async () => {
      // Arrange
      await put({ pk: 'WS#commit', sk: 'PROJECT#p1', taskCount: 0 });

      // Act
      await transact([
        {
          Put: {
            TableName: TABLE,
            Item: { pk: 'WS#commit', sk: 'TASK#t1', title: 'Write docs', gsi1pk: 'LIST#commit', gsi1sk: 'TASK#t1' },
          },
        },
        {
          Put: {
            TableName: TABLE,
            Item: { pk: 'WS#commit', sk: 'ACTIVITY#1', what: 'created t1', gsi1pk: 'LIST#commit', gsi1sk: 'ACTIVITY#1' },
          },
        },
        {
          Update: {
            TableName: TABLE,
            Key: { pk: 'WS#commit', sk: 'PROJECT#p1' },
            UpdateExpression: 'ADD taskCount :one',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':one': 1 },
          },
        },
      ]);

      // Assert
      assert.equal((await get('WS#commit', 'TASK#t1'))?.title, 'Write docs');
      assert.equal((await get('WS#commit', 'ACTIVITY#1'))?.what, 'created t1');
      assert.equal((await get('WS#commit', 'PROJECT#p1'))?.taskCount, 1);
      const listed = (await queryIndex('gsi1', 'LIST#commit')).map((item) => item.sk).sort();
      assert.deepEqual(listed, ['ACTIVITY#1', 'TASK#t1']);
    });

    test('one failing condition cancels the whole transaction, with a reason per action in order', async () => {
      // Arrange
      await put({ pk: 'WS#cancel', sk: 'TASK#t1', version: 3, title: 'old' });
      await put({ pk: 'WS#cancel', sk: 'TASK#t2', title: 'keep me' });
      await put({ pk: 'WS#cancel', sk: 'PROJECT#p1' });

      // Act
      const err = await rejectionOf(
        transact([
          { Put: { TableName: TABLE, Item: { pk: 'WS#cancel', sk: 'ACTIVITY#1', gsi1pk: 'LIST#cancel', gsi1sk: 'ACTIVITY#1' } } },
          {
            Update: {
              TableName: TABLE,
              Key: { pk: 'WS#cancel', sk: 'TASK#t1' },
              UpdateExpression: 'SET title = :new, version = :next',
              ConditionExpression: 'version = :expected',
              ExpressionAttributeValues: { ':new': 'new', ':next': 3, ':expected': 2 },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          { ConditionCheck: { TableName: TABLE, Key: { pk: 'WS#cancel', sk: 'PROJECT#p1' }, ConditionExpression: 'attribute_exists(pk)' } },
          { Delete: { TableName: TABLE, Key: { pk: 'WS#cancel', sk: 'TASK#t2' } } },
        ]),
      );

      // Assert
      assert.equal(err.name, 'TransactionCanceledException');
      assert.equal(err.$metadata.httpStatusCode, 400);
      assert.equal(
        err.message,
        'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, None, None]',
      );
      // The item of a reason arrives as DynamoDB's attribute values: lib-dynamodb does not unmarshall errors.
      assert.deepEqual(err.CancellationReasons, [
        { Code: 'None' },
        {
          Code: 'ConditionalCheckFailed',
          Message: 'The conditional request failed',
          Item: { pk: { S: 'WS#cancel' }, sk: { S: 'TASK#t1' }, version: { N: '3' }, title: { S: 'old' } },
        },
        { Code: 'None' },
        { Code: 'None' },
      ]);
      assert.equal(await get('WS#cancel', 'ACTIVITY#1'), undefined);
      assert.deepEqual(await queryIndex('gsi1', 'LIST#cancel'), []);
      assert.equal((await get('WS#cancel', 'TASK#t1'))?.title, 'old');
      assert.equal((await get('WS#cancel', 'TASK#t2'))?.title, 'keep me');
      // The cancelled transaction let go of its items: the next write to them goes through.
      await transact([
        { Delete: { TableName: TABLE, Key: { pk: 'WS#cancel', sk: 'TASK#t2' } } },
        { Put: { TableName: TABLE, Item: { pk: 'WS#cancel', sk: 'TASK#t1', title: 'retried' } } },
      ]);
      assert.equal((await get('WS#cancel', 'TASK#t1'))?.title, 'retried');
    });

    test('a failed condition reports the old item only with ALL_OLD, and only when there is one', async () => {
      // Arrange
      await put({ pk: 'WS#old', sk: 'TASK#t1', title: 'exists' });

      // Act
      const err = await rejectionOf(
        transact([
          {
            ConditionCheck: {
              TableName: TABLE,
              Key: { pk: 'WS#old', sk: 'TASK#none' },
              ConditionExpression: 'attribute_exists(pk)',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          { Put: { TableName: TABLE, Item: { pk: 'WS#old', sk: 'TASK#t1' }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: TABLE, Item: { pk: 'WS#old', sk: 'ACTIVITY#1' } } },
        ]),
      );

      // Assert
      assert.equal(err.name, 'TransactionCanceledException');
      assert.deepEqual(
        err.CancellationReasons?.map(({ Code, Item }) => ({ Code, Item })),
        [
          { Code: 'ConditionalCheckFailed', Item: undefined },
          { Code: 'ConditionalCheckFailed', Item: undefined },
          { Code: 'None', Item: undefined },
        ],
      );
      assert.equal(await get('WS#old', 'ACTIVITY#1'), undefined);
    });

    test('two actions on one item are refused, and nothing is written', async () => {
      // Act
      const err = await rejectionOf(
        transact([
          { Put: { TableName: TABLE, Item: { pk: 'WS#dup', sk: 'TASK#t1' } } },
          {
            Update: {
              TableName: TABLE,
              Key: { pk: 'WS#dup', sk: 'TASK#t1' },
              UpdateExpression: 'SET title = :t',
              ExpressionAttributeValues: { ':t': 'x' },
            },
          },
        ]),
      );

      // Assert
      assert.equal(err.name, 'ValidationException');
      assert.equal(err.message, 'Transaction request cannot include multiple operations on one item');
      assert.equal(await get('WS#dup', 'TASK#t1'), undefined);
    });

    test('100 actions commit; 101 and none are refused', async () => {
      // Arrange
      const puts = (n: number, prefix: string) =>
        Array.from({ length: n }, (_, i) => ({ Put: { TableName: TABLE, Item: { pk: 'WS#limit', sk: `${prefix}#${i}` } } }));

      // Act
      await transact(puts(100, 'OK'));
      const tooMany = await rejectionOf(transact(puts(101, 'TOO_MANY')));
      const none = await rejectionOf(transact([]));

      // Assert
      assert.equal((await get('WS#limit', 'OK#99'))?.sk, 'OK#99');
      assert.equal(tooMany.name, 'ValidationException');
      assert.match(tooMany.message, /Member must have length less than or equal to 100/);
      assert.equal(await get('WS#limit', 'TOO_MANY#0'), undefined);
      assert.equal(none.name, 'ValidationException');
      assert.match(none.message, /'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1/);
    });

    test('bad expressions and oversized items are refused as the single-item writes refuse them', async () => {
      // Act
      const badCondition = await rejectionOf(
        transact([{ Put: { TableName: TABLE, Item: { pk: 'WS#bad', sk: 'A' }, ConditionExpression: 'attribute_exists(' } }]),
      );
      const unusedValue = await rejectionOf(
        transact([
          {
            Update: {
              TableName: TABLE,
              Key: { pk: 'WS#bad', sk: 'B' },
              UpdateExpression: 'SET title = :t',
              ExpressionAttributeValues: { ':t': 'x', ':unused': 'y' },
            },
          },
        ]),
      );
      const tooLarge = await rejectionOf(
        transact([
          { Put: { TableName: TABLE, Item: { pk: 'WS#bad', sk: 'C' } } },
          { Put: { TableName: TABLE, Item: { pk: 'WS#bad', sk: 'D', body: 'x'.repeat(410 * 1024) } } },
        ]),
      );

      // Assert
      assert.equal(badCondition.name, 'ValidationException');
      assert.match(badCondition.message, /^Invalid ConditionExpression: Syntax error;/);
      assert.equal(unusedValue.name, 'ValidationException');
      assert.equal(unusedValue.message, 'Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}');
      assert.equal(tooLarge.name, 'ValidationException');
      assert.equal(tooLarge.message, 'Item size has exceeded the maximum allowed size');
      assert.equal(await get('WS#bad', 'C'), undefined);
    });

    test('an update moves an item between index partitions and out of a sparse index', async () => {
      // Arrange
      await transact([
        {
          Put: {
            TableName: TABLE,
            Item: {
              pk: 'WS#move',
              sk: 'TASK#t1',
              gsi1pk: 'LIST#move-open',
              gsi1sk: 'TASK#t1',
              gsi2pk: 'ASSIGNEE#move-alice',
              gsi2sk: '2027-01-01',
            },
          },
        },
      ]);

      // Act
      await transact([
        {
          Update: {
            TableName: TABLE,
            Key: { pk: 'WS#move', sk: 'TASK#t1' },
            UpdateExpression: 'SET gsi2pk = :bob, gsi2sk = :due REMOVE gsi1pk, gsi1sk',
            ExpressionAttributeValues: { ':bob': 'ASSIGNEE#move-bob', ':due': '2027-02-01' },
          },
        },
        { Put: { TableName: TABLE, Item: { pk: 'WS#move', sk: 'ACTIVITY#1', what: 'reassigned' } } },
      ]);

      // Assert
      assert.deepEqual(await queryIndex('gsi2', 'ASSIGNEE#move-alice'), []);
      assert.deepEqual(
        (await queryIndex('gsi2', 'ASSIGNEE#move-bob')).map((item) => [item.sk, item.gsi2sk]),
        [['TASK#t1', '2027-02-01']],
      );
      assert.deepEqual(await queryIndex('gsi1', 'LIST#move-open'), []);
    });

    test('TransactGetItems answers in order, {} for a missing item, with projections', async () => {
      // Arrange
      await put({ pk: 'WS#get', sk: 'TASK#t1', title: 'one', secret: 's' });
      await put({ pk: 'WS#get', sk: 'TASK#t2', title: 'two', secret: 's' });

      // Act
      const { Responses } = await db.send(
        new TransactGetCommand({
          TransactItems: [
            {
              Get: {
                TableName: TABLE,
                Key: { pk: 'WS#get', sk: 'TASK#t2' },
                ProjectionExpression: '#t',
                ExpressionAttributeNames: { '#t': 'title' },
              },
            },
            { Get: { TableName: TABLE, Key: { pk: 'WS#get', sk: 'TASK#none' } } },
            { Get: { TableName: TABLE, Key: { pk: 'WS#get', sk: 'TASK#t1' } } },
          ],
        }),
      );

      // Assert
      assert.deepEqual(Responses, [{ Item: { title: 'two' } }, {}, { Item: { pk: 'WS#get', sk: 'TASK#t1', title: 'one', secret: 's' } }]);
    });

    test('TransactGetItems refuses two reads of one item', async () => {
      // Act
      const err = await rejectionOf(
        db.send(
          new TransactGetCommand({
            TransactItems: [
              { Get: { TableName: TABLE, Key: { pk: 'WS#get', sk: 'TASK#t1' } } },
              { Get: { TableName: TABLE, Key: { pk: 'WS#get', sk: 'TASK#t1' } } },
            ],
          }),
        ),
      );

      // Assert
      assert.equal(err.name, 'ValidationException');
      assert.equal(err.message, 'Transaction request cannot include multiple operations on one item');
    });

    test('TransactGetItems reads a consistent snapshot while transactions move a balance between two items', async () => {
      // Arrange
      await put({ pk: 'WS#snap', sk: 'A', balance: 40 });
      await put({ pk: 'WS#snap', sk: 'B', balance: 0 });
      const move = () =>
        transact([
          {
            Update: {
              TableName: TABLE,
              Key: { pk: 'WS#snap', sk: 'A' },
              UpdateExpression: 'ADD balance :minusOne',
              ConditionExpression: 'balance > :zero',
              ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
            },
          },
          {
            Update: {
              TableName: TABLE,
              Key: { pk: 'WS#snap', sk: 'B' },
              UpdateExpression: 'ADD balance :one',
              ExpressionAttributeValues: { ':one': 1 },
            },
          },
        ]);
      const read = async () =>
        (
          await db.send(
            new TransactGetCommand({
              TransactItems: [
                { Get: { TableName: TABLE, Key: { pk: 'WS#snap', sk: 'A' } } },
                { Get: { TableName: TABLE, Key: { pk: 'WS#snap', sk: 'B' } } },
              ],
            }),
          )
        ).Responses!.map((r) => r.Item!.balance as number);

      // Act
      const [, snapshots] = await Promise.all([
        Promise.all(Array.from({ length: 40 }, move)),
        Promise.all(Array.from({ length: 40 }, (_, i) => new Promise((r) => setTimeout(r, i)).then(read))),
      ]);

      // Assert
      for (const [a, b] of snapshots) assert.equal(a! + b!, 40, `snapshot A=${a} B=${b}`);
      assert.deepEqual(await read(), [0, 40]);
    });

    test('50 concurrent transactions on one counter: exactly the committed ones left a record, and the counter counts them', async () => {
      // Arrange
      const LIMIT = 30;
      await put({ pk: 'WS#counter', sk: 'COUNTER', n: 0 });
      const attempt = (i: number) =>
        transact([
          {
            Update: {
              TableName: TABLE,
              Key: { pk: 'WS#counter', sk: 'COUNTER' },
              UpdateExpression: 'SET n = n + :one',
              ConditionExpression: 'n < :limit',
              ExpressionAttributeValues: { ':one': 1, ':limit': LIMIT },
            },
          },
          { Put: { TableName: TABLE, Item: { pk: 'WS#counter', sk: `RECORD#${i}` }, ConditionExpression: 'attribute_not_exists(pk)' } },
        ]);

      // Act
      const outcomes = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => attempt(i)));

      // Assert
      const committed = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      assert.equal(committed.length, LIMIT);
      for (const o of outcomes) {
        if (o.status === 'fulfilled') continue;
        const err = o.reason as DynamoRejection;
        assert.equal(err.name, 'TransactionCanceledException');
        assert.deepEqual(
          err.CancellationReasons?.map((r) => r.Code),
          ['ConditionalCheckFailed', 'None'],
        );
      }
      assert.equal((await get('WS#counter', 'COUNTER'))?.n, LIMIT);
      const records = await db.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :record)',
          ExpressionAttributeValues: { ':pk': 'WS#counter', ':record': 'RECORD#' },
          ConsistentRead: true,
        }),
      );
      assert.deepEqual(
        records.Items?.map((item) => Number(String(item.sk).slice('RECORD#'.length))).sort((a, b) => a - b),
        committed,
      );
    });

    test('a transaction and a single-item conditional write racing for one item never both pass', async () => {
      // Arrange
      const SLOTS = 25;
      const claimByTransaction = (slot: number) =>
        transact([
          {
            Put: {
              TableName: TABLE,
              Item: { pk: 'WS#race', sk: `SLOT#${slot}`, owner: 'transaction' },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          { Put: { TableName: TABLE, Item: { pk: 'WS#race', sk: `ACTIVITY#${slot}` } } },
        ]);
      const claimAlone = (slot: number) =>
        db.send(
          new PutCommand({
            TableName: TABLE,
            Item: { pk: 'WS#race', sk: `SLOT#${slot}`, owner: 'single' },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );

      // Act: which request leaves first alternates, so each side gets to win some slots.
      const races = await Promise.all(
        Array.from({ length: SLOTS }, async (_, slot) => {
          if (slot % 2 === 0) {
            const [tx, single] = await Promise.allSettled([claimByTransaction(slot), claimAlone(slot)]);
            return { slot, tx, single };
          }
          const [single, tx] = await Promise.allSettled([claimAlone(slot), claimByTransaction(slot)]);
          return { slot, tx, single };
        }),
      );

      // Assert
      for (const { slot, tx, single } of races) {
        const stored = await get('WS#race', `SLOT#${slot}`);
        const activity = await get('WS#race', `ACTIVITY#${slot}`);
        assert.notEqual(tx.status === 'fulfilled', single.status === 'fulfilled', `slot ${slot}: exactly one claim passes`);
        if (tx.status === 'fulfilled') {
          assert.equal(stored?.owner, 'transaction');
          assert.ok(activity, `slot ${slot}: the transaction's activity record was written`);
          assert.equal((single as PromiseRejectedResult).reason.name, 'ConditionalCheckFailedException');
        } else {
          assert.equal(stored?.owner, 'single');
          assert.equal(activity, undefined, `slot ${slot}: the cancelled transaction wrote nothing`);
          assert.equal((tx.reason as DynamoRejection).name, 'TransactionCanceledException');
        }
      }
    });

    test('transactions overlapping on four items in rotated orders all finish, none lost', { timeout: 30_000 }, async () => {
      // Arrange
      const ITEMS = ['W', 'X', 'Y', 'Z'];
      const TRANSACTIONS = 40;
      for (const sk of ITEMS) await put({ pk: 'WS#overlap', sk, n: 0 });
      const bump = (sk: string) => ({
        Update: {
          TableName: TABLE,
          Key: { pk: 'WS#overlap', sk },
          UpdateExpression: 'ADD n :one',
          ExpressionAttributeValues: { ':one': 1 },
        },
      });
      // Each transaction names the items starting at a different one: an engine taking their locks one
      // by one, in the order given, would deadlock here.
      const rotated = (i: number) => ITEMS.map((_, j) => ITEMS[(i + j) % ITEMS.length]!);

      // Act
      await Promise.all(Array.from({ length: TRANSACTIONS }, (_, i) => transact(rotated(i).map(bump))));

      // Assert
      for (const sk of ITEMS) assert.equal((await get('WS#overlap', sk))?.n, TRANSACTIONS, sk);
    });

    test('a ClientRequestToken makes a repeated transaction idempotent, and refuses a different one', async () => {
      // Arrange
      await put({ pk: 'WS#token', sk: 'COUNTER', n: 0 });
      const token = 'f3c1d2a4-5b6e-4f70-8a9b-0c1d2e3f4a5b';
      const increment = (by: number) =>
        transact(
          [
            {
              Update: {
                TableName: TABLE,
                Key: { pk: 'WS#token', sk: 'COUNTER' },
                UpdateExpression: 'ADD n :by',
                ExpressionAttributeValues: { ':by': by },
              },
            },
          ],
          { ClientRequestToken: token },
        );

      // Act
      await increment(1);
      await increment(1);
      const different = await rejectionOf(increment(2));
      const tooLong = await rejectionOf(
        transact([{ Put: { TableName: TABLE, Item: { pk: 'WS#token', sk: 'OTHER' } } }], { ClientRequestToken: 'x'.repeat(37) }),
      );

      // Assert
      assert.equal((await get('WS#token', 'COUNTER'))?.n, 1);
      assert.equal(different.name, 'IdempotentParameterMismatchException');
      assert.equal(tooLong.name, 'ValidationException');
      assert.match(tooLong.message, /'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36/);
    });

    test('consumed capacity counts two write units per KB of each item written', async () => {
      // Act
      const { ConsumedCapacity } = await transact(
        [
          { Put: { TableName: TABLE, Item: { pk: 'WS#capacity', sk: 'SMALL' } } },
          { Put: { TableName: TABLE, Item: { pk: 'WS#capacity', sk: 'LARGE', body: 'x'.repeat(1500) } } },
        ],
        { ReturnConsumedCapacity: 'TOTAL' },
      );

      // Assert
      assert.deepEqual(ConsumedCapacity, [{ TableName: TABLE, CapacityUnits: 6 }]);
    });
  });
}
