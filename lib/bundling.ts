/**
 * esbuild settings the Lambda bundle needs beyond the defaults, shared by {@link McpFunction} and
 * `npm run bench` (which bundles exactly as the stack does, so its figures are the deployed ones).
 */

/**
 * CommonJS dependencies bundled into an ES module still call `require` for Node built-ins; ESM has
 * no `require`, so the bundle defines one first.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __doersCreateRequire } from 'node:module'; const require = __doersCreateRequire(import.meta.url);";

/**
 * Modules the Lambda bundle replaces (paths relative to the project root, where both the stack and
 * the bench run esbuild). Both were found in a `--cpu-prof` of the bundle's import:
 *
 * - `node:http` through `require` instead of `import`. Importing a built-in as ESM makes Node build
 *   its ESM facade, which reads every export, and `node:http`'s `WebSocket`-family exports are getters
 *   that load all of undici: about 35 ms of each cold start for something the function never uses.
 * - The AWS SDK's default credential chain by its environment-variable provider (see the file):
 *   617 → 480 KB, and about 25 ms less import.
 */
export const BUNDLE_ALIASES: Readonly<Record<string, string>> = {
  'node:http': './lambda/platform/node-http.cjs',
  '@aws-sdk/credential-provider-node': './lambda/platform/env-credentials.ts',
};
