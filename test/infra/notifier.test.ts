import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Table } from 'aws-cdk-lib/aws-dynamodb';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { NOTIFIER_FUNCTION_ENV_NAMES } from '../../lambda/platform/config.js';
import { ACTIVITY_PREFIX } from '../../lambda/platform/item-keys.js';
import { WORKSPACE_TABLE_KEYS } from '../../lambda/platform/tables.js';
import { NO_EMAIL_WARNING, Notifier } from '../../lib/notifier.js';
import {
  acknowledgements,
  actionsOf,
  functionAlarms,
  functionEnvironment,
  lambdaFunction,
  nagReport,
  onlyResource,
  policyStatements,
  rawFindings,
  render,
  resourceWithPrefix,
  rolePolicyStatements,
  type Synthesized,
  synth,
} from './synth.js';

type Json = unknown;
type Props = Record<string, Json>;

const sorted = (values: Iterable<string>): string[] => [...values].sort();
const resourcesOf = (st: { readonly Resource: Json }): string[] => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map(render);
const fnArn = (s: Synthesized, name: 'notifier' | 'minute'): string => `\${${lambdaFunction(s.template, name).logicalId}.Arn}`;
const workspaceTableId = (s: Synthesized): string => {
  const [id] = Object.keys(s.template.findResources('AWS::DynamoDB::Table')).filter((k) => k.startsWith('TablesWorkspace'));
  assert.ok(id);
  return id;
};
const alarms = (s: Synthesized): Props[] =>
  Object.values(s.template.findResources('AWS::CloudWatch::Alarm')).map((a) => (a as { Properties: Props }).Properties);
const sesStatements = (s: Synthesized) => policyStatements(s.template).filter((st) => actionsOf(st).some((a) => a.startsWith('ses:')));

const SENDER = 'doers@mail.example.com';
/** The SES identities of SENDER, as the template renders them. */
const IDENTITIES = [SENDER, 'mail.example.com'].map(
  (identity) => `arn:\${Ref:AWS::Partition}:ses:\${Ref:AWS::Region}:\${Ref:AWS::AccountId}:identity/${identity}`,
);

