import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { HttpMethod, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { FUNCTION_ENV_NAMES, OAUTH_FUNCTION_ENV_NAMES } from '../../lambda/platform/config.js';
import { LIMITS_TABLE_KEYS, WORKSPACE_TABLE_KEYS } from '../../lambda/platform/tables.js';
import { MCP_CHUNKS_DIR } from '../../lib/bundling.js';
import { DOERS_SCOPES } from '../../lib/cognito-auth.js';
import { CLAUDE_CALLBACK_URLS } from '../../lib/context.js';
import { NO_NOTIFIER_WARNING, STACK_OUTPUTS } from '../../lib/doers-stack.js';
import { ACCESS_LOG_FIELDS, METADATA_PATH, ROOT_METADATA_PATH } from '../../lib/mcp-api.js';
import { NO_EMAIL_WARNING } from '../../lib/notifier.js';
import { NO_ALARM_EMAIL_WARNING } from '../../lib/observability.js';
import { ADOPTED_TABLE_NOTE } from '../../lib/tables.js';
import {
  acknowledgements,
  actionsOf,
  type FunctionName,
  functionAlarms,
  functionEnvironment,
  functionRole,
  lambdaFunction,
  nagReport,
  onlyResource,
  policyStatements,
  rawFindings,
  render,
  rolePolicyStatements,
  type Synthesized,
  synth,
} from './synth.js';

const POWERTOOLS = { POWERTOOLS_SERVICE_NAME: 'doers', POWERTOOLS_METRICS_NAMESPACE: 'Doers' } as const;
const OPTIONAL_CONTRACT_NAMES = [
  'DOERS_ALLOWED_ORIGINS',
  'DOERS_JWT_ISSUER',
  'DOERS_JWKS_URI',
  'DOERS_JWT_AUDIENCE',
  'DOERS_JWT_USER_CLAIM',
  'DOERS_JWT_SCOPE_PREFIX',
  'DOERS_EMAIL_FROM',
] as const;

const sorted = (values: Iterable<string>): string[] => [...values].sort();
/** The named properties of an object (absent ones left out), for comparing a chosen subset. */
const pick = (o: Record<string, unknown> | undefined, keys: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(keys.filter((k) => o !== undefined && k in o).map((k) => [k, o![k]]));

/** The MCP function's route keys; they stay the same whatever the authorization server. */
const MCP_ROUTE_KEYS = [
  'POST /mcp',
  'OPTIONS /mcp',
  'GET /mcp',
  'DELETE /mcp',
  `GET ${METADATA_PATH}`,
  `GET ${ROOT_METADATA_PATH}`,
  '$default',
] as const;
/** The built-in authorization server's route keys. */
const OAUTH_ROUTE_KEYS = [
  'ANY /oauth/{proxy+}',
  'GET /.well-known/oauth-authorization-server',
  // A browser-based client's preflight for the metadata must reach the same function as the GET.
  'OPTIONS /.well-known/oauth-authorization-server',
  'ANY /account',
  'ANY /account/{proxy+}',
] as const;
/** The outputs every deployment has; their names are an interface (the admin CLI reads them). */
const BASE_OUTPUTS = [
  'McpUrl',
  'MetadataUrl',
  'DashboardUrl',
  'WorkspaceTableName',
  'LimitsTableName',
  'AttachmentsBucketName',
  'SecretArn',
  'Region',
  'ActivityDays',
  'ClaudeMcpAddCommand',
] as const;

/** Route key → the logical ID of the Lambda function its integration invokes. */
const routeTargets = (s: Synthesized): Record<string, string> => {
  const integrations = s.template.findResources('AWS::ApiGatewayV2::Integration') as Record<
    string,
    { Properties: { IntegrationUri: { 'Fn::GetAtt': [string, string] } } }
  >;
  return Object.fromEntries(
    Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map((r) => {
      const { RouteKey, Target } = (r as { Properties: { RouteKey: string; Target: unknown } }).Properties;
      const integration = /^integrations\/\$\{Ref:(.+)\}$/.exec(render(Target))?.[1] ?? '';
      return [RouteKey, integrations[integration]?.Properties.IntegrationUri['Fn::GetAtt'][0] ?? `unknown target ${render(Target)}`];
    }),
  );
};

/** The dashboard's body, rendered to a string. */
const dashboardBody = (s: Synthesized): string =>
  render(onlyResource(s.template, 'AWS::CloudWatch::Dashboard').resource.Properties.DashboardBody);

/** The Lambda metrics the dashboard charts for one function, and the statistics of each. */
const chartedLambdaMetrics = (s: Synthesized, name: FunctionName): Record<string, string[]> => {
  const fn = lambdaFunction(s.template, name).logicalId;
  const pattern = new RegExp(`"AWS/Lambda","(\\w+)","FunctionName","\\$\\{Ref:${fn}\\}",\\{[^}]*"stat":"(\\w+)"`, 'g');
  const charted: Record<string, string[]> = {};
  for (const [, metric, stat] of dashboardBody(s).matchAll(pattern)) {
    charted[metric!] ??= [];
    charted[metric!]!.push(stat!);
  }
  return Object.fromEntries(sorted(Object.keys(charted)).map((metric) => [metric, sorted(charted[metric]!)]));
};

/** What the dashboard charts for each function (the MCP function's platform graphs, mirrored for the authorization server). */
const LAMBDA_GRAPHS = {
  ConcurrentExecutions: ['Maximum'],
  Duration: ['Maximum', 'p50', 'p99'],
  Errors: ['Sum'],
  Invocations: ['Sum'],
  Throttles: ['Sum'],
} as const;

/** Every Lambda function of the template, by logical ID. */
const functionIds = (s: Synthesized): string[] => Object.keys(s.template.findResources('AWS::Lambda::Function'));

/**
 * Variants without doers' own authorization server: the dashboard and alarms watch the MCP function,
 * the notifier's two functions and long work's worker only.
 */
const itWatchesTheMcpFunctionOnly = (get: () => Synthesized): void => {
  test("charts and alarms on the MCP function, the notifier's and the worker's only: nothing for an authorization server", () => {
    // Arrange
    const s = get();
    const ids = (['mcp', 'notifier', 'minute', 'worker'] as const).map((name) => lambdaFunction(s.template, name).logicalId);

    // Act
    const body = dashboardBody(s);
    const lambdaAlarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm')).filter(
      (a) => (a as { Properties: Record<string, unknown> }).Properties.Namespace === 'AWS/Lambda',
    );

    // Assert: four alarms of the MCP endpoint, four of the notifier (test/infra/notifier.test.ts), two of the worker (test/infra/worker.test.ts).
    assert.deepEqual(sorted(functionIds(s)), sorted(ids));
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 10);
    assert.deepEqual(sorted(Object.keys(functionAlarms(s.template, 'mcp'))), ['Duration', 'Errors']);
    assert.deepEqual(sorted(Object.keys(functionAlarms(s.template, 'notifier'))), ['Errors', 'IteratorAge']);
    assert.deepEqual(sorted(Object.keys(functionAlarms(s.template, 'minute'))), ['Errors']);
    assert.deepEqual(sorted(Object.keys(functionAlarms(s.template, 'worker'))), ['Errors']);
    assert.equal(lambdaAlarms.length, 6);
    assert.deepEqual(chartedLambdaMetrics(s, 'mcp'), LAMBDA_GRAPHS);
    const chartedFunctions = new Set([...body.matchAll(/"AWS\/Lambda","\w+","FunctionName","\$\{Ref:(\w+)\}"/g)].map((m) => m[1]!));
    assert.deepEqual(sorted(chartedFunctions), sorted(ids));
    assert.ok(!/authorization server|OAuth/i.test(body), 'no authorization server row or alarm');
  });
};

/** The outputs' names. */
const outputNames = (s: Synthesized): string[] => Object.keys((s.template.toJSON() as { Outputs: Record<string, unknown> }).Outputs);

