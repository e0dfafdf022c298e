import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLE_ALIASES, ESM_REQUIRE_BANNER, LAMBDA_FUNCTION_DEFAULTS, S3_FILES_ENTRY } from './bundling.js';

/**
 * Bundles attachments' S3 module to `outfile` with the function's own settings (minified ESM for
 * Node 22, the same aliases and require shim): what lambda/handler.ts imports on the first
 * attachment. The stack runs this after the function's bundle (lib/mcp-function.ts); the bundle
 * test runs it too, so what it measures is what is deployed.
 */
export const buildS3Files = async (outfile: string): Promise<number> => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const b = LAMBDA_FUNCTION_DEFAULTS.bundling;
  const result = await build({
    absWorkingDir: root,
    entryPoints: [S3_FILES_ENTRY],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: b.target ?? 'node22',
    minify: true,
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    // The S3 client configures event streams itself (SelectObjectContent), so their codec stays in.
    alias: Object.fromEntries(Object.entries(BUNDLE_ALIASES).filter(([from]) => from !== '@smithy/core/event-streams')),
    metafile: true,
    logLevel: 'silent',
  });
  return Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outfile = process.argv[2];
  if (!outfile) throw new Error('usage: node --import tsx lib/build-s3-files.ts <outfile>');
  await buildS3Files(outfile);
}
