import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { LAMBDA_FUNCTION_DEFAULTS, MCP_CHUNK_NAMES } from './bundling.js';

/**
 * The esbuild options NodejsFunction derives from `bundling` (the command it runs is
 * `esbuild --bundle <entry> --target --platform --format --outfile=index.mjs --minify --sourcemap
 * --sources-content --main-fields --banner:js` plus `esbuildArgs`), as esbuild's API takes them. The
 * MCP function's split build below starts from them, and test/helpers/lambda-bundle.ts builds the
 * other functions' bundles with them (test/e2e/oauth-bundle.test.ts compares one with the asset
 * NodejsFunction stages, byte for byte); a setting this does not know fails here instead of being left out.
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
  if (unknown.length) throw new Error(`lib/build-mcp-bundle.ts does not know the bundling setting(s) ${unknown.join(', ')}`);
  const args = { ...bundling.esbuildArgs };
  const aliases = args['--alias'];
  delete args['--alias'];
  if (Object.keys(args).length)
    throw new Error(`lib/build-mcp-bundle.ts does not know the esbuild argument(s) ${Object.keys(args).join(', ')}`);
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
 * Bundles the MCP function's entry into `outdir` as the stack ships it: the function's settings
 * (lib/bundling.ts) plus esbuild's code splitting: `index.mjs` (the handler file Lambda loads) and
 * the chunks it imports statically hold what init runs, and every module the code imports with
 * `import()` (chrono-node, rrule, the SDK's user-agent parser, the SQS client…) is a chunk under
 * `chunks/` read on its first use; code two of them share is a chunk of its own. The stack runs this
 * after NodejsFunction's own single-file bundle, which it replaces (lib/mcp-function.ts);
 * test/e2e/lambda-bundle.test.ts runs it too and compares every file with the synthesized asset.
 */
export const buildMcpBundle = async (entry: string, outdir: string): Promise<Metafile> => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const result = await build({
    ...esbuildOptionsOf(LAMBDA_FUNCTION_DEFAULTS.bundling),
    absWorkingDir: root,
    // The stack passes an absolute path, the tests one relative to the project: the same file either way.
    entryPoints: { index: resolve(root, entry) },
    outdir,
    splitting: true,
    chunkNames: MCP_CHUNK_NAMES,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    metafile: true,
    logLevel: 'silent',
  });
  return result.metafile;
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [entry, outdir] = process.argv.slice(2);
  if (!entry || !outdir) throw new Error('usage: node --import tsx lib/build-mcp-bundle.ts <entry> <outdir>');
  await buildMcpBundle(entry, outdir);
}
