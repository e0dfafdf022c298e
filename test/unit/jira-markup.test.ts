import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jiraToMarkdown } from '../../lambda/workspace/transfer/jira-markup.js';

// Jira's wiki markup (Description and Comment of its CSV export) as the Markdown doers keeps.

describe('jiraToMarkdown', () => {
  test('marks inside a line: bold, italic kept, strike-through, monospace', () => {
    assert.equal(jiraToMarkdown('a *bold* and _italic_ and -gone- word'), 'a **bold** and _italic_ and ~~gone~~ word');
    assert.equal(jiraToMarkdown('run {{npm test}} *now*'), 'run `npm test` **now**');
    assert.equal(jiraToMarkdown('a well-known, e-mail-like word'), 'a well-known, e-mail-like word', 'hyphens inside words are no strike');
    assert.equal(jiraToMarkdown('2 * 3 * 4'), '2 * 3 * 4', 'a star between spaces is no bold');
  });

  test('headings, quotes, rules', () => {
    assert.equal(jiraToMarkdown('h1. Title\nh3. Part *one*'), '# Title\n### Part **one**');
    assert.equal(jiraToMarkdown('bq. said once\n----'), '> said once\n---');
    assert.equal(jiraToMarkdown('{quote}one\ntwo{quote}'), '> one\n> two');
  });

  test('numbered and bulleted lists, nested', () => {
    assert.equal(jiraToMarkdown('# first\n# second\n## inner\n#* mixed'), '1. first\n1. second\n   1. inner\n   - mixed');
    assert.equal(jiraToMarkdown('* one\n** two\n- three'), '- one\n  - two\n- three');
    assert.equal(
      jiraToMarkdown('*bold start* of a line'),
      '**bold start** of a line',
      'a star without a space after is bold, not a bullet',
    );
  });

  test('code and noformat keep their text as it is', () => {
    assert.equal(jiraToMarkdown('{code:java}\nint *a* = b_c_d;\n{code}'), '```java\nint *a* = b_c_d;\n```');
    assert.equal(jiraToMarkdown('{code:title=Build.sh|borderStyle=solid}\nmake -j\n{code}'), '```\nmake -j\n```');
    assert.equal(jiraToMarkdown('before {noformat}*raw* [x|y]{noformat} after'), 'before ```\n*raw* [x|y]\n``` after');
  });

  test('links, mentions, images and attachments', () => {
    assert.equal(
      jiraToMarkdown('see [the docs|https://example.test/a_b] and [https://example.test]'),
      'see [the docs](https://example.test/a_b) and <https://example.test>',
    );
    assert.equal(jiraToMarkdown('ask [~accountid:5b10ac8d82e05b22cc7d4ef5]'), 'ask @5b10ac8d82e05b22cc7d4ef5');
    const files = new Map([['shot 1.png', 'https://acme.atlassian.net/secure/attachment/1/shot%201.png']]);
    assert.equal(
      jiraToMarkdown('!shot 1.png|width=1440,height=900! and !other.png! and !https://img.test/x.gif!', files),
      '![shot 1.png](https://acme.atlassian.net/secure/attachment/1/shot%201.png) and ![other.png](other.png) and ![x.gif](https://img.test/x.gif)',
    );
    assert.equal(jiraToMarkdown('[^report.pdf]', new Map([['report.pdf', 'https://a.test/r.pdf']])), '[report.pdf](https://a.test/r.pdf)');
    assert.equal(jiraToMarkdown('Wow! Really!'), 'Wow! Really!', 'exclamation marks in prose stay');
  });

  test('tables and colours', () => {
    assert.equal(jiraToMarkdown('||a||b||\n|1|*2*|'), '| a | b |\n| --- | --- |\n| 1 | **2** |');
    assert.equal(jiraToMarkdown('{color:red}alert{color}'), 'alert');
  });
});
