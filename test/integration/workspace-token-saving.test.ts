import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import { callTool, legacyCall, MODERN, modernCall } from '../helpers/local.js';
import { startWorkspaceServer } from '../helpers/workspace-fixtures.js';

/**
 * The compact text against the JSON it stands for, on the demo workspace's 30 tasks. Two estimates:
 * characters / 4, and a count of word and punctuation pieces (closer to how BPE tokenizers split
 * identifiers and JSON syntax).
 */
const charsOver4 = (s: string) => Math.ceil(s.length / 4);
const pieces = (s: string) => s.match(/[A-Za-z]+|\d+|[^\sA-Za-z\d]/g)?.length ?? 0;

let server: LocalServer;
before(async () => {
  server = await startWorkspaceServer();
});
after(() => server.close());

for (const [tool, args] of [
  ['agenda_get', { assignee: 'anyone' }],
  ['tasks_search', { status: 'any', limit: 30 }],
] as const) {
  test(`${tool}: the text saves at least 40% of the tokens of the JSON`, async (t) => {
    const r = await callTool(server, tool, args);
    const text = r.content[0]!.text;
    const json = JSON.stringify(r.structuredContent);

    const saving = 1 - pieces(text) / pieces(json);
    t.diagnostic(
      `${tool}: ${r.structuredContent.returned} tasks; text ${text.length} chars ≈ ${charsOver4(text)} tokens (${pieces(text)} pieces), ` +
        `JSON ${json.length} chars ≈ ${charsOver4(json)} tokens (${pieces(json)} pieces); saving ${Math.round((1 - charsOver4(text) / charsOver4(json)) * 100)}% / ${Math.round(saving * 100)}%`,
    );

    assert.ok(r.structuredContent.returned >= (tool === 'tasks_search' ? 30 : 8), 'the demo data fills the list');
    assert.ok(charsOver4(text) <= charsOver4(json) * 0.6);
    assert.ok(pieces(text) <= pieces(json) * 0.6);
  });
}

// The budgets a model pays before and on its first call: the tools listed for a token with every
// scope (every group: /mcp?tools=all; the default groups: the bare /mcp), and the demo owner's day.
// Each revision's listing is its own JSON (schema dialects differ).
const LISTINGS = [
  { query: 'tools=all', tools: 36, budget: 40_000 },
  { query: '', tools: 16, budget: 20_000 },
] as const;
for (const version of ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']) {
  for (const { query, tools, budget } of LISTINGS) {
    test(`tools/list of /mcp${query ? `?${query}` : ''} on ${version} for every scope stays within ${budget.toLocaleString('en')} bytes of JSON`, async (t) => {
      const res =
        version === MODERN
          ? await modernCall(server, 'tools/list', {}, { query })
          : await legacyCall(server, 'tools/list', {}, { version, query });

      const bytes = Buffer.byteLength(res.text);
      t.diagnostic(`${version} /mcp?${query}: ${res.json.result.tools.length} tools in ${bytes} bytes`);
      assert.equal(res.json.result.tools.length, tools, 'the token holds every scope, so every tool of the groups is listed');
      assert.ok(bytes <= budget, `${bytes} bytes`);
    });
  }
}

test("agenda_get: the demo owner's day is at most 700 bytes of text", async (t) => {
  const r = await callTool(server, 'agenda_get', {});

  const text = r.content[0]!.text;
  t.diagnostic(`${r.structuredContent.returned} tasks in ${Buffer.byteLength(text)} bytes`);
  assert.ok(r.structuredContent.returned >= 7, 'the demo day is full');
  assert.match(text, /^\d+ open, \d+ overdue, \d+ due today/);
  assert.ok(Buffer.byteLength(text) <= 700, `${Buffer.byteLength(text)} bytes`);
});
