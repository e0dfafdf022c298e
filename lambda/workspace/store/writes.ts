import type { GrantWrites } from '../../auth/grants.js';
import type { TokenWrites } from '../../auth/personal-tokens.js';
import type { WriteOp } from '../../platform/transact.js';
import type { ActivityWrites } from './activity-store.js';
import type { AttachmentWrites } from './attachment-store.js';
import type { CallClaims } from './call-claims.js';
import type { CommentWrites } from './comment-store.js';
import type { DirectoryWrites } from './directory-store.js';
import type { InboxWrites } from './inbox-store.js';
import type { NamesWrites } from './names.js';
import type { ProjectWrites } from './project-store.js';
import type { TaskNumbers } from './task-numbers.js';
import type { TaskWrites } from './task-store.js';
import type { ViewWrites } from './view-store.js';
import type { WebhookWrites } from './webhook-store.js';

/**
 * The item-writing part of the stores: the ops each kind's change writes and the two ways to send
 * them. Only the writers (workspace/tasks, projects, comments, attachments, membership, views) and the
 * operator's own room (workspace/admin) import this module, and a rule in npm test keeps it so
 * (.dependency-cruiser.cjs, `writers-only-write`): a tool, the account page, the admin CLI, the seed,
 * an undo can read through the stores' bag, and change things only by calling a writer.
 */
export interface StoreWrites {
  readonly tasks: TaskWrites;
  readonly projects: ProjectWrites;
  readonly comments: CommentWrites;
  readonly attachments: AttachmentWrites;
  readonly activity: ActivityWrites;
  /** New task numbers: the counter, the claims. */
  readonly numbers: TaskNumbers;
  readonly names: NamesWrites;
  readonly directory: DirectoryWrites;
  readonly tokens: TokenWrites;
  readonly grants: GrantWrites;
  /** Claims of calls that must not be made twice. */
  readonly calls: CallClaims;
  readonly views: ViewWrites;
  /** Inbox entries, watch choices, reminders' minutes, digest hours (the notifier's and the task writer's). */
  readonly inbox: InboxWrites;
  /** Webhooks added and removed (the webhook writer's). */
  readonly webhooks: WebhookWrites;
  /** Writes the ops all together or not at all (one TransactWriteItems; platform/transact.ts). */
  readonly commit: (ops: readonly WriteOp[]) => Promise<void>;
  /** Writes independent groups, each all or nothing, in as few transactions as fit; each group's error or undefined. */
  readonly commitEach: (groups: readonly (readonly WriteOp[])[]) => Promise<(Error | undefined)[]>;
}

/** Where the bag keeps its write side: a key only this module has. */
const WRITES = Symbol('store writes');

/** The bag with its write side (create-stores.ts, once per cold start). */
export const withWrites = <T extends object>(reads: T, writes: StoreWrites): T => Object.assign(reads, { [WRITES]: writes });

/** The write side of a bag of stores. */
export const writesOf = (stores: object): StoreWrites => {
  const writes = (stores as { [WRITES]?: StoreWrites })[WRITES];
  if (!writes) throw new Error('these stores were made without their write side');
  return writes;
};
