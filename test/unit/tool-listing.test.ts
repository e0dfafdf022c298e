import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { PRODUCT_TOOLS as LISTED } from '../../lambda/workspace/surface/catalog.js';
import { PRODUCT_TOOLS } from '../../lambda/workspace/surface/tool-set.js';
import { LISTING_FILE, toolListing } from '../../lib/build-tool-listing.js';

// The functions list the tools from the listing the build made (lambda/workspace/surface/catalog.ts)
// and load a tool's code on its first call: the listing must be what the tools are now.

test('tool-listing.json is what npm run build:listing makes of the tools now', async () => {
  const kept = await readFile(LISTING_FILE, 'utf8');

  assert.equal(kept, toolListing(), 'the tools changed since the listing was made: run npm run build:listing');
});

test('each listed tool loads, from its own file, the very definition the tool set declares', async () => {
  for (const handle of LISTED) {
    const loaded = await handle.load();
    const declared = PRODUCT_TOOLS.find((t) => t.name === handle.name)!;

    assert.equal(loaded.run, declared.run, handle.name);
    assert.equal(loaded.input, declared.input, handle.name);
    assert.equal(handle.group, declared.group, handle.name);
    assert.equal(handle.scope, declared.scope, handle.name);
  }
  assert.deepEqual(
    LISTED.map((t) => t.name),
    PRODUCT_TOOLS.map((t) => t.name),
  );
});
