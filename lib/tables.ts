import { Annotations, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { CfnTable, ITable } from 'aws-cdk-lib/aws-dynamodb';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { LIMITS_TABLE_KEYS, WORKSPACE_TABLE_KEYS } from '../lambda/platform/tables.js';

/** Properties of {@link DoersTables}. */
export interface DoersTablesProps {
  /**
   * What happens to the workspace table when it leaves the stack (stack deleted, construct renamed).
   * It holds every team's tasks, members and token hashes, so the default keeps it.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly workspaceRemovalPolicy?: RemovalPolicy;
  /**
   * The name of an existing workspace table to use instead of the stack's own, e.g. one restored
   * from point-in-time recovery. The stack then holds no workspace table resource: the one it had
   * leaves the stack and is kept (it is retained), and the adopted table's time to live, recovery
   * and deletion protection are the operator's to set (`cdk synth` notes it).
   *
   * @default - the stack's own table
   */
  readonly existingWorkspaceTableName?: string;
}

const COMMON = {
  billingMode: BillingMode.PAY_PER_REQUEST,
  encryption: TableEncryption.AWS_MANAGED,
  pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
} as const;

/** The id of the synth note an adopted workspace table gets. */
export const ADOPTED_TABLE_NOTE = 'doers:adopted-workspace-table';

/**
 * The two DynamoDB tables: the workspace (single-table design with two GSIs) and the per-user limits
 * (rate-limit windows and concurrency leases in one item per user, taken with one write). Key names come from `lambda/platform/tables.ts`, which the local server
 * uses too, so what runs locally is shaped exactly like what is deployed.
 *
 * Both are on-demand (traffic is spiky and small; no capacity to plan), encrypted with the
 * AWS-managed KMS key (`aws/dynamodb`: encryption at rest, key usage visible in CloudTrail, no key to
 * administer or pay for), have point-in-time recovery and expire items through the TTL attribute
 * `expiresAt` (epoch seconds). The workspace table (the stack's own, not an adopted one) has a stream of
 * new images, which feeds the notifier.
 */
export class DoersTables extends Construct {
  /** Workspaces, members, projects, tasks, comments, token hashes. */
  readonly workspace: ITable;
  /** Per-user rate-limit windows and concurrency leases (items expire once nothing in them counts). */
  readonly limits: Table;

  constructor(scope: Construct, id: string, props: DoersTablesProps = {}) {
    super(scope, id);

    this.workspace = props.existingWorkspaceTableName
      ? this.adopted(props.existingWorkspaceTableName)
      : this.ownWorkspaceTable(props.workspaceRemovalPolicy);

    // The limits table holds only counters that expire within minutes; losing it on stack deletion
    // loses nothing (the limits simply start fresh), so it goes with the stack instead of leaving an
    // orphaned table behind. PITR stays on: it costs next to nothing at this size.
    this.limits = new Table(this, 'Limits', {
      ...COMMON,
      partitionKey: { name: LIMITS_TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      timeToLiveAttribute: LIMITS_TABLE_KEYS.ttl,
      removalPolicy: RemovalPolicy.DESTROY,
    });
  }

  /** A table made elsewhere, by name; its indexes named so the functions' grants cover them. */
  private adopted(tableName: string): ITable {
    Annotations.of(this).addInfo(
      `[${ADOPTED_TABLE_NOTE}] The workspace table ${tableName} is adopted: this stack does not manage its time to live (expiresAt), ` +
        'point-in-time recovery or deletion protection; set them as docs/deploy-and-operations.md "Restoring the table" says.',
    );
    return Table.fromTableAttributes(this, 'Workspace', {
      tableName,
      globalIndexes: [WORKSPACE_TABLE_KEYS.gsi1.indexName, WORKSPACE_TABLE_KEYS.gsi2.indexName, WORKSPACE_TABLE_KEYS.gsi3.indexName],
    });
  }

  private ownWorkspaceTable(removalPolicy: RemovalPolicy | undefined): Table {
    const table = new Table(this, 'Workspace', {
      ...COMMON,
      partitionKey: { name: WORKSPACE_TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: WORKSPACE_TABLE_KEYS.sortKey, type: AttributeType.STRING },
      timeToLiveAttribute: WORKSPACE_TABLE_KEYS.ttl,
      removalPolicy: removalPolicy ?? RemovalPolicy.RETAIN,
      // A retained table must also survive a console click or a stray `aws dynamodb delete-table`.
      deletionProtection: (removalPolicy ?? RemovalPolicy.RETAIN) === RemovalPolicy.RETAIN,
      // The outbox of notifications: every change writes its activity record in its own transaction, and
      // the stream hands each new one to the notifier (lib/notifier.ts). New images only: the notifier
      // reads what was written, never what it replaced. Turning a stream on is an in-place table update
      // (no index, no key, no data moves; test/infra/upgrade.test.ts).
      stream: StreamViewType.NEW_IMAGE,
    });
    table.addGlobalSecondaryIndex({
      indexName: WORKSPACE_TABLE_KEYS.gsi1.indexName,
      partitionKey: { name: WORKSPACE_TABLE_KEYS.gsi1.partitionKey, type: AttributeType.STRING },
      sortKey: { name: WORKSPACE_TABLE_KEYS.gsi1.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    table.addGlobalSecondaryIndex({
      indexName: WORKSPACE_TABLE_KEYS.gsi2.indexName,
      partitionKey: { name: WORKSPACE_TABLE_KEYS.gsi2.partitionKey, type: AttributeType.STRING },
      sortKey: { name: WORKSPACE_TABLE_KEYS.gsi2.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    // Added by the version with data layout 2, alone in its update: DynamoDB adds one index per
    // table update (test/infra/upgrade.test.ts holds the template to that against the one before).
    table.addGlobalSecondaryIndex({
      indexName: WORKSPACE_TABLE_KEYS.gsi3.indexName,
      partitionKey: { name: WORKSPACE_TABLE_KEYS.gsi3.partitionKey, type: AttributeType.STRING },
      sortKey: { name: WORKSPACE_TABLE_KEYS.gsi3.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });

    return table;
  }

  /** The tables with a human label, for dashboards and alarms. */
  get all(): ReadonlyArray<{ readonly label: string; readonly table: ITable }> {
    return [
      { label: 'workspace', table: this.workspace },
      { label: 'limits', table: this.limits },
    ];
  }
}

/**
 * The acknowledgement of the one wildcard a function with `grantReadWriteData` on the workspace table
 * gets (AwsSolutions-IAM5 on `<table ARN>/index/*`). The finding ID names the table by its logical ID,
 * which only the stack knows.
 */
export const workspaceIndexAcknowledgement = (workspace: ITable): { readonly id: string; readonly reason: string } => {
  const own = workspace.node.defaultChild as CfnTable | undefined;
  // An adopted table's ARN is built from the stack's partition, region and account and its name.
  const arn = own
    ? `<${Stack.of(workspace).getLogicalId(own)}.Arn>`
    : `arn:<AWS::Partition>:dynamodb:<AWS::Region>:<AWS::AccountId>:table/${Stack.of(workspace).resolve(workspace.tableName)}`;
  return {
    id: `AwsSolutions-IAM5[Resource::${arn}/index/*]`,
    reason:
      "Queries on the workspace table's GSI need access to the table's indexes, which IAM names as " +
      '<table ARN>/index/*; the actions are the data-plane read/write set of grantReadWriteData ' +
      '(no dynamodb:*, no control-plane actions).',
  };
};
