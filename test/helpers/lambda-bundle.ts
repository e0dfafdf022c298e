import { spawn } from 'node:child_process';
import { stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { writeViews } from '../../lambda/views/build.js';
import { BUNDLE_ALIASES, ESM_REQUIRE_BANNER, VIEWS_DIR } from '../../lib/bundling.js';
import { MODERN, modernMeta } from './local.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface LambdaBundle {
  /** The main file, `<entry name>.mjs`. */
  readonly file: string;
  readonly bytes: number;
  /** Every source file that contributed to the main file. */
  readonly inputs: readonly string[];
}

/**
 * Bundles an entry exactly as the stack's `McpFunction` does (lib/mcp-function.ts): minified ESM for
 * Node 22, packages' ESM builds first, the `require` banner, the bundle aliases, a source map without
 * sources; with `views`, the MCP Apps views' HTML beside it, as the MCP function's asset holds them.
 * The bench and the bundle test measure what Lambda runs.
 */
export const bundleLambda = async (
  entry: string,
  outdir: string,
  opts: { readonly keepNames?: boolean; readonly views?: boolean } = {},
): Promise<LambdaBundle> => {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, entry)],
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: true,
    keepNames: opts.keepNames ?? false,
    sourcemap: true,
    sourcesContent: false,
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    alias: { ...BUNDLE_ALIASES },
    outExtension: { '.js': '.mjs' },
    metafile: true,
    logLevel: 'silent',
  });
  if (opts.views) await writeViews(join(outdir, VIEWS_DIR));
  const file = join(outdir, basename(entry).replace(/\.ts$/, '.mjs'));
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
console.log(JSON.stringify({ res, ms, undici: process.moduleLoadList.some((m) => m.includes('undici')) }));
process.exit(0);
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
  const waiting: ((answer: BundleAnswer) => void)[] = [];
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (line.startsWith('{"res"')) waiting.shift()?.(JSON.parse(line) as BundleAnswer);
    }
  });
  return {
    invoke: (event: unknown): Promise<BundleAnswer> =>
      new Promise((ok) => {
        waiting.push(ok);
        child.stdin.write(`${JSON.stringify(event)}\n`);
      }),
    close: () => {
      child.kill();
    },
  };
};

/** An API Gateway (payload v2) event for one 2026-07-28 `resources/read`. */
export const resourceReadEvent = (token: string, uri: string) => {
  const event = toolCallEvent(token, '', {});
  return {
    ...event,
    headers: { ...event.headers, 'mcp-method': 'resources/read', 'mcp-name': uri },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri, _meta: modernMeta() } }),
  };
};

/** An API Gateway (payload v2) event for one 2026-07-28 `tools/call`. */
export const toolCallEvent = (token: string, name: string, args: Record<string, unknown> = {}) => ({
  version: '2.0',
  rawPath: '/mcp',
  rawQueryString: '',
  headers: {
    host: 'doers.example',
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': 'tools/call',
    'mcp-name': name,
  },
  requestContext: { http: { method: 'POST', path: '/mcp', sourceIp: '203.0.113.9' }, requestId: 'bundle' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: modernMeta() } }),
  isBase64Encoded: false,
});
