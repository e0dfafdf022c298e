import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { callBudget, takeWriteUnits, withCallBudget } from '../../lambda/platform/call-budget.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { ReadCeilingReached } from '../../lambda/platform/storage-errors.js';
import { refusalOfStorage } from '../../lambda/workspace/model/refusals.js';

// One call's budget (platform/call-budget.ts): every read the DynamoDB client sends in a call is
// counted as DynamoDB reports it, and once the call is past its ceiling the next read is refused
// before it is sent; write units are taken in order and, once refused, stay refused for the call.

let dynamo: Awaited<ReturnType<typeof startEmbeddedDynamo>>;
let db: DynamoDBDocumentClient;
const TABLE = 'call-budget-test';

before(async () => {
  dynamo = await startEmbeddedDynamo(':memory:');
  db = createDocumentClient({ endpoint: dynamo.endpoint });
  await db.send(
    new CreateTableCommand({
      TableName: TABLE,
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  // Ten items of 3 KB: a query of all of them is 8 units (eventually consistent), a strong get 1.
  for (let i = 0; i < 10; i++) await db.send(new PutCommand({ TableName: TABLE, Item: { pk: 'p', sk: String(i), v: 'x'.repeat(3000) } }));
});
after(async () => {
  db?.destroy();
  await dynamo?.close();
});

const queryAll = () =>
  db.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'p' } }));

describe('the per-call budget', () => {
  test('reads are counted in units and bytes as DynamoDB reports them, and the call sees its answers unchanged', async () => {
    // Act
    const seen = await withCallBudget({ readUnits: 100, readBytes: 1_000_000, writeUnits: 10 }, async () => {
      const got = await db.send(new GetCommand({ TableName: TABLE, Key: { pk: 'p', sk: '1' }, ConsistentRead: true }));
      const all = await queryAll();
      return { got, all, budget: { ...callBudget()! } };
    });

    // Assert
    assert.equal(seen.got.Item?.sk, '1');
    assert.equal(seen.all.Items?.length, 10);
    assert.equal(seen.budget.readUnits, 1 + 4);
    assert.ok(seen.budget.readBytes > 30_000 && seen.budget.readBytes < 40_000, String(seen.budget.readBytes));
  });

  test('once past its read ceiling, the call is refused its next read before it is sent, and the refusal names the ceiling', async () => {
    // Act
    const outcome = await withCallBudget({ readUnits: 5, readBytes: 1_000_000, writeUnits: 10 }, async () => {
      await queryAll();
      await queryAll();
      return queryAll().then(
        () => 'read',
        (err: unknown) => err,
      );
    });

    // Assert
    assert.ok(outcome instanceof ReadCeilingReached, String(outcome));
    assert.deepEqual(outcome.ceiling, { units: 5, bytes: 1_000_000 });
    const refusal = refusalOfStorage(outcome)!;
    assert.equal(refusal.reason, 'limit');
    assert.match(refusal.message, /^arguments: this call read more than one call may \(5 read units/);
  });

  test('outside a call nothing is counted or refused', async () => {
    for (let i = 0; i < 5; i++) await queryAll();
    assert.equal(callBudget(), undefined);
    assert.equal(takeWriteUnits(1_000_000), true);
  });

  test('write units are taken in order; the first ask past the ceiling and every later one is refused', async () => {
    const asks = await withCallBudget({ readUnits: 10, readBytes: 10, writeUnits: 100 }, async () =>
      [60, 50, 10, 1].map((units) => takeWriteUnits(units)),
    );

    assert.deepEqual(asks, [true, false, false, false]);
  });
});