/** Shared checks every variant must pass: AwsSolutions clean, every acknowledgement explained. */
const itPassesAwsSolutionsChecks = (get: () => Synthesized, context: Record<string, unknown> = {}): void => {
  test('reports no AwsSolutions finding that is not acknowledged', () => {
    // Arrange / Act: synthesis already ran the pack as a validation plugin (and would have thrown);
    // run it once more directly to look at the result.
    const report = nagReport(get().app);

    // Assert
    assert.deepEqual(
      report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
      [],
    );
    assert.equal(report.success, true);
  });

  test('acknowledges exactly the findings the checks raise (none stale, none blanket)', () => {
    // Arrange
    const raised = rawFindings(context);

    // Act
    const acknowledged = acknowledgements(get().app).map((a) => a.id.replace(/^Annotation::/, ''));

    // Assert
    assert.deepEqual(sorted(new Set(acknowledged)), sorted(new Set(raised)));
  });

  test('leaves no error or warning annotation on the stack', () => {
    // cdk-nag 3 reports through CDK policy validation rather than annotations, so an AwsSolutions finding
    // would show up in the test above; this one catches everything else CDK itself complains about.
    const annotations = Annotations.fromStack(get().stack);

    assert.deepEqual(annotations.findError('*', Match.anyValue()), []);
    assert.deepEqual(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')), []);
    // The warnings a stack may carry, each with its own test: alarms without anyone to tell, e-mail off
    // (test/infra/notifier.test.ts), and nothing to tell people with an adopted table (below).
    const allowed = [NO_ALARM_EMAIL_WARNING, NO_EMAIL_WARNING, NO_NOTIFIER_WARNING];
    const warnings = annotations.findWarning('*', Match.anyValue()).filter((w) => !allowed.some((id) => String(w.entry.data).includes(id)));
    assert.deepEqual(warnings, []);
  });

  test('gives every acknowledged finding a written reason', () => {
    const acks = acknowledgements(get().app);

    assert.ok(acks.length > 0);
    for (const ack of acks) {
      assert.equal(typeof ack.reason, 'string', `${ack.id} at ${ack.path}`);
      assert.ok((ack.reason as string).length >= 40, `${ack.id} at ${ack.path} needs a real reason`);
    }
  });
};

describe('default deployment (cdk.json as shipped)', () => {
  let s: Synthesized;
  before(() => {
    s = synth({}, { bundle: false });
  });

  itPassesAwsSolutionsChecks(() => s);

  describe('HTTP API', () => {
    test('routes POST, OPTIONS, GET and DELETE /mcp, GET on both metadata paths, $default, and the authorization server', () => {
      const routeKeys = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map(
        (r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey,
      );

      assert.equal(routeKeys.length, MCP_ROUTE_KEYS.length + OAUTH_ROUTE_KEYS.length);
      assert.deepEqual(sorted(routeKeys), sorted([...MCP_ROUTE_KEYS, ...OAUTH_ROUTE_KEYS]));
    });

    test('sends the MCP routes to the MCP function and the authorization server routes to its own function', () => {
      // Arrange
      const mcp = lambdaFunction(s.template, 'mcp').logicalId;
      const oauth = lambdaFunction(s.template, 'oauth').logicalId;

      // Act
      const targets = routeTargets(s);

      // Assert
      assert.deepEqual(targets, Object.fromEntries([...MCP_ROUTE_KEYS.map((k) => [k, mcp]), ...OAUTH_ROUTE_KEYS.map((k) => [k, oauth])]));
    });

    test('uses one Lambda proxy integration with payload format 2.0 per function', () => {
      const integrations = Object.values(s.template.findResources('AWS::ApiGatewayV2::Integration')) as Array<{
        Properties: Record<string, unknown>;
      }>;

      assert.equal(integrations.length, 2);
      assert.deepEqual(
        sorted(integrations.map((i) => render(i.Properties.IntegrationUri))),
        sorted([`\${${lambdaFunction(s.template, 'mcp').logicalId}.Arn}`, `\${${lambdaFunction(s.template, 'oauth').logicalId}.Arn}`]),
      );
      for (const integration of integrations) {
        assert.equal(integration.Properties.IntegrationType, 'AWS_PROXY');
        assert.equal(integration.Properties.PayloadFormatVersion, '2.0');
      }
    });

    test('reaches the function for /mcp/ through $default, since a route path may not end in "/"', () => {
      // Arrange: the route key that would be needed is refused at synth (and by API Gateway at deploy).
      assert.throws(() => HttpRouteKey.with('/mcp/', HttpMethod.POST), /not end with a "\/"/);

      // Act: find the catch-all route.
      const routes = s.template.findResources('AWS::ApiGatewayV2::Route', { Properties: { RouteKey: '$default' } });

      // Assert: it exists, has no authorizer in front, and targets the function's integration.
      const [catchAll] = Object.values(routes) as Array<{ Properties: Record<string, unknown> }>;
      assert.ok(catchAll, 'a $default route');
      assert.equal(catchAll.Properties.AuthorizationType, 'NONE');
      assert.match(render(catchAll.Properties.Target), /^integrations\//);
      assert.equal(routeTargets(s).$default, lambdaFunction(s.template, 'mcp').logicalId);
    });

    test('gives each function one invoke permission covering the API', () => {
      // The one other permission is the minute function's, for its schedule (test/infra/notifier.test.ts).
      const permissions = (
        Object.values(s.template.findResources('AWS::Lambda::Permission')) as Array<{
          Properties: Record<string, unknown>;
        }>
      ).filter((p) => p.Properties.Principal !== 'events.amazonaws.com');

      assert.deepEqual(
        sorted(permissions.map((p) => render(p.Properties.FunctionName))),
        sorted([`\${${lambdaFunction(s.template, 'mcp').logicalId}.Arn}`, `\${${lambdaFunction(s.template, 'oauth').logicalId}.Arn}`]),
      );
      for (const permission of permissions) {
        assert.equal(permission.Properties.Principal, 'apigateway.amazonaws.com');
        assert.match(render(permission.Properties.SourceArn), /:execute-api:.*\/\*\/\*\/\*$/);
      }
    });

    test('leaves CORS to the function (no API-level CORS configuration)', () => {
      s.template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
        ProtocolType: 'HTTP',
        CorsConfiguration: Match.absent(),
      });
    });

    test('throttles the default stage and auto-deploys it', () => {
      s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      });
    });

    test('writes JSON access logs to their own log group, without headers or query strings', () => {
      const stage = onlyResource(s.template, 'AWS::ApiGatewayV2::Stage');
      const settings = stage.resource.Properties.AccessLogSettings as { DestinationArn: unknown; Format: string };

      const format = JSON.parse(settings.Format) as Record<string, string>;
      assert.deepEqual(format, ACCESS_LOG_FIELDS);
      assert.equal(format.requestId, '$context.requestId');
      assert.ok(!settings.Format.includes('header') && !settings.Format.includes('querystring'));
      assert.match(render(settings.DestinationArn), /^\$\{ApiAccessLogs[0-9A-F]+\.Arn\}$/);
    });

    test('has no custom domain', () => {
      s.template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
      s.template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
    });
  });

  describe('function', () => {
    test('runs Node.js 22 on arm64 with 512 MB and a 15 s timeout, handler "handler" of an ES module', () => {
      const p = lambdaFunction(s.template, 'mcp').resource.Properties;

      assert.equal(p.Runtime, 'nodejs22.x');
      assert.deepEqual(p.Architectures, ['arm64']);
      assert.equal(p.MemorySize, 512);
      assert.equal(p.Timeout, 15);
      assert.equal(p.Handler, 'index.handler');
    });

    test("the dashboard leads from a slow p99 to the MCP function's traces, slowest first", () => {
      const body = dashboardBody(s);
      const [mcp] = functionIds(s).filter((id) => id.includes('Mcp'));

      assert.match(
        body,
        /\*\*A slow p99\?\*\* \[The MCP function's traces, slowest first\]\(https:\/\/console\.aws\.amazon\.com\/cloudwatch\/home\?region=/,
      );
      assert.match(body, /#xray:traces\/query/);
      assert.ok(!mcp || body.includes(`\${Ref:${mcp}}`), 'names the MCP function');
    });

    test('both functions trace actively (X-Ray), so each log line of an invocation carries its trace id', () => {
      for (const fn of ['mcp', 'oauth'] as const) {
        assert.deepEqual(lambdaFunction(s.template, fn).resource.Properties.TracingConfig, { Mode: 'Active' }, fn);
      }
    });

    test('gets the contract names that have a value, the Powertools settings and source maps, nothing else', () => {
      const env = functionEnvironment(s.template);

      const expected = [
        ...FUNCTION_ENV_NAMES.filter((n) => !(OPTIONAL_CONTRACT_NAMES as readonly string[]).includes(n)),
        ...Object.keys(POWERTOOLS),
      ];
      assert.deepEqual(sorted(Object.keys(env)), sorted(expected));
      for (const [name, value] of Object.entries(POWERTOOLS)) assert.equal(env[name], value);
    });

    test('omits unset optional settings instead of setting empty strings', () => {
      const env = functionEnvironment(s.template);

      for (const name of OPTIONAL_CONTRACT_NAMES) assert.equal(name in env, false, name);
      for (const [name, value] of Object.entries(env)) assert.notEqual(value, '', name);
    });

    test('passes the limits from cdk.json and its own timeout as whole numbers', () => {
      const env = functionEnvironment(s.template);

      assert.equal(env.DOERS_RATE_LIMIT_CALLS, '120');
      assert.equal(env.DOERS_RATE_LIMIT_WINDOW_SECONDS, '60');
      assert.equal(env.DOERS_MAX_CONCURRENT_CALLS, '4');
      assert.equal(env.DOERS_AUTH_CACHE_SECONDS, '5');
      assert.equal(env.DOERS_FUNCTION_TIMEOUT_SECONDS, '15');
    });

    test('advertises the API default endpoint as the public URL and names its tables and secret', () => {
      const env = functionEnvironment(s.template);
      const api = onlyResource(s.template, 'AWS::ApiGatewayV2::Api');
      const secret = onlyResource(s.template, 'AWS::SecretsManager::Secret');

      assert.deepEqual(env.DOERS_PUBLIC_URL, { 'Fn::GetAtt': [api.logicalId, 'ApiEndpoint'] });
      assert.deepEqual(env.DOERS_SECRET_ARN, { Ref: secret.logicalId });
      assert.match(render(env.DOERS_WORKSPACE_TABLE), /^\$\{Ref:TablesWorkspace/);
      assert.match(render(env.DOERS_LIMITS_TABLE), /^\$\{Ref:TablesLimits/);
    });

    test('logs to a retained log group with the configured retention', () => {
      const fn = lambdaFunction(s.template, 'mcp');
      const logGroupRef = (fn.resource.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

      s.template.hasResource('AWS::Logs::LogGroup', { DeletionPolicy: 'Retain', Properties: { RetentionInDays: 90 } });
      assert.match(logGroupRef, /^FunctionLogs/);
    });
  });

  describe('grants', () => {
    test('never grant a wildcard action', () => {
      const actions = policyStatements(s.template).flatMap(actionsOf);

      assert.ok(actions.length > 0);
      for (const action of actions) {
        assert.ok(!action.endsWith(':*') && action !== '*', `wildcard action ${action}`);
      }
    });

    test('give the MCP function data-plane read/write on both tables (and their GSIs), no control plane', () => {
      const dynamo = rolePolicyStatements(s.template, 'mcp').filter((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')));
      const actions = new Set(dynamo.flatMap(actionsOf));
      const resources = dynamo.map((st) => render(st.Resource)).join(' ');

      for (const needed of [
        'GetItem',
        'PutItem',
        'UpdateItem',
        'DeleteItem',
        'Query',
        'ConditionCheckItem',
        'BatchGetItem',
        'BatchWriteItem',
      ]) {
        assert.ok(actions.has(`dynamodb:${needed}`), needed);
      }
      for (const forbidden of ['CreateTable', 'DeleteTable', 'UpdateTable', 'UpdateTimeToLive', 'RestoreTableToPointInTime']) {
        assert.ok(!actions.has(`dynamodb:${forbidden}`), forbidden);
      }
      for (const table of ['TablesWorkspace', 'TablesLimits']) assert.match(resources, new RegExp(`\\$\\{${table}[0-9A-F]+\\.Arn\\}`));
      assert.match(resources, /\$\{TablesWorkspace[0-9A-F]+\.Arn\}\/index\/\*/);
    });

    test('let each function write its own log group only, with no AWS managed policy on its role', () => {
      for (const [name, logGroup] of [
        ['mcp', 'FunctionLogs'],
        ['oauth', 'OAuthLogs'],
        ['notifier', 'NotifierLogs'],
        ['minute', 'NotifierMinuteLogs'],
      ] as const) {
        const role = functionRole(s.template, name);
        const logs = rolePolicyStatements(s.template, name).filter((st) => actionsOf(st).some((a) => a.startsWith('logs:')));

        assert.equal(role.resource.Properties.ManagedPolicyArns, undefined, name);
        assert.equal(logs.length, 1, name);
        assert.deepEqual(sorted(actionsOf(logs[0]!)), ['logs:CreateLogStream', 'logs:PutLogEvents'], name);
        assert.match(render(logs[0]!.Resource), new RegExp(`^\\$\\{${logGroup}[0-9A-F]+\\.Arn\\}$`), name);
      }
      assert.equal(Object.keys(s.template.findResources('AWS::IAM::Role')).length, 5);
    });

    test("give the MCP function exactly put, get and delete of objects under the attachments' prefixes, nothing on the bucket", () => {
      const bucket = onlyResource(s.template, 'AWS::S3::Bucket');
      const statements = rolePolicyStatements(s.template, 'mcp').filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));

      assert.equal(statements.length, 1);
      assert.deepEqual(sorted(actionsOf(statements[0]!)), ['s3:DeleteObject', 's3:GetObject', 's3:PutObject']);
      const resources = (Array.isArray(statements[0]!.Resource) ? statements[0]!.Resource : [statements[0]!.Resource]).map(render);
      assert.deepEqual(
        sorted(resources),
        sorted([`\${${bucket.logicalId}.Arn}/workspaces/*`, `\${${bucket.logicalId}.Arn}/trash/workspaces/*`]),
      );
      const oauth = rolePolicyStatements(s.template, 'oauth').filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));
      assert.deepEqual(oauth, [], 'the authorization server reaches no file');
    });

    test('give the MCP function read access to the secret only', () => {
      const secret = onlyResource(s.template, 'AWS::SecretsManager::Secret');
      const statements = rolePolicyStatements(s.template, 'mcp').filter((st) => actionsOf(st).some((a) => a.startsWith('secretsmanager:')));

      assert.equal(statements.length, 1);
      assert.deepEqual(sorted(actionsOf(statements[0]!)), ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
      assert.deepEqual(statements[0]!.Resource, { Ref: secret.logicalId });
    });

    test('give the authorization server the workspace table, the secret, its log group and its traces, and nothing else', () => {
      // Arrange
      const secret = onlyResource(s.template, 'AWS::SecretsManager::Secret');
      const statements = rolePolicyStatements(s.template, 'oauth');

      // Act: every resource the role may touch, by service.
      const byService = new Map<string, Set<string>>();
      for (const st of statements) {
        assert.equal(st.Effect, 'Allow');
        const services = new Set(actionsOf(st).map((a) => a.split(':')[0]!));
        assert.equal(services.size, 1, `one service per statement: ${actionsOf(st).join(', ')}`);
        const [service] = services;
        const resources = (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map(render);
        byService.set(service!, new Set([...(byService.get(service!) ?? []), ...resources]));
      }

      // Assert
      assert.deepEqual(sorted(byService.keys()), ['dynamodb', 'logs', 'secretsmanager', 'xray']);
      // Active tracing: sending its own traces, which X-Ray grants on no narrower resource.
      const xrayActions = statements.filter((st) => actionsOf(st)[0]!.startsWith('xray:')).flatMap(actionsOf);
      assert.deepEqual(sorted(xrayActions), ['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
      const tables = [...byService.get('dynamodb')!];
      assert.equal(tables.length, 2);
      assert.ok(
        tables.every((r) => /^\$\{TablesWorkspace[0-9A-F]+\.Arn\}(\/index\/\*)?$/.test(r)),
        tables.join(' '),
      );
      assert.deepEqual([...byService.get('secretsmanager')!], [`\${Ref:${secret.logicalId}}`]);
      const secretActions = statements.filter((st) => actionsOf(st)[0]!.startsWith('secretsmanager:')).flatMap(actionsOf);
      assert.deepEqual(sorted(secretActions), ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
      const dynamoActions = new Set(statements.flatMap(actionsOf).filter((a) => a.startsWith('dynamodb:')));
      for (const forbidden of ['CreateTable', 'DeleteTable', 'UpdateTable', 'UpdateTimeToLive', 'RestoreTableToPointInTime']) {
        assert.ok(!dynamoActions.has(`dynamodb:${forbidden}`), forbidden);
      }
    });
  });

  describe('tables', () => {
    const tables = (): Array<{ id: string; resource: { Properties: Record<string, unknown>; DeletionPolicy?: string } }> =>
      Object.entries(s.template.findResources('AWS::DynamoDB::Table')).map(([id, resource]) => ({
        id,
        resource: resource as { Properties: Record<string, unknown>; DeletionPolicy?: string },
      }));
    const table = (prefix: string) => {
      const found = tables().find((t) => t.id.startsWith(prefix));
      assert.ok(found, prefix);
      return found;
    };

    test('are two, on demand, with TTL on expiresAt, point-in-time recovery and KMS encryption at rest', () => {
      s.template.resourceCountIs('AWS::DynamoDB::Table', 2);
      for (const { id, resource } of tables()) {
        assert.equal(resource.Properties.BillingMode, 'PAY_PER_REQUEST', id);
        assert.deepEqual(resource.Properties.TimeToLiveSpecification, { AttributeName: 'expiresAt', Enabled: true }, id);
        assert.deepEqual(resource.Properties.PointInTimeRecoverySpecification, { PointInTimeRecoveryEnabled: true }, id);
        // SSEEnabled without an SSEType or key: KMS with the AWS-managed key aws/dynamodb.
        assert.deepEqual(resource.Properties.SSESpecification, { SSEEnabled: true }, id);
      }
    });

    test('take their key schema from lambda/platform/tables.ts', () => {
      const k = WORKSPACE_TABLE_KEYS;
      assert.deepEqual(table('TablesWorkspace').resource.Properties.KeySchema, [
        { AttributeName: k.partitionKey, KeyType: 'HASH' },
        { AttributeName: k.sortKey, KeyType: 'RANGE' },
      ]);
      assert.deepEqual(table('TablesWorkspace').resource.Properties.GlobalSecondaryIndexes, [
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
      ]);
      assert.deepEqual(table('TablesLimits').resource.Properties.KeySchema, [
        { AttributeName: LIMITS_TABLE_KEYS.partitionKey, KeyType: 'HASH' },
      ]);
      for (const ttl of [k.ttl, LIMITS_TABLE_KEYS.ttl]) assert.equal(ttl, 'expiresAt');
    });

    test('retain the workspace table and protect it from deletion; the limits table goes with the stack', () => {
      const workspace = table('TablesWorkspace').resource;

      assert.equal(workspace.DeletionPolicy, 'Retain');
      assert.equal(workspace.Properties.DeletionProtectionEnabled, true);
      assert.equal(table('TablesLimits').resource.DeletionPolicy, 'Delete');
    });
  });

  describe('attachments bucket', () => {
    test('is encrypted, blocks public access, has no ACLs and no CORS, refuses plain HTTP and is kept when the stack goes', () => {
      const bucket = onlyResource(s.template, 'AWS::S3::Bucket');
      const p = bucket.resource.Properties as Record<string, any>;

      assert.equal(p.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm, 'AES256');
      assert.deepEqual(p.PublicAccessBlockConfiguration, {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      assert.deepEqual(p.OwnershipControls, { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
      assert.equal(p.CorsConfiguration, undefined);
      assert.equal(bucket.resource.DeletionPolicy, 'Retain');
      const policy = onlyResource(s.template, 'AWS::S3::BucketPolicy');
      const deny = (policy.resource.Properties as any).PolicyDocument.Statement.find((st: any) => st.Effect === 'Deny');
      assert.deepEqual(deny.Condition, { Bool: { 'aws:SecureTransport': 'false' } });
    });

    test("removes a deleted attachment's bytes a day after the undo window, and unfinished uploads after a day", () => {
      const bucket = onlyResource(s.template, 'AWS::S3::Bucket');
      const rules = (bucket.resource.Properties as any).LifecycleConfiguration.Rules;

      assert.deepEqual(
        rules.map((r: any) => ({
          prefix: r.Prefix,
          days: r.ExpirationInDays,
          abort: r.AbortIncompleteMultipartUpload?.DaysAfterInitiation,
        })),
        [
          { prefix: 'trash/', days: 91, abort: undefined },
          { prefix: undefined, days: undefined, abort: 1 },
        ],
      );
    });

    test('is named to the function, with the attachment limits, and as a stack output', () => {
      const bucket = onlyResource(s.template, 'AWS::S3::Bucket');
      const env = functionEnvironment(s.template, 'mcp');

      assert.deepEqual(env.DOERS_ATTACHMENT_BUCKET, { Ref: bucket.logicalId });
      assert.equal(env.DOERS_ATTACHMENT_MAX_MB, '4');
      assert.equal(env.DOERS_ATTACHMENT_QUOTA_MB, '1024');
      assert.deepEqual(s.template.toJSON().Outputs.AttachmentsBucketName.Value, { Ref: bucket.logicalId });
    });
  });

  describe('secret', () => {
    test('is one seed generated by Secrets Manager at deploy time and kept when the stack goes', () => {
      s.template.resourceCountIs('AWS::SecretsManager::Secret', 1);
      s.template.hasResource('AWS::SecretsManager::Secret', {
        DeletionPolicy: 'Retain',
        Properties: {
          GenerateSecretString: {
            SecretStringTemplate: '{}',
            GenerateStringKey: 'seed',
            PasswordLength: 64,
            ExcludePunctuation: true,
          },
        },
      });
    });

    test('has no rotation schedule (acknowledged: the function also reads AWSPREVIOUS)', () => {
      s.template.resourceCountIs('AWS::SecretsManager::RotationSchedule', 0);
      const ack = acknowledgements(s.app).find((a) => a.id.endsWith('AwsSolutions-SMG4'));
      assert.ok(ack);
      assert.match(String(ack.reason), /AWSPREVIOUS/);
    });
  });

  describe('observability', () => {
    test('warns at synth that the alarms notify nobody, naming how to set an e-mail', () => {
      const warnings = Annotations.fromStack(s.stack).findWarning('*', Match.stringLikeRegexp(NO_ALARM_EMAIL_WARNING));

      assert.equal(warnings.length, 1);
      assert.match(String(warnings[0]!.entry.data), /The 13 alarms notify nobody: deploy with -c doers:alarmEmail=/);
    });

    test('charts the four meters with SEARCH expressions over their exact dimension sets', () => {
      const body = dashboardBody(s);

      for (const expected of [
        `SEARCH('{Doers,Method,Status,service} MetricName=\\"Requests\\" service=\\"doers\\"', 'Sum', 300)`,
        `SEARCH('{Doers,Reason,service} MetricName=\\"Refusals\\" service=\\"doers\\"', 'Sum', 300)`,
        `SEARCH('{Doers,Outcome,Tool,service} MetricName=\\"ToolCalls\\" service=\\"doers\\" Outcome=\\"ok\\"', 'p50', 300)`,
        `SEARCH('{Doers,Outcome,Tool,service} MetricName=\\"ToolCalls\\" service=\\"doers\\" Outcome=\\"ok\\"', 'p95', 300)`,
        `SEARCH('{Doers,Outcome,Tool,service} MetricName=\\"ToolCalls\\" service=\\"doers\\" Outcome=\\"ok\\"', 'p99', 300)`,
        `SUM(SEARCH('{Doers,Outcome,Tool,service} MetricName=\\"ToolCalls\\" service=\\"doers\\" Outcome=\\"failed\\"', 'SampleCount', 300))`,
        `SEARCH('{Doers,Outcome,Provider,service} MetricName=\\"ResourceReads\\" service=\\"doers\\" Outcome=\\"ok\\"', 'p99', 300)`,
      ]) {
        assert.ok(body.includes(expected), `dashboard has ${expected}`);
      }
    });

    test('charts Lambda, API Gateway and DynamoDB throttling in the platform row', () => {
      const body = dashboardBody(s);

      for (const metric of ['Duration', 'Errors', 'Throttles', 'ConcurrentExecutions', 'Invocations']) {
        assert.ok(body.includes(`"AWS/Lambda","${metric}"`), metric);
      }
      for (const metric of ['Count', '4xx', '5xx', 'Latency', 'IntegrationLatency']) {
        assert.ok(body.includes(`"AWS/ApiGateway","${metric}"`), metric);
      }
      for (const metric of ['ReadThrottleEvents', 'WriteThrottleEvents']) {
        assert.equal(body.split(`"AWS/DynamoDB","${metric}"`).length - 1, 2, `${metric} for each table`);
      }
    });

    test('alarms on the API 5xx rate, Lambda errors, DynamoDB throttles and p99 latency', () => {
      // Four of the eleven; three watch the authorization server's function (below), four the notifier
      // (test/infra/notifier.test.ts).
      s.template.resourceCountIs('AWS::CloudWatch::Alarm', 13);
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Threshold: 5,
        Metrics: Match.arrayWith([
          Match.objectLike({ Expression: 'IF(requests >= 10, 100 * errors / requests, 0)' }),
          Match.objectLike({ Id: 'requests', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'Count' }) }) }),
          Match.objectLike({ Id: 'errors', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: '5xx' }) }) }),
        ]),
      });
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', { Namespace: 'AWS/Lambda', MetricName: 'Errors', Threshold: 1 });
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Metrics: Match.arrayWith([Match.objectLike({ Expression: 'r0 + w0 + r1 + w1' })]),
      });
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: 'Duration',
        ExtendedStatistic: 'p99',
        Threshold: 5000,
      });
    });

    test("watches the MCP function's errors and p99 duration (a third of its 15 s timeout)", () => {
      const alarms = functionAlarms(s.template, 'mcp');

      assert.deepEqual(sorted(Object.keys(alarms)), ['Duration', 'Errors']);
      assert.equal(alarms.Errors?.Threshold, 1);
      assert.equal(alarms.Duration?.Threshold, 5000);
    });

    test("charts the authorization server's function as the MCP one: invocations, errors, throttles, duration, concurrency", () => {
      // Arrange
      const body = dashboardBody(s);

      // Act
      const mcp = chartedLambdaMetrics(s, 'mcp');
      const oauth = chartedLambdaMetrics(s, 'oauth');

      // Assert
      assert.deepEqual(mcp, LAMBDA_GRAPHS);
      assert.deepEqual(oauth, LAMBDA_GRAPHS);
      assert.match(body, /"markdown":"## Authorization server: its Lambda function/);
      // Its duration graph marks its own alarm threshold and its 10 s timeout.
      assert.match(body, /\{"value":5000,"label":"p99 alarm","yAxis":"left"\},\{"value":10000,"label":"timeout","yAxis":"left"\}/);
    });

    test("alarms on the authorization server's errors and throttles (any) and its p99 duration above half its 10 s timeout", () => {
      // Act
      const alarms = functionAlarms(s.template, 'oauth');

      // Assert
      assert.deepEqual(sorted(Object.keys(alarms)), ['Duration', 'Errors', 'Throttles']);
      const once = {
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      };
      assert.deepEqual(pick(alarms.Errors, Object.keys(once)), once);
      assert.deepEqual(pick(alarms.Throttles, Object.keys(once)), once);
      const latency = {
        ExtendedStatistic: 'p99',
        Period: 300,
        Threshold: 5000,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
        TreatMissingData: 'notBreaching',
      };
      assert.deepEqual(pick(alarms.Duration, Object.keys(latency)), latency);
      for (const alarm of Object.values(alarms)) assert.match(String(alarm.AlarmDescription), /authorization server's function/);
    });

    test("lists every alarm, the authorization server's included, in the alarm status widget", () => {
      // Arrange
      const alarmIds = Object.keys(s.template.findResources('AWS::CloudWatch::Alarm'));

      // Act
      const listed = /"type":"alarm"[^}]*"alarms":\[([^\]]*)\]/.exec(dashboardBody(s))?.[1] ?? '';

      // Assert
      assert.deepEqual(sorted(listed.split(',')), sorted(alarmIds.map((id) => `"\${${id}.Arn}"`)));
    });

    test('creates no SNS topic without an alarm e-mail, and the alarms notify nobody', () => {
      s.template.resourceCountIs('AWS::SNS::Topic', 0);
      for (const alarm of Object.values(s.template.findResources('AWS::CloudWatch::Alarm'))) {
        assert.equal((alarm as { Properties: Record<string, unknown> }).Properties.AlarmActions, undefined);
      }
    });
  });

  describe('outputs', () => {
    test('carry the stable names the admin CLI reads, plus the sign-in user pool', () => {
      const outputs = s.template.toJSON() as { Outputs: Record<string, { Value: unknown }> };

      assert.deepEqual(
        sorted(Object.keys(outputs.Outputs)),
        sorted([
          STACK_OUTPUTS.mcpUrl,
          STACK_OUTPUTS.metadataUrl,
          STACK_OUTPUTS.dashboardUrl,
          STACK_OUTPUTS.workspaceTableName,
          STACK_OUTPUTS.limitsTableName,
          STACK_OUTPUTS.attachmentsBucketName,
          STACK_OUTPUTS.secretArn,
          STACK_OUTPUTS.region,
          STACK_OUTPUTS.activityDays,
          STACK_OUTPUTS.claudeMcpAddCommand,
          STACK_OUTPUTS.signInUserPoolId,
        ]),
      );
      assert.deepEqual(sorted(Object.keys(outputs.Outputs)), sorted([...BASE_OUTPUTS, 'SignInUserPoolId']));
      assert.deepEqual(outputs.Outputs.SignInUserPoolId?.Value, { Ref: onlyResource(s.template, 'AWS::Cognito::UserPool').logicalId });
    });

    test('give the MCP URL, the metadata URL, the dashboard URL and a ready claude mcp add line', () => {
      const api = onlyResource(s.template, 'AWS::ApiGatewayV2::Api');
      const endpoint = `\${${api.logicalId}.ApiEndpoint}`;
      const outputs = (s.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;
      const value = (name: string) => render(outputs[name]?.Value);

      assert.equal(value('McpUrl'), `${endpoint}/mcp`);
      assert.equal(value('MetadataUrl'), `${endpoint}/.well-known/oauth-protected-resource/mcp`);
      assert.match(
        value('DashboardUrl'),
        /^https:\/\/\$\{Ref:AWS::Region\}\.console\.aws\.amazon\.com\/cloudwatch\/home\?region=\$\{Ref:AWS::Region\}#dashboards:name=\$\{Ref:ObservabilityDashboard/,
      );
      assert.equal(
        value('ClaudeMcpAddCommand'),
        `claude mcp add --transport http doers ${endpoint}/mcp --header "Authorization: Bearer <token>"`,
      );
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudFormation's own substitution syntax, not a template literal
      assert.equal(value('Region'), '${Ref:AWS::Region}');
    });
  });

  test('creates no Cognito resource server: the sign-in pool is no authorization server of the MCP endpoint', () => {
    s.template.resourceCountIs('AWS::Cognito::UserPool', 1);
    s.template.resourceCountIs('AWS::Cognito::UserPoolClient', 1);
    s.template.resourceCountIs('AWS::Cognito::UserPoolResourceServer', 0);
    const env = functionEnvironment(s.template, 'mcp');
    for (const name of ['DOERS_JWT_ISSUER', 'DOERS_JWKS_URI', 'DOERS_JWT_AUDIENCE', 'DOERS_JWT_SCOPE_PREFIX'])
      assert.equal(name in env, false, name);
  });

  describe('built-in authorization server', () => {
    test('runs in a second function like the MCP one: Node.js 22 on arm64, ES module, 512 MB, 10 s', () => {
      // Arrange
      const mcp = lambdaFunction(s.template, 'mcp').resource.Properties;

      // Act
      const oauth = lambdaFunction(s.template, 'oauth').resource.Properties;

      // Assert: the other two are the notifier's (test/infra/notifier.test.ts).
      s.template.resourceCountIs('AWS::Lambda::Function', 5);
      for (const key of ['Runtime', 'Architectures', 'Handler']) assert.deepEqual(oauth[key], mcp[key], key);
      assert.equal(oauth.Runtime, 'nodejs22.x');
      assert.equal(oauth.MemorySize, 512);
      assert.equal(oauth.Timeout, 10);
    });

    test('gets exactly the authorization server names that have a value, and no others', () => {
      const env = functionEnvironment(s.template, 'oauth');

      // A public Cognito client: no client secret, so no secret ARN.
      assert.deepEqual(sorted(Object.keys(env)), sorted(OAUTH_FUNCTION_ENV_NAMES.filter((n) => n !== 'DOERS_SIGNIN_CLIENT_SECRET_ARN')));
      for (const [name, value] of Object.entries(env)) assert.notEqual(value, '', name);
    });

    test('is told the public URL, the workspace table, the secret, and the sign-in pool as OpenID issuer', () => {
      const env = functionEnvironment(s.template, 'oauth');
      const api = onlyResource(s.template, 'AWS::ApiGatewayV2::Api');
      const secret = onlyResource(s.template, 'AWS::SecretsManager::Secret');
      const pool = onlyResource(s.template, 'AWS::Cognito::UserPool');
      const client = onlyResource(s.template, 'AWS::Cognito::UserPoolClient');

      assert.deepEqual(env.DOERS_PUBLIC_URL, { 'Fn::GetAtt': [api.logicalId, 'ApiEndpoint'] });
      assert.deepEqual(env.DOERS_SECRET_ARN, { Ref: secret.logicalId });
      assert.match(render(env.DOERS_WORKSPACE_TABLE), /^\$\{Ref:TablesWorkspace/);
      // ProviderURL is https://cognito-idp.<region>.amazonaws.com/<pool id>, the `iss` of the pool's ID tokens.
      assert.deepEqual(env.DOERS_SIGNIN_ISSUER, { 'Fn::GetAtt': [pool.logicalId, 'ProviderURL'] });
      assert.deepEqual(env.DOERS_SIGNIN_CLIENT_ID, { Ref: client.logicalId });
    });

    test('logs to its own retained log group with the configured retention', () => {
      const fn = lambdaFunction(s.template, 'oauth');
      const logGroupRef = (fn.resource.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

      assert.match(logGroupRef, /^OAuthLogs/);
      s.template.hasResource('AWS::Logs::LogGroup', { DeletionPolicy: 'Retain', Properties: { RetentionInDays: 90 } });
      assert.equal((s.template.findResources('AWS::Logs::LogGroup')[logGroupRef] as { DeletionPolicy: string }).DeletionPolicy, 'Retain');
    });

    test('leaves the MCP function exactly as without it (same environment)', () => {
      const env = functionEnvironment(s.template, 'mcp');

      assert.deepEqual(
        sorted(Object.keys(env)),
        sorted([
          ...FUNCTION_ENV_NAMES.filter((n) => !(OPTIONAL_CONTRACT_NAMES as readonly string[]).includes(n)),
          ...Object.keys(POWERTOOLS),
        ]),
      );
      for (const name of Object.keys(env)) assert.ok(!name.startsWith('DOERS_SIGNIN_'), name);
    });
  });

  describe('sign-in user pool (doers:signin=cognito, the default)', () => {
    test('is invite-only with required TOTP, retained with deletion protection', () => {
      s.template.hasResource('AWS::Cognito::UserPool', {
        DeletionPolicy: 'Retain',
        Properties: Match.objectLike({
          AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
          MfaConfiguration: 'ON',
          EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
          DeletionProtection: 'ACTIVE',
        }),
      });
    });

    test("has one public app client: code grant, openid email profile, the API's /oauth/callback, no secret", () => {
      // Arrange
      const api = onlyResource(s.template, 'AWS::ApiGatewayV2::Api');

      // Act
      const p = onlyResource(s.template, 'AWS::Cognito::UserPoolClient').resource.Properties;

      // Assert
      assert.equal(p.GenerateSecret, false);
      assert.deepEqual(p.AllowedOAuthFlows, ['code']);
      assert.equal(p.AllowedOAuthFlowsUserPoolClient, true);
      assert.deepEqual(sorted(p.AllowedOAuthScopes as string[]), ['email', 'openid', 'profile']);
      assert.deepEqual((p.CallbackURLs as unknown[]).map(render), [`\${${api.logicalId}.ApiEndpoint}/oauth/callback`]);
      assert.deepEqual(p.SupportedIdentityProviders, ['COGNITO']);
      assert.equal(p.EnableTokenRevocation, true);
      assert.equal(p.PreventUserExistenceErrors, 'ENABLED');
    });

    test('hosts managed login on a Cognito domain with a branding style for the client', () => {
      const client = onlyResource(s.template, 'AWS::Cognito::UserPoolClient');

      s.template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { ManagedLoginVersion: 2 });
      s.template.hasResourceProperties('AWS::Cognito::ManagedLoginBranding', {
        UseCognitoProvidedValues: true,
        ClientId: { Ref: client.logicalId },
      });
    });
  });
});

