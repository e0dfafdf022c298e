/**
 * esbuild settings the Lambda bundles need beyond the defaults, shared by both functions
 * ({@link LAMBDA_FUNCTION_DEFAULTS}) and `npm run bench` (which bundles exactly as the stack does, so
 * its figures are the deployed ones).
 */

import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * CommonJS dependencies bundled into an ES module still call `require` for Node built-ins; ESM has
 * no `require`, so the bundle defines one first.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __doersCreateRequire } from 'node:module'; const require = __doersCreateRequire(import.meta.url);";

/**
 * Modules the Lambda bundle replaces (paths relative to the project root, where both the stack and
 * the bench run esbuild). Each was found in a `--cpu-prof` of the bundle's cold start or in its
 * metafile (docs/testing.md, "Benchmarks", has the measurements):
 *
 * - `node:http` through `require` instead of `import`. Importing a built-in as ESM makes Node build
 *   its ESM facade, which reads every export, and `node:http`'s `WebSocket`-family exports are getters
 *   that load all of undici: about 35 ms of each cold start for something the function never uses.
 * - The AWS SDK's default credential chain by its environment-variable provider (see the file):
 *   617 → 480 KB, and about 25 ms less import.
 * - The SDK's event-stream codec, which its HTTP protocol imports dynamically and esbuild inlines,
 *   by a stub that fails by name: no operation the functions call streams events (about 20 KB).
 * - The DynamoDB client's endpoint-discovery cache (on mnemonist) by the same class on a Map: built
 *   by every client, used only with discovery turned on, which doers never does (about 7 KB).
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  'node:http': './lambda/platform/node-http.cjs',
  '@aws-sdk/credential-provider-node': './lambda/platform/env-credentials.ts',
  '@smithy/core/event-streams': './lambda/platform/no-event-streams.ts',
  '@aws-sdk/endpoint-cache': './lambda/platform/endpoint-cache.ts',
};

/**
 * What every doers function shares, so the MCP function and the authorization server's function run
 * and are bundled alike: Node.js 22 on arm64 (cheaper per millisecond than x86 and quick enough for
 * this I/O-bound work), handler `handler` of a minified ES module with a source map, the AWS SDK
 * bundled at the versions package-lock.json pins, and the replacements above. Each function has its
 * own entry, so each bundle holds only what its entry imports: the authorization server's libraries
 * never reach the MCP function's bundle.
 */
export const LAMBDA_FUNCTION_DEFAULTS: Readonly<
  Required<Pick<NodejsFunctionProps, 'runtime' | 'architecture' | 'handler' | 'bundling' | 'tracing'>>
> = {
  runtime: Runtime.NODEJS_22_X,
  architecture: Architecture.ARM_64,
  handler: 'handler',
  // X-Ray active tracing: each invocation's trace (its init and its time in the function), whose id
  // every log line of it carries (Powertools' logger adds xray_trace_id). No subsegment per DynamoDB
  // call: the X-Ray SDK that would add them costs the cold start more than it shows (docs/deploy-and-operations.md).
  tracing: Tracing.ACTIVE,
  bundling: {
    format: OutputFormat.ESM,
    target: 'node22',
    platform: 'node',
    minify: true,
    sourceMap: true,
    // Stack traces need file names and lines, not the sources; leaving them out keeps the bundle small.
    sourcesContent: false,
    // Prefer packages' ESM builds (smaller after tree-shaking).
    mainFields: ['module', 'main'],
    banner: ESM_REQUIRE_BANNER,
    esbuildArgs: { '--alias': Object.entries(BUNDLE_ALIASES).map(([from, to]) => `${from}=${to}`) },
    // Bundle the AWS SDK clients at the versions package-lock.json pins (and tests ran against)
    // instead of whatever SDK the runtime image happens to carry.
    bundleAwsSDK: true,
  },
};

/**
 * The authorization server's bundling: the shared settings, but with class and function names kept.
 * oidc-provider finds each model's settings by its class name (`ttl.AccessToken`, the model kind
 * stored with it); minified names silently lose them — the bundle test caught access tokens issued
 * without `exp`. Costs a few KB; the MCP function's bundle keeps minified names.
 */
