/**
 * Builds each MCP Apps view into one self-contained HTML file: its script (the official
 * `@modelcontextprotocol/ext-apps` App and the view's own code) and its style inline, nothing
 * fetched, so the view runs under the hosts' strictest CSP. Runs in Node, never in the function:
 * the stack's bundling writes the files beside the MCP function's bundle (lib/mcp-function.ts), the
 * local server builds them on demand (lambda/local/server.ts), `npm run build` writes
 * lambda/views/dist/ to look at.
 *
 *   node --import tsx lambda/views/build.ts [out-dir]
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { VIEWS } from './links.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));

/**
 * ext-apps imports zod as `import { z } from "zod/v4"`, a namespace re-exported as a value, which
 * esbuild can only keep whole: every locale, the JSON Schema converters and the rest of zod (the
 * App alone bundled to 649 KB). Importing the same namespace with `import * as` lets esbuild keep
 * only the members the SDK uses (314 KB). The rewrite touches nothing else; if a release of
 * ext-apps stops matching, the size test of the views (test/unit/views-build.test.ts) says so.
 */
const zodNamespaceImports: Plugin = {
  name: 'zod-namespace-imports',
  setup(b) {
    b.onLoad({ filter: /[\\/]@modelcontextprotocol[\\/]ext-apps[\\/]dist[\\/].*\.js$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replace(/import\{z as (\w+)\}from"zod\/v4"/g, 'import*as $1 from"zod/v4"'),
      loader: 'js',
    }));
  },
};

/**
 * The MCP SDK's client and core packages declare no `sideEffects`, so esbuild keeps every module
 * they import even when nothing of it is used (the Client, its transports and JSON Schema
 * validators, which a view never runs: 314 → 242 KB). Their modules only define things; the
 * browser test (test/browser/mcp-apps.test.ts) proves the views still work.
 */
const sdkWithoutSideEffects: Plugin = {
  name: 'sdk-without-side-effects',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === sdkWithoutSideEffects) return undefined;
      const inSdk = (p: string) => /@modelcontextprotocol[\\/](client|core)([\\/]|$)/.test(p);
      if (!inSdk(args.path) && !inSdk(args.importer)) return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: sdkWithoutSideEffects,
      });
      return resolved.errors.length || !inSdk(resolved.path) ? resolved : { ...resolved, sideEffects: false };
    });
  },
};

/** The HTML of one view; `data-version` changes with its content, since hosts cache views by URI. */
export const buildView = async (view: string): Promise<string> => {
  if (!VIEWS.includes(view)) throw new Error(`no view ${view}`);
  const result = await build({
    entryPoints: [join(HERE, `${view}.ts`)],
    absWorkingDir: join(HERE, '..', '..'),
    outdir: 'out',
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    plugins: [zodNamespaceImports, sdkWithoutSideEffects],
    logLevel: 'silent',
  });
  const output = (ext: string) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
  // Inline: a `</script` or `</style` inside the code would end its element early.
  const script = output('.js').replace(/<\/(script)/gi, '<\\/$1');
  const style = output('.css').replace(/<\/(style)/gi, '<\\/$1');
  const version = createHash('sha256').update(script).update(style).digest('hex').slice(0, 12);
  return [
    '<!doctype html>',
    `<html lang="en" data-view="${view}" data-version="${version}">`,
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">',
    `<title>doers ${view}</title><style>${style}</style></head>`,
    `<body><main id="view" aria-busy="true"></main><script>${script}</script></body>`,
    '</html>',
    '',
  ].join('\n');
};

/** Writes `<view>.html` for every view into `dir`; returns the files with their sizes in bytes. */
export const writeViews = async (dir: string): Promise<{ file: string; bytes: number }[]> => {
  await mkdir(dir, { recursive: true });
  return Promise.all(
    VIEWS.map(async (view) => {
      const html = await buildView(view);
      const file = join(dir, `${view}.html`);
      await writeFile(file, html);
      return { file, bytes: Buffer.byteLength(html) };
    }),
  );
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.argv[2] ?? join(HERE, 'dist');
  for (const { file, bytes } of await writeViews(dir)) process.stdout.write(`${file}  ${(bytes / 1024).toFixed(1)} KB\n`);
}