describe('MCP function bundle', () => {
  // Bundled in a deployment with an external issuer, so there is no authorization server's bundle: the MCP
  // function's does not depend on which authorization server is configured (entry lambda/handler.ts).
  const context = {
    'doers:jwtIssuer': 'https://login.example.com/realms/doers',
    'doers:jwksUri': 'https://login.example.com/realms/doers/protocol/openid-connect/certs',
    'doers:jwtAudience': 'doers-mcp',
  };
  let s: Synthesized;
  before(() => {
    s = synth(context);
  });

  // The MCP function's asset, found by the hash its code names (the notifier's two functions have their own).
  const bundleDir = (): string => {
    const code = lambdaFunction(s.template, 'mcp').resource.Properties.Code as { S3Key: string };
    const dir = join(s.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    assert.ok(statSync(dir).isDirectory(), dir);
    assert.ok(readdirSync(dir).includes('index.mjs'), `${dir} holds the bundle`);
    return dir;
  };
  /** The sources of every file of the bundle: the main file and its chunks (lib/bundling.ts MCP_CHUNKS_DIR). */
  const bundleSources = (dir: string): string[] =>
    [
      'index.mjs.map',
      ...readdirSync(join(dir, MCP_CHUNKS_DIR))
        .map((f) => join(MCP_CHUNKS_DIR, f))
        .filter((f) => f.endsWith('.mjs.map')),
    ].flatMap((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { sources: string[] }).sources);

  test('is bundled from lambda/handler.ts as minified ESM with a source map and a require shim', () => {
    // Arrange / Act: the staged asset directory of the function's code.
    const dir = bundleDir();

    // Assert
    assert.ok(readdirSync(dir).includes('index.mjs.map'), 'source map next to the bundle');
    const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
    assert.ok(code.startsWith("import { createRequire as __doersCreateRequire } from 'node:module';"));
    assert.ok(code.includes('sourceMappingURL=index.mjs.map'));
    // Minified: whitespace and line breaks gone except inside template literals.
    const lines = code.split('\n').length;
    assert.ok(code.length / lines > 2000, `minified bundle has long lines (${code.length} chars in ${lines} lines)`);
    const map = JSON.parse(readFileSync(join(dir, 'index.mjs.map'), 'utf8')) as { sources: string[]; sourcesContent?: unknown };
    assert.ok(map.sources.some((src) => src.endsWith('lambda/handler.ts')));
    assert.equal(map.sourcesContent, undefined);
  });

  test("carries none of the authorization server's libraries, handler or pages", () => {
    // Arrange
    const sources = bundleSources(bundleDir());

    // Act: shared dependency-free modules (e.g. lambda/platform/item-keys.ts, the item keys both functions
    // read) may be in it; the server itself and what it is built on may not.
    const foreign = sources.filter((src) =>
      /(^|\/)lambda\/(account\/|sign-in\/|pages\/|oauth\/|oauth-(handler|app)\.ts$)|node_modules\/(oidc-provider|openid-client|serverless-http|koa|@koa)\//.test(
        src,
      ),
    );

    // Assert
    assert.deepEqual(foreign, []);
  });

  test("ships the MCP Apps views' HTML beside the bundle, built at synth time, and none of their sources inside it", () => {
    // Arrange
    const dir = bundleDir();
    const sources = bundleSources(dir);

    // Act
    const views = readdirSync(join(dir, 'views')).sort();
    const html = views.map((f) => readFileSync(join(dir, 'views', f), 'utf8'));

    // Assert
    assert.deepEqual(views, ['agenda.html', 'board.html']);
    for (const [i, file] of views.entries())
      assert.match(html[i]!, new RegExp(`^<!doctype html>\\n<html lang="en" data-view="${file.slice(0, -5)}"`));
    assert.deepEqual(
      sources.filter((src) => /lambda\/views\/|ext-apps/.test(src)).map((src) => src.replace(/^.*lambda\//, 'lambda/')),
      ['lambda/views/links.ts'],
    );
  });
});

describe('custom domain, alarm e-mail and an external authorization server', () => {
  const context = {
    'doers:domainName': 'mcp.example.com',
    'doers:certificateArn': 'arn:aws:acm:eu-west-1:123456789012:certificate/0d1c2b3a-4f5e-6a7b-8c9d-0e1f2a3b4c5d',
    'doers:alarmEmail': 'ops@example.com',
    'doers:jwtIssuer': 'https://login.example.com/realms/doers',
    'doers:jwksUri': 'https://login.example.com/realms/doers/protocol/openid-connect/certs',
    'doers:jwtAudience': 'doers-mcp',
    'doers:jwtUserClaim': 'preferred_username',
    'doers:allowedOrigins': 'https://claude.ai,https://app.example.com',
    'doers:rateLimitCalls': '30',
    'doers:emailFrom': 'doers@example.com',
  };
  let s: Synthesized;
  before(() => {
    s = synth(context, { bundle: false });
  });

  itPassesAwsSolutionsChecks(() => s, context);

  test('maps the custom domain (regional, TLS 1.2, the given certificate) to the default stage', () => {
    const stage = onlyResource(s.template, 'AWS::ApiGatewayV2::Stage');

    s.template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'mcp.example.com',
      DomainNameConfigurations: [
        Match.objectLike({
          CertificateArn: context['doers:certificateArn'],
          EndpointType: 'REGIONAL',
          SecurityPolicy: 'TLS_1_2',
        }),
      ],
    });
    s.template.hasResource('AWS::ApiGatewayV2::ApiMapping', {
      DependsOn: Match.arrayWith([stage.logicalId]),
      Properties: { Stage: '$default', DomainName: { Ref: Match.stringLikeRegexp('^ApiDomain') } },
    });
  });

  test('advertises https://<domain> as the public URL to the function and in the outputs', () => {
    const env = functionEnvironment(s.template);
    const outputs = (s.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;

    assert.equal(env.DOERS_PUBLIC_URL, 'https://mcp.example.com');
    assert.equal(render(outputs.McpUrl?.Value), 'https://mcp.example.com/mcp');
    assert.equal(render(outputs.MetadataUrl?.Value), 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    assert.equal(
      render(outputs.ClaudeMcpAddCommand?.Value),
      'claude mcp add --transport http doers https://mcp.example.com/mcp --header "Authorization: Bearer <token>"',
    );
    assert.match(render(outputs.CustomDomainTarget?.Value), /RegionalDomainName/);
  });

  test('sets exactly every name of the configuration contract, plus Powertools and source maps', () => {
    const env = functionEnvironment(s.template);

    assert.deepEqual(
      sorted(Object.keys(env)),
      // Everything but the scope prefix, which only an authorization server that prefixes scopes (Cognito) needs.
      sorted([...FUNCTION_ENV_NAMES.filter((n) => n !== 'DOERS_JWT_SCOPE_PREFIX'), ...Object.keys(POWERTOOLS)]),
    );
  });

  test('passes the issuer, JWKS URI, audience, user claim, origins and limits through unchanged', () => {
    const env = functionEnvironment(s.template);

    assert.equal(env.DOERS_JWT_ISSUER, 'https://login.example.com/realms/doers');
    assert.equal(env.DOERS_JWKS_URI, 'https://login.example.com/realms/doers/protocol/openid-connect/certs');
    assert.equal(env.DOERS_JWT_AUDIENCE, 'doers-mcp');
    assert.equal(env.DOERS_JWT_USER_CLAIM, 'preferred_username');
    assert.equal(env.DOERS_ALLOWED_ORIGINS, 'https://claude.ai,https://app.example.com');
    assert.equal(env.DOERS_RATE_LIMIT_CALLS, '30');
  });

  test('mails alarm and recovery notifications through an SNS topic that requires TLS', () => {
    const topic = onlyResource(s.template, 'AWS::SNS::Topic');

    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: { Ref: topic.logicalId },
    });
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as Array<{ Properties: Record<string, unknown> }>;
    assert.equal(alarms.length, 10);
    for (const alarm of alarms) {
      assert.deepEqual(alarm.Properties.AlarmActions, [{ Ref: topic.logicalId }]);
      assert.deepEqual(alarm.Properties.OKActions, [{ Ref: topic.logicalId }]);
    }
    assert.ok('AlarmTopicArn' in (s.template.toJSON() as { Outputs: object }).Outputs);
  });

  test('makes no authorization server of its own: no function of its, the MCP routes only, no sign-in pool', () => {
    const mcp = lambdaFunction(s.template, 'mcp').logicalId;

    // The MCP function, the notifier's two and the worker, each with its role.
    s.template.resourceCountIs('AWS::Lambda::Function', 4);
    assert.ok(!functionIds(s).some((id) => id.startsWith('OAuth')));
    assert.deepEqual(routeTargets(s), Object.fromEntries(MCP_ROUTE_KEYS.map((k) => [k, mcp])));
    s.template.resourceCountIs('AWS::ApiGatewayV2::Integration', 1);
    s.template.resourceCountIs('AWS::IAM::Role', 4);
    assert.ok(!outputNames(s).includes('SignInUserPoolId'));
  });

  test('creates no Cognito resources and keeps the outputs of before', () => {
    s.template.resourceCountIs('AWS::Cognito::UserPool', 0);
    assert.deepEqual(sorted(outputNames(s)), sorted([...BASE_OUTPUTS, 'CustomDomainTarget', 'AlarmTopicArn']));
  });

  itWatchesTheMcpFunctionOnly(() => s);
});

