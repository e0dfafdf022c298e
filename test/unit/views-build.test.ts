import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildView } from '../../lambda/views/build.js';
import { VIEWS } from '../../lambda/views/links.js';

/**
 * The views as the build makes them (lambda/views/build.ts): one HTML file each, everything inline,
 * within the size hosts take. The same build runs for the stack, `npm start` and the tests.
 */
const MAX_VIEW_BYTES = 300 * 1024;

describe('the MCP Apps views build', () => {
  for (const view of VIEWS) {
    test(`${view}: one self-contained HTML file of at most 300 KB, its version taken from its content`, async () => {
      // Act
      const [html, again] = await Promise.all([buildView(view), buildView(view)]);

      // Assert
      const bytes = Buffer.byteLength(html);
      assert.ok(bytes <= MAX_VIEW_BYTES, `${view}.html is ${(bytes / 1024).toFixed(1)} KB, budget 300 KB`);
      assert.equal(again, html, 'the same sources build the same file');
      assert.match(html, new RegExp(`^<!doctype html>\\n<html lang="en" data-view="${view}" data-version="[0-9a-f]{12}">`));
      assert.equal((html.match(/<script>/g) ?? []).length, 1, 'one inline script');
      assert.equal((html.match(/<\/script>/g) ?? []).length, 1, 'nothing in the code ends the script early');
      assert.doesNotMatch(html, /<script[^>]*\ssrc=|<link\b/i);
      assert.ok(html.includes('ui/initialize'), 'the official App is in it');
    });
  }
});