describe('the notifier (default deployment: no sender, no alarm e-mail)', () => {
  let s: Synthesized;
  before(() => {
    s = synth({}, { bundle: false });
  });

  test('the workspace table has a stream of new images; the limits table none', () => {
    const tables = s.template.findResources('AWS::DynamoDB::Table') as Record<string, { Properties: Props }>;

    assert.deepEqual(tables[workspaceTableId(s)]!.Properties.StreamSpecification, { StreamViewType: 'NEW_IMAGE' });
    for (const [id, table] of Object.entries(tables)) {
      if (id !== workspaceTableId(s)) assert.equal(table.Properties.StreamSpecification, undefined, id);
    }
  });

  test('the stream feeds the notifier only INSERTs of activity records, from the latest position, in order per shard', () => {
    // Arrange
    const mapping = resourceWithPrefix(s.template, 'AWS::Lambda::EventSourceMapping', 'Notifier').resource.Properties;

    // Act
    const filters = (mapping.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters.map((f) => JSON.parse(f.Pattern) as Json);

    // Assert
    assert.deepEqual(mapping.EventSourceArn, { 'Fn::GetAtt': [workspaceTableId(s), 'StreamArn'] });
    assert.deepEqual(mapping.FunctionName, { Ref: lambdaFunction(s.template, 'notifier').logicalId });
    assert.deepEqual(filters, [
      { eventName: ['INSERT'], dynamodb: { Keys: { [WORKSPACE_TABLE_KEYS.sortKey]: { S: [{ prefix: ACTIVITY_PREFIX }] } } } },
    ]);
    assert.equal(ACTIVITY_PREFIX, 'ACT#');
    assert.equal(mapping.StartingPosition, 'LATEST');
    assert.equal(mapping.ParallelizationFactor, 1);
    assert.equal(mapping.BatchSize, 10);
  });

  test('reports partial batch failures, bisects a failing batch, retries it 5 times for at most a day, then dead-letters it', () => {
    const mapping = resourceWithPrefix(s.template, 'AWS::Lambda::EventSourceMapping', 'Notifier').resource.Properties;
    const queue = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'NotifierDeadLetters');

    assert.deepEqual(mapping.FunctionResponseTypes, ['ReportBatchItemFailures']);
    assert.equal(mapping.BisectBatchOnFunctionError, true);
    assert.equal(mapping.MaximumRetryAttempts, 5);
    assert.equal(mapping.MaximumRecordAgeInSeconds, 24 * 3600);
    assert.deepEqual(mapping.DestinationConfig, { OnFailure: { Destination: { 'Fn::GetAtt': [queue.logicalId, 'Arn'] } } });
  });

  test('the dead-letter queue is encrypted, refuses plain HTTP and keeps a message 14 days', () => {
    const queue = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'NotifierDeadLetters');

    assert.equal(queue.resource.Properties.SqsManagedSseEnabled, true);
    assert.equal(queue.resource.Properties.MessageRetentionPeriod, 14 * 24 * 3600);
    s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: queue.logicalId }],
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
  });

  test('an EventBridge rule runs the minute function every minute; a failed run is not retried by Lambda', () => {
    // Arrange
    const rule = onlyResource(s.template, 'AWS::Events::Rule');
    const permissions = Object.values(s.template.findResources('AWS::Lambda::Permission')).map(
      (p) => (p as { Properties: Props }).Properties,
    );

    // Act
    const targets = rule.resource.Properties.Targets as Array<{ Arn: Json; RetryPolicy: Json }>;
    const fromEvents = permissions.filter((p) => p.Principal === 'events.amazonaws.com');

    // Assert
    assert.equal(rule.resource.Properties.ScheduleExpression, 'rate(1 minute)');
    assert.equal(rule.resource.Properties.State, 'ENABLED');
    assert.equal(targets.length, 1);
    assert.equal(render(targets[0]!.Arn), fnArn(s, 'minute'));
    assert.deepEqual(targets[0]!.RetryPolicy, { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 120 });
    assert.equal(fromEvents.length, 1);
    assert.equal(render(fromEvents[0]!.FunctionName), fnArn(s, 'minute'));
    assert.equal(render(fromEvents[0]!.SourceArn), `\${${rule.logicalId}.Arn}`);
    s.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: lambdaFunction(s.template, 'minute').logicalId },
      MaximumRetryAttempts: 0,
    });
  });

  test('both functions run like the MCP one (Node.js 22, arm64, ES module) with active tracing, 256 MB, 60 s and 50 s', () => {
    const mcp = lambdaFunction(s.template, 'mcp').resource.Properties;

    for (const [name, timeout] of [
      ['notifier', 60],
      ['minute', 50],
    ] as const) {
      const p = lambdaFunction(s.template, name).resource.Properties;
      for (const key of ['Runtime', 'Architectures', 'Handler']) assert.deepEqual(p[key], mcp[key], `${name} ${key}`);
      assert.deepEqual(p.TracingConfig, { Mode: 'Active' }, name);
      assert.equal(p.MemorySize, 256, name);
      assert.equal(p.Timeout, timeout, name);
    }
  });

  test('both functions get exactly the notifier contract names that have a value: no sender, no DOERS_EMAIL_FROM', () => {
    for (const name of ['notifier', 'minute'] as const) {
      const env = functionEnvironment(s.template, name);
      assert.deepEqual(sorted(Object.keys(env)), sorted(NOTIFIER_FUNCTION_ENV_NAMES.filter((n) => n !== 'DOERS_EMAIL_FROM')), name);
      assert.equal(env.DOERS_ACTIVITY_DAYS, '90', name);
      assert.match(render(env.DOERS_WORKSPACE_TABLE), /^\$\{Ref:TablesWorkspace/, name);
      assert.match(render(env.DOERS_PUBLIC_URL), /ApiEndpoint/, name);
    }
    assert.equal('DOERS_EMAIL_FROM' in functionEnvironment(s.template, 'mcp'), false);
  });

  test('grants no SES action to anyone without a sender', () => {
    assert.deepEqual(sesStatements(s), []);
  });

  test('lets the notifier read the stream (records on the stream ARN only) and send to its dead-letter queue', () => {
    // Arrange
    const queue = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'NotifierDeadLetters');
    const statements = rolePolicyStatements(s.template, 'notifier');

    // Act
    const stream = statements.filter(
      (st) => actionsOf(st).includes('dynamodb:GetRecords') && resourcesOf(st).some((r) => r.endsWith('.StreamArn}')),
    );
    const sqs = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('sqs:')));

    // Assert
    assert.equal(stream.length, 1);
    assert.deepEqual(sorted(actionsOf(stream[0]!)), ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator']);
    assert.deepEqual(resourcesOf(stream[0]!), [`\${${workspaceTableId(s)}.StreamArn}`]);
    assert.equal(sqs.length, 1);
    assert.ok(actionsOf(sqs[0]!).includes('sqs:SendMessage'));
    assert.deepEqual(resourcesOf(sqs[0]!), [`\${${queue.logicalId}.Arn}`]);
    // The one action on every resource besides X-Ray's: listing streams, which IAM scopes no narrower.
    const onEverything = statements.filter((st) => resourcesOf(st).includes('*')).flatMap(actionsOf);
    assert.deepEqual(sorted(onEverything), ['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
  });

  test('gives both functions data-plane read/write on the workspace table only, the minute function neither stream nor queue', () => {
    for (const name of ['notifier', 'minute'] as const) {
      const statements = rolePolicyStatements(s.template, name);
      const put = statements.filter((st) => actionsOf(st).includes('dynamodb:PutItem'));
      assert.equal(put.length, 1, name);
      for (const r of resourcesOf(put[0]!)) assert.match(r, /^\$\{TablesWorkspace[0-9A-F]+\.Arn\}(\/index\/\*)?$/, name);
      const actions = statements.flatMap(actionsOf);
      for (const forbidden of [
        'dynamodb:CreateTable',
        'dynamodb:DeleteTable',
        'dynamodb:UpdateTable',
        'secretsmanager:GetSecretValue',
        's3:GetObject',
      ]) {
        assert.ok(!actions.includes(forbidden), `${name}: ${forbidden}`);
      }
    }
    const minute = rolePolicyStatements(s.template, 'minute');
    assert.ok(!minute.some((st) => resourcesOf(st).some((r) => r.endsWith('.StreamArn}'))));
    assert.ok(!minute.flatMap(actionsOf).some((a) => a.startsWith('sqs:') || a === 'dynamodb:ListStreams'));
  });

  test('warns at synth that e-mail is off, naming the context key and SES', () => {
    const warnings = Annotations.fromStack(s.stack).findWarning('*', Match.stringLikeRegexp(NO_EMAIL_WARNING));

    assert.equal(warnings.length, 1);
    assert.match(String(warnings[0]!.entry.data), /E-mail is off/);
    assert.match(String(warnings[0]!.entry.data), /-c doers:emailFrom=/);
    assert.match(String(warnings[0]!.entry.data), /verify an address \(or its domain\) in Amazon SES/);
  });

  test("alarms on each function's errors and on the stream's iterator age above 5 minutes", () => {
    // Arrange
    const once = {
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    };

    // Act
    const notifier = functionAlarms(s.template, 'notifier');
    const minute = functionAlarms(s.template, 'minute');

    // Assert
    assert.deepEqual(sorted(Object.keys(notifier)), ['Errors', 'IteratorAge']);
    assert.deepEqual(sorted(Object.keys(minute)), ['Errors']);
    for (const errors of [notifier.Errors, minute.Errors]) {
      assert.deepEqual(Object.fromEntries(Object.keys(once).map((k) => [k, errors?.[k]])), once);
    }
    const age = notifier.IteratorAge!;
    assert.equal(age.Statistic, 'Maximum');
    assert.equal(age.Threshold, 5 * 60 * 1000);
    assert.equal(age.ComparisonOperator, 'GreaterThanThreshold');
    assert.equal(age.EvaluationPeriods, 3);
    assert.equal(age.DatapointsToAlarm, 2);
  });

  test('alarms as soon as one record is in the dead-letter queue', () => {
    const queue = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'NotifierDeadLetters');

    // The worker's dead-letter queue has its own (test/infra/worker.test.ts).
    const deadLetters = alarms(s).filter((a) => a.Namespace === 'AWS/SQS' && JSON.stringify(a.Dimensions).includes(queue.logicalId));

    assert.equal(deadLetters.length, 1);
    const alarm = deadLetters[0]!;
    assert.equal(alarm.MetricName, 'ApproximateNumberOfMessagesVisible');
    assert.deepEqual(alarm.Dimensions, [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue.logicalId, 'QueueName'] } }]);
    assert.equal(alarm.Statistic, 'Maximum');
    assert.equal(alarm.Threshold, 1);
    assert.equal(alarm.ComparisonOperator, 'GreaterThanOrEqualToThreshold');
    assert.equal(alarm.EvaluationPeriods, 1);
    assert.match(String(alarm.AlarmDescription), /dead-letter queue/);
  });

  test("charts the notifier's row on the dashboard: both functions, iterator age against its alarm, dead letters", () => {
    const body = render(onlyResource(s.template, 'AWS::CloudWatch::Dashboard').resource.Properties.DashboardBody);
    const notifier = lambdaFunction(s.template, 'notifier').logicalId;
    const minute = lambdaFunction(s.template, 'minute').logicalId;

    assert.match(body, /"markdown":"## Notifications: the notifier/);
    assert.ok(body.includes(`"AWS/Lambda","IteratorAge","FunctionName","\${Ref:${notifier}}"`));
    assert.ok(body.includes(`"AWS/Lambda","Errors","FunctionName","\${Ref:${minute}}"`));
    assert.ok(body.includes('"AWS/SQS","ApproximateNumberOfMessagesVisible"'));
    assert.match(body, /\{"value":300000,"label":"iterator age alarm","yAxis":"left"\}/);
  });
});

