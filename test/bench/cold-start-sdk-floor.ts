import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

// The floor under any cold start that reads DynamoDB with the AWS SDK v3, a side of the bench's
// cold-start comparison: a fresh Node 22 process imports the document client (bundled as the stack
// bundles a function, its credentials from the environment), sends `steps` GetItems of an item that
// is not there one after another to the store doers' cold starts use, and prints when the last
// answer came. A doers cold start does this and more, so it cannot come in under the figure for as
// many steps as its first call waits for.
const [table, steps = '1'] = process.argv.slice(2);
const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));
let ok = true;
for (let i = 0; i < Number(steps); i++) {
  const out = await db.send(new GetCommand({ TableName: table, Key: { pk: 'FLOOR', sk: `STEP#${i}` } }));
  ok &&= out.$metadata.httpStatusCode === 200 && out.Item === undefined;
}
console.log(JSON.stringify({ ms: performance.now(), ok }));
process.exit(0);
