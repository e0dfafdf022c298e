import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';

// The layout keeps the writers the only door: the dependency rule of npm run lint
// (.dependency-cruiser.cjs, `writers-only-write`) fails when anything but a writer imports the
// item-writing modules. Here imports are planted in the tree and the rule is run on them as npm run
// lint runs it: once for all of them (each run cruises the whole tree), each test reading the
// violations of its own files.

const run = promisify(execFile);

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
}

const PLANTED: Readonly<Record<string, string>> = {
  tool: 'lambda/workspace/surface/tools/zz-planted.ts',
  cli: 'cli/zz-planted.ts',
  account: 'lambda/account/zz-planted.ts',
  seed: 'lambda/local/zz-planted.ts',
  writer: 'lambda/workspace/tasks/zz-planted.ts',
  typeOnly: 'lambda/workspace/surface/zz-planted.ts',
};

const SOURCES: Readonly<Record<keyof typeof PLANTED, string>> = {
  tool: "import { writesOf } from '../../store/writes.js';\nexport const planted = writesOf;\n",
  cli: "import { commitWrites } from '../lambda/platform/transact.js';\nexport const planted = commitWrites;\n",
  account: "import { batchPut } from '../platform/batch-writes.js';\nexport const planted = batchPut;\n",
  seed: "import { writesOf } from '../workspace/store/writes.js';\nexport const planted = writesOf;\n",
  writer: "import { writesOf } from '../store/writes.js';\nexport const planted = writesOf;\n",
  typeOnly: "import type { WriteOp } from '../../platform/transact.js';\nexport type Planted = WriteOp;\n",
};

let violations: Violation[] = [];
/** The files the run cruised: a planted file missing here was never checked, so its [] would prove nothing. */
let cruised = new Set<string>();

// One depcruise of the whole tree takes seconds; a stuck one fails the file rather than hanging it.
before(
  async () => {
    const paths = Object.values(PLANTED);
    await Promise.all(Object.entries(PLANTED).map(([k, path]) => writeFile(path, SOURCES[k]!)));
    try {
      const { stdout } = await run(
        'npx',
        ['depcruise', ...paths, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', '--no-progress'],
        { maxBuffer: 64 * 1024 * 1024 },
      ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const out = JSON.parse(stdout) as { modules: { source: string }[]; summary: { violations: Violation[] } };
      violations = out.summary.violations;
      cruised = new Set(out.modules.map((m) => m.source));
    } finally {
      await Promise.all(paths.map((path) => rm(path, { force: true })));
    }
  },
  { timeout: 120_000 },
);
after(() => Promise.all(Object.values(PLANTED).map((path) => rm(path, { force: true }))));

/** What the planted file imports that the writers-only rule refuses (the file must have been cruised). */
const writeViolations = (planted: keyof typeof PLANTED) => {
  assert.ok(cruised.has(PLANTED[planted]!), `${PLANTED[planted]} was not cruised`);
  return violations.filter((v) => v.from === PLANTED[planted] && v.rule.name === 'writers-only-write').map((v) => v.to);
};

describe('only writers import what writes items', () => {
  test("a tool importing the stores' write side is refused", () => {
    assert.deepEqual(writeViolations('tool'), ['lambda/workspace/store/writes.ts']);
  });

  test('the admin CLI sending its own transaction is refused', () => {
    assert.deepEqual(writeViolations('cli'), ['lambda/platform/transact.ts']);
  });

  test("the account page and the local server's seed putting items in bulk are refused", () => {
    assert.deepEqual(writeViolations('account'), ['lambda/platform/batch-writes.ts']);
    assert.deepEqual(writeViolations('seed'), ['lambda/workspace/store/writes.ts']);
  });

  test('a writer importing the write side, and a tool naming the WriteOp type only, are allowed', () => {
    assert.deepEqual(writeViolations('writer'), []);
    assert.deepEqual(writeViolations('typeOnly'), []);
  });
});
