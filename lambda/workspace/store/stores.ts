import type { GrantStore } from '../../auth/grants.js';
import type { TokenStore } from '../../auth/personal-tokens.js';
import type { FileParts } from '../../files/file-store.js';
import type { ChangeSource } from '../model/activity.js';
import type { Caller } from '../model/caller.js';
import type { ActivityStore } from './activity-store.js';
import type { AttachmentStore } from './attachment-store.js';
import type { CallClaim, CallClaims } from './call-claims.js';
import type { CommentStore } from './comment-store.js';
import type { DirectoryStore } from './directory-store.js';
import type { InboxStore } from './inbox-store.js';
import type { JobStore } from './job-store.js';
import type { NamesSource } from './names.js';
import type { ProjectStore } from './project-store.js';
import type { TaskNumberLookup } from './task-numbers.js';
import type { TaskStore } from './task-store.js';
import type { ViewStore } from './view-store.js';
import type { WebhookStore } from './webhook-store.js';

/** What every writer is given: the stores, who changes it (with their role as it is now), and the change's source. */
export interface WriteContext {
  readonly stores: WorkspaceStores;
  readonly caller: Caller;
  readonly source: ChangeSource;
  /** A call that must not be made twice: its first write that lands carries this claim (store/call-claims.ts). */
  readonly claim?: CallClaim;
}

/**
 * The stores of one deployment, built once per cold start: what every writer and read of the domain
 * is given. Their reads only: what writes is the writers' (store/writes.ts, `writesOf`).
 */
export interface WorkspaceStores {
  readonly directory: DirectoryStore;
  readonly tokens: TokenStore;
  /** Connected apps (the built-in authorization server's grants): revoked with their member's access. */
  readonly grants: GrantStore;
  readonly tasks: TaskStore;
  readonly projects: ProjectStore;
  readonly comments: CommentStore;
  /** Attachments' items (the table); their bytes are in `files`. */
  readonly attachments: AttachmentStore;
  /** Attachments' bytes and the sniffer of their types, loaded on first use, with the configured bounds. */
  readonly files: AttachmentFiles;
  /** Members and projects by id, from a per-instance snapshot kept current by `directoryVersion`. */
  readonly names: NamesSource;
  readonly activity: ActivityStore;
  /** Task numbers: `DEMO-42` to a task id. */
  readonly numbers: TaskNumberLookup;
  /** Claims of calls that must not be made twice: made by the writers, read and answered by the surface. */
  readonly calls: CallClaims;
  /** Saved views: the shared ones and each member's own. */
  readonly views: ViewStore;
  /** Each member's inbox, who watches a task, reminders by minute (docs/notifications.md). */
  readonly inbox: InboxStore;
  /** Outbound webhooks: what admins list (docs/notifications.md, "Webhooks"). */
  readonly webhooks: WebhookStore;
  /** Long work (workspace_import, workspace_export) and its progress: the tasks of the tasks extension. */
  readonly jobs: JobStore;
}

export interface AttachmentFiles extends FileParts {
  /** The largest attachment (DOERS_ATTACHMENT_MAX_MB), bytes. */
  readonly maxBytes: number;
  /** What a workspace's attachments may take together (DOERS_ATTACHMENT_QUOTA_MB), bytes. */
  readonly quotaBytes: number;
}
