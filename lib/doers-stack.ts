import { Aws, CfnOutput, Fn, Stack, Tags } from 'aws-cdk-lib';
import type { StackProps } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { COGNITO_USER_CLAIM, CognitoAuth } from './cognito-auth.js';
import type { DoersSettings } from './context.js';
import { MCP_PATH, METADATA_PATH, McpApi } from './mcp-api.js';
import { DEFAULT_TIMEOUT, McpFunction } from './mcp-function.js';
import { Observability } from './observability.js';
import { DoersSecret } from './secret.js';
import { DoersTables } from './tables.js';

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
  secretArn: 'SecretArn',
  region: 'Region',
  claudeMcpAddCommand: 'ClaudeMcpAddCommand',
  /** Only with a custom domain: the name the domain's DNS record must point at. */
  customDomainTarget: 'CustomDomainTarget',
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
}

/**
 * The whole deployment: HTTP API → one Lambda function → two DynamoDB tables and one secret, an
 * optional Cognito user pool as authorization server, and the operator's dashboard and alarms.
 */
export class DoersStack extends Stack {
  readonly tables: DoersTables;
  readonly secret: DoersSecret;
  readonly mcpApi: McpApi;
  readonly mcpFunction: McpFunction;
  readonly cognito: CognitoAuth | undefined;
  readonly observability: Observability;

  constructor(scope: Construct, id: string, props: DoersStackProps) {
    super(scope, id, props);
    const { settings } = props;
    const logRetention = settings.logRetentionDays as RetentionDays;
    Tags.of(this).add('app', 'doers');

    this.tables = new DoersTables(this, 'Tables');
    this.secret = new DoersSecret(this, 'Secret');

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

    const jwt = this.cognito?.jwtSettings ?? settings.jwt;
    const jwtUserClaim = settings.jwtUserClaim ?? (this.cognito ? COGNITO_USER_CLAIM : undefined);
    this.mcpFunction = new McpFunction(this, 'Function', {
      tables: this.tables,
      secret: this.secret.secret,
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
      logRetention,
      timeout: DEFAULT_TIMEOUT,
      ...(props.handlerEntry ? { entry: props.handlerEntry } : {}),
    });
    this.mcpApi.addMcpRoutes(this.mcpFunction.function);

    this.observability = new Observability(this, 'Observability', {
      handler: this.mcpFunction.function,
      handlerTimeout: DEFAULT_TIMEOUT,
      api: this.mcpApi.api,
      tables: this.tables.all,
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
    new CfnOutput(this, O.secretArn, { value: this.secret.secret.secretArn, description: 'Key-derivation seed' });
    new CfnOutput(this, O.region, { value: Aws.REGION });
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
