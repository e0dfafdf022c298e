import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { InvalidArgumentRefusal } from '../../lambda/errors.js';
import { MAX_MENTIONS, type MentionMember, mentionedIn, readMentions, showMentions } from '../../lambda/workspace/model/mentions.js';

const ADA = { userId: 'usr_ada', name: 'Ada Lovelace', email: 'ada@example.com' };
const GRACE = { userId: 'usr_grace', name: 'Grace Hopper', email: 'grace@example.com' };
const KELLY = { userId: 'usr_kelly', name: 'Grace Kelly', email: 'gk@example.com' };
const ANN = { userId: 'usr_ann', name: 'Ann', email: 'ann@example.com' };
const ANNA = { userId: 'usr_anna', name: 'Anna Smith', email: 'Anna.Smith@Example.com' };
const ALAN = { userId: 'usr_alan', name: 'Alan Turing', email: 'alan@example.com' };

const read = (text: string, members: readonly MentionMember[] = [ADA, GRACE, ALAN]) => readMentions(text, members, 'text');
const nameOf =
  (members: readonly MentionMember[]) =>
  (userId: string): string | undefined =>
    members.find((m) => m.userId === userId)?.name;

describe('a member named after @', () => {
  test('by a prefix that is one member name only, case aside', () => {
    assert.deepEqual(read('thanks @grace!'), { text: 'thanks <@usr_grace>!', mentioned: ['usr_grace'], unmatched: [] });
    assert.deepEqual(read('@AL, see this'), { text: '<@usr_alan>, see this', mentioned: ['usr_alan'], unmatched: [] });
  });

  test('by the whole name, or the longest run of words that is a prefix of one name', () => {
    assert.equal(read('@Grace Hopper said so').text, '<@usr_grace> said so');
    assert.equal(read('@grace hop said so').text, '<@usr_grace> said so');
    assert.equal(read('@ada lovelace.').text, '<@usr_ada>.');
  });

  test('a possessive or punctuation after the name stays as text', () => {
    assert.equal(read("@Ada's idea").text, "<@usr_ada>'s idea");
    assert.equal(read('(@alan) and "@grace"').text, '(<@usr_alan>) and "<@usr_grace>"');
  });

  test('a prefix of several names is no mention and is reported; more words decide', () => {
    const members = [ADA, GRACE, KELLY];

    assert.deepEqual(read('@grace please', members), { text: '@grace please', mentioned: [], unmatched: ['grace'] });
    assert.deepEqual(read('@grace kelly please', members), {
      text: '<@usr_kelly> please',
      mentioned: ['usr_kelly'],
      unmatched: [],
    });
  });

  test("a member's whole name wins over being a prefix of another's", () => {
    const members = [ANN, ANNA];

    assert.deepEqual(read('@Ann and @anna', members).mentioned, ['usr_ann', 'usr_anna']);
    assert.deepEqual(read('@an', members).unmatched, ['an']);
  });

  test('a name of nobody in the workspace stays text and is reported as written', () => {
    assert.deepEqual(read('ask @Bob Smith and @Bob'), { text: 'ask @Bob Smith and @Bob', mentioned: [], unmatched: ['Bob'] });
  });

  test('each person is mentioned once, in the order first named', () => {
    const r = read('@grace @ada @Grace Hopper');

    assert.equal(r.text, '<@usr_grace> <@usr_ada> <@usr_grace>');
    assert.deepEqual(r.mentioned, ['usr_grace', 'usr_ada']);
  });
});

describe('a member named by e-mail', () => {
  test('after @, case aside', () => {
    const r = read('cc @ADA@Example.com.', [ADA, ANNA]);
    const anna = read('cc @anna.smith@example.com', [ADA, ANNA]);

    assert.deepEqual(r, { text: 'cc <@usr_ada>.', mentioned: ['usr_ada'], unmatched: [] });
    assert.deepEqual(anna.mentioned, ['usr_anna']);
  });

  test('an address in running text is plain text, not a mention', () => {
    assert.deepEqual(read('write to ada@example.com'), { text: 'write to ada@example.com', mentioned: [], unmatched: [] });
  });

  test('an address of no member is reported whole, not read as a name', () => {
    assert.deepEqual(read('@grace@elsewhere.org and @grace@example'), {
      text: '@grace@elsewhere.org and @grace@example',
      mentioned: [],
      unmatched: ['grace@elsewhere.org', 'grace@example'],
    });
  });
});

describe('what is not a mention', () => {
  test('@ after a letter, digit or another @, or before a space or punctuation', () => {
    for (const text of ['x@ada', '2@grace', '@@ada', 'meet @ 5pm', '@!grace', 'a<@grace>']) {
      assert.deepEqual(read(text), { text, mentioned: [], unmatched: [] }, text);
    }
  });

  test('code spans and fenced blocks are not read; a backtick nobody closes is plain text', () => {
    assert.equal(read('`@ada` and ``x ` @ada`` then @alan').text, '`@ada` and ``x ` @ada`` then <@usr_alan>');
    assert.equal(read('```\n@ada\n```\n@grace').text, '```\n@ada\n```\n<@usr_grace>');
    assert.equal(read('a ` then @ada').text, 'a ` then <@usr_ada>');
  });
});

