import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { OAUTH_FUNCTION_ENV_NAMES } from '../lambda/platform/config.js';
import { LAMBDA_FUNCTION_DEFAULTS, OAUTH_BUNDLING, PINNED_RUNTIME_ACKNOWLEDGEMENT, TRACING_ACKNOWLEDGEMENT } from './bundling.js';
import { workspaceIndexAcknowledgement } from './tables.js';

/** One name of the configuration contract the stack sets on the authorization server's function. */
export type OAuthFunctionEnvName = (typeof OAUTH_FUNCTION_ENV_NAMES)[number];

/**
 * Memory: 512 MB. The work per request is small (an authorization request, a token exchange with the
 * upstream OpenID provider, a handful of DynamoDB calls), but Lambda hands out CPU in proportion to
 * memory, and the heavier libraries (oidc-provider, openid-client) make module load the larger part of a
 * cold start; at 512 MB on arm64 that stays short and cheap, as for the MCP function.
 */
export const OAUTH_MEMORY_MB = 512;

/**
 * Timeout: 10 s. The slowest legitimate path is a cold start that fetches the secret, then the upstream
 * provider's discovery document and JWKS, then exchanges the code at its token endpoint: a few
 * seconds at worst. 10 s covers that and stays well inside API Gateway's 30 s integration limit, so a
 * browser gets the function's own answer, never a gateway timeout.
 */
export const OAUTH_TIMEOUT = Duration.seconds(10);

/** Properties of {@link OAuthFunction}. */
export interface OAuthFunctionProps {
  /**
   * The workspace table: the authorization server keeps its items there (clients, grants, sessions,
   * codes, refresh tokens) and reads the members it signs in. The function gets read/write data access to
   * it, nothing more; it never touches the limits table.
   */
  readonly workspaceTable: ITable;
  /** The generated secret (the seed its signing keys are derived from); the function gets read access. */
  readonly secret: ISecret;
  /**
   * Issuer of the authorization server and base of every URL it advertises (`${publicUrl}/oauth/…`,
   * `${publicUrl}/.well-known/oauth-authorization-server`). May be a token (the API's default endpoint).
   */
  readonly publicUrl: string;
  /** Days the account page's activity records are kept (as the MCP function's: DOERS_ACTIVITY_DAYS). */
  readonly activityDays: number;
  /** The OpenID provider people sign in with (the stack's Cognito user pool, or the operator's). */
  readonly signIn: {
    /** Exact `iss` of the provider; discovery at `<issuer>/.well-known/openid-configuration`. */
    readonly issuer: string;
    /** The authorization server's client id at the provider. */
    readonly clientId: string;
    /**
     * Secret holding the client secret; the function gets read access to it.
     *
     * @default - a public client (PKCE only), as the stack's Cognito app client is
     */
    readonly clientSecret?: ISecret;
  };
  /** Retention of the function's log group. */
  readonly logRetention: RetentionDays;
  /**
   * @default OAUTH_MEMORY_MB (512)
   */
  readonly memorySize?: number;
  /**
   * @default OAUTH_TIMEOUT (10 s)
   */
  readonly timeout?: Duration;
  /**
   * Handler source (must export `handler` for API Gateway HTTP API payload 2.0 events).
   *
   * @default - `lambda/oauth-handler.ts` of this repository
   */
  readonly entry?: string;
}

/**
 * doers' own OAuth 2.1 authorization server (docs/auth.md) in its own Lambda function, so its libraries
 * never weigh on the MCP function's bundle or cold start: same runtime, architecture and bundling as the
 * MCP function (`lib/bundling.ts`), entry `lambda/oauth-handler.ts`. The construct owns the function's
 * environment (exactly the names of `OAUTH_FUNCTION_ENV_NAMES` in `lambda/platform/config.ts` that have
 * a value, nothing else) and its grants (writing its own log group, data-plane access to the workspace
 * table, read access to the secret and, when given, to the sign-in client secret).
 */
export class OAuthFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  /** The environment as set on the function (unset optional names are absent, not empty). */
  readonly environment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: OAuthFunctionProps) {
    super(scope, id);

    // A Record over OAuthFunctionEnvName makes the compiler insist that every contract name is decided here.
    const contract: Record<OAuthFunctionEnvName, string | undefined> = {
      DOERS_PUBLIC_URL: props.publicUrl,
      DOERS_ACTIVITY_DAYS: String(props.activityDays),
      DOERS_WORKSPACE_TABLE: props.workspaceTable.tableName,
      DOERS_SECRET_ARN: props.secret.secretArn,
      DOERS_SIGNIN_ISSUER: props.signIn.issuer,
      DOERS_SIGNIN_CLIENT_ID: props.signIn.clientId,
      DOERS_SIGNIN_CLIENT_SECRET_ARN: props.signIn.clientSecret?.secretArn,
    };
    const environment: Record<string, string> = {};
    for (const [name, value] of Object.entries(contract)) {
      if (value !== undefined) environment[name] = value;
    }
    this.environment = environment;

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      // Sign-ins, consents, refusals and account-page changes are logged here (one INFO line each); it
      // outlives the stack like the MCP function's log does.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // An own role instead of the default one with AWSLambdaBasicExecutionRole (logs:* actions on every
    // log group in the account): this function may write to its own log group and nothing else.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'doers authorization server: its log group, the workspace table, its secret(s)',
    });
    this.logGroup.grantWrite(role);

    this.function = new NodejsFunction(this, 'Handler', {
      role,
      description: 'doers authorization server (/oauth/*, RFC 8414 metadata, /account)',
      entry: props.entry ?? fileURLToPath(new URL('../lambda/oauth-handler.ts', import.meta.url)),
      ...LAMBDA_FUNCTION_DEFAULTS,
      bundling: OAUTH_BUNDLING,
      memorySize: props.memorySize ?? OAUTH_MEMORY_MB,
      timeout: props.timeout ?? OAUTH_TIMEOUT,
      environment,
      logGroup: this.logGroup,
    });

    props.workspaceTable.grantReadWriteData(this.function);
    props.secret.grantRead(this.function);
    props.signIn.clientSecret?.grantRead(this.function);

    Validations.of(this).acknowledge(
      PINNED_RUNTIME_ACKNOWLEDGEMENT,
      TRACING_ACKNOWLEDGEMENT,
      workspaceIndexAcknowledgement(props.workspaceTable),
    );
  }
}