describe('alarm e-mail with the built-in authorization server', () => {
  let s: Synthesized;
  before(() => {
    s = synth({ 'doers:alarmEmail': 'ops@example.com' }, { bundle: false });
  });

  test('carries no warning that the alarms notify nobody', () => {
    assert.deepEqual(Annotations.fromStack(s.stack).findWarning('*', Match.stringLikeRegexp(NO_ALARM_EMAIL_WARNING)), []);
  });

  test("mails the authorization server's alarms through the same topic as the others", () => {
    // Arrange
    const topic = onlyResource(s.template, 'AWS::SNS::Topic');
    const oauthAlarms = Object.values(functionAlarms(s.template, 'oauth'));

    // Act
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as Array<{ Properties: Record<string, unknown> }>;

    // Assert
    assert.equal(alarms.length, 13);
    assert.equal(oauthAlarms.length, 3);
    for (const alarm of alarms) {
      assert.deepEqual(alarm.Properties.AlarmActions, [{ Ref: topic.logicalId }]);
      assert.deepEqual(alarm.Properties.OKActions, [{ Ref: topic.logicalId }]);
    }
  });
});

describe('Cognito as authorization server (doers:cognito=true)', () => {
  let s: Synthesized;
  let mcpUrl: string;
  before(() => {
    s = synth({ 'doers:cognito': 'true' }, { bundle: false });
    mcpUrl = `\${${onlyResource(s.template, 'AWS::ApiGatewayV2::Api').logicalId}.ApiEndpoint}/mcp`;
  });

  itPassesAwsSolutionsChecks(() => s, { 'doers:cognito': 'true' });

  test('creates an invite-only user pool with required TOTP and a strong password policy', () => {
    s.template.hasResource('AWS::Cognito::UserPool', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
        MfaConfiguration: 'ON',
        EnabledMfas: ['SOFTWARE_TOKEN_MFA'],
        UserPoolTier: 'ESSENTIALS',
        DeletionProtection: 'ACTIVE',
        Policies: {
          PasswordPolicy: Match.objectLike({
            MinimumLength: 12,
            RequireLowercase: true,
            RequireUppercase: true,
            RequireNumbers: true,
            RequireSymbols: true,
          }),
        },
      }),
    });
  });

  test('names the resource server by the MCP URL and gives it the four scopes', () => {
    const server = onlyResource(s.template, 'AWS::Cognito::UserPoolResourceServer');

    assert.equal(render(server.resource.Properties.Identifier), mcpUrl);
    assert.deepEqual(
      sorted((server.resource.Properties.Scopes as Array<{ ScopeName: string }>).map((x) => x.ScopeName)),
      sorted(Object.keys(DOERS_SCOPES)),
    );
  });

  test('registers a public client for the authorization-code flow with the claude.ai callback', () => {
    const client = onlyResource(s.template, 'AWS::Cognito::UserPoolClient');
    const p = client.resource.Properties;

    assert.equal(p.GenerateSecret, false);
    assert.deepEqual(p.AllowedOAuthFlows, ['code']);
    assert.equal(p.AllowedOAuthFlowsUserPoolClient, true);
    assert.deepEqual(p.CallbackURLs, [...CLAUDE_CALLBACK_URLS]);
    assert.deepEqual(p.SupportedIdentityProviders, ['COGNITO']);
    // Cognito names a scope `<resource server identifier>/<name>`; the identifier is the MCP URL (tested above).
    const server = `\${Ref:${onlyResource(s.template, 'AWS::Cognito::UserPoolResourceServer').logicalId}}`;
    const scopes = (p.AllowedOAuthScopes as unknown[]).map(render);
    assert.deepEqual(sorted(scopes), sorted([...Object.keys(DOERS_SCOPES).map((x) => `${server}/${x}`), 'openid', 'email', 'profile']));
  });

  test('hosts managed login on a Cognito domain with a branding style for the client', () => {
    s.template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { ManagedLoginVersion: 2 });
    s.template.hasResourceProperties('AWS::Cognito::ManagedLoginBranding', { UseCognitoProvidedValues: true });
    const domain = onlyResource(s.template, 'AWS::Cognito::UserPoolDomain');
    assert.match(render(domain.resource.Properties.Domain), /^doers-\$\{Fn::Select\}$/);
  });

  test('wires issuer, JWKS URI, client-id audience and the username claim into the function', () => {
    const env = functionEnvironment(s.template);
    const pool = onlyResource(s.template, 'AWS::Cognito::UserPool');
    const client = onlyResource(s.template, 'AWS::Cognito::UserPoolClient');
    // ProviderURL is https://cognito-idp.<region>.amazonaws.com/<pool id>, the `iss` of the pool's tokens.
    const issuer = `\${${pool.logicalId}.ProviderURL}`;

    assert.equal(render(env.DOERS_JWT_ISSUER), issuer);
    assert.equal(render(env.DOERS_JWKS_URI), `${issuer}/.well-known/jwks.json`);
    assert.deepEqual(env.DOERS_JWT_AUDIENCE, { Ref: client.logicalId });
    assert.equal(env.DOERS_JWT_USER_CLAIM, 'username');
    // Cognito issues `<resource server id>/tasks:read`; the function advertises and accepts exactly that.
    assert.match(render(env.DOERS_JWT_SCOPE_PREFIX), /\/mcp\/$/);
    assert.equal('DOERS_ALLOWED_ORIGINS' in env, false);
  });

  test('outputs the pool id, client id, login URL and the scope names as Cognito issues them', () => {
    const outputs = (s.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;

    for (const name of ['CognitoUserPoolId', 'CognitoClientId', 'CognitoLoginUrl', 'CognitoScopes']) assert.ok(name in outputs, name);
    const server = `\${Ref:${onlyResource(s.template, 'AWS::Cognito::UserPoolResourceServer').logicalId}}`;
    assert.equal(
      render(outputs.CognitoScopes?.Value),
      Object.keys(DOERS_SCOPES)
        .map((x) => `${server}/${x}`)
        .join(' '),
    );
  });
});

