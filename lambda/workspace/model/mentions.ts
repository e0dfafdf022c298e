import { MAX_MENTIONS } from './limits.js';
import { mentionStorm } from './refusals.js';

export { MAX_MENTIONS } from './limits.js';

/**
 * `@mentions` in a comment or a task's notes. What is stored keeps `<@usr_…>` (the member's userId)
 * in place of the words that named them, so a mention survives the member's change of name and
 * answers show the name of now (`@Name`; `@former member` for someone no longer in the workspace).
 *
 * A mention is `@` at the start of the text or after whitespace or opening punctuation, then:
 * - an e-mail address (`@ada@example.com`), matched to a member's case-insensitively. An address in
 *   running text (`ada@example.com`) is no mention: its `@` follows a letter;
 * - or a member's display name: the longest run of up to MAX_NAME_WORDS words that is, case
 *   aside, exactly one member's whole name, or else a prefix of exactly one member's name
 *   (`@grace` is Grace Hopper while she is the only Grace). A whole name is tried first at each
 *   length, so a member called "Ann" is `@Ann` even beside "Anna Smith"; a name's end may carry a
 *   possessive or punctuation (`@Grace's`, `@grace,`), which stays as text after the reference.
 * An `@` followed by words that name nobody, or several, stays plain text and is reported in
 * `unmatched` as written, so the tool can say who was not told.
 *
 * Text in code spans (`...`, ```...```, as Markdown pairs backtick runs of one length) is not read,
 * and `<@usr_…>` there is shown as written. `<@usr_…>` elsewhere is kept as it is (an update may
 * send back text it read in stored form), and counts as a mention of that member when the member
 * is in `members`; one naming someone else stays, and tells no one.
 */

export interface MentionMember {
  readonly userId: string;
  readonly name: string;
  readonly email: string;
}

export interface MentionsRead {
  /** The stored form. */
  readonly text: string;
  /** userIds, in order, unique. */
  readonly mentioned: readonly string[];
  /** The words after @ that matched nobody or several, as written (unique). */
  readonly unmatched: readonly string[];
}

/** A display name is matched on up to this many words after `@` (a whole name on up to WHOLE_NAME_WORDS). */
const MAX_NAME_WORDS = 4;
const WHOLE_NAME_WORDS = 8;

