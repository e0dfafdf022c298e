import type { StackProps } from 'aws-cdk-lib';
import { Annotations, Aws, CfnOutput, Fn, Stack, Tags } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { AttachmentsBucket } from './attachments-bucket.js';
import { COGNITO_USER_CLAIM, CognitoAuth } from './cognito-auth.js';
import { CognitoSignIn } from './cognito-signin.js';
import type { DoersSettings } from './context.js';
import { MCP_PATH, McpApi, METADATA_PATH, OAUTH_CALLBACK_PATH } from './mcp-api.js';
import { DEFAULT_TIMEOUT, McpFunction } from './mcp-function.js';
import { Notifier } from './notifier.js';
import type { OAuthFunctionProps } from './oauth-function.js';
import { OAUTH_TIMEOUT, OAuthFunction } from './oauth-function.js';
import { Observability } from './observability.js';
import { DoersSecret } from './secret.js';
import { DoersTables } from './tables.js';
import { Worker } from './worker.js';

/**
 * Names of the stack outputs. They are an interface: the admin CLI (`npm run admin -- --stack NAME
 * --region R`) and the README read them, so they never change.
 */
export const STACK_OUTPUTS = {
  mcpUrl: 'McpUrl',
  metadataUrl: 'MetadataUrl',
  dashboardUrl: 'DashboardUrl',
  workspaceTableName: 'WorkspaceTableName',
  limitsTableName: 'LimitsTableName',
  attachmentsBucketName: 'AttachmentsBucketName',
  secretArn: 'SecretArn',
  region: 'Region',
  /** How many days activity records are kept: the admin CLI writes its records with the same retention. */
  activityDays: 'ActivityDays',
  claudeMcpAddCommand: 'ClaudeMcpAddCommand',
  /** Only with a custom domain: the name the domain's DNS record must point at. */
  customDomainTarget: 'CustomDomainTarget',
  /**
   * Only with the built-in authorization server signing people in with the stack's Cognito user pool
   * (`doers:signin=cognito`, the default): the pool the admin CLI invites people to.
   */
  signInUserPoolId: 'SignInUserPoolId',
  /** Only with Cognito. */
  cognitoUserPoolId: 'CognitoUserPoolId',
  cognitoClientId: 'CognitoClientId',
  cognitoLoginUrl: 'CognitoLoginUrl',
  cognitoScopes: 'CognitoScopes',
  /** Only with an alarm e-mail. */
  alarmTopicArn: 'AlarmTopicArn',
} as const;

/** Properties of {@link DoersStack}. */
export interface DoersStackProps extends StackProps {
  /** Validated deployment settings (see `lib/context.ts`). */
  readonly settings: DoersSettings;
  /**
   * Handler source file.
   *
   * @default - `lambda/handler.ts`
   */
  readonly handlerEntry?: string;
  /**
   * The authorization server's handler source file.
   *
   * @default - `lambda/oauth-handler.ts`
   */
  readonly oauthHandlerEntry?: string;
}

/** The id of the synth warning a stack with an adopted workspace table carries: nothing tells people. */
export const NO_NOTIFIER_WARNING = 'doers:notifications-off';

/**
 * The whole deployment: HTTP API → the MCP function → two DynamoDB tables and one secret, the notifier
 * on the workspace table's stream and the minute function (lib/notifier.ts), and the operator's
 * dashboard and alarms over all of them. The authorization server
 * is either doers' own (the default: a second function on `/oauth/*`, its metadata and `/account`,
 * signing people in with a Cognito user pool the stack makes or with the operator's OpenID provider),
 * or an external issuer (`doers:jwtIssuer`, or the Cognito pool of `doers:cognito`), in which case the
 * stack makes no authorization server of its own.
 */
export class DoersStack extends Stack {
  readonly tables: DoersTables;
  readonly secret: DoersSecret;
  readonly mcpApi: McpApi;
  readonly mcpFunction: McpFunction;
  /** Attachments' bytes. */
  readonly attachments: AttachmentsBucket;
  readonly cognito: CognitoAuth | undefined;
  /** The built-in authorization server; undefined when an external issuer is configured. */
  readonly oauthFunction: OAuthFunction | undefined;
  /** The user pool people sign in with at the built-in authorization server (`doers:signin=cognito`). */
  readonly signIn: CognitoSignIn | undefined;
  /** Long work's queue and worker (lib/worker.ts). */
  readonly worker: Worker;
  /** Telling people (the stream-fed notifier and the minute function); undefined with an adopted workspace table. */
  readonly notifier: Notifier | undefined;
  readonly observability: Observability;

