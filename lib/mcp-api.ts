import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  DomainName,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  LogGroupLogDestination,
  PayloadFormatVersion,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** Path of the MCP endpoint. */
export const MCP_PATH = '/mcp';
/** Path of the RFC 9728 protected-resource metadata of the endpoint. */
export const METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';
/** The same document at the bare well-known path, where some clients look first. */
export const ROOT_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Methods routed explicitly on {@link MCP_PATH}; GET and DELETE are answered 405 by the function. */
export const MCP_METHODS = [HttpMethod.POST, HttpMethod.OPTIONS, HttpMethod.GET, HttpMethod.DELETE] as const;

/**
 * The JSON access-log line: who called what, how it ended, how long it took. No header values (the
 * Authorization header never reaches a log) and no query string.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  method: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatencyMs: '$context.responseLatency',
  integrationStatus: '$context.integrationStatus',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
  domainName: '$context.domainName',
} as const;

/** Properties of {@link McpApi}. */
export interface McpApiProps {
  /** Steady-state requests per second across the stage (API Gateway throttling, before the function runs). */
  readonly throttleRateLimit: number;
  /** Burst bucket size of the stage throttling. */
  readonly throttleBurstLimit: number;
  /** Retention of the access-log group. */
  readonly logRetention: RetentionDays;
  /**
   * Custom domain (regional, TLS 1.2) mapped to the default stage; `https://<domainName>` becomes the
   * public URL. Point a DNS CNAME (or Route 53 alias) at the `CustomDomainTarget` output.
   *
   * @default - the API's execute-api endpoint
   */
  readonly customDomain?: { readonly domainName: string; readonly certificateArn: string };
  /**
   * Public base URL to advertise when the API sits behind something else (your own proxy or CDN).
   *
   * @default - `https://<domainName>` with a custom domain, else the API's default endpoint
   */
  readonly publicUrl?: string;
}

/**
 * The HTTP API in front of the function: explicit routes for the MCP endpoint and its metadata, plus the
 * `$default` route, all on one Lambda proxy integration (payload format 2.0). API-level CORS stays off:
 * the function answers preflights itself, so a disallowed Origin can get its 403 on OPTIONS too.
 *
 * Why `$default`: `/mcp/` (trailing slash) must reach the function, but an HTTP API route path may not
 * end in `/` (CDK refuses it at synth, API Gateway at deploy), and a request for `/mcp/` does not match
 * the route `/mcp` (HTTP APIs do not fold the trailing slash as REST APIs do). The `$default` route
 * catches every request no other route matches, so `/mcp/` (and any other verb on `/mcp`) reaches the
 * function, which answers `/mcp/` like `/mcp`, other verbs with 405 and unknown paths with 404.
 */
export class McpApi extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;
  /** Custom domain, when configured. */
  readonly domainName: DomainName | undefined;
  /** Base URL clients use (no trailing slash); a token when it is the API's default endpoint. */
  readonly publicUrl: string;

  constructor(scope: Construct, id: string, props: McpApiProps) {
    super(scope, id);

    this.api = new HttpApi(this, 'Resource', {
      description: 'doers MCP endpoint',
      // The stage is created below with throttling and access logs.
      createDefaultStage: false,
      // No corsPreflight: CORS is the function's job (DESIGN.md §3).
    });

    this.domainName = props.customDomain
      ? new DomainName(this, 'Domain', {
          domainName: props.customDomain.domainName,
          certificate: Certificate.fromCertificateArn(this, 'Certificate', props.customDomain.certificateArn),
          securityPolicy: SecurityPolicy.TLS_1_2,
        })
      : undefined;

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.throttleRateLimit, burstLimit: props.throttleBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
      ...(this.domainName ? { domainMapping: { domainName: this.domainName } } : {}),
    });

    this.publicUrl =
      props.publicUrl ?? (props.customDomain ? `https://${props.customDomain.domainName}` : this.api.apiEndpoint);
  }

  /** Routes the endpoint, its metadata and everything else (`$default`) to the function. */
  addMcpRoutes(handler: IFunction): void {
    const integration = new HttpLambdaIntegration('McpIntegration', handler, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      // One invoke permission for the whole API instead of one per route: every route goes to this
      // function anyway, and $default means "any path".
      scopePermissionToRoute: false,
    });
    this.api.addRoutes({ path: MCP_PATH, methods: [...MCP_METHODS], integration });
    this.api.addRoutes({ path: METADATA_PATH, methods: [HttpMethod.GET], integration });
    this.api.addRoutes({ path: ROOT_METADATA_PATH, methods: [HttpMethod.GET], integration });
    new HttpRoute(this, 'DefaultRoute', { httpApi: this.api, routeKey: HttpRouteKey.DEFAULT, integration });

    // Acknowledged on this construct, so it covers every route (addRoutes' and the $default one).
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Authorization happens in the function, per request, for every route: it verifies personal access ' +
        'tokens (keyed hashes in DynamoDB, which no API Gateway authorizer can check) and JWTs with jose, ' +
        'and must itself answer 401 with the WWW-Authenticate challenge the MCP authorization flow starts ' +
        'from. The metadata route is public by specification (RFC 9728).',
    });
  }
}
