import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

// The layout keeps the writers the only door: the dependency rule of npm run lint
// (.dependency-cruiser.cjs, `writers-only-write`) fails when anything but a writer imports the
// item-writing modules. Here imports are planted in the tree, one file at a time, and the rule is
// run on each as npm run lint runs it.

const run = promisify(execFile);

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
}

/** Plants `source` at `path`, runs the dependency rules on it, and takes it out again. */
const violationsOf = async (path: string, source: string): Promise<Violation[]> => {
  await writeFile(path, source);
  try {
    const { stdout } = await run(
      'npx',
      ['depcruise', path, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', '--no-progress'],
      { maxBuffer: 64 * 1024 * 1024 },
    ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    const out = JSON.parse(stdout) as { summary: { violations: Violation[] } };
    return out.summary.violations.filter((v) => v.from === path);
  } finally {
    await rm(path, { force: true });
  }
};

const writeViolations = (vs: readonly Violation[]) => vs.filter((v) => v.rule.name === 'writers-only-write').map((v) => v.to);

describe('only writers import what writes items', () => {
  test("a tool importing the stores' write side is refused", { timeout: 60_000 }, async () => {
    // Act
    const found = await violationsOf(
      'lambda/workspace/surface/tools/zz-planted.ts',
      "import { writesOf } from '../../store/writes.js';\nexport const planted = writesOf;\n",
    );

    // Assert
    assert.deepEqual(writeViolations(found), ['lambda/workspace/store/writes.ts']);
  });

  test('the admin CLI sending its own transaction is refused', { timeout: 60_000 }, async () => {
    const found = await violationsOf(
      'cli/zz-planted.ts',
      "import { commitWrites } from '../lambda/platform/transact.js';\nexport const planted = commitWrites;\n",
    );

    assert.deepEqual(writeViolations(found), ['lambda/platform/transact.ts']);
  });

  test("the account page and the local server's seed putting items in bulk are refused", { timeout: 60_000 }, async () => {
    const account = await violationsOf(
      'lambda/account/zz-planted.ts',
      "import { batchPut } from '../platform/batch-writes.js';\nexport const planted = batchPut;\n",
    );
    const seed = await violationsOf(
      'lambda/local/zz-planted.ts',
      "import { writesOf } from '../workspace/store/writes.js';\nexport const planted = writesOf;\n",
    );

    assert.deepEqual(writeViolations(account), ['lambda/platform/batch-writes.ts']);
    assert.deepEqual(writeViolations(seed), ['lambda/workspace/store/writes.ts']);
  });

  test('a writer importing the write side, and a tool naming the WriteOp type only, are allowed', { timeout: 60_000 }, async () => {
    const writer = await violationsOf(
      'lambda/workspace/tasks/zz-planted.ts',
      "import { writesOf } from '../store/writes.js';\nexport const planted = writesOf;\n",
    );
    const typeOnly = await violationsOf(
      'lambda/workspace/surface/zz-planted.ts',
      "import type { WriteOp } from '../../platform/transact.js';\nexport type Planted = WriteOp;\n",
    );

    assert.deepEqual(writeViolations(writer), []);
    assert.deepEqual(writeViolations(typeOnly), []);
  });
});
