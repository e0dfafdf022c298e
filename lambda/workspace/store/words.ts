import { WORD_PREFIX_LENGTH } from '../../platform/item-keys.js';
import { nothingToSearchBy, tooManySearchWords } from '../model/refusals.js';
import type { Task } from '../model/types.js';

/**
 * The words a task is found by, and the words a search asks for, reduced alike: split where
 * Intl's word segmenter splits (so scripts without spaces split into words too), accents and case
 * folded (`Café` → `cafe`), words shorter than three characters and the commonest English ones left
 * out. A task is found by the words of its title and labels, and by the first few words of its notes
 * (the start of a note says what it is about; every word of long notes would cost a write each).
 */

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });

/** Words too common to find anything by. */
const STOP_WORDS = new Set(
  (
    'the and for with from that this these those into onto about are was were will would have has had not but you your our ' +
    'all any can its his her they them their there then than what when which who why how its also just some such'
  ).split(' '),
);

/** How many words of the notes a task is found by. */
export const NOTES_WORDS = 8;
/** How many words one task is found by at most (each is an item its changes write). */
export const MAX_TASK_WORDS = 40;
/** How many words a search may ask for. */
export const MAX_SEARCH_WORDS = 6;

/**
 * How much of a word its entry keys (a key holds at most 1 KB): a longer word is found by its first
 * 32 characters, and every search checks the whole words of the tasks it reads.
 */
export const INDEXED_WORD_LENGTH = 32;
export const indexedWord = (w: string): string => [...w].slice(0, INDEXED_WORD_LENGTH).join('');

export const fold = (text: string): string => text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

/** The distinct words of a text worth finding it by, in the order they first appear. */
export const wordsOf = (text: string, most = Number.POSITIVE_INFINITY): string[] => {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const s of segmenter.segment(fold(text))) {
    if (!s.isWordLike) continue;
    const w = s.segment;
    if ([...w].length < WORD_PREFIX_LENGTH || STOP_WORDS.has(w) || seen.has(w)) continue;
    seen.add(w);
    out.push(w);
    if (out.length >= most) break;
  }
  return out;
};

/** What of the notes a task keeps on itself to be found by (its index entries and search checks use it). */
export const notesWordsOf = (notes: string | undefined): string[] =>
  notes ? [...new Set(wordsOf(notes, NOTES_WORDS).map(indexedWord))] : [];

/** Every word a task is found by: its title's, its labels', and its notes' first words (`nw` on the item). */
export const taskWords = (t: Pick<Task, 'title' | 'labels'> & { readonly nw?: readonly string[] }): string[] => {
  const all = new Set<string>([...wordsOf(t.title), ...t.labels.flatMap((l) => wordsOf(l)), ...(t.nw ?? [])].map(indexedWord));
  return [...all].slice(0, MAX_TASK_WORDS);
};

/** A label as its entry keys it: folded, so `Finance` and `finance` are one label. */
export const labelKey = (label: string): string => fold(label);

/**
 * The words a search asks for. Refused, naming `text`, when nothing is left to search by (only short
 * or common words, or punctuation) or when it asks for too many.
 */
export const searchWords = (text: string): string[] => {
  const words = wordsOf(text);
  if (!words.length) {
    throw nothingToSearchBy(text, WORD_PREFIX_LENGTH);
  }
  if (words.length > MAX_SEARCH_WORDS) throw tooManySearchWords(MAX_SEARCH_WORDS);
  return words;
};

/** Whether a task has a word starting with each of `words`, and how many of them it has whole. */
export const matchOf = (taskWordList: readonly string[], words: readonly string[]): { all: boolean; whole: number } => {
  let whole = 0;
  for (const w of words.map(indexedWord)) {
    if (taskWordList.includes(w)) whole++;
    else if (!taskWordList.some((t) => t.startsWith(w))) return { all: false, whole };
  }
  return { all: true, whole };
};
