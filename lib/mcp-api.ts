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
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** Path of the MCP endpoint. */
export const MCP_PATH = '/mcp';
/** Path of the RFC 9728 protected-resource metadata of the endpoint. */
export const METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';
/** The same document at the bare well-known path, where some clients look first. */
export const ROOT_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** Methods routed explicitly on {@link MCP_PATH}; GET and DELETE are answered 405 by the function. */
export const MCP_METHODS = [HttpMethod.POST, HttpMethod.OPTIONS, HttpMethod.GET, HttpMethod.DELETE] as const;

/** The built-in authorization server's endpoints (authorize, token, registration, revocation, JWKS, …). */
export const OAUTH_PATH = '/oauth/{proxy+}';
/** Where the upstream sign-in (Cognito or the operator's OpenID provider) sends people back. */
export const OAUTH_CALLBACK_PATH = '/oauth/callback';
/** RFC 8414 authorization-server metadata of the built-in server (its issuer is the public URL). */
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
/** The account pages (served by the authorization server's function). */
export const ACCOUNT_PATH = '/account';
export const ACCOUNT_PROXY_PATH = '/account/{proxy+}';
/**
 * Methods routed on {@link AUTHORIZATION_SERVER_METADATA_PATH}. OPTIONS as well as GET: a browser-based
 * client (the MCP Inspector) fetches the document with an `MCP-Protocol-Version` header, which makes the
 * browser send a preflight first; without this route the preflight would fall through to `$default` and
 * reach the MCP function instead of the authorization server that answers the GET.
 */
export const AUTHORIZATION_SERVER_METADATA_METHODS = [HttpMethod.GET, HttpMethod.OPTIONS] as const;

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
 * The HTTP API in front of the two functions: explicit routes for the MCP endpoint and its metadata, plus
 * the `$default` route, on the MCP function's Lambda proxy integration (payload format 2.0); with the
 * built-in authorization server, `/oauth/*`, its metadata and `/account` on the authorization server's
 * function (see {@link addOAuthRoutes}). API-level CORS stays off: the functions answer preflights
 * themselves, so a disallowed Origin can get its 403 on OPTIONS too.
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
      // No corsPreflight: CORS is the function's job (docs/protocol.md).
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

    this.publicUrl = props.publicUrl ?? (props.customDomain ? `https://${props.customDomain.domainName}` : this.api.apiEndpoint);
  }

  /** Routes the endpoint, its metadata and everything else (`$default`) to the MCP function. */
  addMcpRoutes(handler: IFunction): void {
    const integration = new HttpLambdaIntegration('McpIntegration', handler, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      // One invoke permission for the whole API instead of one per route: every route goes to this
      // function anyway, and $default means "any path".
      scopePermissionToRoute: false,
    });
    const routes = [
      ...this.api.addRoutes({ path: MCP_PATH, methods: [...MCP_METHODS], integration }),
      ...this.api.addRoutes({ path: METADATA_PATH, methods: [HttpMethod.GET], integration }),
      ...this.api.addRoutes({ path: ROOT_METADATA_PATH, methods: [HttpMethod.GET], integration }),
      new HttpRoute(this, 'DefaultRoute', { httpApi: this.api, routeKey: HttpRouteKey.DEFAULT, integration }),
    ];
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Authorization happens in the function, per request, for every route: it verifies personal access ' +
          'tokens (keyed hashes in DynamoDB, which no API Gateway authorizer can check) and JWTs with jose, ' +
          'and must itself answer 401 with the WWW-Authenticate challenge the MCP authorization flow starts ' +
          'from. The metadata route is public by specification (RFC 9728).',
      });
    }
  }

  /**
   * Routes the built-in authorization server's endpoints (`/oauth/*`), its RFC 8414 metadata and the
   * account pages to the authorization server's function. Everything else stays with the MCP function.
   */
  addOAuthRoutes(handler: IFunction): void {
    const integration = new HttpLambdaIntegration('OAuthIntegration', handler, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      // One invoke permission for the API, as for the MCP function; the routes below decide what reaches it.
      scopePermissionToRoute: false,
    });
    const routes = [
      ...this.api.addRoutes({ path: OAUTH_PATH, methods: [HttpMethod.ANY], integration }),
      ...this.api.addRoutes({
        path: AUTHORIZATION_SERVER_METADATA_PATH,
        methods: [...AUTHORIZATION_SERVER_METADATA_METHODS],
        integration,
      }),
      ...this.api.addRoutes({ path: ACCOUNT_PATH, methods: [HttpMethod.ANY], integration }),
      ...this.api.addRoutes({ path: ACCOUNT_PROXY_PATH, methods: [HttpMethod.ANY], integration }),
    ];
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'These are the endpoints of an OAuth authorization server, public by specification: clients without ' +
          'any credential yet fetch its metadata (RFC 8414), register (RFC 7591) and start authorization there, ' +
          'and authenticate at the token endpoint with PKCE or their own client credentials, which oidc-provider ' +
          'checks; people authenticate by signing in at the upstream OpenID provider, and the account pages ' +
          'check the session cookie that sign-in set. No API Gateway authorizer can stand in for any of this.',
      });
    }
  }
}
