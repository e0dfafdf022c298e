import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { localDeployment, templateEnvironment } from '../helpers/deployed.js';
import { bundleLambda, invokeFresh, type LambdaBundle, lambdaEnv, NODE22 } from '../helpers/lambda-bundle.js';
import { MODERN, modernMeta, post, startTestServer, urlOf } from '../helpers/local.js';
import { caller, createTestWorkspace, type TestWorkspace } from '../helpers/workspace-fixtures.js';

// The worker of long work as the stack deploys it (lib/worker.ts): its own bundle, with the S3 module
// beside it, run by Node 22 in a fresh process with the template's environment, handed one SQS
// message of a job the MCP side started (the local server's worker held, so only the bundle runs it).

const TASKS = 'io.modelcontextprotocol/tasks';

let server: LocalServer;
let ws: TestWorkspace;
let work: string;
let bundle: LambdaBundle;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'doers-worker-'));
  [server, bundle] = await Promise.all([
    startTestServer({ DOERS_RATE_LIMIT_CALLS: '0', DOERS_MAX_CONCURRENT_CALLS: '0' }, { demo: false, workHeld: true }),
    bundleLambda('lambda/worker-handler.ts', join(work, 'bundle'), { s3Files: true }),
  ]);
  ws = await createTestWorkspace(server);
});
after(async () => {
  await server?.close();
  await rm(work, { recursive: true, force: true });
});

const request = (method: string, params: Record<string, unknown>) =>
  post(
    urlOf(server),
    {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: modernMeta({ 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } }) },
    },
    {
      authorization: `Bearer ${ws.owner.token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      'mcp-name': String(params.name ?? params.taskId ?? params.uri),
    },
  );

describe('the worker bundle, as deployed', () => {
  test('runs a workspace_export job from its SQS message: the export lands in S3 as an attachment the MCP side reads', async () => {
    // Arrange: a job the MCP side started and did not run
    const holder = (await caller(server, ws.owner.token)('task_create', { title: 'holds the export' })).structuredContent as {
      key: string;
    };
    const started = await request('tools/call', { name: 'workspace_export', arguments: { taskId: holder.key } });
    const taskId = started.json.result.taskId as string;
    const env = lambdaEnv({
      dynamodbEndpoint: server.dynamodbEndpoint,
      // The worker reads no secret: nothing listens here.
      secretsManagerUrl: 'http://127.0.0.1:9',
      env: {
        ...templateEnvironment(localDeployment(server), 'worker'),
        DOERS_S3_ENDPOINT: server.s3Endpoint,
      },
    });
    const event = { Records: [{ messageId: 'm1', body: JSON.stringify({ workspaceId: ws.workspaceId, jobId: taskId }) }] };

    // Act
    const answer = await invokeFresh(bundle, event, env, NODE22);
    const task = (await request('tasks/get', { taskId })).json.result;

    // Assert: no message handed back; the task completed with the export, which reads back
    assert.deepEqual(answer.res, { batchItemFailures: [] });
    assert.equal(task.status, 'completed', JSON.stringify(task));
    const uri = task.result.structuredContent.uri as string;
    const read = await request('resources/read', { uri });
    const [header] = (read.json.result.contents[0].text as string).split('\n');
    assert.equal(JSON.parse(header!).workspaceId, ws.workspaceId);
  });
});
