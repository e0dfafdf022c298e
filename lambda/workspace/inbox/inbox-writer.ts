import { requireRole } from '../membership/rules.js';
import type { Caller } from '../model/caller.js';
import type { DueReminder, EntryState, InboxEntry } from '../store/inbox-store.js';
import type { WorkspaceStores } from '../store/stores.js';
import { writesOf } from '../store/writes.js';

/**
 * The one writer of inboxes (docs/notifications.md): the notifier files entries, the minute job takes
 * reminders out of their minute and moves its cursors, and a member marks their own entries. No
 * entry is written in a change's transaction: the change writes its activity record, and the
 * notifier makes entries from it afterwards, so telling people never slows or fails a change.
 */

/** At most this many entries change in one inbox_mark. */
export const MARK_LIMIT = 500;

/** Files an entry unless it is there (a record delivered again): whether it was filed now. */
export const fileEntry = (stores: WorkspaceStores, workspaceId: string, entry: InboxEntry, expiresAt: number): Promise<boolean> =>
  writesOf(stores).inbox.putEntry(workspaceId, entry, expiresAt);

export const noteMailed = (stores: WorkspaceStores, workspaceId: string, userId: string, entryId: string): Promise<void> =>
  writesOf(stores).inbox.markMailed(workspaceId, userId, entryId);

/** True for the one runner that tells the reminder now (others wait, or take it over once the lease is old). */
export const leaseReminder = (stores: WorkspaceStores, due: DueReminder, now: Date): Promise<boolean> =>
  writesOf(stores).inbox.leaseReminder(due, now);

export const firedReminder = (stores: WorkspaceStores, due: DueReminder, now: Date): Promise<void> =>
  writesOf(stores).inbox.firedReminder(due, now);

export const noteDigested = (
  stores: WorkspaceStores,
  sub: { workspaceId: string; userId: string },
  utcHour: string,
  lastEntryId: string,
): Promise<void> => writesOf(stores).inbox.digested(sub, utcHour, lastEntryId);

/** A digest filed under the UTC hour its local hour fell on before a clock change: filed under the one it falls on now. */
export const refileDigest = (
  stores: WorkspaceStores,
  sub: { workspaceId: string; userId: string; lastEntryId?: string },
  from: string,
  to: string | undefined,
): Promise<void> => writesOf(stores).commit(writesOf(stores).inbox.digestOps(sub.workspaceId, sub.userId, to, from, sub.lastEntryId));

export const moveCursor = (stores: WorkspaceStores, name: string, value: string): Promise<void> =>
  writesOf(stores).inbox.setCursor(name, value);

/**
 * Marks the caller's own entries: the ones named, or every one at or before `upTo` that is not yet in
 * `state` (read: the unread ones; done: the unread and the read ones). Returns how many moved, and
 * whether more are left past the limit.
 */
export const markEntries = async (
  stores: WorkspaceStores,
  caller: Caller,
  target: { readonly entries: readonly string[] } | { readonly upTo: string },
  state: Exclude<EntryState, 'unread'>,
): Promise<{ marked: number; wereUnread: number; more: boolean }> => {
  requireRole(caller, 'viewer', 'marking your inbox');
  const { workspaceId, userId } = caller;
  if ('entries' in target) return { ...(await writesOf(stores).inbox.mark(workspaceId, userId, target.entries, state)), more: false };
  const from: EntryState[] = state === 'read' ? ['unread'] : ['unread', 'read'];
  const ids = (await Promise.all(from.map((s) => stores.inbox.idsUpTo(workspaceId, userId, s, target.upTo, MARK_LIMIT + 1)))).flat();
  const more = ids.length > MARK_LIMIT;
  return { ...(await writesOf(stores).inbox.mark(workspaceId, userId, ids.slice(0, MARK_LIMIT), state)), more };
};
