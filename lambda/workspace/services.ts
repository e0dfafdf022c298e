import type { TokenStore } from '../auth/personal-tokens.js';
import type { KeySource } from '../platform/key-ring.js';
import type { WriteOp } from '../platform/transact.js';
import type { ActivityStore } from './activity-store.js';
import type { CommentStore } from './comment-store.js';
import type { DirectoryStore } from './directory-store.js';
import type { NamesSource } from './names.js';
import type { ProjectStore } from './project-store.js';
import type { TaskNumbers } from './task-numbers.js';
import type { TaskStore } from './task-store.js';

/** What the workspace tools, prompts and resources are given; built once per cold start. */
export interface WorkspaceServices {
  readonly directory: DirectoryStore;
  readonly tokens: TokenStore;
  readonly tasks: TaskStore;
  readonly projects: ProjectStore;
  readonly comments: CommentStore;
  /** Members and projects by id, from a per-instance snapshot kept current by `directoryVersion`. */
  readonly names: NamesSource;
  /** The key ring: list cursors are signed with its 'cursor' key. */
  readonly keys: KeySource;
  readonly activity: ActivityStore;
  /** Task numbers: `DEMO-42` to a task id, and new numbers for new tasks. */
  readonly numbers: TaskNumbers;
  /** Writes the ops all together or not at all (one TransactWriteItems; platform/transact.ts). */
  readonly commit: (ops: readonly WriteOp[]) => Promise<void>;
  /** Writes independent groups, each all or nothing, in as few transactions as fit; each group's error or undefined. */
  readonly commitEach: (groups: readonly (readonly WriteOp[])[]) => Promise<(Error | undefined)[]>;
}
