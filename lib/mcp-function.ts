import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { FUNCTION_ENV_NAMES } from '../lambda/platform/config.js';
import type { AttachmentsBucket } from './attachments-bucket.js';
import {
  buildMcpBundleCommand,
  buildS3FilesCommand,
  buildViewsCommand,
  LAMBDA_FUNCTION_DEFAULTS,
  PINNED_RUNTIME_ACKNOWLEDGEMENT,
  TRACING_ACKNOWLEDGEMENT,
} from './bundling.js';
import type { DoersTables } from './tables.js';
import { workspaceIndexAcknowledgement } from './tables.js';

/** One name of the configuration contract the stack sets on the function. */
export type FunctionEnvName = (typeof FUNCTION_ENV_NAMES)[number];

/** The Powertools settings every record of the four meters and every log line depends on. */
export const POWERTOOLS_ENV = {
  POWERTOOLS_SERVICE_NAME: 'doers',
  POWERTOOLS_METRICS_NAMESPACE: 'Doers',
} as const;

/**
 * Memory: 512 MB. The work per request is small (parse at most 1 MiB of JSON, a handful of DynamoDB
 * calls, one JWT verification) and the heap stays well under 200 MB, but Lambda hands out CPU in
 * proportion to memory: at 512 MB an arm64 function gets about a third of a vCPU, which keeps cold
 * starts (module load, secret fetch, HKDF) and JSON (de)serialisation of large lists short, and costs
 * less per millisecond than x86. Below 512 MB the p99 is dominated by CPU starvation; above it,
 * the gain is small for this I/O-bound workload.
 */
export const DEFAULT_MEMORY_MB = 512;

/**
 * Timeout: 15 s. The slowest legitimate path is a cold start that fetches the secret and a JWKS and
 * then runs a tool with several DynamoDB round trips (SDK retries with back-off included): a few
 * seconds at worst. 15 s leaves room for that, stays well inside API Gateway's 30 s integration limit
 * (so the caller gets the function's own answer, not a gateway timeout), and bounds how long the lease
 * of a call that died mid-flight keeps counting against its user's concurrency (the function is told
 * this value as DOERS_FUNCTION_TIMEOUT_SECONDS).
 */
export const DEFAULT_TIMEOUT = Duration.seconds(15);

/** Properties of {@link McpFunction}. */
export interface McpFunctionProps {
  /** The two tables; the function gets read/write data access to each, nothing more. */
  readonly tables: DoersTables;
  /** The generated secret; the function gets read access to it. */
  readonly secret: ISecret;
  /** Where attachments' bytes go; the function gets the object actions it uses on its prefixes. */
  readonly attachments: AttachmentsBucket;
  /** The largest attachment and a workspace's total, in MB. */
  readonly attachmentLimits: { readonly maxMb: number; readonly quotaMb: number };
  /**
   * Base URL advertised in the protected-resource metadata and in every challenge
   * (`${publicUrl}/mcp` is the resource). May be a token (the API's default endpoint).
   */
  readonly publicUrl: string;
  /**
   * Origins allowed to call the endpoint from a browser.
   *
   * @default - unset: the function's built-in list (doers.sh, claude.ai, claude.com, chatgpt.com, …)
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * External authorization server whose JWTs the function accepts next to personal access tokens.
   * Without one, the built-in authorization server (issuer: `publicUrl`) is the one the metadata names;
   * the function verifies its tokens with a key derived from the secret, so it needs no setting for it.
   *
   * @default - no external issuer: personal access tokens and the built-in authorization server's tokens
   */
  readonly jwt?: {
    /** Exact `iss` value. */
    readonly issuer: string;
    /** Where the issuer publishes its signing keys. */
    readonly jwksUri: string;
    /** Required audience; for Cognito, the app client id (Cognito puts it in `client_id`). */
    readonly audience?: string;
    /** What the authorization server puts before each scope (Cognito: `<resource server id>/`). */
    readonly scopePrefix?: string;
  };
  /**
   * Claim that names the workspace user in a JWT.
   *
   * @default - unset: the function's default (`email`)
   */
  readonly jwtUserClaim?: string;
  /** Tool calls and resource reads per user per window; 0 disables. */
  readonly rateLimit: { readonly calls: number; readonly windowSeconds: number };
  /** Calls of one user in flight at once; 0 disables. */
  readonly maxConcurrentCalls: number;
  /** How long an instance reuses a verified principal, bounding how long a revocation takes; 0 disables. */
  readonly authCacheSeconds: number;
  /** Days activity records, and the deleted items their undo needs, are kept (the table's TTL removes them). */
  readonly activityDays: number;
  /**
   * The sender of notification mail (a verified SES identity), passed on as DOERS_EMAIL_FROM like the rest of
   * the configuration contract. The function gets no SES permission: the notifier sends the mail (lib/notifier.ts).
   *
   * @default - unset: e-mail is off
   */
  readonly emailFrom?: string;
  /** The queue long work goes to (lib/worker.ts); the function may send to it and nothing else of SQS. */
  readonly workQueue: IQueue;
  /** Retention of the function's log group (audit lines, EMF records). */
  readonly logRetention: RetentionDays;
  /**
   * @default DEFAULT_MEMORY_MB (512)
   */
  readonly memorySize?: number;
  /**
   * @default DEFAULT_TIMEOUT (15 s)
   */
  readonly timeout?: Duration;
  /**
   * Handler source (must export `handler`).
   *
   * @default - `lambda/handler.ts` of this repository
   */
  readonly entry?: string;
}

