import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { WORKER_FUNCTION_ENV_NAMES } from '../lambda/platform/config.js';
import type { AttachmentsBucket } from './attachments-bucket.js';
import { buildS3FilesCommand, LAMBDA_FUNCTION_DEFAULTS, PINNED_RUNTIME_ACKNOWLEDGEMENT, TRACING_ACKNOWLEDGEMENT } from './bundling.js';
import { DEAD_LETTER_RETENTION } from './notifier.js';
import { workspaceIndexAcknowledgement } from './tables.js';

/** One name of the configuration contract the stack sets on the worker. */
export type WorkerFunctionEnvName = (typeof WORKER_FUNCTION_ENV_NAMES)[number];

/** Lambda's longest: a 10,000-row import takes under a minute on the embedded store, a large one more in a region. */
export const WORKER_TIMEOUT = Duration.minutes(15);

/**
 * 1,024 MB: an import holds its whole file, its rows and their plans in memory, and an export the
 * workspace's items; more memory is also more CPU for the file's reading.
 */
export const WORKER_MEMORY_MB = 1024;

/** Deliveries of a job's message before it goes to the dead-letter queue: a job the worker could not even record. */
export const WORKER_MAX_RECEIVES = 3;

/** Properties of {@link Worker}. */
export interface WorkerProps {
  /** The workspace table: jobs, and what an import writes and an export reads. */
  readonly workspaceTable: ITable;
  /** Attachments: an import reads its file from them, an export writes its file to them. */
  readonly attachments: AttachmentsBucket;
  readonly attachmentLimits: { readonly maxMb: number; readonly quotaMb: number };
  /** Base URL (DOERS_PUBLIC_URL), as the other functions are told. */
  readonly publicUrl: string;
  /** Days activity records are kept (DOERS_ACTIVITY_DAYS): an import's records are kept as long. */
  readonly activityDays: number;
  readonly logRetention: RetentionDays;
  /**
   * The worker's handler source (exports `handler(event: SQSEvent): Promise<SQSBatchResponse>`).
   *
   * @default - `lambda/worker-handler.ts` of this repository
   */
  readonly entry?: string;
}

/**
 * Long work (workspace_import, workspace_export) outside the request: the MCP function writes the
 * job and sends its id to this construct's queue, and this construct's function runs it (lambda/worker-handler.ts).
 *
 * Why a queue rather than an asynchronous invocation of the MCP function: the work needs Lambda's
 * longest timeout and more memory than a request, which a function of its own has without giving
 * every MCP request a 15-minute timeout; the message outlives any instance and is redelivered if the
 * worker dies (a job runs again safely: an import's rows are claimed and never made twice, and a job
 * that ended is left alone); and the function needs only `sqs:SendMessage` on one queue instead of
 * `lambda:InvokeFunction` on itself, which CloudFormation cannot even express without naming the
 * function by hand. One job a message, and at most two workers at once: imports of two workspaces
 * run side by side, and a burst of jobs waits in the queue instead of taking the account's concurrency.
 */
export class Worker extends Construct {
  readonly function: NodejsFunction;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly logGroup: LogGroup;
  /** The environment as set on the function. */
  readonly environment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: WorkerProps) {
    super(scope, id);
    const contract: Record<WorkerFunctionEnvName, string | undefined> = {
      DOERS_PUBLIC_URL: props.publicUrl,
      DOERS_ACTIVITY_DAYS: String(props.activityDays),
      DOERS_WORKSPACE_TABLE: props.workspaceTable.tableName,
      DOERS_FUNCTION_TIMEOUT_SECONDS: String(WORKER_TIMEOUT.toSeconds()),
      DOERS_ATTACHMENT_BUCKET: props.attachments.bucket.bucketName,
      DOERS_ATTACHMENT_MAX_MB: String(props.attachmentLimits.maxMb),
      DOERS_ATTACHMENT_QUOTA_MB: String(props.attachmentLimits.quotaMb),
    };
    const environment: Record<string, string> = {};
    for (const [name, value] of Object.entries(contract)) {
      if (value !== undefined) environment[name] = value;
    }
    this.environment = environment;

    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DEAD_LETTER_RETENTION,
    });
    this.queue = new Queue(this, 'Jobs', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Longer than the worker may run (AWS asks for six times the timeout with batching; one message a batch needs less).
      visibilityTimeout: WORKER_TIMEOUT.plus(Duration.minutes(1)),
      // A job's handle lives a day (lambda/workspace/store/job-store.ts JOB_TTL_MS): its message no longer.
      retentionPeriod: Duration.days(1),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: WORKER_MAX_RECEIVES },
    });

    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: RemovalPolicy.RETAIN });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'doers worker: its log group, its queue, the workspace table, the attachments bucket',
    });
    this.logGroup.grantWrite(role);

    this.function = new NodejsFunction(this, 'Handler', {
      role,
      description: 'doers worker: long work (workspace_import, workspace_export) from its queue',
      entry: props.entry ?? fileURLToPath(new URL('../lambda/worker-handler.ts', import.meta.url)),
      ...LAMBDA_FUNCTION_DEFAULTS,
      bundling: {
        ...LAMBDA_FUNCTION_DEFAULTS.bundling,
        // The S3 module's own bundle beside it, as beside the MCP function (lib/bundling.ts S3_FILES_ENTRY).
        commandHooks: { beforeBundling: () => [], beforeInstall: () => [], afterBundling: (_in, out) => [buildS3FilesCommand(out)] },
      },
      memorySize: WORKER_MEMORY_MB,
      timeout: WORKER_TIMEOUT,
      environment,
      logGroup: this.logGroup,
    });
    this.function.addEventSource(new SqsEventSource(this.queue, { batchSize: 1, reportBatchItemFailures: true, maxConcurrency: 2 }));
    props.workspaceTable.grantReadWriteData(this.function);
    props.attachments.grantFunction(this.function);

    Validations.of(this).acknowledge(
      PINNED_RUNTIME_ACKNOWLEDGEMENT,
      TRACING_ACKNOWLEDGEMENT,
      workspaceIndexAcknowledgement(props.workspaceTable),
      ...props.attachments.acknowledgementsFor(),
    );
  }
}
