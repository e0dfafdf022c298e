import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { listingOf } from '../lambda/mcp/tool-registry.js';
import { FILE_OF, PRODUCT_TOOLS } from '../lambda/workspace/surface/tool-set.js';

/**
 * The workspace's tool listing, made at build time (`npm run build:listing`): what the functions
 * list (each tool's name, title, annotations, scope, group, the file it is declared in, and its
 * tools/list entry with its JSON Schemas) without loading a tool's definition, which is a chunk of
 * its own loaded on its first call (lambda/workspace/surface/catalog.ts). Kept in the repository
 * beside the tools; test/unit/tool-listing.test.ts fails when it is not what this makes now.
 */
export const LISTING_FILE = fileURLToPath(new URL('../lambda/workspace/surface/tool-listing.json', import.meta.url));

export const toolListing = (): string =>
  `${JSON.stringify(
    {
      $comment: 'Made by npm run build:listing (lib/build-tool-listing.ts) from lambda/workspace/surface/tool-set.ts: do not edit.',
      tools: PRODUCT_TOOLS.map((t) => ({
        name: t.name,
        title: t.title,
        annotations: t.annotations,
        scope: t.scope,
        group: t.group,
        file: FILE_OF.get(t.name),
        listed: listingOf(t),
      })),
    },
    null,
    1,
  )}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await writeFile(LISTING_FILE, toolListing());