const TOKEN = /<@(usr_[A-Za-z0-9_-]+)>/y;
/** What may stand before a mention's `@`: whitespace or opening punctuation (a `>` ends a reference). */
const OPENER = /[\s([{"'“‘«]/u;
/** A word of a name: letters and digits, with apostrophes, hyphens and dots inside (O'Brien, Jean-Luc, J.R.). */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’.-]*/uy;
const GAP = /[ \t]+/y;
/**
 * An address after `@` (anything shaped local@domain, so `@grace@example` is reported as an address
 * that matched no one rather than read as `@grace`); its end stops before a full stop that ends a sentence.
 */
const EMAIL = /[\p{L}\p{N}._%+'-]+@[\p{L}\p{N}.-]*[\p{L}\p{N}]/uy;
const STARTS_WORD = /[\p{L}\p{N}]/u;

const fold = (s: string): string => s.trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * Where the code spans of `text` are, as [start, end) pairs: a run of n backticks opens one that
 * the next run of exactly n closes; a run that nothing closes is plain text.
 */
const codeSpans = (text: string): Map<number, number> => {
  const spans = new Map<number, number>();
  const runs = [...text.matchAll(/`+/g)].map((m) => ({ at: m.index, n: m[0].length }));
  for (let i = 0; i < runs.length; i++) {
    const close = runs.findIndex((r, j) => j > i && r.n === runs[i]!.n);
    if (close < 0) continue;
    spans.set(runs[i]!.at, runs[close]!.at + runs[close]!.n);
    i = close;
  }
  return spans;
};

/**
 * Walks `text` outside code spans, calling `onToken` at each `<@usr_…>` and `onAt` at each `@`
 * that may start a mention (each returns where to go on from); copies the rest to the result.
 */
const walk = (
  text: string,
  onToken: (userId: string, raw: string) => string,
  onAt?: (at: number) => { end: number; out: string } | undefined,
): string => {
  const spans = codeSpans(text);
  let out = '';
  let i = 0;
  while (i < text.length) {
    const spanEnd = spans.get(i);
    if (spanEnd !== undefined) {
      out += text.slice(i, spanEnd);
      i = spanEnd;
      continue;
    }
    if (text[i] === '<') {
      TOKEN.lastIndex = i;
      const m = TOKEN.exec(text);
      if (m) {
        out += onToken(m[1]!, m[0]);
        i += m[0].length;
        continue;
      }
    }
    if (onAt && text[i] === '@' && (i === 0 || OPENER.test(text[i - 1]!)) && STARTS_WORD.test(text[i + 1] ?? '')) {
      const hit = onAt(i);
      if (hit) {
        out += hit.out;
        i = hit.end;
        continue;
      }
    }
    out += text[i];
    i++;
  }
  return out;
};

/** The words after `@` at `from`: each word's [start, end) up to WHOLE_NAME_WORDS, one space or tab between. */
const wordsAt = (text: string, from: number): [number, number][] => {
  const words: [number, number][] = [];
  let i = from;
  while (words.length < WHOLE_NAME_WORDS) {
    if (words.length) {
      GAP.lastIndex = i;
      const gap = GAP.exec(text);
      if (!gap) break;
      i += gap[0].length;
    }
    WORD.lastIndex = i;
    const w = WORD.exec(text);
    if (!w) break;
    words.push([i, i + w[0].length]);
    i += w[0].length;
  }
  return words;
};

/** A name's end without what follows a name in a sentence: a possessive, a full stop, a hyphen. */
const trimEnd = (words: string): string => words.replace(/['’.-]+$/, '').replace(/['’]s$/i, '');

/**
 * Reads mentions in `text` against the workspace's members (`param` names the argument in the
 * refusal): the stored form, whom it mentions, and the words that matched no one. Refuses a text
 * that mentions more than MAX_MENTIONS people. Reading its own output again gives the same.
 */
export function readMentions(text: string, members: readonly MentionMember[], param: string): MentionsRead {
  const byId = new Map(members.map((m) => [m.userId, m]));
  const byEmail = new Map<string, MentionMember[]>();
  for (const m of members) byEmail.set(fold(m.email), [...(byEmail.get(fold(m.email)) ?? []), m]);
  const names = members.map((m) => ({ member: m, name: fold(m.name) })).filter((n) => n.name);
  const mentioned = new Set<string>();
  const unmatched = new Set<string>();
  const reference = (m: MentionMember): string => {
    mentioned.add(m.userId);
    return `<@${m.userId}>`;
  };

  const stored = walk(
    text,
    (userId, raw) => {
      if (byId.has(userId)) mentioned.add(userId);
      return raw;
    },
    (at) => {
      EMAIL.lastIndex = at + 1;
      const email = EMAIL.exec(text);
      if (email) {
        const found = byEmail.get(email[0].toLowerCase()) ?? [];
        if (found.length === 1) return { end: at + 1 + email[0].length, out: reference(found[0]!) };
        unmatched.add(email[0]);
        return { end: at + 1 + email[0].length, out: text.slice(at, at + 1 + email[0].length) };
      }
      const words = wordsAt(text, at + 1);
      let several: string | undefined;
      for (let k = words.length; k >= 1; k--) {
        const written = trimEnd(text.slice(at + 1, words[k - 1]![1]));
        if (!written) continue;
        const said = fold(written);
        const whole = names.filter((n) => n.name === said);
        const prefix = k <= MAX_NAME_WORDS && whole.length === 0 ? names.filter((n) => n.name.startsWith(said)) : [];
        const found = whole.length ? whole : prefix;
        if (found.length === 1) return { end: at + 1 + written.length, out: reference(found[0]!.member) };
        if (found.length > 1) several ??= written;
      }
      const first = words[0] ? trimEnd(text.slice(words[0][0], words[0][1])) : '';
      if (several ?? first) unmatched.add(several ?? first);
      return undefined;
    },
  );
  if (mentioned.size > MAX_MENTIONS) throw mentionStorm(param, mentioned.size, MAX_MENTIONS);
  return { text: stored, mentioned: [...mentioned], unmatched: [...unmatched] };
}

/** Stored text as a reader sees it: each reference as `@` and the member's name of now (`@former member` once gone). */
export function showMentions(stored: string, nameOf: (userId: string) => string | undefined): string {
  return walk(stored, (userId) => `@${nameOf(userId) ?? 'former member'}`);
}

/** The userIds stored text refers to (outside code spans), in order, unique. */
export function mentionedIn(stored: string): string[] {
  const ids = new Set<string>();
  walk(stored, (userId, raw) => {
    ids.add(userId);
    return raw;
  });
  return [...ids];
}
