import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The front page is read first and in a hurry: it stays short, starts with the two commands, and
// every link on it leads somewhere in this repository.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('the README', () => {
  test('is at most 150 lines', () => {
    const lines = readme.split('\n').length;

    assert.ok(lines <= 150, `README.md has ${lines} lines`);
  });

  test('opens its first code block with the two commands, both of them scripts that exist', () => {
    const first = /```sh\n([\s\S]*?)```/.exec(readme)?.[1];

    assert.equal(first, 'npm ci\nnpm start\n');
    assert.ok(scripts.start, 'package.json has a start script');
  });

  test('links only to files of this repository that exist, and every npm run it names is a script', () => {
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^https?:/.test(l));
    const runs = [...readme.matchAll(/npm run ([a-z:-]+)/g)].map((m) => m[1]!);

    assert.ok(links.length >= 5, `${links.length} links`);
    for (const link of links) assert.ok(existsSync(join(ROOT, link)), `README.md links to ${link}, which does not exist`);
    for (const run of runs) assert.ok(scripts[run], `README.md names npm run ${run}, which package.json lacks`);
  });
});
