import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { writeViews } from '../../lambda/views/build.js';
import { buildS3Files } from '../../lib/build-s3-files.js';
import { LAMBDA_FUNCTION_DEFAULTS, S3_FILES_OUTFILE, VIEWS_DIR } from '../../lib/bundling.js';
import { MODERN, modernMeta } from './local.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The Node 22 the `node` devDependency brings (Lambda's runtime), whichever Node runs the tests. */
export const NODE22 = existsSync(join(ROOT, 'node_modules/node/bin/node')) ? join(ROOT, 'node_modules/node/bin/node') : process.execPath;

export interface LambdaBundle {
  /** The main file, `index.mjs` as the stack names it. */
  readonly file: string;
  readonly bytes: number;
  /** Every source file that contributed to the main file. */
  readonly inputs: readonly string[];
}

/**
 * The esbuild options NodejsFunction derives from `bundling` (the command it runs is
 * `esbuild --bundle <entry> --target --platform --format --outfile=index.mjs --minify --sourcemap
 * --sources-content --main-fields --banner:js` plus `esbuildArgs`), so a change to lib/bundling.ts
 * reaches the tests and the bench by itself. A setting this does not know fails here instead of being
 * left out; test/e2e/lambda-bundle.test.ts compares the result with the stack's asset byte for byte.
 */
export const esbuildOptionsOf = (bundling: BundlingOptions): BuildOptions => {
  const known = new Set([
    'format',
    'target',
    'platform',
    'minify',
    'sourceMap',
    'sourcesContent',
    'mainFields',
    'banner',
    'esbuildArgs',
    'bundleAwsSDK',
    'keepNames',
    'commandHooks',
  ]);
  const unknown = Object.keys(bundling).filter((k) => !known.has(k));
  if (unknown.length) throw new Error(`test/helpers/lambda-bundle.ts does not know the bundling setting(s) ${unknown.join(', ')}`);
  const args = { ...bundling.esbuildArgs };
  const aliases = args['--alias'];
  delete args['--alias'];
  if (Object.keys(args).length)
    throw new Error(`test/helpers/lambda-bundle.ts does not know the esbuild argument(s) ${Object.keys(args).join(', ')}`);
  return {
    format: bundling.format as BuildOptions['format'],
    target: bundling.target,
    platform: 'node',
    minify: bundling.minify ?? false,
    keepNames: bundling.keepNames ?? false,
    sourcemap: bundling.sourceMap ?? false,
    sourcesContent: bundling.sourcesContent ?? true,
    ...(bundling.mainFields ? { mainFields: [...bundling.mainFields] } : {}),
    ...(bundling.banner ? { banner: { js: bundling.banner } } : {}),
    // bundleAwsSDK: true, so nothing is external (the stack passes no --external either).
    alias: Object.fromEntries(
      [aliases ?? []].flat().map((a) => {
        const at = String(a).indexOf('=');
        return [String(a).slice(0, at), String(a).slice(at + 1)];
      }),
    ),
  };
};

/**
 * Bundles an entry exactly as the stack's functions are bundled (lib/bundling.ts, the MCP function's
 * settings unless `bundling` says otherwise) into `<outdir>/index.mjs`; with `views`, the MCP Apps
 * views' HTML beside it, as the MCP function's asset holds them. The bench and the bundle tests
 * measure what Lambda runs.
 */
export const bundleLambda = async (
  entry: string,
  outdir: string,
  opts: { readonly keepNames?: boolean; readonly views?: boolean; readonly s3Files?: boolean; readonly bundling?: BundlingOptions } = {},
): Promise<LambdaBundle> => {
  const bundling = { ...(opts.bundling ?? LAMBDA_FUNCTION_DEFAULTS.bundling), ...(opts.keepNames ? { keepNames: true } : {}) };
  const file = join(outdir, 'index.mjs');
  const result = await build({
    ...esbuildOptionsOf(bundling),
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, entry)],
    outfile: file,
    bundle: true,
    metafile: true,
    logLevel: 'silent',
  });
  if (opts.views) await writeViews(join(outdir, VIEWS_DIR));
  // Attachments' S3 module, beside the bundle as the stack ships it (lib/build-s3-files.ts).
  if (opts.s3Files) await buildS3Files(join(outdir, S3_FILES_OUTFILE));
  const output = Object.values(result.metafile.outputs as Metafile['outputs']).find((o) => o.entryPoint !== undefined)!;
  return { file, bytes: (await stat(file)).size, inputs: Object.keys(output.inputs) };
};

/** What Lambda gives the function, pointed at loopback stand-ins through the SDK's own endpoint settings. */
export const lambdaEnv = (opts: {
  readonly dynamodbEndpoint: string;
  readonly secretsManagerUrl: string;
  readonly env?: Record<string, string>;
}): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: BUNDLE_ACCESS_KEY,
  AWS_SECRET_ACCESS_KEY: 'bundle-secret-key',
  AWS_SESSION_TOKEN: 'bundle-session-token',
  AWS_ENDPOINT_URL_DYNAMODB: opts.dynamodbEndpoint,
  AWS_ENDPOINT_URL_SECRETS_MANAGER: opts.secretsManagerUrl,
  DOERS_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:doers',
  DOERS_PUBLIC_URL: 'https://doers.example',
  ...opts.env,
});

/** The role's access key in {@link lambdaEnv}: requests signed with it prove where credentials came from. */
export const BUNDLE_ACCESS_KEY = 'AKIDBUNDLETEST';

