import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { LimitExceededError } from '../../lambda/errors.js';
import { type EmbeddedDynamo, startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { withAdmission } from '../../lambda/platform/admission-gate.js';
import { createDocumentClient } from '../../lambda/platform/dynamodb.js';
import { createTableInput } from '../../lambda/platform/tables.js';

// The function's own DynamoDB client (platform/dynamodb.ts) against the embedded DynamoDB: a call's
// reads go out beside its admission, its writes wait for it, and once it is refused nothing more is sent.

const TABLE = 'doers-admission-gate-test';

/** An admission decided by the test: `admit()` or `refuse()` settles it. */
const pendingAdmission = () => {
  let admit = (): void => {};
  let refuse = (_err: unknown): void => {};
  const admitted = new Promise<void>((resolve, reject) => {
    admit = resolve;
    refuse = reject;
  });
  return { admitted, admit, refuse };
};

describe("a call's DynamoDB requests and its admission", () => {
  let dynamo: EmbeddedDynamo;
  let db: DynamoDBDocumentClient;
  before(async () => {
    dynamo = await startEmbeddedDynamo(':memory:');
    db = createDocumentClient({ endpoint: dynamo.endpoint });
    await db.send(new CreateTableCommand(createTableInput('workspace', TABLE)));
    await db.send(new PutCommand({ TableName: TABLE, Item: { pk: 'P', sk: 'seen' } }));
  });
  after(async () => {
    db.destroy();
    await dynamo.close();
  });

  const get = (sk: string) => db.send(new GetCommand({ TableName: TABLE, Key: { pk: 'P', sk }, ConsistentRead: true }));
  const put = (sk: string) => db.send(new PutCommand({ TableName: TABLE, Item: { pk: 'P', sk } }));

  // A regression here would hang (a write waiting for an admission that never comes): each test is bounded.
  test('a read is answered while the admission is undecided; a write is sent only once the call is admitted', {
    timeout: 10_000,
  }, async () => {
    // Arrange
    const gate = pendingAdmission();
    let written = false;

    // Act
    const call = withAdmission(gate.admitted, async () => {
      const read = await get('seen');
      const write = put('admitted').then(() => {
        written = true;
      });
      return { read, write };
    });
    const { read, write } = await call;
    await new Promise((r) => setTimeout(r, 50));
    const beforeAdmission = { written, stored: (await get('admitted')).Item };
    gate.admit();
    await write;

    // Assert
    assert.deepEqual(read.Item, { pk: 'P', sk: 'seen' });
    assert.deepEqual(beforeAdmission, { written: false, stored: undefined });
    assert.deepEqual((await get('admitted')).Item, { pk: 'P', sk: 'admitted' });
  });

  test('a refused call writes nothing, and once the refusal is known it reads nothing more either', { timeout: 10_000 }, async () => {
    // Arrange
    const gate = pendingAdmission();
    const refusal = new LimitExceededError('busy', 1);

    // Act
    const outcome = await withAdmission(gate.admitted, async () => {
      const write = put('refused').then(
        () => 'written',
        (err: unknown) => err,
      );
      gate.refuse(refusal);
      const writeOutcome = await write;
      const readOutcome = await get('seen').then(
        () => 'read',
        (err: unknown) => err,
      );
      return { writeOutcome, readOutcome };
    });

    // Assert: both fail with the refusal itself, typed, and the item was never written
    assert.equal(outcome.writeOutcome, refusal);
    assert.equal(outcome.readOutcome, refusal);
    assert.equal((await get('refused')).Item, undefined);
  });

  test('outside a call (the admin CLI, a migration) nothing waits', { timeout: 10_000 }, async () => {
    // Act
    await put('outside');

    // Assert
    assert.deepEqual((await get('outside')).Item, { pk: 'P', sk: 'outside' });
  });
});
