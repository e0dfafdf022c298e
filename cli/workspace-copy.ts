import { randomBytes } from 'node:crypto';
import { ACTIVITY_SHARDS, shardOf, WORKSPACE_COUNT_SHARDS, WORKSPACE_SK, wsPk } from '../lambda/platform/item-keys.js';
import { type Workspace, workspaceKeyOf } from '../lambda/vocabulary.js';

/**
 * A doers export made into a copy of itself under another workspace (`import --as KEY`): a new
 * workspace id, and every id the workspace made new (tasks, projects, comments, attachments,
 * activity records and the calls they belong to, saved views, webhooks), each the same everywhere it
 * appears (keys, index keys, links, records, a map's keys), so one export can be imported twice
 * side by side. What an id sorts by is kept (a comment's UUIDv7 and a record's id keep their time),
 * and so is the shard a partition is chosen by (a task's counts, a call's records): only the
 * random part changes. Member ids stay: a member is found by workspace and id.
 */

type Item = Record<string, unknown>;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** A record's id (`act_` + 10 of time + 6 random), the part before a bulk item's `.07`. */
const ACTIVITY = /act_[0-9a-hjkmnp-tv-z]{16}/g;
const VIEW = /view_[0-9a-v]{16}/g;
const HOOK = /hook_[0-9a-f]{16}/g;
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const HEX = '0123456789abcdef';
const VIEW_ALPHABET = '0123456789abcdefghijklmnopqrstuv';

const randomChars = (alphabet: string, n: number): string => [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join('');

/** A new id like `old`: the first `keep` characters kept (its time), the rest random, in the same shard. */
const sameShard = (old: string, make: () => string, shards?: number): string => {
  for (;;) {
    const id = make();
    if (id !== old && (shards === undefined || shardOf(id, shards) === shardOf(old, shards))) return id;
  }
};

const newUuid = (old: string): string =>
  sameShard(
    old,
    () => {
      // Keeps the first 48 bits (a UUIDv7's time) and the version; the variant nibble stays 8-b.
      const tail = randomChars(HEX, 16);
      return `${old.slice(0, 15)}${tail.slice(0, 3)}-${'89ab'[Number.parseInt(tail[3]!, 16) % 4]}${tail.slice(4, 7)}-${tail.slice(7, 16)}${randomChars(HEX, 3)}`;
    },
    WORKSPACE_COUNT_SHARDS,
  );

export interface CopyOptions {
  /** The copy's workspace id. */
  readonly workspaceId: string;
  /** Its task key (KEY-12): the export's key joins its past keys, so the history's names still find their tasks. */
  readonly key: string;
}

export interface Copy {
  readonly items: Item[];
  /** A new attachment id → the old one (its file beside the export is named by the old). */
  readonly oldAttachmentId: ReadonlyMap<string, string>;
  /** How many ids were made new, by kind. */
  readonly remapped: { readonly ids: number };
}

/** Attributes that hold the ids a workspace makes: an id found in one of them is the workspace's. */
const KEY_ATTRIBUTES = new Set(['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk']);
const ID_PATTERNS = [UUID, ACTIVITY, VIEW, HOOK];

/**
 * The ids the export's items themselves are or name in their keys and id attributes: only those are
 * made new. A UUID a person wrote in a title or a comment (a Sentry event, a Teams webhook's URL)
 * is theirs, and stays as written.
 */
const idsDefinedBy = (items: readonly Item[]): Set<string> => {
  const found = new Set<string>();
  for (const item of items)
    for (const [k, v] of Object.entries(item)) {
      if (typeof v !== 'string' || !(KEY_ATTRIBUTES.has(k) || /Id$/.test(k))) continue;
      for (const pattern of ID_PATTERNS) for (const m of v.matchAll(pattern)) found.add(m[0]);
    }
  return found;
};

export const copyWorkspace = (from: string, items: readonly Item[], opts: CopyOptions): Copy => {
  const defined = idsDefinedBy(items);
  const ids = new Map<string, string>();
  const mapped = (old: string, make: (old: string) => string): string => {
    if (!defined.has(old)) return old;
    let id = ids.get(old);
    if (!id) {
      id = make(old);
      ids.set(old, id);
    }
    return id;
  };
  const oldPartition = wsPk(from);
  const text = (s: string): string => {
    if (s === from) return opts.workspaceId;
    let out =
      s.startsWith(oldPartition) && (s.length === oldPartition.length || s[oldPartition.length] === '#')
        ? `${wsPk(opts.workspaceId)}${s.slice(oldPartition.length)}`
        : s;
    out = out
      .replace(UUID, (u) => mapped(u, newUuid))
      .replace(ACTIVITY, (a) =>
        mapped(a, (old) => sameShard(old, () => `${old.slice(0, 14)}${randomChars(CROCKFORD, 6)}`, ACTIVITY_SHARDS)),
      )
      .replace(VIEW, (v) => mapped(v, (old) => sameShard(old, () => `view_${randomChars(VIEW_ALPHABET, 16)}`)))
      .replace(HOOK, (h) => mapped(h, (old) => sameShard(old, () => `hook_${randomChars(HEX, 16)}`)));
    return out;
  };
  const value = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(value);
    if (v instanceof Set) return new Set([...v].map(value));
    if (v instanceof Uint8Array || v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v as Item).map(([k, x]) => [text(k), value(x)]));
  };
  const oldAttachmentId = new Map<string, string>();
  const out = items.map((item) => {
    const copy = value(item) as Item;
    if (typeof item.attachmentId === 'string') oldAttachmentId.set(String(copy.attachmentId), item.attachmentId);
    if (copy.pk === wsPk(opts.workspaceId) && copy.sk === WORKSPACE_SK) {
      const oldKey = typeof item.name === 'string' ? workspaceKeyOf(item as unknown as Workspace) : undefined;
      const past = [...((item.pastKeys as string[] | undefined) ?? []), ...(oldKey ? [oldKey] : [])].filter((k) => k !== opts.key);
      return { ...copy, key: opts.key, ...(past.length ? { pastKeys: [...new Set(past)] } : {}) };
    }
    return copy;
  });
  return { items: out, oldAttachmentId, remapped: { ids: ids.size } };
};
