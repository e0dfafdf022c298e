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

// The budgets a model pays before and on its first call: every tool listed for a token with every
// scope, and the demo owner's day. Each revision's listing is its own JSON (schema dialects differ).
for (const version of ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']) {
  test(`tools/list on ${version} for every scope stays within 40,000 bytes of JSON`, async (t) => {
    const res = version === MODERN ? await modernCall(server, 'tools/list') : await legacyCall(server, 'tools/list', {}, { version });

    const bytes = Buffer.byteLength(res.text);
    t.diagnostic(`${version}: ${res.json.result.tools.length} tools in ${bytes} bytes`);
    assert.equal(res.json.result.tools.length, 28, 'the token holds every scope, so every tool is listed');
    assert.ok(bytes <= 40_000, `${bytes} bytes`);
  });
}

test("agenda_get: the demo owner's day is at most 700 bytes of text", async (t) => {
  const r = await callTool(server, 'agenda_get', {});

  const text = r.content[0]!.text;
  t.diagnostic(`${r.structuredContent.returned} tasks in ${Buffer.byteLength(text)} bytes`);
  assert.ok(r.structuredContent.returned >= 7, 'the demo day is full');
  assert.match(text, /^\d+ open, \d+ overdue, \d+ due today/);
  assert.ok(Buffer.byteLength(text) <= 700, `${Buffer.byteLength(text)} bytes`);
});