describe('the stored form', () => {
  test('shows the current name, and a removed member as a former member', () => {
    const stored = read('@grace, @ada: look').text;

    assert.equal(showMentions(stored, nameOf([ADA, GRACE])), '@Grace Hopper, @Ada Lovelace: look');
    assert.equal(showMentions(stored, nameOf([{ ...GRACE, name: 'Grace B. Hopper' }])), '@Grace B. Hopper, @former member: look');
  });

  test('a reference already stored is kept, and counts when it names a member', () => {
    const r = read('<@usr_grace> and <@usr_gone>, @ada');

    assert.equal(r.text, '<@usr_grace> and <@usr_gone>, <@usr_ada>');
    assert.deepEqual(r.mentioned, ['usr_grace', 'usr_ada'], 'someone no longer a member is not told');
    assert.deepEqual(mentionedIn(r.text), ['usr_grace', 'usr_gone', 'usr_ada']);
  });

  test('a reference inside a code span is text, read and shown as written', () => {
    const stored = '`<@usr_ada>` <@usr_grace>';

    assert.deepEqual(mentionedIn(stored), ['usr_grace']);
    assert.equal(showMentions(stored, nameOf([ADA, GRACE])), '`<@usr_ada>` @Grace Hopper');
    assert.deepEqual(read(stored).mentioned, ['usr_grace']);
  });
});

describe('a mention storm', () => {
  const crowd = Array.from({ length: MAX_MENTIONS + 1 }, (_, i) => ({
    userId: `usr_m${i}`,
    name: `Member${i} Test`,
    email: `m${i}@example.com`,
  }));

  test(`${MAX_MENTIONS} people are mentioned; one more is refused naming the argument`, () => {
    const twenty = crowd
      .slice(0, MAX_MENTIONS)
      .map((m) => `@${m.name}`)
      .join(' ');
    const all = `${crowd.map((m) => `@${m.name}`).join(' ')} @Member0 Test`;

    assert.equal(readMentions(twenty, crowd, 'body').mentioned.length, MAX_MENTIONS);
    assert.throws(
      () => readMentions(all, crowd, 'body'),
      (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentRefusal);
        assert.match(err.message, /^body: mentions 21 people; a text mentions at most 20/);
        assert.equal(err.reason, 'limit');
        assert.deepEqual(err.data, { param: 'body', count: 21, most: 20 });
        return true;
      },
    );
  });

  test('the same person many times is one', () => {
    assert.deepEqual(readMentions('@member3 '.repeat(50), crowd, 'body').mentioned, ['usr_m3']);
  });
});

describe('properties', () => {
  const FIRST = ['Ada', 'Grace', 'Alan', 'Ann', 'Anna', 'Zoë', "O'Brien", 'Jean-Luc', 'Li'];
  const LAST = ['Lovelace', 'Hopper', 'Turing', 'Smith', 'Kelly', 'de la Cruz', ''];
  const membersArb = fc.array(fc.tuple(fc.constantFrom(...FIRST), fc.constantFrom(...LAST)), { minLength: 1, maxLength: 6 }).map((names) =>
    names.map(([first, last], i) => ({
      userId: `usr_${i}`,
      name: `${first} ${last}`.trim(),
      email: `${first.toLowerCase().replace(/[^a-z]/g, '')}${i}@example.com`,
    })),
  );
  const PLAIN = [
    'hello',
    'and',
    ',',
    '.',
    "'s",
    '(',
    ')',
    '"',
    'x@y.com',
    '`code @ada`',
    '```',
    '`',
    'ping',
    '<@usr_0>',
    '<@usr_9>',
    'Kelly',
  ];
  const fragmentArb = (members: MentionMember[]) =>
    fc.oneof(
      fc.constantFrom(...PLAIN),
      fc.string({ maxLength: 6 }),
      fc.tuple(fc.constantFrom(...members), fc.nat({ max: 30 }), fc.constantFrom('lower', 'upper', 'as')).map(([m, n, caseOf]) => {
        const said = m.name.slice(0, Math.max(1, n));
        return `@${caseOf === 'lower' ? said.toLowerCase() : caseOf === 'upper' ? said.toUpperCase() : said}`;
      }),
      fc.constantFrom(...members).map((m) => `@${m.email}`),
      fc.constantFrom('@bob', '@nobody@example.com', '@'),
    );
  const caseArb = membersArb.chain((members) =>
    fc
      .array(fc.tuple(fragmentArb(members), fc.constantFrom(' ', '\n', '', '  ', '\t')), { maxLength: 14 })
      .map((parts) => ({ members, text: parts.map(([f, sep]) => f + sep).join('') })),
  );

  test('shown text names exactly the mentioned members; reading the stored form again changes nothing', () => {
    fc.assert(
      fc.property(caseArb, ({ members, text }) => {
        const r = readMentions(text, members, 'text');
        const shown = showMentions(r.text, (id) => `⟦${id}⟧`);
        const named = [...new Set([...shown.matchAll(/⟦(usr_\d+)⟧/g)].map((m) => m[1]!))];
        const ids = new Set(members.map((m) => m.userId));

        assert.deepEqual(
          named.filter((id) => ids.has(id)),
          r.mentioned,
        );
        assert.deepEqual(readMentions(r.text, members, 'text'), r);
        assert.deepEqual(
          mentionedIn(r.text).filter((id) => ids.has(id)),
          r.mentioned,
        );
        if (!text.includes('@')) assert.equal(r.text, text);
        if (!text.includes('<@')) assert.deepEqual(named, r.mentioned, 'every reference made names a member');
      }),
      { numRuns: 500 },
    );
  });

  test('text without @ is left as it is, read or shown', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 60 }).filter((t) => !t.includes('@')),
        membersArb,
        (text, members) => {
          assert.deepEqual(readMentions(text, members, 'text'), { text, mentioned: [], unmatched: [] });
          assert.equal(
            showMentions(text, () => 'X'),
            text,
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  test('any text at all is read without error, and reading its stored form again changes nothing', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), membersArb, (text, members) => {
        const r = readMentions(text, members, 'text');
        assert.deepEqual(readMentions(r.text, members, 'text'), r);
      }),
      { numRuns: 300 },
    );
  });
});