describe('Cognito as authorization server: no built-in one', () => {
  let s: Synthesized;
  before(() => {
    s = synth({ 'doers:cognito': 'true' }, { bundle: false });
  });

  test('makes no authorization server of its own: no function of its, the MCP routes only, no sign-in pool', () => {
    s.template.resourceCountIs('AWS::Cognito::UserPool', 1);
    const mcp = lambdaFunction(s.template, 'mcp').logicalId;

    // The MCP function, the notifier's two and the worker, each with its role.
    s.template.resourceCountIs('AWS::Lambda::Function', 4);
    assert.ok(!functionIds(s).some((id) => id.startsWith('OAuth')));
    assert.deepEqual(routeTargets(s), Object.fromEntries(MCP_ROUTE_KEYS.map((k) => [k, mcp])));
    s.template.resourceCountIs('AWS::ApiGatewayV2::Integration', 1);
    s.template.resourceCountIs('AWS::IAM::Role', 4);
    assert.ok(!outputNames(s).includes('SignInUserPoolId'));
  });

  test('keeps the outputs of before', () => {
    assert.deepEqual(
      sorted(outputNames(s)),
      sorted([...BASE_OUTPUTS, 'CognitoUserPoolId', 'CognitoClientId', 'CognitoLoginUrl', 'CognitoScopes']),
    );
  });

  itWatchesTheMcpFunctionOnly(() => s);
});

