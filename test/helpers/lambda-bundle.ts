import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { build, type Metafile } from 'esbuild';
import { writeViews } from '../../lambda/views/build.js';
import { buildMcpBundle, esbuildOptionsOf } from '../../lib/build-mcp-bundle.js';
import { buildS3Files } from '../../lib/build-s3-files.js';
import { LAMBDA_FUNCTION_DEFAULTS, MCP_ENTRY, S3_FILES_OUTFILE, VIEWS_DIR } from '../../lib/bundling.js';
import { MODERN, modernMeta } from './local.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The Node 22 the `node` devDependency brings (Lambda's runtime), whichever Node runs the tests. */
export const NODE22 = existsSync(join(ROOT, 'node_modules/node/bin/node')) ? join(ROOT, 'node_modules/node/bin/node') : process.execPath;

export interface LambdaBundle {
  /** The main file, `index.mjs` as the stack names it: the handler file Lambda loads. */
  readonly file: string;
  /** Its size. */
  readonly bytes: number;
  /**
   * What a cold start loads before any of the function's code runs: the main file and the chunks it
   * imports statically (the same as `bytes` for a bundle that is not split).
   */
  readonly startBytes: number;
  /** Every JavaScript file of the bundle together, the chunks loaded on first use included. */
  readonly totalBytes: number;
  /** The bundle's JavaScript files, relative to its directory (`index.mjs`, `chunks/…`). */
  readonly files: readonly string[];
  /** Every source file that contributed to any of them. */
  readonly inputs: readonly string[];
  /** Those that contributed to what a cold start loads ({@link startBytes}). */
  readonly startInputs: readonly string[];
}

/** lib/build-mcp-bundle.ts derives them (shared with the stack's split build of the MCP function). */
export { esbuildOptionsOf };

/** What the metafile of a build into `outdir` says about its JavaScript files. */
const bundleOf = (outdir: string, metafile: Metafile): LambdaBundle => {
  const dir = relative(ROOT, outdir);
  const outputs = Object.entries(metafile.outputs).filter(([path]) => path.endsWith('.mjs'));
  const main = outputs.find(([path]) => path === join(dir, 'index.mjs'))!;
  // The main file and, transitively, what it imports statically (shared chunks).
  const start = new Set<string>();
  const visit = (path: string) => {
    if (start.has(path)) return;
    start.add(path);
    for (const i of metafile.outputs[path]!.imports) if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(main[0]);
  const sum = (paths: Iterable<string>) => [...paths].reduce((n, path) => n + metafile.outputs[path]!.bytes, 0);
  const inputsOf = (paths: Iterable<string>) => [...new Set([...paths].flatMap((path) => Object.keys(metafile.outputs[path]!.inputs)))];
  return {
    file: join(outdir, 'index.mjs'),
    bytes: main[1].bytes,
    startBytes: sum(start),
    totalBytes: sum(outputs.map(([path]) => path)),
    files: outputs.map(([path]) => relative(dir, path)).sort(),
    inputs: inputsOf(outputs.map(([path]) => path)),
    startInputs: inputsOf(start),
  };
};

/**
 * Bundles an entry exactly as the stack's functions are bundled (lib/bundling.ts, the MCP function's
 * settings unless `bundling` says otherwise) into `<outdir>/index.mjs`: the MCP function's entry
 * (lambda/handler.ts) split into chunks beside it as the stack ships it (lib/build-mcp-bundle.ts),
 * any other entry as one file, as NodejsFunction bundles it. With `views`, the MCP Apps views' HTML
 * beside it, as the MCP function's asset holds them. The bench and the bundle tests measure what
 * Lambda runs.
 */
export const bundleLambda = async (
  entry: string,
  outdir: string,
  opts: { readonly keepNames?: boolean; readonly views?: boolean; readonly s3Files?: boolean; readonly bundling?: BundlingOptions } = {},
): Promise<LambdaBundle> => {
  let metafile: Metafile;
  if (entry === MCP_ENTRY && !opts.bundling && !opts.keepNames) {
    metafile = await buildMcpBundle(entry, outdir);
  } else {
    const bundling = { ...(opts.bundling ?? LAMBDA_FUNCTION_DEFAULTS.bundling), ...(opts.keepNames ? { keepNames: true } : {}) };
    const result = await build({
      ...esbuildOptionsOf(bundling),
      absWorkingDir: ROOT,
      entryPoints: [join(ROOT, entry)],
      outfile: join(outdir, 'index.mjs'),
      bundle: true,
      metafile: true,
      logLevel: 'silent',
    });
    metafile = result.metafile;
  }
  if (opts.views) await writeViews(join(outdir, VIEWS_DIR));
  // Attachments' S3 module, beside the bundle as the stack ships it (lib/build-s3-files.ts).
  if (opts.s3Files) await buildS3Files(join(outdir, S3_FILES_OUTFILE));
  return bundleOf(outdir, metafile);
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