export const OAUTH_BUNDLING = { ...LAMBDA_FUNCTION_DEFAULTS.bundling, keepNames: true } as const;

/**
 * The MCP function's asset holds, beside its bundle, the MCP Apps views' HTML in `views/`, which the
 * function reads on a view's first read (lambda/handler.ts), never at init. The stack builds them
 * right after the bundle, with the same builder `npm start` and the tests use (lambda/views/build.ts).
 */
export const VIEWS_DIR = 'views';

const shellQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * The command NodejsFunction runs after bundling (`commandHooks.afterBundling`, run by bash in the
 * project root, so `tsx` resolves from its node_modules).
 */
export const buildViewsCommand = (outputDir: string): string =>
  `${shellQuote(process.execPath)} --import tsx lambda/views/build.ts ${shellQuote(`${outputDir}/${VIEWS_DIR}`)}`;

/**
 * The acknowledgement of AwsSolutions-L1 (not the latest runtime) each function carries: the runtime
 * above is pinned on purpose.
 */
export const PINNED_RUNTIME_ACKNOWLEDGEMENT = {
  id: 'AwsSolutions-L1',
  reason:
    'The runtime is pinned to Node.js 22 on purpose: the deployment contract names it and the tests and ' +
    'the local server run on it; moving to a newer runtime is a deliberate, tested change.',
} as const;

/**
 * The acknowledgement of AwsSolutions-IAM5 on `Resource::*` each function's role carries for active
 * tracing: X-Ray's PutTraceSegments and PutTelemetryRecords take no resource, so no narrower grant exists.
 */
export const TRACING_ACKNOWLEDGEMENT = {
  id: 'AwsSolutions-IAM5[Resource::*]',
  reason:
    "Active tracing: X-Ray's xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level " +
    'permission, so the traces a function sends can only be granted on every resource.',
} as const;

/** The MCP function's entry, relative to the project root (lib/mcp-function.ts's default). */
export const MCP_ENTRY = 'lambda/handler.ts';

/**
 * The MCP function's bundle is split (lib/build-mcp-bundle.ts): `index.mjs`, the handler file, and
 * beside it `chunks/`, one file per module the code imports with `import()` and one per piece of code
 * two of them share. Without splitting esbuild inlines every dynamic import into the one file, so
 * each cold start compiled chrono-node's parser, rrule, the SDK's user-agent parser and the SQS client
 * although no first call runs them. Figures and what the split does not reach: docs/testing.md,
 * "Benchmarks".
 */
export const MCP_CHUNKS_DIR = 'chunks';
export const MCP_CHUNK_NAMES = `${MCP_CHUNKS_DIR}/[name]-[hash]`;

/**
 * The command NodejsFunction runs after bundling the MCP function: the split build of its entry into
 * the asset, replacing the single `index.mjs` NodejsFunction made (it bundles to one `--outfile`,
 * which esbuild's splitting cannot use). Run by bash in the project root, so `tsx` and esbuild
 * resolve from its node_modules.
 */
export const buildMcpBundleCommand = (entry: string, outputDir: string): string =>
  `${shellQuote(process.execPath)} --import tsx lib/build-mcp-bundle.ts ${shellQuote(entry)} ${shellQuote(outputDir)}`;

/**
 * Attachments' S3 module (the S3 client and the type sniffer) as a bundle of its own beside the
 * function's, `s3-files.mjs` (lambda/files/file-store.ts S3_FILES_BUNDLE): lambda/handler.ts imports
 * it on the first attachment, so the function's bundle and its cold start carry none of it. Built
 * with the function's own esbuild settings.
 */
export const S3_FILES_ENTRY = 'lambda/files/s3-files.ts';
export const S3_FILES_OUTFILE = 's3-files.mjs';

/**
 * The command NodejsFunction runs after bundling for it: esbuild's API through lib/build-s3-files.ts
 * (run by bash in the project root, so `tsx` and esbuild resolve from its node_modules).
 */
export const buildS3FilesCommand = (outputDir: string): string =>
  `${shellQuote(process.execPath)} --import tsx lib/build-s3-files.ts ${shellQuote(`${outputDir}/${S3_FILES_OUTFILE}`)}`;
