import { fileURLToPath } from 'node:url';
import { Annotations, ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { NOTIFIER_FUNCTION_ENV_NAMES } from '../lambda/platform/config.js';
import { ACTIVITY_PREFIX } from '../lambda/platform/item-keys.js';
import { WORKSPACE_TABLE_KEYS } from '../lambda/platform/tables.js';
import { LAMBDA_FUNCTION_DEFAULTS, PINNED_RUNTIME_ACKNOWLEDGEMENT, TRACING_ACKNOWLEDGEMENT } from './bundling.js';
import { workspaceIndexAcknowledgement } from './tables.js';

/** One name of the configuration contract the stack sets on the notifier and the minute function. */
export type NotifierFunctionEnvName = (typeof NOTIFIER_FUNCTION_ENV_NAMES)[number];

/** The id of the synth warning a stack without a sender (`doers:emailFrom`) carries. */
export const NO_EMAIL_WARNING = 'doers:email-off';

/**
 * Memory: 256 MB for both functions. Their work is a few DynamoDB calls and a few outgoing requests
 * (SES, webhooks) per record or per minute, with no request to answer quickly, so CPU matters less than
 * for the MCP function; 256 MB keeps the bundle's cold start short enough for work nobody waits on.
 */
export const NOTIFIER_MEMORY_MB = 256;

/**
 * The notifier's timeout: 60 s for a batch of {@link NOTIFIER_BATCH_SIZE} activity records, each of
 * which may tell several people (inbox entries, an e-mail each, webhooks that may answer slowly).
 */
export const NOTIFIER_TIMEOUT = Duration.seconds(60);

/**
 * The minute function's timeout: 50 s, under the one-minute interval, so a run normally ends before the
 * next one starts.
 */
export const MINUTE_TIMEOUT = Duration.seconds(50);

/** Activity records per invocation of the notifier. */
export const NOTIFIER_BATCH_SIZE = 10;

/**
 * How often a failed batch is retried (bisected on error, so a record that keeps failing ends up alone)
 * before its records go to the dead-letter queue.
 */
export const NOTIFIER_RETRY_ATTEMPTS = 5;

/**
 * How old a record may be before it is given up on: a notice a day late is no longer worth sending;
 * it goes to the dead-letter queue instead.
 */
export const NOTIFIER_MAX_RECORD_AGE = Duration.hours(24);

/** How long a record given up on stays in the dead-letter queue (SQS's longest). */
export const DEAD_LETTER_RETENTION = Duration.days(14);

/** Properties of {@link Notifier}. */
export interface NotifierProps {
  /**
   * The workspace table. It must have a stream (the stack's own table has one, lib/tables.ts): its new
   * activity records feed the notifier. Both functions get read/write data access to it (the notifier
   * writes inbox entries and delivery records, the minute function reads the minute-keyed reminders),
   * the notifier also read access to its stream.
   */
  readonly workspaceTable: ITable;
  /** Base of the links the notices carry (DOERS_PUBLIC_URL). May be a token (the API's default endpoint). */
  readonly publicUrl: string;
  /** Days activity records are kept (DOERS_ACTIVITY_DAYS), as the other functions are told. */
  readonly activityDays: number;
  /**
   * The address mail is sent from (DOERS_EMAIL_FROM). With it, both functions may call `ses:SendEmail`
   * on that address's SES identity and its domain's, nothing else of SES.
   *
   * @default - none: e-mail is off, no SES permission, and synth warns ({@link NO_EMAIL_WARNING})
   */
  readonly emailFrom?: string;
  /** Retention of both functions' log groups. */
  readonly logRetention: RetentionDays;
  /**
   * The notifier's handler source (exports `handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse>`).
   *
   * @default - `lambda/notifier-handler.ts` of this repository
   */
  readonly notifierEntry?: string;
  /**
   * The minute function's handler source (exports `handler(): Promise<void>`).
   *
   * @default - `lambda/minute-handler.ts` of this repository
   */
  readonly minuteEntry?: string;
}

/**
 * Telling people, in two Lambda functions run and bundled like the MCP function (`lib/bundling.ts`,
 * X-Ray active tracing included):
 *
 * - the **notifier** (`lambda/notifier-handler.ts`): the activity record every change writes in its
 *   own transaction is the outbox, and the workspace table's stream hands each new one to it, and
 *   nothing else (a filter on INSERTs whose sort key begins with `ACT#`). It reports the records it
 *   could not handle (partial batch response), so only those are retried; a failing batch is bisected,
 *   retried a bounded number of times and dropped after a day, its records' stream positions then going
 *   to an SQS dead-letter queue (encrypted, TLS only, kept 14 days);
 * - the **minute function** (`lambda/minute-handler.ts`): run every minute by an EventBridge rule, it
 *   reads the reminders (and digests) due that minute from their minute-keyed items.
 *
 * The construct owns both functions' environment (exactly the names of `NOTIFIER_FUNCTION_ENV_NAMES`
 * in `lambda/platform/config.ts` that have a value) and their grants: each writes its own log group and
 * reads and writes the workspace table's items; the notifier reads the stream and sends to its
 * dead-letter queue; with a sender, both may send mail from it and only from it.
 */
export class Notifier extends Construct {
  /** The stream-fed notifier. */
  readonly function: NodejsFunction;
  /** The function run every minute. */
  readonly minuteFunction: NodejsFunction;
  readonly logGroup: LogGroup;
  readonly minuteLogGroup: LogGroup;
  /** Where the stream positions of records given up on go. */
  readonly deadLetterQueue: Queue;
  /** The rule that runs the minute function. */
  readonly schedule: Rule;
  /** The environment as set on both functions (unset optional names are absent, not empty). */
  readonly environment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: NotifierProps) {
    super(scope, id);
    const table = props.workspaceTable;
    if (!table.tableStreamArn) {
      throw new Error(`The notifier needs a workspace table with a stream; ${table.node.path} has none.`);
    }

    // A Record over NotifierFunctionEnvName makes the compiler insist that every contract name is decided here.
    const contract: Record<NotifierFunctionEnvName, string | undefined> = {
      DOERS_PUBLIC_URL: props.publicUrl,
      DOERS_ACTIVITY_DAYS: String(props.activityDays),
      DOERS_WORKSPACE_TABLE: table.tableName,
      DOERS_EMAIL_FROM: props.emailFrom,
    };
    const environment: Record<string, string> = {};
    for (const [name, value] of Object.entries(contract)) {
      if (value !== undefined) environment[name] = value;
    }
    this.environment = environment;

    // ---- the notifier, fed by the stream ---------------------------------------------------------
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      // What was sent to whom, and what failed, is logged here; it outlives the stack like the other functions' logs.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // An own role instead of the default one with AWSLambdaBasicExecutionRole (logs:* actions on every
    // log group in the account): this function may write to its own log group and nothing else.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: "doers notifier: its log group, the workspace table and its stream, its dead-letter queue, the sender's SES identity",
    });
    this.logGroup.grantWrite(role);

    this.function = new NodejsFunction(this, 'Handler', {
      role,
      description: 'doers notifier: tells people of changes (inbox, e-mail, webhooks) from the activity records on the stream',
      entry: props.notifierEntry ?? fileURLToPath(new URL('../lambda/notifier-handler.ts', import.meta.url)),
      ...LAMBDA_FUNCTION_DEFAULTS,
      memorySize: NOTIFIER_MEMORY_MB,
      timeout: NOTIFIER_TIMEOUT,
      environment,
      logGroup: this.logGroup,
    });

    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      // SQS-managed keys: encrypted at rest with no key to administer, and no KMS permission to grant.
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DEAD_LETTER_RETENTION,
    });

    this.function.addEventSource(
      new DynamoEventSource(table, {
        // From the deploy on: records written before the notifier existed are history, not news.
        startingPosition: StartingPosition.LATEST,
        batchSize: NOTIFIER_BATCH_SIZE,
        // Only new activity records wake the function: no invocation (and no cost) for the other items a
        // change writes, for updates, or for the deletions time to live makes.
        filters: [
          FilterCriteria.filter({
            eventName: FilterRule.isEqual('INSERT'),
            dynamodb: { Keys: { [WORKSPACE_TABLE_KEYS.sortKey]: { S: FilterRule.beginsWith(ACTIVITY_PREFIX) } } },
          }),
        ],
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: NOTIFIER_RETRY_ATTEMPTS,
        maxRecordAge: NOTIFIER_MAX_RECORD_AGE,
        // One batch per shard at a time: the records of one partition are told in the order they were
        // written. A task's records may sit in different partitions (store/activity-store.ts spreads
        // them by call), so the webhooks keep each task's deliveries in the order of their ids
        // (workspace/store/webhook-store.ts), and an inbox lists by id, whatever order they came in.
        parallelizationFactor: 1,
        onFailure: new SqsDlq(this.deadLetterQueue),
      }),
    );
    table.grantReadWriteData(this.function);

    // ---- the minute function ----------------------------------------------------------------------
    this.minuteLogGroup = new LogGroup(this, 'MinuteLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const minuteRole = new Role(this, 'MinuteRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: "doers minute function: its log group, the workspace table, the sender's SES identity",
    });
    this.minuteLogGroup.grantWrite(minuteRole);

    this.minuteFunction = new NodejsFunction(this, 'MinuteHandler', {
      role: minuteRole,
      description: 'doers minute function: reminders and digests due this minute',
      entry: props.minuteEntry ?? fileURLToPath(new URL('../lambda/minute-handler.ts', import.meta.url)),
      ...LAMBDA_FUNCTION_DEFAULTS,
      memorySize: NOTIFIER_MEMORY_MB,
      timeout: MINUTE_TIMEOUT,
      environment,
      logGroup: this.minuteLogGroup,
      // No Lambda retry of a failed run: a retry would land a minute or two later, beside the runs of those
      // minutes, and the next run starts where the last one left off (the job's cursor,
      // lambda/platform/item-keys.ts minuteCursorSk), so it does the failed run's work anyway.
      retryAttempts: 0,
      maxEventAge: Duration.minutes(2),
    });
    table.grantReadWriteData(this.minuteFunction);

    // An EventBridge rule rather than EventBridge Scheduler: the rule invokes the function through a
    // resource-based permission, so there is no role to make and grant, and a fixed rate needs nothing
    // Scheduler adds (time zones, one-off schedules, flexible windows). One minute is the shortest rate
    // either offers.
    this.schedule = new Rule(this, 'EveryMinute', {
      description: 'Runs the doers minute function (reminders and digests due this minute)',
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [
        new LambdaFunction(this.minuteFunction, {
          // Retries of a delivery that failed (Lambda throttled it), while the minute is still worth running.
          retryAttempts: 2,
          maxEventAge: Duration.minutes(2),
        }),
      ],
    });

    // ---- e-mail -------------------------------------------------------------------------------------
    if (props.emailFrom) {
      const sendEmail = new PolicyStatement({
        // SES v2's SendEmail is authorized as ses:SendEmail; no raw MIME is sent, so no ses:SendRawEmail.
        actions: ['ses:SendEmail'],
        resources: sesIdentityArns(Stack.of(this), props.emailFrom),
      });
      role.addToPrincipalPolicy(sendEmail);
      minuteRole.addToPrincipalPolicy(sendEmail);
    } else {
      Annotations.of(this).addWarningV2(
        NO_EMAIL_WARNING,
        'E-mail is off: the notifier tells people in their inbox and by webhook only. To send mail, verify an address ' +
          '(or its domain) in Amazon SES in this region and deploy with -c doers:emailFrom=doers@example.com ' +
          '(docs/deploy-and-operations.md, "E-mail").',
      );
    }

    Validations.of(this).acknowledge(
      PINNED_RUNTIME_ACKNOWLEDGEMENT,
      {
        id: TRACING_ACKNOWLEDGEMENT.id,
        reason:
          `${TRACING_ACKNOWLEDGEMENT.reason} For the notifier the same finding also covers dynamodb:ListStreams, which ` +
          "the stream's event source mapping needs and IAM grants on no narrower resource; reading the records is " +
          'granted on the stream ARN alone.',
      },
      workspaceIndexAcknowledgement(table),
    );
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is a dead-letter queue: the on-failure destination of the notifier's stream event source mapping, " +
        'which the check does not recognise as one (it looks for a redrive policy of another queue).',
    });
  }
}

/**
 * The SES identities a sender may be verified as: the address itself and its domain
 * (`arn:aws:ses:<region>:<account>:identity/<address>`, `…/identity/<domain>`). SES authorizes a send
 * against whichever of the two is verified, so the grant names both and nothing wider.
 */
export const sesIdentityArns = (stack: Stack, address: string): string[] => {
  const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  return [address, domain].map((identity) =>
    stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
  );
};
