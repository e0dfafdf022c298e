import { BoundedMap } from '../../platform/bounded-map.js';
import { WORKSPACE_SK, wsPk } from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import type { Member, Principal } from '../../vocabulary.js';

/** What a snapshot is looked up by: the workspace, and its directory version as read with the caller. */
type Reader = Pick<Principal, 'workspaceId' | 'directoryVersion'>;

import { workspaceNotFound } from '../model/refusals.js';
import type { Project } from '../model/types.js';

/** The people and projects of a workspace: what turns ids into names, and what an id is checked against. */
export interface Names {
  readonly members: ReadonlyMap<string, Member>;
  readonly projects: ReadonlyMap<string, Project>;
  /** What the workspace's task keys start with (views add it from the principal). */
  readonly workspaceKey?: string;
}

/** Ids a caller needs in the directory; a snapshot without one of them is read again. */
export interface NeededIds {
  readonly members?: readonly (string | undefined)[];
  readonly projects?: readonly (string | undefined)[];
}

export interface NamesSource {
  /** The workspace's directory as of the principal's `directoryVersion` (or later). */
  get(principal: Reader, needs?: NeededIds): Promise<Names>;
  /** After such a write committed: this instance's snapshot is read again on its next use. */
  forget(workspaceId: string): void;
}

/**
 * The directory's version raised in a member or project write (store/writes.ts).
 */
export interface NamesWrites {
  /** The same announcement as part of the change's own all-or-nothing write. */
  changeOp(workspaceId: string): WriteOp;
}

/**
 * A snapshot is read again after this long even when no change was announced. Every member and
 * project write, through whichever door, raises the version in its own transaction (their writers'
 * `changeOp`), so only a data dir or table edited by hand leaves a snapshot stale; this bounds that. It was a minute, which
 * made a warm instance re-read an unchanged directory (two queries) on the first call of each
 * minute: agenda_get cost 5 requests as deployed instead of 3 (test/e2e/request-count.test.ts).
 */
const MAX_AGE_MS = 60 * 60_000;
const MAX_WORKSPACES = 1_000;

const covers = (names: Names, needs: NeededIds | undefined): boolean =>
  (needs?.members ?? []).every((id) => id === undefined || names.members.has(id)) &&
  (needs?.projects ?? []).every((id) => id === undefined || names.projects.has(id));

/**
 * Every task view shows names and every task write checks its assignee and project, so reading
 * all members and projects on each call would cost two queries a call. Instead each instance keeps
 * a snapshot per workspace, stamped with the workspace's `directoryVersion`, which every member or
 * project write raises. The credential check reads the workspace item anyway (strongly consistent),
 * so a snapshot is known to be current without a request; a change made elsewhere is seen from the
 * next request whose principal is read fresh (within DOERS_AUTH_CACHE_SECONDS). An id the snapshot
 * lacks (made elsewhere a moment ago) makes it read again before anything is refused.
 */
export class DirectoryNames implements NamesSource, NamesWrites {
  private readonly snapshots = new BoundedMap<string, { readonly version: number; readonly atMs: number; readonly names: Promise<Names> }>(
    MAX_WORKSPACES,
  );

  constructor(
    private readonly table: string,
    private readonly load: (workspaceId: string) => Promise<Names>,
  ) {}

  async get(principal: Reader, needs?: NeededIds): Promise<Names> {
    const ws = principal.workspaceId;
    const snap = this.snapshots.get(ws);
    if (snap && snap.version >= principal.directoryVersion && Date.now() - snap.atMs < MAX_AGE_MS) {
      const names = await snap.names.catch(() => undefined);
      if (names && covers(names, needs)) return names;
    }
    const entry = { version: principal.directoryVersion, atMs: Date.now(), names: this.load(ws) };
    this.snapshots.set(ws, entry);
    // A failed read is not kept (the next call reads again), unless a newer one replaced it already.
    entry.names.catch(() => this.snapshots.get(ws) === entry && this.snapshots.delete(ws));
    return entry.names;
  }

  changeOp(workspaceId: string): WriteOp {
    return directoryChangeOp(this.table, workspaceId);
  }

  forget(workspaceId: string): void {
    this.snapshots.delete(workspaceId);
  }
}

/** Raises the workspace's `directoryVersion` inside another write (which fails if the workspace is gone). */
export const directoryChangeOp = (table: string, workspaceId: string): WriteOp => ({
  item: {
    Update: {
      TableName: table,
      Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
      UpdateExpression: 'ADD directoryVersion :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':one': 1 },
    },
  },
  refused: () => {
    throw workspaceNotFound(workspaceId);
  },
});
