import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import * as z from 'zod/mini';
import { toJsonSchema } from '../../lambda/mcp/json-schema.js';
import { PRODUCT_TOOLS } from '../../lambda/workspace/surface/tool-set.js';
import { httpEvent } from '../helpers/events.js';
import { MODERN, modernMeta } from '../helpers/local.js';
import { endpointProperty, FuzzStats, limitsProperty, watchProcess } from './endpoint-properties.js';
import { type FuzzTarget, startFuzzTargets } from './endpoint-target.js';
import { type JsonSchema, validValue } from './schema-arbitrary.js';

// A fixed seed, so a failure in CI reproduces (fast-check prints it with the path); FUZZ_SEED varies it.
const SEED = Number(process.env.FUZZ_SEED ?? 20_260_728);

let target: FuzzTarget;
let limited: FuzzTarget;
let watch: ReturnType<typeof watchProcess>;

before(async () => {
  watch = watchProcess();
  [target, limited] = await startFuzzTargets();
});
after(async () => {
  watch.dispose();
  await Promise.all([target?.close(), limited?.close()]);
});

describe('endpoint fuzzing (npm run fuzz runs the long version)', () => {
  test('every request, valid or mutated, gets an answer from the protocol table and no 5xx', async () => {
    // Arrange
    const stats = new FuzzStats();

    // Act
    await fc.assert(endpointProperty(target, { stats }), { seed: SEED, numRuns: 3_000 });

    // Assert: the run reached past the transport, or passing would mean little.
    assert.ok((stats.statuses.get(200) ?? 0) > stats.cases / 6, `too few 200s: ${JSON.stringify([...stats.statuses])}`);
  });

  test('with limits on, refusals are 429 on resource reads and isError results on tool calls', async () => {
    // Arrange
    const stats = new FuzzStats();

    // Act
    await fc.assert(limitsProperty(limited, { stats }), { seed: SEED, numRuns: 100 });

    // Assert
    assert.ok((stats.pairs.get('429 -32000') ?? 0) > 0, `no 429 seen: ${JSON.stringify([...stats.pairs])}`);
  });

  test('no unhandled rejection or uncaught exception during the runs', () => {
    assert.deepEqual(watch.rejections, []);
    assert.deepEqual(watch.exceptions, []);
  });
});

describe('found by fuzzing', () => {
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await target.invoke(
      httpEvent({
        headers: { host: `127.0.0.1:${target.fixture.port}`, authorization: `Bearer ${target.fixture.tokens.full}`, ...headers },
        body: JSON.stringify(body),
      }),
    );
    return { status: res.statusCode, json: res.body ? JSON.parse(res.body) : undefined };
  };
  const modernHeaders = (method: string, name?: string) => ({
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  });

  // The method tables are object literals: these names used to find Object.prototype's members,
  // which were called as methods (500, or a response with neither result nor error).
  for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    test(`a method named ${method} is unknown: 200 -32601 on 2025-11-25, 404 -32601 on 2026-07-28`, async () => {
      // Act
      const legacy = await post({ jsonrpc: '2.0', id: 1, method, params: {} }, { 'mcp-protocol-version': '2025-11-25' });
      const modern = await post({ jsonrpc: '2.0', id: 2, method, params: { _meta: modernMeta() } }, modernHeaders(method));

      // Assert
      assert.deepEqual([legacy.status, legacy.json.id, legacy.json.error?.code], [200, 1, -32601]);
      assert.deepEqual([modern.status, modern.json.id, modern.json.error?.code], [404, 2, -32601]);
    });
  }

  test('a batch element named like an Object.prototype member gets its own -32601 entry', async () => {
    // Act
    const res = await post([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'propertyIsEnumerable', params: {} },
    ]);

    // Assert
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, [
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found: propertyIsEnumerable' } },
    ]);
  });

  test('a 2026-07-28 notification named constructor needs no Mcp-Name (no method of that name takes one)', async () => {
    // Act
    const res = await post({ jsonrpc: '2.0', method: 'constructor', params: { _meta: modernMeta() } }, modernHeaders('constructor'));

    // Assert
    assert.equal(res.status, 202);
  });

  // A key over 1 KiB made DynamoDB answer ValidationException, which is no dependency failure: 500.
  for (const [template, length] of [
    ['doers://tasks/', 101],
    ['doers://tasks/', 5_000],
    ['doers://projects/', 2_049],
  ] as const) {
    test(`reading ${template}<${length} characters> is an unknown resource, not a 500`, async () => {
      // Arrange
      const uri = `${template}${'x'.repeat(length)}`;

      // Act
      const legacy = await post(
        { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } },
        { 'mcp-protocol-version': '2025-11-25' },
      );
      const modern = await post(
        { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri, _meta: modernMeta() } },
        modernHeaders('resources/read', uri),
      );

      // Assert
      assert.deepEqual([legacy.status, legacy.json.error?.code, legacy.json.error?.data], [200, -32002, { uri }]);
      assert.deepEqual([modern.status, modern.json.error?.code, modern.json.error?.data], [200, -32602, { uri }]);
    });
  }

  // A signed token is trusted, so its e-mail claim became a DynamoDB key as it was: over 2 KiB, a 500.
  for (const local of ['x'.repeat(3_000), 'x'.repeat(250)]) {
    test(`a valid JWT whose e-mail claim has ${local.length + 12} characters names no member: 403 -32600, not a 500`, async () => {
      // Arrange
      const token = await target.signJwt!({ email: `${local}@example.com`, scope: 'tasks:read' });

      // Act
      const res = await post(
        { jsonrpc: '2.0', id: 7, method: 'ping' },
        { authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' },
      );

      // Assert
      assert.deepEqual([res.status, res.json.id, res.json.error?.code], [403, 7, -32600]);
    });
  }

  test('a resource id of exactly 100 characters is still looked up (and here names nothing)', async () => {
    // Act
    const res = await post(
      { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: `doers://tasks/${'x'.repeat(100)}` } },
      { 'mcp-protocol-version': '2025-11-25' },
    );

    // Assert
    assert.deepEqual([res.status, res.json.error?.code], [200, -32002]);
  });
});

describe('schema arbitrary', () => {
  // The converter reads the JSON Schema tools/list shows; zod decides. If they drift apart (a new
  // keyword, a refinement the schema cannot carry), "valid" arguments stop reaching the tools.
  for (const def of PRODUCT_TOOLS) {
    test(`valid arguments generated from ${def.name}'s input schema pass its zod schema`, () => {
      // Arrange
      const schema = toJsonSchema(def.listedInput ?? def.input, 'input') as JsonSchema;

      // Act
      const refused = fc.sample(validValue(schema), { numRuns: 200, seed: 42 }).filter((v) => !z.safeParse(def.input, v).success);

      // Assert
      assert.deepEqual(refused.slice(0, 1), []);
    });
  }
});