describe('the notifier with a sender and an alarm e-mail', () => {
  const context = { 'doers:emailFrom': SENDER, 'doers:alarmEmail': 'ops@example.com' };
  let s: Synthesized;
  before(() => {
    s = synth(context, { bundle: false });
  });

  test('lets both functions call ses:SendEmail on the identities of the address and of its domain, nothing else of SES', () => {
    // Arrange
    const byRole = (['notifier', 'minute'] as const).map((name) =>
      rolePolicyStatements(s.template, name).filter((st) => actionsOf(st).some((a) => a.startsWith('ses:'))),
    );

    // Act / Assert: the two roles' statements are all the SES statements of the template.
    assert.equal(sesStatements(s).length, 2);
    for (const statements of byRole) {
      assert.equal(statements.length, 1);
      assert.equal(statements[0]!.Effect, 'Allow');
      assert.deepEqual(actionsOf(statements[0]!), ['ses:SendEmail']);
      assert.deepEqual(sorted(resourcesOf(statements[0]!)), sorted(IDENTITIES));
    }
    assert.deepEqual(
      rolePolicyStatements(s.template, 'mcp').filter((st) => actionsOf(st).some((a) => a.startsWith('ses:'))),
      [],
    );
  });

  test('tells all three functions the sender; the notifier functions get exactly the notifier contract names', () => {
    for (const name of ['notifier', 'minute'] as const) {
      const env = functionEnvironment(s.template, name);
      assert.deepEqual(sorted(Object.keys(env)), sorted(NOTIFIER_FUNCTION_ENV_NAMES), name);
      assert.equal(env.DOERS_EMAIL_FROM, SENDER, name);
    }
    assert.equal(functionEnvironment(s.template, 'mcp').DOERS_EMAIL_FROM, SENDER);
  });

  test('carries no warning that e-mail is off', () => {
    assert.deepEqual(Annotations.fromStack(s.stack).findWarning('*', Match.stringLikeRegexp(NO_EMAIL_WARNING)), []);
  });

  test("mails the notifier's four alarms through the same topic as the others", () => {
    const topic = onlyResource(s.template, 'AWS::SNS::Topic');
    const notifierAlarms = alarms(s).filter((a) => /notifier|minute function/.test(String(a.AlarmDescription)));

    assert.equal(alarms(s).length, 13);
    assert.equal(notifierAlarms.length, 4);
    for (const alarm of alarms(s)) {
      assert.deepEqual(alarm.AlarmActions, [{ Ref: topic.logicalId }]);
      assert.deepEqual(alarm.OKActions, [{ Ref: topic.logicalId }]);
    }
  });

  test('reports no AwsSolutions finding that is not acknowledged, and acknowledges exactly the ones raised', () => {
    // Arrange
    const report = nagReport(s.app);
    const raised = rawFindings(context);

    // Act
    const notifierAcks = acknowledgements(s.app)
      .filter((a) => a.path.startsWith(`${s.stack.node.path}/Notifier`))
      .map((a) => ({ ...a, id: a.id.replace(/^Annotation::/, '') }));

    // Assert
    assert.deepEqual(
      report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
      [],
    );
    assert.deepEqual(sorted(new Set(acknowledgements(s.app).map((a) => a.id.replace(/^Annotation::/, '')))), sorted(new Set(raised)));
    // The queue's: a dead-letter queue the check does not recognise as one.
    assert.deepEqual(
      notifierAcks.filter((a) => a.id === 'AwsSolutions-SQS3').map((a) => a.path),
      [`${s.stack.node.path}/Notifier/DeadLetters`],
    );
    for (const ack of notifierAcks) assert.ok(String(ack.reason).length >= 40, `${ack.id} at ${ack.path}`);
    assert.ok(notifierAcks.some((a) => a.id === 'AwsSolutions-IAM5[Resource::*]' && /dynamodb:ListStreams/.test(String(a.reason))));
  });
});

describe('the Notifier construct', () => {
  test('refuses a workspace table without a stream', () => {
    const stack = new Stack(new App(), 'Bare');
    const table = Table.fromTableName(stack, 'Adopted', 'doers-restored');

    assert.throws(
      () =>
        new Notifier(stack, 'Notifier', {
          workspaceTable: table,
          publicUrl: 'https://mcp.example.com',
          activityDays: 90,
          logRetention: RetentionDays.ONE_MONTH,
        }),
      /needs a workspace table with a stream/,
    );
  });
});
