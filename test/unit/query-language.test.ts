import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import peggy from 'peggy';
import { ToolRefusal } from '../../lambda/errors.js';
import { checkQuery, conjunctsOf, termsOf } from '../../lambda/workspace/model/query.js';

/** The query language's grammar and checks (model/query.peggy, model/query.ts), without a workspace. */

const refusalOf = (query: string): ToolRefusal => {
  try {
    checkQuery(query);
  } catch (e) {
    if (e instanceof ToolRefusal) return e;
    throw e;
  }
  assert.fail(`'${query}' was read`);
};

describe('the grammar', () => {
  test('query-grammar.js is what peggy generates from query.peggy (npm run build:grammar)', () => {
    const grammar = readFileSync('lambda/workspace/model/query.peggy', 'utf8');

    const generated = peggy.generate(grammar, { output: 'source', format: 'es', grammarSource: 'lambda/workspace/model/query.peggy' });

    assert.equal(generated, readFileSync('lambda/workspace/model/query-grammar.js', 'utf8'));
  });
});

describe('checkQuery', () => {
  test('terms joined by spaces are one AND, whose terms narrow the read', () => {
    const q = checkQuery('assignee:me -status:done due<friday sort:due');

    assert.deepEqual(q.sort, { by: 'due', desc: false });
    assert.equal(q.namesPhase, true, 'status names the phase');
    const top = conjunctsOf(q.root);
    assert.deepEqual(
      top.map((c) => c.kind),
      ['term', 'not', 'term'],
    );
  });

  test('OR binds looser than AND, parentheses group, NOT and - negate', () => {
    const q = checkQuery('(due:today OR is:overdue) p1 NOT label:later');

    assert.equal(q.root?.kind, 'and');
    const [either, p1, not] = conjunctsOf(q.root);
    assert.equal(either?.kind, 'or');
    assert.deepEqual(p1, { kind: 'term', term: { at: 26, text: 'p1', field: 'priority', op: ':', value: 1 } });
    assert.equal(not?.kind, 'not');
    assert.equal(q.namesPhase, false, 'no term names the phase: open tasks only');
  });

  test('quoted values and quoted words keep their spaces', () => {
    const q = checkQuery('project:"Website relaunch" "press kit"');

    assert.deepEqual(
      termsOf(q.root).map((t) => [t.field, 'value' in t ? t.value : undefined]),
      [
        ['project', 'Website relaunch'],
        ['words', 'press kit'],
      ],
    );
  });

  test('an empty query, or only a sort, has no condition', () => {
    assert.deepEqual(checkQuery(''), { namesPhase: false });
    assert.deepEqual(checkQuery('sort:updated-desc'), { sort: { by: 'updated', desc: true }, namesPhase: false });
  });

  const refused: [string, number, RegExp][] = [
    ['assignee:me colour:red', 12, /'colour' is no field; the fields are assignee, no, project, status, is, label, priority, due/],
    ['label:"legal', 6, /opens a quote that is never closed; write it like label:"legal"/],
    ['(is:open p1', 0, /opens a parenthesis that is never closed/],
    ['is:open)', 7, /closes a parenthesis that was never opened/],
    ['is:open OR', 10, /cannot be read here \(the query ends where a term was expected\)/],
    ['sort:due sort:priority', 9, /is a second sort; give one/],
    ['(sort:due OR p1)', 1, /sorts the whole query, so it stands on its own/],
    ['priority=7', 0, /priority is 1 \(most urgent\) to 4/],
    ['has:wings', 0, /has is followed by one of files, subtasks, labels, due, blockers, assignee, project, parent, repeat/],
    ['status>done', 0, /status takes ':' only \(no >\)/],
  ];
  for (const [query, at, words] of refused) {
    test(`'${query}' is refused at ${at + 1}`, () => {
      const e = refusalOf(query);

      assert.equal(e.reason, 'invalid-argument');
      assert.equal(e.data.param, 'query');
      assert.equal(e.data.at, at);
      assert.match(e.message, new RegExp(`^query: at character ${at + 1}, `));
      assert.match(e.message, words);
    });
  }

  test('more than 20 terms is a limit, at the 21st', () => {
    const query = Array.from({ length: 21 }, (_, i) => `word${i}`).join(' ');

    const e = refusalOf(query);

    assert.equal(e.reason, 'limit');
    assert.equal(e.data.most, 20);
    assert.equal(e.data.at, query.indexOf('word20'));
  });
});
