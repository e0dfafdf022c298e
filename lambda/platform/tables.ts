import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * Key schema of the three tables. The CDK stack and the local server both build their tables from
 * these names, so what runs locally is shaped exactly like what is deployed.
 */
export const WORKSPACE_TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  ttl: 'expiresAt',
} as const;

export const RATE_LIMIT_TABLE_KEYS = { partitionKey: 'pk', ttl: 'expiresAt' } as const;
export const LEASE_TABLE_KEYS = { partitionKey: 'pk', ttl: 'expiresAt' } as const;

export type TableRole = 'workspace' | 'rateLimits' | 'leases';

/** CreateTable input for the local server (dynalite, DynamoDB Local); on-demand like the stack. */
export const createTableInput = (role: TableRole, tableName: string): CreateTableCommandInput => {
  if (role === 'workspace') {
    const k = WORKSPACE_TABLE_KEYS;
    return {
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: k.partitionKey, AttributeType: 'S' },
        { AttributeName: k.sortKey, AttributeType: 'S' },
        { AttributeName: k.gsi1.partitionKey, AttributeType: 'S' },
        { AttributeName: k.gsi1.sortKey, AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: k.partitionKey, KeyType: 'HASH' },
        { AttributeName: k.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: k.gsi1.indexName,
          KeySchema: [
            { AttributeName: k.gsi1.partitionKey, KeyType: 'HASH' },
            { AttributeName: k.gsi1.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    };
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  };
};
