import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient, ResourceInUseException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Config } from '../platform/config.js';
import { createTableInput, type TableRole } from '../platform/tables.js';

/**
 * Creates the two tables unless they exist. Idempotent, so several local servers sharing one
 * DynamoDB may all run it at start-up, as Lambda instances share one deployment.
 */
export const ensureTables = async (db: DynamoDBDocumentClient, config: Config): Promise<void> => {
  const client = db as unknown as DynamoDBClient;
  const roles: [TableRole, string][] = [
    ['workspace', config.tables.workspace],
    ['limits', config.tables.limits],
  ];
  await Promise.all(
    roles.map(async ([role, name]) => {
      try {
        await client.send(new CreateTableCommand(createTableInput(role, name)));
      } catch (err) {
        if (!(err instanceof ResourceInUseException)) throw err;
      }
      for (let i = 0; i < 100; i++) {
        const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
        if (Table?.TableStatus === 'ACTIVE') {
          // A table from an older doers lacks an index this one queries: say so at start, not as a 500 later.
          const wanted = createTableInput(role, name).GlobalSecondaryIndexes?.map((g) => g.IndexName) ?? [];
          const missing = wanted.filter((n) => !Table.GlobalSecondaryIndexes?.some((g) => g.IndexName === n));
          if (missing.length) {
            throw new Error(
              `table ${name} lacks the index ${missing.join(', ')}: it was made by an older doers; move the data dir away (or drop the table) to start afresh`,
            );
          }
          return;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`table ${name} did not become ACTIVE`);
    }),
  );
};
