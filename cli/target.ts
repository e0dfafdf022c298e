import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { FileStore } from '../lambda/files/file-store.js';
import { createS3Files } from '../lambda/files/s3-files.js';
import { DEMO_WORKSPACE_ID, LOCAL_SERVER_FILE, type LocalServerFile } from '../lambda/local/local-data.js';
import { loadConfig } from '../lambda/platform/config.js';
import { createDocumentClient } from '../lambda/platform/dynamodb.js';
import { dataDirKeySource, type KeySource, secretsManagerKeySource } from '../lambda/platform/key-ring.js';
import { createWorkspaceStores } from '../lambda/workspace/store/create-stores.js';
import type { WorkspaceStores } from '../lambda/workspace/store/stores.js';
import { CliError, usage } from './errors.js';

export const DEPLOYED_DEFAULT_WORKSPACE = 'ws_main';

/** The Cognito user pool people sign in with at the built-in authorization server. */
export interface SignInPool {
  readonly userPoolId: string;
  readonly cognito: CognitoIdentityProviderClient;
}

/**
 * What the commands work on: the stores of one workspace table, local or deployed, wired as the
 * functions wire them (their write side the writers', which the commands call).
 */
export interface Target extends WorkspaceStores {
  readonly defaultWorkspace: string;
  readonly where: string;
  readonly db: DynamoDBDocumentClient;
  readonly table: string;
  /** The key ring and the activity's retention: what the workspace's own stores are made with (lambda/workspace/transfer/import-tasks.ts). */
  readonly keys: KeySource;
  readonly activityDays: number;
  /** Only on a stack with the `SignInUserPoolId` output. */
  readonly signInPool?: SignInPool;
  /** Attachments' bytes (the stack's bucket, the local server's S3 API); absent where there is none to reach. */
  readonly bucket?: FileStore;
}

const stackOutputs = async (stack: string, region: string): Promise<Record<string, string>> => {
  const cfn = new CloudFormationClient({ region });
  try {
    const out = await cfn.send(new DescribeStacksCommand({ StackName: stack }));
    const outputs = out.Stacks?.[0]?.Outputs ?? [];
    return Object.fromEntries(outputs.flatMap((o) => (o.OutputKey && o.OutputValue ? [[o.OutputKey, o.OutputValue]] : [])));
  } catch (err) {
    throw new CliError(`--stack: cannot read the outputs of stack "${stack}" in ${region}: ${(err as Error).message}`);
  } finally {
    cfn.destroy();
  }
};

const stores = (
  db: DynamoDBDocumentClient,
  table: string,
  keys: KeySource,
  activityDays: number,
  defaultWorkspace: string,
  where: string,
  signInPool?: SignInPool,
  files?: FileStore,
): Target => ({
  ...createWorkspaceStores(db, table, keys, activityDays),
  defaultWorkspace,
  where,
  db,
  table,
  keys,
  activityDays,
  ...(signInPool ? { signInPool } : {}),
  ...(files ? { bucket: files } : {}),
});

/**
 * A deployed stack (its CloudFormation outputs and your AWS credentials), or the running local
 * server's data (the file it leaves in DOERS_DATA_DIR).
 */
export const connect = async (
  stack: string | undefined,
  region: string | undefined,
  env: Record<string, string | undefined>,
): Promise<Target> => {
  const config = loadConfig(env);
  if (stack !== undefined) {
    const r = region ?? config.region;
    if (!r) throw usage('--region: required with --stack (or set AWS_REGION)');
    const outputs = await stackOutputs(stack, r);
    const table = outputs.WorkspaceTableName;
    const secretArn = outputs.SecretArn;
    if (!table || !secretArn)
      throw new CliError(`--stack: stack "${stack}" has no WorkspaceTableName/SecretArn outputs; is it a doers stack?`);
    const stackRegion = outputs.Region ?? r;
    const db = createDocumentClient({ region: stackRegion });
    const keys: KeySource = secretsManagerKeySource(new SecretsManagerClient({ region: stackRegion }), secretArn);
    const userPoolId = outputs.SignInUserPoolId;
    const signInPool = userPoolId ? { userPoolId, cognito: new CognitoIdentityProviderClient({ region: stackRegion }) } : undefined;
    // The stack's retention (its output), so records the CLI writes last as long as the functions' do.
    const activityDays = Number(outputs.ActivityDays ?? config.activityDays);
    const bucket = outputs.AttachmentsBucketName;
    const files = bucket ? createS3Files({ bucket, region: stackRegion }).store : undefined;
    return stores(db, table, keys, activityDays, DEPLOYED_DEFAULT_WORKSPACE, `stack ${stack} (${stackRegion})`, signInPool, files);
  }
  if (region !== undefined) throw usage('--region: only meaningful with --stack');
  const file = join(config.dataDir, LOCAL_SERVER_FILE);
  let local: Partial<LocalServerFile>;
  try {
    local = JSON.parse(await readFile(file, 'utf8')) as Partial<LocalServerFile>;
  } catch {
    throw new CliError(
      `No local server data at ${file}: start the local server (npm start) with the same DOERS_DATA_DIR, or pass --stack NAME --region R`,
    );
  }
  if (!local.dynamodbEndpoint || !local.tables?.workspace) throw new CliError(`${file} is not a local server file`);
  const db = createDocumentClient({ endpoint: local.dynamodbEndpoint });
  return stores(
    db,
    local.tables.workspace,
    dataDirKeySource(config.dataDir),
    config.activityDays,
    DEMO_WORKSPACE_ID,
    `local server data (${local.dynamodbEndpoint})`,
    undefined,
    local.files ? createS3Files({ bucket: local.files.bucket, endpoint: local.files.endpoint }).store : undefined,
  );
};