  constructor(scope: Construct, id: string, props: DoersStackProps) {
    super(scope, id, props);
    const { settings } = props;
    const logRetention = settings.logRetentionDays as RetentionDays;
    Tags.of(this).add('app', 'doers');

    this.tables = new DoersTables(this, 'Tables', {
      ...(settings.workspaceTableName ? { existingWorkspaceTableName: settings.workspaceTableName } : {}),
    });
    this.secret = new DoersSecret(this, 'Secret');
    this.attachments = new AttachmentsBucket(this, 'Attachments', { activityDays: settings.activityDays });

    this.mcpApi = new McpApi(this, 'Api', {
      throttleRateLimit: settings.throttle.rateLimit,
      throttleBurstLimit: settings.throttle.burstLimit,
      logRetention,
      ...(settings.customDomain ? { customDomain: settings.customDomain } : {}),
      ...(settings.publicUrl ? { publicUrl: settings.publicUrl } : {}),
    });
    const publicUrl = this.mcpApi.publicUrl;
    const mcpUrl = `${publicUrl}${MCP_PATH}`;

    this.cognito = settings.cognito
      ? new CognitoAuth(this, 'Cognito', {
          resourceUrl: mcpUrl,
          callbackUrls: settings.cognito.callbackUrls,
          ...(settings.cognito.domainPrefix ? { domainPrefix: settings.cognito.domainPrefix } : {}),
        })
      : undefined;

    // Long work (workspace_import, workspace_export): its queue and worker, which the MCP function sends to.
    this.worker = new Worker(this, 'Worker', {
      workspaceTable: this.tables.workspace,
      attachments: this.attachments,
      attachmentLimits: settings.attachments,
      publicUrl,
      activityDays: settings.activityDays,
      logRetention,
    });

    const jwt = this.cognito?.jwtSettings ?? settings.jwt;
    const jwtUserClaim = settings.jwtUserClaim ?? (this.cognito ? COGNITO_USER_CLAIM : undefined);
    this.mcpFunction = new McpFunction(this, 'Function', {
      tables: this.tables,
      secret: this.secret.secret,
      attachments: this.attachments,
      attachmentLimits: settings.attachments,
      publicUrl,
      ...(settings.allowedOrigins ? { allowedOrigins: settings.allowedOrigins } : {}),
      ...(jwt
        ? {
            jwt: {
              issuer: jwt.issuer,
              jwksUri: jwt.jwksUri,
              ...(jwt.audience ? { audience: jwt.audience } : {}),
              ...(this.cognito ? { scopePrefix: this.cognito.jwtSettings.scopePrefix } : {}),
            },
          }
        : {}),
      ...(jwtUserClaim ? { jwtUserClaim } : {}),
      rateLimit: settings.rateLimit,
      maxConcurrentCalls: settings.maxConcurrentCalls,
      authCacheSeconds: settings.authCacheSeconds,
      activityDays: settings.activityDays,
      ...(settings.emailFrom ? { emailFrom: settings.emailFrom } : {}),
      workQueue: this.worker.queue,
      logRetention,
      timeout: DEFAULT_TIMEOUT,
      ...(props.handlerEntry ? { entry: props.handlerEntry } : {}),
    });
    this.mcpApi.addMcpRoutes(this.mcpFunction.function);

    // ---- doers' own authorization server, unless an external issuer is configured --------------
    const builtin = settings.builtinAuthorizationServer;
    if (builtin) {
      const { signIn } = builtin;
      let upstream: OAuthFunctionProps['signIn'];
      if (signIn.provider === 'cognito') {
        this.signIn = new CognitoSignIn(this, 'SignIn', { callbackUrl: `${publicUrl}${OAUTH_CALLBACK_PATH}` });
        upstream = { issuer: this.signIn.issuer, clientId: this.signIn.client.userPoolClientId };
      } else {
        this.signIn = undefined;
        upstream = {
          issuer: signIn.issuer,
          clientId: signIn.clientId,
          ...(signIn.clientSecretArn
            ? { clientSecret: Secret.fromSecretCompleteArn(this, 'SignInClientSecret', signIn.clientSecretArn) }
            : {}),
        };
      }
      this.oauthFunction = new OAuthFunction(this, 'OAuth', {
        workspaceTable: this.tables.workspace,
        secret: this.secret.secret,
        publicUrl,
        activityDays: settings.activityDays,
        signIn: upstream,
        logRetention,
        timeout: OAUTH_TIMEOUT,
        ...(props.oauthHandlerEntry ? { entry: props.oauthHandlerEntry } : {}),
      });
      this.mcpApi.addOAuthRoutes(this.oauthFunction.function);
    } else {
      this.signIn = undefined;
      this.oauthFunction = undefined;
    }

    // ---- telling people: the notifier on the workspace table's stream, and the minute function ----
    // An adopted table (a point-in-time restore) comes without a stream the stack knows: its stream ARN
    // exists only once someone turns a stream on, and no CloudFormation attribute of a table the stack does
    // not own gives it (only a custom resource calling DescribeTable could). Nothing tells people then,
    // and synth says so.
    if (this.tables.workspace.tableStreamArn) {
      this.notifier = new Notifier(this, 'Notifier', {
        workspaceTable: this.tables.workspace,
        publicUrl,
        activityDays: settings.activityDays,
        ...(settings.emailFrom ? { emailFrom: settings.emailFrom } : {}),
        logRetention,
      });
    } else {
      this.notifier = undefined;
      Annotations.of(this).addWarningV2(
        NO_NOTIFIER_WARNING,
        'Notifications are off: the adopted workspace table has no stream this stack knows, so no change, reminder or ' +
          'digest tells anyone (docs/deploy-and-operations.md, "Restoring the table").',
      );
    }

    this.observability = new Observability(this, 'Observability', {
      handler: this.mcpFunction.function,
      handlerTimeout: DEFAULT_TIMEOUT,
      api: this.mcpApi.api,
      tables: this.tables.all,
      ...(this.oauthFunction ? { oauthFunction: { function: this.oauthFunction.function, timeout: OAUTH_TIMEOUT } } : {}),
      ...(this.notifier
        ? {
            notifier: {
              function: this.notifier.function,
              minuteFunction: this.notifier.minuteFunction,
              deadLetterQueue: this.notifier.deadLetterQueue,
            },
          }
        : {}),
      worker: { function: this.worker.function, deadLetterQueue: this.worker.deadLetterQueue },
      ...(settings.alarmEmail ? { alarmEmail: settings.alarmEmail } : {}),
    });

    // ---- outputs (names are an interface, see STACK_OUTPUTS) ----------------------------------
    const O = STACK_OUTPUTS;
    new CfnOutput(this, O.mcpUrl, { value: mcpUrl, description: 'MCP endpoint URL' });
    new CfnOutput(this, O.metadataUrl, {
      value: `${publicUrl}${METADATA_PATH}`,
      description: 'Protected-resource metadata (RFC 9728); answers without a credential',
    });
    new CfnOutput(this, O.dashboardUrl, {
      value: Fn.join('', [
        'https://',
        Aws.REGION,
        '.console.aws.amazon.com/cloudwatch/home?region=',
        Aws.REGION,
        '#dashboards:name=',
        this.observability.dashboard.dashboardName,
      ]),
      description: 'CloudWatch dashboard',
    });
    new CfnOutput(this, O.workspaceTableName, { value: this.tables.workspace.tableName });
    new CfnOutput(this, O.limitsTableName, { value: this.tables.limits.tableName });
    new CfnOutput(this, O.attachmentsBucketName, { value: this.attachments.bucket.bucketName, description: 'Where attachments are kept' });
    new CfnOutput(this, O.secretArn, { value: this.secret.secret.secretArn, description: 'Key-derivation seed' });
    new CfnOutput(this, O.region, { value: Aws.REGION });
    new CfnOutput(this, O.activityDays, { value: String(settings.activityDays), description: 'Days activity records are kept' });
    new CfnOutput(this, O.claudeMcpAddCommand, {
      value: `claude mcp add --transport http doers ${mcpUrl} --header "Authorization: Bearer <token>"`,
      description: 'Connect Claude Code; mint <token> with the admin CLI (npm run admin)',
    });
    if (this.mcpApi.domainName) {
      new CfnOutput(this, O.customDomainTarget, {
        value: this.mcpApi.domainName.regionalDomainName,
        description: `Point a CNAME (or Route 53 alias) for ${settings.customDomain?.domainName} here`,
      });
    }
    if (this.signIn) {
      new CfnOutput(this, O.signInUserPoolId, {
        value: this.signIn.userPool.userPoolId,
        description: 'User pool people sign in with at the built-in authorization server (the admin CLI invites them)',
      });
    }
    if (this.cognito) {
      new CfnOutput(this, O.cognitoUserPoolId, { value: this.cognito.userPool.userPoolId });
      new CfnOutput(this, O.cognitoClientId, {
        value: this.cognito.client.userPoolClientId,
        description: 'OAuth client id for claude.ai (no client secret)',
      });
      new CfnOutput(this, O.cognitoLoginUrl, { value: this.cognito.loginBaseUrl });
      new CfnOutput(this, O.cognitoScopes, { value: Fn.join(' ', Object.values(this.cognito.qualifiedScopes)) });
    }
    if (this.observability.topic) {
      new CfnOutput(this, O.alarmTopicArn, { value: this.observability.topic.topicArn });
    }
  }
}
