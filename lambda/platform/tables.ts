import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * Key schema of the two tables. The CDK stack and the local server both build their tables from
 * these names, so what runs locally is shaped exactly like what is deployed.
 */
export const WORKSPACE_TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  gsi1: { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  /** Tasks by assignee: a person's agenda reads only their own tasks. */
  gsi2: { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  /**
   * Tasks by project (layout 2). Added to a deployed table on its own: DynamoDB builds one new
   * index per table update, and a stack update that adds two fails (docs/deploy-and-operations.md).
   */
  gsi3: { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  ttl: 'expiresAt',
} as const;

/** One item per user holding both limits: rate counters per window and concurrency lease counters. */
export const LIMITS_TABLE_KEYS = { partitionKey: 'pk', ttl: 'expiresAt' } as const;

export type TableRole = 'workspace' | 'limits';

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
        { AttributeName: k.gsi2.partitionKey, AttributeType: 'S' },
        { AttributeName: k.gsi2.sortKey, AttributeType: 'S' },
        { AttributeName: k.gsi3.partitionKey, AttributeType: 'S' },
        { AttributeName: k.gsi3.sortKey, AttributeType: 'S' },
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
        {
          IndexName: k.gsi2.indexName,
          KeySchema: [
            { AttributeName: k.gsi2.partitionKey, KeyType: 'HASH' },
            { AttributeName: k.gsi2.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
        {
          IndexName: k.gsi3.indexName,
          KeySchema: [
            { AttributeName: k.gsi3.partitionKey, KeyType: 'HASH' },
            { AttributeName: k.gsi3.sortKey, KeyType: 'RANGE' },
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