export interface BundleAnswer {
  readonly res: { readonly statusCode: number; readonly headers: Record<string, string>; readonly body: string };
  /** From process start to the answer, as `performance.now()` counts it. */
  readonly ms: number;
  /** Whether importing and answering loaded Node's internal undici. */
  readonly undici: boolean;
}

const DRIVER = `
const { handler } = await import(process.argv[2]);
const res = await handler(JSON.parse(process.argv[3]), { awsRequestId: 'bundle', getRemainingTimeInMillis: () => 15000, callbackWaitsForEmptyEventLoop: true });
const ms = performance.now();
// A pipe takes large writes asynchronously: exit once the answer is out, not before.
process.stdout.write(JSON.stringify({ res, ms, undici: process.moduleLoadList.some((m) => m.includes('undici')) }) + '\\n', () => process.exit(0));
`;

/**
 * A cold start: a fresh Node process (`node`, this one's by default) imports the bundle's `handler`
 * and answers one API Gateway event.
 */
export const invokeFresh = async (
  bundle: LambdaBundle,
  event: unknown,
  env: Record<string, string>,
  node = process.execPath,
): Promise<BundleAnswer> => {
  const driver = join(dirname(bundle.file), 'driver.mjs');
  await writeFile(driver, DRIVER);
  return new Promise((ok, fail) => {
    const child = spawn(node, [driver, bundle.file, JSON.stringify(event)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill(), 30_000);
    child.once('exit', () => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('{"res"'));
      if (line) ok(JSON.parse(line) as BundleAnswer);
      else fail(new Error(`the bundle did not answer: ${err}`));
    });
  });
};

const SERVING_DRIVER = `
import { createInterface } from 'node:readline';
const { handler } = await import(process.argv[2]);
for await (const line of createInterface({ input: process.stdin })) {
  const res = await handler(JSON.parse(line), { awsRequestId: 'bundle', getRemainingTimeInMillis: () => 15000, callbackWaitsForEmptyEventLoop: true });
  console.log(JSON.stringify({ res, ms: performance.now(), undici: process.moduleLoadList.some((m) => m.includes('undici')) }));
}
`;

/**
 * One instance that stays up: a fresh Node process imports the bundle, then answers events one at a
 * time, so a test can change the world (a dependency failing, then back) between two of them.
 */
export const startInstance = async (bundle: LambdaBundle, env: Record<string, string>, node = process.execPath) => {
  const driver = join(dirname(bundle.file), 'serving-driver.mjs');
  await writeFile(driver, SERVING_DRIVER);
  const child = spawn(node, [driver, bundle.file], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const waiting: { ok: (answer: BundleAnswer) => void; fail: (err: Error) => void }[] = [];
  /** What the function logged (every stdout line that is not an answer), the last 200. */
  const logs: string[] = [];
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (line.startsWith('{"res"')) waiting.shift()?.ok(JSON.parse(line) as BundleAnswer);
      else if (logs.push(line) > 200) logs.shift();
    }
  });
  // Read, or a chatty instance would stop once the pipe is full; the tail says why one died.
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  child.once('exit', (code, signal) => {
    for (const w of waiting.splice(0)) w.fail(new Error(`the instance exited (${code ?? signal}) before it answered: ${err}`));
  });
  return {
    logs,
    invoke: (event: unknown): Promise<BundleAnswer> =>
      new Promise((ok, fail) => {
        if (child.exitCode !== null || child.signalCode !== null) return fail(new Error(`the instance has exited: ${err}`));
        waiting.push({ ok, fail });
        child.stdin.write(`${JSON.stringify(event)}\n`);
      }),
    close: () => {
      child.kill();
    },
  };
};

/**
 * An API Gateway (payload v2) event for one MCP request: 2026-07-28 (with its headers and `_meta`)
 * unless `legacy` names a handshake-era revision. `host` is the public URL's (lambdaEnv's by default).
 */
export const mcpEvent = (
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  /** `query`: the URL's (every tool group unless given; '' is the bare `/mcp`, the default groups). */
  opts: { readonly legacy?: string; readonly host?: string; readonly query?: string } = {},
) => {
  const name = method === 'resources/read' ? params.uri : method === 'tools/call' || method === 'prompts/get' ? params.name : undefined;
  return {
    version: '2.0',
    rawPath: '/mcp',
    rawQueryString: opts.query ?? 'tools=all',
    headers: {
      host: opts.host ?? 'doers.example',
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': opts.legacy ?? MODERN,
      ...(opts.legacy ? {} : { 'mcp-method': method, ...(typeof name === 'string' ? { 'mcp-name': name } : {}) }),
    },
    requestContext: { http: { method: 'POST', path: '/mcp', sourceIp: '203.0.113.9' }, requestId: 'bundle' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: opts.legacy ? params : { ...params, _meta: modernMeta() } }),
    isBase64Encoded: false,
  };
};

/** An API Gateway (payload v2) event for one 2026-07-28 `resources/read`. */
export const resourceReadEvent = (token: string, uri: string) => mcpEvent(token, 'resources/read', { uri });

/** An API Gateway (payload v2) event for one 2026-07-28 `tools/call`. */
export const toolCallEvent = (token: string, name: string, args: Record<string, unknown> = {}) =>
  mcpEvent(token, 'tools/call', { name, arguments: args });
