import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { synth } from './synth.js';

// `cdk deploy` of this version onto a stack of the version before must succeed: CloudFormation
// updates the workspace table in place, and DynamoDB takes one new global secondary index per table
// update (an update that adds two, or changes one, fails and rolls back). The template before is
// kept as a fixture (test/fixtures/tables-before-layout-2.json, the tables as that version
// synthesized them); this holds the new template to what such an update can do. The stream that feeds
// the notifier (lib/tables.ts) came later; turning a stream on is an in-place update too (no index, key
// or item moves), so it is the one other change the workspace table may show against the fixture.

type TableProps = {
  AttributeDefinitions: { AttributeName: string; AttributeType: string }[];
  KeySchema: unknown;
  GlobalSecondaryIndexes?: { IndexName: string }[];
  [k: string]: unknown;
};

const before = JSON.parse(readFileSync(new URL('../fixtures/tables-before-layout-2.json', import.meta.url), 'utf8')) as {
  tables: Record<string, TableProps>;
};

describe('deploying this version onto the stack of the one before', () => {
  const after = Object.fromEntries(
    Object.entries(synth({}, { bundle: false }).template.findResources('AWS::DynamoDB::Table')).map(([id, r]) => [
      id,
      (r as { Properties: TableProps }).Properties,
    ]),
  );

  test('keeps every table under its logical id, so none is replaced (a replacement would lose the data)', () => {
    assert.deepEqual(Object.keys(after).sort(), Object.keys(before.tables).sort());
  });

  test('the workspace table gains exactly one index and changes none it had, nor its keys', () => {
    const [id] = Object.keys(before.tables).filter((k) => k.startsWith('TablesWorkspace'));
    const was = before.tables[id!]!;
    const now = after[id!]!;
    const byName = (t: TableProps) => new Map((t.GlobalSecondaryIndexes ?? []).map((g) => [g.IndexName, g]));
    const [old, fresh] = [byName(was), byName(now)];

    assert.deepEqual(now.KeySchema, was.KeySchema);
    for (const [name, gsi] of old) assert.deepEqual(fresh.get(name), gsi, `index ${name} is unchanged`);
    const added = [...fresh.keys()].filter((n) => !old.has(n));
    assert.deepEqual(added, ['gsi3']);
    // Only the new index's key attributes are new definitions; the others stay as they were.
    const defs = (t: TableProps) => t.AttributeDefinitions.map((d) => `${d.AttributeName}:${d.AttributeType}`);
    assert.deepEqual(
      defs(now).filter((d) => !defs(was).includes(d)),
      ['gsi3pk:S', 'gsi3sk:S'],
    );
    assert.ok(defs(was).every((d) => defs(now).includes(d)));
    // Nothing else of the table moves in the same update but the stream.
    const rest = (t: TableProps) => {
      const { AttributeDefinitions: _a, GlobalSecondaryIndexes: _g, StreamSpecification: _s, ...r } = t;
      return r;
    };
    assert.deepEqual(rest(now), rest(was));
  });

  test('the workspace table gains a stream of new images, which it had none of before', () => {
    const [id] = Object.keys(before.tables).filter((k) => k.startsWith('TablesWorkspace'));

    assert.equal(before.tables[id!]!.StreamSpecification, undefined);
    assert.deepEqual(after[id!]!.StreamSpecification, { StreamViewType: 'NEW_IMAGE' });
  });

  test('the limits table is untouched', () => {
    const [id] = Object.keys(before.tables).filter((k) => k.startsWith('TablesLimits'));
    assert.deepEqual(after[id!], before.tables[id!]);
  });
});
