import { CreateTableCommand, DescribeTableCommand, ResourceInUseException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Config } from '../platform/config.js';
import { createTableInput, type TableRole } from '../platform/tables.js';

/**
 * Creates the three tables unless they exist. Idempotent, so several local servers sharing one
 * DynamoDB may all run it at start-up, as Lambda instances share one deployment.
 */
export const ensureTables = async (db: DynamoDBDocumentClient, config: Config): Promise<void> => {
  const client = db as unknown as DynamoDBClient;
  const roles: [TableRole, string][] = [
    ['workspace', config.tables.workspace],
    ['rateLimits', config.tables.rateLimits],
    ['leases', config.tables.leases],
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
        if (Table?.TableStatus === 'ACTIVE') return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`table ${name} did not become ACTIVE`);
    }),
  );
};