/**
 * The MCP endpoint's one Lambda function: Node.js 22 on arm64, bundled by esbuild from `lambda/` as
 * minified ESM with source maps. The construct owns the function's environment (exactly the names of
 * the configuration contract, `FUNCTION_ENV_NAMES` in `lambda/platform/config.ts`, plus the Powertools
 * settings) and its grants (writing its own log group, data-plane access to the two tables, read
 * access to the secret).
 */
export class McpFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  /** The environment as set on the function (unset optional names are absent, not empty). */
  readonly environment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: McpFunctionProps) {
    super(scope, id);
    const timeout = props.timeout ?? DEFAULT_TIMEOUT;

    // A Record over FunctionEnvName makes the compiler insist that every contract name is decided here.
    const contract: Record<FunctionEnvName, string | undefined> = {
      DOERS_PUBLIC_URL: props.publicUrl,
      DOERS_ALLOWED_ORIGINS: props.allowedOrigins?.join(','),
      DOERS_JWT_ISSUER: props.jwt?.issuer,
      DOERS_JWKS_URI: props.jwt?.jwksUri,
      DOERS_JWT_AUDIENCE: props.jwt?.audience,
      DOERS_JWT_USER_CLAIM: props.jwtUserClaim,
      DOERS_JWT_SCOPE_PREFIX: props.jwt?.scopePrefix,
      DOERS_RATE_LIMIT_CALLS: String(props.rateLimit.calls),
      DOERS_RATE_LIMIT_WINDOW_SECONDS: String(props.rateLimit.windowSeconds),
      DOERS_MAX_CONCURRENT_CALLS: String(props.maxConcurrentCalls),
      DOERS_AUTH_CACHE_SECONDS: String(props.authCacheSeconds),
      DOERS_ACTIVITY_DAYS: String(props.activityDays),
      DOERS_WORKSPACE_TABLE: props.tables.workspace.tableName,
      DOERS_LIMITS_TABLE: props.tables.limits.tableName,
      DOERS_SECRET_ARN: props.secret.secretArn,
      DOERS_FUNCTION_TIMEOUT_SECONDS: String(timeout.toSeconds()),
      DOERS_ATTACHMENT_BUCKET: props.attachments.bucket.bucketName,
      DOERS_ATTACHMENT_MAX_MB: String(props.attachmentLimits.maxMb),
      DOERS_ATTACHMENT_QUOTA_MB: String(props.attachmentLimits.quotaMb),
      DOERS_EMAIL_FROM: props.emailFrom,
      DOERS_WORK_QUEUE_URL: props.workQueue.queueUrl,
    };
    const environment: Record<string, string> = {};
    for (const [name, value] of Object.entries(contract)) {
      if (value !== undefined) environment[name] = value;
    }
    // No NODE_OPTIONS=--enable-source-maps: it reads the bundle's map at every cold start (about 8 ms);
    // lambda/platform/lazy-source-map.ts maps the few stacks ever logged when they are formatted.
    Object.assign(environment, POWERTOOLS_ENV);
    this.environment = environment;

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      // The log group carries the audit trail; it outlives the stack like the workspace table does.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // An own role instead of the default one with AWSLambdaBasicExecutionRole (logs:* actions on every
    // log group in the account): this function may write to its own log group and nothing else.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'doers MCP function: its log group, its two tables, its secret, its attachments bucket, its work queue',
    });
    this.logGroup.grantWrite(role);

    const entry = props.entry ?? fileURLToPath(new URL('../lambda/handler.ts', import.meta.url));
    this.function = new NodejsFunction(this, 'Handler', {
      role,
      description: 'doers MCP endpoint (POST /mcp, protected-resource metadata)',
      entry,
      ...LAMBDA_FUNCTION_DEFAULTS,
      bundling: {
        ...LAMBDA_FUNCTION_DEFAULTS.bundling,
        // The bundle split into chunks loaded on first use, in place of NodejsFunction's single file
        // (lib/bundling.ts MCP_CHUNKS_DIR). The MCP Apps views' HTML beside it in the same asset
        // (lib/bundling.ts VIEWS_DIR), and the S3 module's own bundle, loaded on the first
        // attachment (lib/bundling.ts S3_FILES_ENTRY).
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_in, out) => [buildMcpBundleCommand(entry, out), buildViewsCommand(out), buildS3FilesCommand(out)],
        },
      },
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      timeout,
      environment,
      logGroup: this.logGroup,
    });

    props.tables.workspace.grantReadWriteData(this.function);
    props.tables.limits.grantReadWriteData(this.function);
    props.secret.grantRead(this.function);
    props.attachments.grantFunction(this.function);
    props.workQueue.grantSendMessages(this.function);

    Validations.of(this).acknowledge(
      PINNED_RUNTIME_ACKNOWLEDGEMENT,
      TRACING_ACKNOWLEDGEMENT,
      workspaceIndexAcknowledgement(props.tables.workspace),
      ...props.attachments.acknowledgementsFor(),
    );
  }
}