describe("the operator's OpenID provider for sign-in (doers:signin=oidc)", () => {
  const secretArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:doers/signin-client-AbC123';
  const context = {
    'doers:signin': 'oidc',
    // A trailing slash, as Auth0 issuers have: passed through exactly (the `iss` must match).
    'doers:signinIssuer': 'https://login.example.com/',
    'doers:signinClientId': 'doers-authorization-server',
    'doers:signinClientSecretArn': secretArn,
  };
  let s: Synthesized;
  before(() => {
    s = synth(context, { bundle: false });
  });

  itPassesAwsSolutionsChecks(() => s, context);

  test('wires issuer, client id and client secret ARN into the authorization server, and no other names', () => {
    const env = functionEnvironment(s.template, 'oauth');

    assert.deepEqual(sorted(Object.keys(env)), sorted(OAUTH_FUNCTION_ENV_NAMES));
    assert.equal(env.DOERS_SIGNIN_ISSUER, 'https://login.example.com/');
    assert.equal(env.DOERS_SIGNIN_CLIENT_ID, 'doers-authorization-server');
    assert.equal(env.DOERS_SIGNIN_CLIENT_SECRET_ARN, secretArn);
  });

  test('lets the authorization server read that client secret (exactly that ARN) and the seed, no other secret', () => {
    const seed = onlyResource(s.template, 'AWS::SecretsManager::Secret');
    const statements = rolePolicyStatements(s.template, 'oauth').filter((st) => actionsOf(st).some((a) => a.startsWith('secretsmanager:')));

    const resources = statements.flatMap((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map(render));
    assert.deepEqual(sorted(resources), sorted([`\${Ref:${seed.logicalId}}`, secretArn]));
    for (const st of statements) {
      assert.deepEqual(sorted(actionsOf(st)), ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
    }
    const mcpSecrets = rolePolicyStatements(s.template, 'mcp').filter((st) => actionsOf(st).some((a) => a.startsWith('secretsmanager:')));
    assert.deepEqual(
      mcpSecrets.map((st) => render(st.Resource)),
      [`\${Ref:${seed.logicalId}}`],
    );
  });

  test('creates no user pool and no SignInUserPoolId output, but the same routes', () => {
    const mcp = lambdaFunction(s.template, 'mcp').logicalId;
    const oauth = lambdaFunction(s.template, 'oauth').logicalId;

    s.template.resourceCountIs('AWS::Cognito::UserPool', 0);
    s.template.resourceCountIs('AWS::Cognito::UserPoolClient', 0);
    assert.deepEqual(sorted(outputNames(s)), sorted(BASE_OUTPUTS));
    assert.deepEqual(
      routeTargets(s),
      Object.fromEntries([...MCP_ROUTE_KEYS.map((k) => [k, mcp]), ...OAUTH_ROUTE_KEYS.map((k) => [k, oauth])]),
    );
  });

  test('without a client secret ARN: a public client, nothing more to read', () => {
    // Arrange
    const { 'doers:signinClientSecretArn': _omitted, ...publicClient } = context;

    // Act
    const p = synth(publicClient, { bundle: false });

    // Assert
    const env = functionEnvironment(p.template, 'oauth');
    assert.deepEqual(sorted(Object.keys(env)), sorted(OAUTH_FUNCTION_ENV_NAMES.filter((n) => n !== 'DOERS_SIGNIN_CLIENT_SECRET_ARN')));
    const seed = onlyResource(p.template, 'AWS::SecretsManager::Secret');
    const secrets = rolePolicyStatements(p.template, 'oauth').filter((st) => actionsOf(st).some((a) => a.startsWith('secretsmanager:')));
    assert.deepEqual(
      secrets.map((st) => render(st.Resource)),
      [`\${Ref:${seed.logicalId}}`],
    );
  });
});

describe('behind your own proxy (doers:publicUrl)', () => {
  let s: Synthesized;
  before(() => {
    s = synth({ 'doers:publicUrl': 'https://tasks.example.org/' }, { bundle: false });
  });

  test('advertises the configured URL (trailing slash dropped) instead of the API endpoint', () => {
    const env = functionEnvironment(s.template);
    const outputs = (s.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;

    assert.equal(env.DOERS_PUBLIC_URL, 'https://tasks.example.org');
    assert.equal(render(outputs.McpUrl?.Value), 'https://tasks.example.org/mcp');
    s.template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
  });

  test('makes it the issuer of the authorization server and the base of the sign-in callback', () => {
    const env = functionEnvironment(s.template, 'oauth');
    const client = onlyResource(s.template, 'AWS::Cognito::UserPoolClient');

    assert.equal(env.DOERS_PUBLIC_URL, 'https://tasks.example.org');
    assert.deepEqual(client.resource.Properties.CallbackURLs, ['https://tasks.example.org/oauth/callback']);
  });
});

describe('a restored workspace table adopted by name (doers:workspaceTableName)', () => {
  const RESTORED = 'doers-workspace-restored-20261202';
  const context = { 'doers:workspaceTableName': RESTORED };
  let s: Synthesized;
  before(() => {
    s = synth(context, { bundle: false });
  });

  itPassesAwsSolutionsChecks(() => s, context);

  test('holds no workspace table of its own: the limits table is the only table resource', () => {
    const tables = Object.values(s.template.findResources('AWS::DynamoDB::Table')) as Array<{ Properties: { KeySchema: unknown } }>;

    assert.equal(tables.length, 1);
    assert.deepEqual(tables[0]!.Properties.KeySchema, [{ AttributeName: LIMITS_TABLE_KEYS.partitionKey, KeyType: 'HASH' }]);
  });

  test('points both functions, the output and the throttle alarm at the restored table', () => {
    const outputs = (s.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;
    const alarms = JSON.stringify(s.template.findResources('AWS::CloudWatch::Alarm'));

    assert.equal(functionEnvironment(s.template, 'mcp').DOERS_WORKSPACE_TABLE, RESTORED);
    assert.equal(functionEnvironment(s.template, 'oauth').DOERS_WORKSPACE_TABLE, RESTORED);
    assert.equal(outputs[STACK_OUTPUTS.workspaceTableName]!.Value, RESTORED);
    assert.ok(alarms.includes(`"Value":"${RESTORED}"`), 'the throttle alarm watches it');
  });

  test('grants both functions the data-plane actions on that table and its indexes, by name', () => {
    for (const name of ['mcp', 'oauth'] as const) {
      const resources = rolePolicyStatements(s.template, name)
        .filter((st) => actionsOf(st).includes('dynamodb:PutItem'))
        .flatMap((st) => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]))
        .map(render);

      assert.ok(
        resources.some((r) => r.endsWith(`:table/${RESTORED}`)),
        `${name}: ${resources.join(', ')}`,
      );
      assert.ok(
        resources.some((r) => r.endsWith(`:table/${RESTORED}/index/*`)),
        `${name}: ${resources.join(', ')}`,
      );
    }
  });

  test("notes at synth that the table's time to live, recovery and deletion protection are the operator's", () => {
    const notes = Annotations.fromStack(s.stack).findInfo('*', Match.stringLikeRegexp(ADOPTED_TABLE_NOTE));

    assert.equal(notes.length, 1);
    assert.match(String(notes[0]!.entry.data), new RegExp(`${RESTORED}.*time to live.*point-in-time recovery.*deletion protection`));
  });

  test('makes no notifier (the adopted table has no stream the stack knows) and warns at synth that nothing tells people', () => {
    const warnings = Annotations.fromStack(s.stack).findWarning('*', Match.stringLikeRegexp(NO_NOTIFIER_WARNING));

    assert.equal(s.stack.notifier, undefined);
    assert.ok(!functionIds(s).some((id) => id.startsWith('Notifier')));
    // Long work's queue and its dead-letter queue only.
    s.template.resourceCountIs('AWS::SQS::Queue', 2);
    s.template.resourceCountIs('AWS::Events::Rule', 0);
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 9);
    assert.equal(warnings.length, 1);
    assert.match(String(warnings[0]!.entry.data), /Notifications are off: the adopted workspace table has no stream/);
  });

  test('the stack of its own table carries no such note', () => {
    const own = synth({}, { bundle: false });

    assert.deepEqual(Annotations.fromStack(own.stack).findInfo('*', Match.stringLikeRegexp(ADOPTED_TABLE_NOTE)), []);
  });
});
