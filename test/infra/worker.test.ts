import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { WORKER_FUNCTION_ENV_NAMES } from '../../lambda/platform/config.js';
import {
  actionsOf,
  functionAlarms,
  functionEnvironment,
  lambdaFunction,
  render,
  resourceWithPrefix,
  rolePolicyStatements,
  type Synthesized,
  synth,
} from './synth.js';

// Long work's queue and worker (lib/worker.ts) as the default deployment makes them.

type Props = Record<string, unknown>;
const sorted = (values: Iterable<string>): string[] => [...values].sort();
const resourcesOf = (st: { readonly Resource: unknown }): string[] =>
  (Array.isArray(st.Resource) ? st.Resource : [st.Resource]).map(render);

describe('long work: the queue and its worker', () => {
  let s: Synthesized;
  before(() => {
    s = synth({}, { bundle: false });
  });

  test('the worker runs like the MCP function (Node.js 22, arm64, traced) with 15 minutes and 1,024 MB', () => {
    const mcp = lambdaFunction(s.template, 'mcp').resource.Properties;
    const worker = lambdaFunction(s.template, 'worker').resource.Properties;

    for (const key of ['Runtime', 'Architectures', 'Handler']) assert.deepEqual(worker[key], mcp[key], key);
    assert.deepEqual(worker.TracingConfig, { Mode: 'Active' });
    assert.equal(worker.Timeout, 900);
    assert.equal(worker.MemorySize, 1024);
  });

  test('the worker gets exactly its contract names, and the MCP function the queue it sends to', () => {
    const queue = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'WorkerJobs');
    const env = functionEnvironment(s.template, 'worker');

    assert.deepEqual(sorted(Object.keys(env)), sorted(WORKER_FUNCTION_ENV_NAMES));
    assert.equal(env.DOERS_FUNCTION_TIMEOUT_SECONDS, '900');
    assert.deepEqual(functionEnvironment(s.template, 'mcp').DOERS_WORK_QUEUE_URL, { Ref: queue.logicalId });
  });

  test('the queue is encrypted, TLS only, outlives a run, keeps a job a day and dead-letters it after 3 deliveries', () => {
    const queue = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'WorkerJobs').resource.Properties;
    const dead = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'WorkerDeadLetters');

    assert.equal(queue.SqsManagedSseEnabled, true);
    assert.equal(queue.VisibilityTimeout, 960);
    assert.equal(queue.MessageRetentionPeriod, 86_400);
    assert.deepEqual(queue.RedrivePolicy, { deadLetterTargetArn: { 'Fn::GetAtt': [dead.logicalId, 'Arn'] }, maxReceiveCount: 3 });
    for (const id of Object.keys(s.template.findResources('AWS::SQS::QueuePolicy')).filter((k) => k.startsWith('Worker'))) {
      const statements = (s.template.findResources('AWS::SQS::QueuePolicy')[id] as { Properties: Props }).Properties.PolicyDocument as {
        Statement: Props[];
      };
      assert.ok(statements.Statement.some((st) => st.Effect === 'Deny' && JSON.stringify(st.Condition).includes('aws:SecureTransport')));
    }
  });

  test('one job a message, failures reported per message, at most two workers at once', () => {
    const worker = lambdaFunction(s.template, 'worker').logicalId;
    const mapping = resourceWithPrefix(s.template, 'AWS::Lambda::EventSourceMapping', 'WorkerHandler').resource.Properties;

    assert.deepEqual(mapping.FunctionName, { Ref: worker });
    assert.equal(mapping.BatchSize, 1);
    assert.deepEqual(mapping.FunctionResponseTypes, ['ReportBatchItemFailures']);
    assert.deepEqual(mapping.ScalingConfig, { MaximumConcurrency: 2 });
  });

  test('the MCP function may send to the queue and nothing else of SQS; the worker reads no secret', () => {
    const queue = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'WorkerJobs');

    const sqs = rolePolicyStatements(s.template, 'mcp').filter((st) => actionsOf(st).some((a) => a.startsWith('sqs:')));
    const secrets = rolePolicyStatements(s.template, 'worker').filter((st) => actionsOf(st).some((a) => a.startsWith('secretsmanager:')));

    assert.equal(sqs.length, 1);
    assert.deepEqual(sorted(actionsOf(sqs[0]!)), ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
    assert.deepEqual(resourcesOf(sqs[0]!), [`\${${queue.logicalId}.Arn}`]);
    assert.deepEqual(secrets, []);
  });

  test('alarms on the worker failing outright and on any message in its dead-letter queue', () => {
    const dead = resourceWithPrefix(s.template, 'AWS::SQS::Queue', 'WorkerDeadLetters');
    const alarms = Object.values(s.template.findResources('AWS::CloudWatch::Alarm')).map((a) => (a as { Properties: Props }).Properties);

    const errors = functionAlarms(s.template, 'worker').Errors;
    const deadLetters = alarms.filter((a) => JSON.stringify(a.Dimensions ?? []).includes(dead.logicalId));

    assert.equal(errors?.Threshold, 1);
    assert.equal(deadLetters.length, 1);
    assert.equal(deadLetters[0]!.MetricName, 'ApproximateNumberOfMessagesVisible');
    assert.equal(deadLetters[0]!.Threshold, 1);
  });
});
