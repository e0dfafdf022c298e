import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { HttpMethod, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { FUNCTION_ENV_NAMES } from '../../lambda/platform/config.js';
import { LIMITS_TABLE_KEYS, WORKSPACE_TABLE_KEYS } from '../../lambda/platform/tables.js';
import { DOERS_SCOPES } from '../../lib/cognito-auth.js';
import { CLAUDE_CALLBACK_URLS } from '../../lib/context.js';
import { STACK_OUTPUTS } from '../../lib/doers-stack.js';
import { ACCESS_LOG_FIELDS, METADATA_PATH, ROOT_METADATA_PATH } from '../../lib/mcp-api.js';
import {
  acknowledgements,
  actionsOf,
  functionEnvironment,
  nagReport,
  onlyResource,
  policyStatements,
  rawFindings,
  render,
  synth,
  type Synthesized,
} from './synth.js';

const POWERTOOLS = { POWERTOOLS_SERVICE_NAME: 'doers', POWERTOOLS_METRICS_NAMESPACE: 'Doers' } as const;
/** Runtime plumbing the function gets besides the contract. */
const RUNTIME_ENV = { NODE_OPTIONS: '--enable-source-maps' } as const;
const OPTIONAL_CONTRACT_NAMES = [
  'DOERS_ALLOWED_ORIGINS',
  'DOERS_JWT_ISSUER',
  'DOERS_JWKS_URI',
  'DOERS_JWT_AUDIENCE',
  'DOERS_JWT_USER_CLAIM',
  'DOERS_JWT_SCOPE_PREFIX',
] as const;

const sorted = (values: Iterable<string>): string[] => [...values].sort();

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
    assert.deepEqual(annotations.findWarning('*', Match.anyValue()), []);
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
    s = synth();
  });

  itPassesAwsSolutionsChecks(() => s);

  describe('HTTP API', () => {
    test('routes POST, OPTIONS, GET and DELETE /mcp, GET on both metadata paths, and $default', () => {
      const routeKeys = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map(
        (r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey,
      );

      assert.deepEqual(
        sorted(routeKeys),
        sorted([
          'POST /mcp',
          'OPTIONS /mcp',
          'GET /mcp',
          'DELETE /mcp',
          `GET ${METADATA_PATH}`,
          `GET ${ROOT_METADATA_PATH}`,
          '$default',
        ]),
      );
    });

    test('sends every route to one Lambda proxy integration with payload format 2.0', () => {
      const integration = onlyResource(s.template, 'AWS::ApiGatewayV2::Integration');
      const fn = onlyResource(s.template, 'AWS::Lambda::Function');
      const targets = Object.values(s.template.findResources('AWS::ApiGatewayV2::Route')).map((r) =>
        render((r as { Properties: { Target: unknown } }).Properties.Target),
      );

      assert.deepEqual(integration.resource.Properties['IntegrationUri'], { 'Fn::GetAtt': [fn.logicalId, 'Arn'] });
      assert.equal(integration.resource.Properties['IntegrationType'], 'AWS_PROXY');
      assert.equal(integration.resource.Properties['PayloadFormatVersion'], '2.0');
      assert.equal(targets.length, 7);
      for (const target of targets) assert.equal(target, `integrations/\${Ref:${integration.logicalId}}`);
    });

    test('reaches the function for /mcp/ through $default, since a route path may not end in "/"', () => {
      // Arrange: the route key that would be needed is refused at synth (and by API Gateway at deploy).
      assert.throws(() => HttpRouteKey.with('/mcp/', HttpMethod.POST), /not end with a "\/"/);

      // Act: find the catch-all route.
      const routes = s.template.findResources('AWS::ApiGatewayV2::Route', { Properties: { RouteKey: '$default' } });

      // Assert: it exists, has no authorizer in front, and targets the function's integration.
      const [catchAll] = Object.values(routes) as Array<{ Properties: Record<string, unknown> }>;
      assert.ok(catchAll, 'a $default route');
      assert.equal(catchAll.Properties['AuthorizationType'], 'NONE');
      assert.match(render(catchAll.Properties['Target']), /^integrations\//);
    });

    test('lets the function invoke permission cover the whole API once', () => {
      const permission = onlyResource(s.template, 'AWS::Lambda::Permission');

      assert.equal(permission.resource.Properties['Principal'], 'apigateway.amazonaws.com');
      assert.match(render(permission.resource.Properties['SourceArn']), /:execute-api:.*\/\*\/\*\/\*$/);
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
      const settings = stage.resource.Properties['AccessLogSettings'] as { DestinationArn: unknown; Format: string };

      const format = JSON.parse(settings.Format) as Record<string, string>;
      assert.deepEqual(format, ACCESS_LOG_FIELDS);
      assert.equal(format['requestId'], '$context.requestId');
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
      s.template.hasResourceProperties('AWS::Lambda::Function', {
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        MemorySize: 512,
        Timeout: 15,
        Handler: 'index.handler',
      });
    });

    test('is bundled from lambda/handler.ts as minified ESM with a source map and a require shim', () => {
      // Arrange: the staged asset directory of the function's code.
      const assetDirs = readdirSync(s.outdir)
        .filter((d) => d.startsWith('asset.'))
        .map((d) => join(s.outdir, d))
        .filter((d) => statSync(d).isDirectory());

      // Act
      const withBundle = assetDirs.filter((d) => readdirSync(d).includes('index.mjs'));

      // Assert
      assert.equal(withBundle.length, 1);
      const dir = withBundle[0]!;
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

    test('gets the contract names that have a value, the Powertools settings and source maps, nothing else', () => {
      const env = functionEnvironment(s.template);

      const expected = [
        ...FUNCTION_ENV_NAMES.filter((n) => !(OPTIONAL_CONTRACT_NAMES as readonly string[]).includes(n)),
        ...Object.keys(POWERTOOLS),
        ...Object.keys(RUNTIME_ENV),
      ];
      assert.deepEqual(sorted(Object.keys(env)), sorted(expected));
      for (const [name, value] of Object.entries({ ...POWERTOOLS, ...RUNTIME_ENV })) assert.equal(env[name], value);
    });

    test('omits unset optional settings instead of setting empty strings', () => {
      const env = functionEnvironment(s.template);

      for (const name of OPTIONAL_CONTRACT_NAMES) assert.equal(name in env, false, name);
      for (const [name, value] of Object.entries(env)) assert.notEqual(value, '', name);
    });

    test('passes the limits from cdk.json and its own timeout as whole numbers', () => {
      const env = functionEnvironment(s.template);

      assert.equal(env['DOERS_RATE_LIMIT_CALLS'], '120');
      assert.equal(env['DOERS_RATE_LIMIT_WINDOW_SECONDS'], '60');
      assert.equal(env['DOERS_MAX_CONCURRENT_CALLS'], '4');
      assert.equal(env['DOERS_AUTH_CACHE_SECONDS'], '5');
      assert.equal(env['DOERS_FUNCTION_TIMEOUT_SECONDS'], '15');
    });

    test('advertises the API default endpoint as the public URL and names its tables and secret', () => {
      const env = functionEnvironment(s.template);
      const api = onlyResource(s.template, 'AWS::ApiGatewayV2::Api');
      const secret = onlyResource(s.template, 'AWS::SecretsManager::Secret');

      assert.deepEqual(env['DOERS_PUBLIC_URL'], { 'Fn::GetAtt': [api.logicalId, 'ApiEndpoint'] });
      assert.deepEqual(env['DOERS_SECRET_ARN'], { Ref: secret.logicalId });
      assert.match(render(env['DOERS_WORKSPACE_TABLE']), /^\$\{Ref:TablesWorkspace/);
      assert.match(render(env['DOERS_LIMITS_TABLE']), /^\$\{Ref:TablesLimits/);
    });

    test('logs to a retained log group with the configured retention', () => {
      const fn = onlyResource(s.template, 'AWS::Lambda::Function');
      const logGroupRef = (fn.resource.Properties['LoggingConfig'] as { LogGroup: { Ref: string } }).LogGroup.Ref;

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

    test('give the function data-plane read/write on both tables (and their GSIs), no control plane', () => {
      const dynamo = policyStatements(s.template).filter((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')));
      const actions = new Set(dynamo.flatMap(actionsOf));
      const resources = dynamo.map((st) => render(st.Resource)).join(' ');

      for (const needed of ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'ConditionCheckItem', 'BatchGetItem', 'BatchWriteItem']) {
        assert.ok(actions.has(`dynamodb:${needed}`), needed);
      }
      for (const forbidden of ['CreateTable', 'DeleteTable', 'UpdateTable', 'UpdateTimeToLive', 'RestoreTableToPointInTime']) {
        assert.ok(!actions.has(`dynamodb:${forbidden}`), forbidden);
      }
      for (const table of ['TablesWorkspace', 'TablesLimits']) assert.match(resources, new RegExp(`\\$\\{${table}[0-9A-F]+\\.Arn\\}`));
      assert.match(resources, /\$\{TablesWorkspace[0-9A-F]+\.Arn\}\/index\/\*/);
    });

    test('let the function write its own log group only, with no AWS managed policy on its role', () => {
      const role = onlyResource(s.template, 'AWS::IAM::Role');
      const logs = policyStatements(s.template).filter((st) => actionsOf(st).some((a) => a.startsWith('logs:')));

      assert.equal(role.resource.Properties['ManagedPolicyArns'], undefined);
      assert.equal(logs.length, 1);
      assert.deepEqual(sorted(actionsOf(logs[0]!)), ['logs:CreateLogStream', 'logs:PutLogEvents']);
      assert.match(render(logs[0]!.Resource), /^\$\{FunctionLogs[0-9A-F]+\.Arn\}$/);
    });

    test('give the function read access to the secret only', () => {
      const secret = onlyResource(s.template, 'AWS::SecretsManager::Secret');
      const statements = policyStatements(s.template).filter((st) => actionsOf(st).some((a) => a.startsWith('secretsmanager:')));

      assert.equal(statements.length, 1);
      assert.deepEqual(sorted(actionsOf(statements[0]!)), ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
      assert.deepEqual(statements[0]!.Resource, { Ref: secret.logicalId });
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
        assert.equal(resource.Properties['BillingMode'], 'PAY_PER_REQUEST', id);
        assert.deepEqual(resource.Properties['TimeToLiveSpecification'], { AttributeName: 'expiresAt', Enabled: true }, id);
        assert.deepEqual(resource.Properties['PointInTimeRecoverySpecification'], { PointInTimeRecoveryEnabled: true }, id);
        // SSEEnabled without an SSEType or key: KMS with the AWS-managed key aws/dynamodb.
        assert.deepEqual(resource.Properties['SSESpecification'], { SSEEnabled: true }, id);
      }
    });

    test('take their key schema from lambda/platform/tables.ts', () => {
      const k = WORKSPACE_TABLE_KEYS;
      assert.deepEqual(table('TablesWorkspace').resource.Properties['KeySchema'], [
        { AttributeName: k.partitionKey, KeyType: 'HASH' },
        { AttributeName: k.sortKey, KeyType: 'RANGE' },
      ]);
      assert.deepEqual(table('TablesWorkspace').resource.Properties['GlobalSecondaryIndexes'], [
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
      ]);
      assert.deepEqual(table('TablesLimits').resource.Properties['KeySchema'], [
        { AttributeName: LIMITS_TABLE_KEYS.partitionKey, KeyType: 'HASH' },
      ]);
      for (const ttl of [k.ttl, LIMITS_TABLE_KEYS.ttl]) assert.equal(ttl, 'expiresAt');
    });

    test('retain the workspace table and protect it from deletion; the limits table goes with the stack', () => {
      const workspace = table('TablesWorkspace').resource;

      assert.equal(workspace.DeletionPolicy, 'Retain');
      assert.equal(workspace.Properties['DeletionProtectionEnabled'], true);
      assert.equal(table('TablesLimits').resource.DeletionPolicy, 'Delete');
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
    const dashboardBody = (): string => {
      const dashboard = onlyResource(s.template, 'AWS::CloudWatch::Dashboard');
      return render(dashboard.resource.Properties['DashboardBody']);
    };

    test('charts the four meters with SEARCH expressions over their exact dimension sets', () => {
      const body = dashboardBody();

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
      const body = dashboardBody();

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
      s.template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
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

    test('creates no SNS topic without an alarm e-mail, and the alarms notify nobody', () => {
      s.template.resourceCountIs('AWS::SNS::Topic', 0);
      for (const alarm of Object.values(s.template.findResources('AWS::CloudWatch::Alarm'))) {
        assert.equal((alarm as { Properties: Record<string, unknown> }).Properties['AlarmActions'], undefined);
      }
    });
  });

  describe('outputs', () => {
    test('carry the stable names the admin CLI reads', () => {
      const outputs = s.template.toJSON() as { Outputs: Record<string, unknown> };

      assert.deepEqual(
        sorted(Object.keys(outputs.Outputs)),
        sorted([
          STACK_OUTPUTS.mcpUrl,
          STACK_OUTPUTS.metadataUrl,
          STACK_OUTPUTS.dashboardUrl,
          STACK_OUTPUTS.workspaceTableName,
          STACK_OUTPUTS.limitsTableName,
          STACK_OUTPUTS.secretArn,
          STACK_OUTPUTS.region,
          STACK_OUTPUTS.claudeMcpAddCommand,
        ]),
      );
      assert.deepEqual(
        sorted(Object.keys(outputs.Outputs)),
        sorted(['McpUrl', 'MetadataUrl', 'DashboardUrl', 'WorkspaceTableName', 'LimitsTableName', 'SecretArn', 'Region', 'ClaudeMcpAddCommand']),
      );
    });

    test('give the MCP URL, the metadata URL, the dashboard URL and a ready claude mcp add line', () => {
      const api = onlyResource(s.template, 'AWS::ApiGatewayV2::Api');
      const endpoint = `\${${api.logicalId}.ApiEndpoint}`;
      const outputs = (s.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;
      const value = (name: string) => render(outputs[name]?.Value);

      assert.equal(value('McpUrl'), `${endpoint}/mcp`);
      assert.equal(value('MetadataUrl'), `${endpoint}/.well-known/oauth-protected-resource/mcp`);
      assert.match(value('DashboardUrl'), /^https:\/\/\$\{Ref:AWS::Region\}\.console\.aws\.amazon\.com\/cloudwatch\/home\?region=\$\{Ref:AWS::Region\}#dashboards:name=\$\{Ref:ObservabilityDashboard/);
      assert.equal(value('ClaudeMcpAddCommand'), `claude mcp add --transport http doers ${endpoint}/mcp --header "Authorization: Bearer <token>"`);
      assert.equal(value('Region'), '${Ref:AWS::Region}');
    });
  });

  test('creates no Cognito resources (JWTs are off by default)', () => {
    s.template.resourceCountIs('AWS::Cognito::UserPool', 0);
    s.template.resourceCountIs('AWS::Cognito::UserPoolClient', 0);
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

    assert.equal(env['DOERS_PUBLIC_URL'], 'https://mcp.example.com');
    assert.equal(render(outputs['McpUrl']?.Value), 'https://mcp.example.com/mcp');
    assert.equal(render(outputs['MetadataUrl']?.Value), 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    assert.equal(
      render(outputs['ClaudeMcpAddCommand']?.Value),
      'claude mcp add --transport http doers https://mcp.example.com/mcp --header "Authorization: Bearer <token>"',
    );
    assert.match(render(outputs['CustomDomainTarget']?.Value), /RegionalDomainName/);
  });

  test('sets exactly every name of the configuration contract, plus Powertools and source maps', () => {
    const env = functionEnvironment(s.template);

    assert.deepEqual(
      sorted(Object.keys(env)),
      // Everything but the scope prefix, which only an authorization server that prefixes scopes (Cognito) needs.
      sorted([...FUNCTION_ENV_NAMES.filter((n) => n !== 'DOERS_JWT_SCOPE_PREFIX'), ...Object.keys(POWERTOOLS), ...Object.keys(RUNTIME_ENV)]),
    );
  });

  test('passes the issuer, JWKS URI, audience, user claim, origins and limits through unchanged', () => {
    const env = functionEnvironment(s.template);

    assert.equal(env['DOERS_JWT_ISSUER'], 'https://login.example.com/realms/doers');
    assert.equal(env['DOERS_JWKS_URI'], 'https://login.example.com/realms/doers/protocol/openid-connect/certs');
    assert.equal(env['DOERS_JWT_AUDIENCE'], 'doers-mcp');
    assert.equal(env['DOERS_JWT_USER_CLAIM'], 'preferred_username');
    assert.equal(env['DOERS_ALLOWED_ORIGINS'], 'https://claude.ai,https://app.example.com');
    assert.equal(env['DOERS_RATE_LIMIT_CALLS'], '30');
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
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm')) as Array<{ Properties: Record<string, unknown> }>;
    assert.equal(alarms.length, 4);
    for (const alarm of alarms) {
      assert.deepEqual(alarm.Properties['AlarmActions'], [{ Ref: topic.logicalId }]);
      assert.deepEqual(alarm.Properties['OKActions'], [{ Ref: topic.logicalId }]);
    }
    assert.ok('AlarmTopicArn' in (s.template.toJSON() as { Outputs: object }).Outputs);
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

    assert.equal(render(server.resource.Properties['Identifier']), mcpUrl);
    assert.deepEqual(
      sorted((server.resource.Properties['Scopes'] as Array<{ ScopeName: string }>).map((x) => x.ScopeName)),
      sorted(Object.keys(DOERS_SCOPES)),
    );
  });

  test('registers a public client for the authorization-code flow with the claude.ai callback', () => {
    const client = onlyResource(s.template, 'AWS::Cognito::UserPoolClient');
    const p = client.resource.Properties;

    assert.equal(p['GenerateSecret'], false);
    assert.deepEqual(p['AllowedOAuthFlows'], ['code']);
    assert.equal(p['AllowedOAuthFlowsUserPoolClient'], true);
    assert.deepEqual(p['CallbackURLs'], [...CLAUDE_CALLBACK_URLS]);
    assert.deepEqual(p['SupportedIdentityProviders'], ['COGNITO']);
    // Cognito names a scope `<resource server identifier>/<name>`; the identifier is the MCP URL (tested above).
    const server = `\${Ref:${onlyResource(s.template, 'AWS::Cognito::UserPoolResourceServer').logicalId}}`;
    const scopes = (p['AllowedOAuthScopes'] as unknown[]).map(render);
    assert.deepEqual(sorted(scopes), sorted([...Object.keys(DOERS_SCOPES).map((x) => `${server}/${x}`), 'openid', 'email', 'profile']));
  });

  test('hosts managed login on a Cognito domain with a branding style for the client', () => {
    s.template.hasResourceProperties('AWS::Cognito::UserPoolDomain', { ManagedLoginVersion: 2 });
    s.template.hasResourceProperties('AWS::Cognito::ManagedLoginBranding', { UseCognitoProvidedValues: true });
    const domain = onlyResource(s.template, 'AWS::Cognito::UserPoolDomain');
    assert.match(render(domain.resource.Properties['Domain']), /^doers-\$\{Fn::Select\}$/);
  });

  test('wires issuer, JWKS URI, client-id audience and the username claim into the function', () => {
    const env = functionEnvironment(s.template);
    const pool = onlyResource(s.template, 'AWS::Cognito::UserPool');
    const client = onlyResource(s.template, 'AWS::Cognito::UserPoolClient');
    // ProviderURL is https://cognito-idp.<region>.amazonaws.com/<pool id>, the `iss` of the pool's tokens.
    const issuer = `\${${pool.logicalId}.ProviderURL}`;

    assert.equal(render(env['DOERS_JWT_ISSUER']), issuer);
    assert.equal(render(env['DOERS_JWKS_URI']), `${issuer}/.well-known/jwks.json`);
    assert.deepEqual(env['DOERS_JWT_AUDIENCE'], { Ref: client.logicalId });
    assert.equal(env['DOERS_JWT_USER_CLAIM'], 'username');
    // Cognito issues `<resource server id>/tasks:read`; the function advertises and accepts exactly that.
    assert.match(render(env['DOERS_JWT_SCOPE_PREFIX']), /\/mcp\/$/);
    assert.equal('DOERS_ALLOWED_ORIGINS' in env, false);
  });

  test('outputs the pool id, client id, login URL and the scope names as Cognito issues them', () => {
    const outputs = (s.template.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;

    for (const name of ['CognitoUserPoolId', 'CognitoClientId', 'CognitoLoginUrl', 'CognitoScopes']) assert.ok(name in outputs, name);
    const server = `\${Ref:${onlyResource(s.template, 'AWS::Cognito::UserPoolResourceServer').logicalId}}`;
    assert.equal(
      render(outputs['CognitoScopes']?.Value),
      Object.keys(DOERS_SCOPES)
        .map((x) => `${server}/${x}`)
        .join(' '),
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

    assert.equal(env['DOERS_PUBLIC_URL'], 'https://tasks.example.org');
    assert.equal(render(outputs['McpUrl']?.Value), 'https://tasks.example.org/mcp');
    s.template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
  });
});
