import { randomBytes } from 'node:crypto';
import type { ClientInfo } from '../../vocabulary.js';

/**
 * The activity record: one per change, from any door (a tool, the account page, the admin CLI),
 * written in the same all-or-nothing write as the change itself (docs/workspace.md, "Activity and
 * undo"). It says who changed what, through which client, and holds what undo needs: the target's
 * whole state before the change (or after it, for a creation) and the version the change produced.
 */

export const ACTIVITY_KINDS = ['task', 'project', 'comment', 'attachment', 'member', 'token', 'workspace', 'view'] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/** Records of these kinds need `team:read`; the others every member with `tasks:read` may read. */
export const TEAM_KINDS: ReadonlySet<ActivityKind> = new Set(['member', 'token', 'workspace']);

export type ActivityAction =
  | 'created'
  | 'changed'
  | 'completed'
  | 'canceled'
  | 'reopened'
  | 'archived'
  | 'unarchived'
  | 'deleted'
  | 'restored'
  | 'invited'
  | 'role_changed'
  | 'disabled'
  | 'enabled'
  | 'removed'
  | 'revoked';

/** One field's value before and after; an absent side means the field was not set. */
export interface FieldChange {
  readonly field: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

export interface ActivityRecord {
  readonly activityId: string;
  readonly workspaceId: string;
  readonly at: string;
  readonly actorId: string;
  readonly actorName: string;
  /** "Claude 1.2", "unknown client", "account page" or "admin CLI". */
  readonly client: string;
  /** The tool, or the door's action ("account page: disable member"). */
  readonly tool: string;
  readonly kind: ActivityKind;
  readonly action: ActivityAction;
  readonly targetId: string;
  /** The target's title or name at the time. */
  readonly targetLabel: string;
  /** A task's number (its key is the workspace key and this). */
  readonly taskNumber?: number;
  /** A comment's task; a task's own id for task records (the target partition of both). */
  readonly taskId?: string;
  /** The project a task, comment or project record belongs to (the `project` filter). */
  readonly projectId?: string;
  readonly changes: readonly FieldChange[];
  /** The target's version after the change (tasks, projects): undo requires it still. */
  readonly version?: number;
  /** The target's whole state before the change; absent for a creation. */
  readonly before?: Record<string, unknown>;
  /** The target's whole state after a creation (what undoing it deletes). */
  readonly after?: Record<string, unknown>;
  /** A deleted task's comments at the time (deleted and restored with it). */
  readonly commentCount?: number;
  /** A recurring task's completion: the due date of the occurrence done (the task stays open, due at the next). */
  readonly occurrence?: string;
  /** Members this change mentioned anew (a comment's text, a task's notes): the notifier tells them. */
  readonly mentioned?: readonly string[];
  /** This record undid that one. */
  readonly undoOf?: string;
  /** Set on this record when a later change undid it. */
  readonly undoneBy?: string;
  readonly undoneAt?: string;
  /** When the record (and what undo keeps) goes, in epoch seconds: the table's TTL attribute. */
  readonly expiresAt: number;
}

/** Who made a change, through what, and when: every door builds one per call. */
export interface ChangeSource {
  readonly actorId: string;
  readonly actorName: string;
  readonly client: string;
  readonly tool: string;
  readonly now: Date;
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_CHARS = 10;
const RANDOM_CHARS = 6;

const encodeTime = (ms: number): string => {
  let out = '';
  let rest = ms;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = CROCKFORD[rest % 32]! + out;
    rest = Math.floor(rest / 32);
  }
  return out;
};

/**
 * `act_` + 10 characters of the millisecond (base 32, lower case) + 6 random ones (30 bits): ids
 * sort by time as text, so the history is a key range and a time window two keys.
 */
export const newActivityId = (now: Date): string => {
  const random = randomBytes(RANDOM_CHARS);
  let tail = '';
  for (const b of random) tail += CROCKFORD[b % 32];
  return `act_${encodeTime(now.getTime())}${tail}`;
};

/** The lowest and highest id of a millisecond: a time window's bounds. */
export const activityIdBound = (ms: number, side: 'low' | 'high'): string =>
  `act_${encodeTime(Math.max(0, ms))}${side === 'low' ? '' : '~'}`;

export const ACTIVITY_ID_PATTERN = /^act_[0-9a-hjkmnp-tv-z]{16}(\.\d{2})?$/;

/** The record of item `index` (0-based) of a bulk call `callId`: the call's id undoes all of them. */
export const bulkItemId = (callId: string, index: number): string => `${callId}.${String(index + 1).padStart(2, '0')}`;

const CLIENT_TEXT_MAX = 60;
const clean = (s: string): string =>
  s
    .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, CLIENT_TEXT_MAX);

/** What a client says it is (never trusted, only shown): "Claude 1.2", or "unknown client". */
export const clientLabel = (info: ClientInfo | undefined): string => {
  const name = typeof info?.name === 'string' ? clean(info.name) : '';
  const version = typeof info?.version === 'string' ? clean(info.version) : '';
  return name ? `${name}${version ? ` ${version}` : ''}` : 'unknown client';
};

/** The changes between two states, field by field, in `fields` order; equal values are left out. */
export const fieldChanges = <T extends object>(before: T | undefined, after: T | undefined, fields: readonly string[]): FieldChange[] => {
  const out: FieldChange[] = [];
  for (const field of fields) {
    const b = (before as Record<string, unknown> | undefined)?.[field];
    const a = (after as Record<string, unknown> | undefined)?.[field];
    if (JSON.stringify(b) === JSON.stringify(a)) continue;
    out.push({ field, ...(b === undefined ? {} : { before: b }), ...(a === undefined ? {} : { after: a }) });
  }
  return out;
};

/** The record of one change; `expiresAt` is the store's to set (the retention is configuration). */
export type NewRecord = Omit<
  ActivityRecord,
  'activityId' | 'workspaceId' | 'at' | 'actorId' | 'actorName' | 'client' | 'tool' | 'expiresAt'
>;

export const buildRecord = (
  source: ChangeSource,
  workspaceId: string,
  record: NewRecord,
  expiresAt: number,
  activityId: string = newActivityId(source.now),
): ActivityRecord => ({
  activityId,
  workspaceId,
  at: source.now.toISOString(),
  actorId: source.actorId,
  actorName: source.actorName,
  client: source.client,
  tool: source.tool,
  ...record,
  expiresAt,
});

/**
 * The target's state right after the change: what a creation made, or the state before with each
 * changed field set to its new value. Undoing an undo restores exactly this.
 */
export const stateAfter = (record: Pick<ActivityRecord, 'before' | 'after' | 'changes'>): Record<string, unknown> | undefined => {
  if (record.after) return record.after;
  if (!record.before) return undefined;
  const next: Record<string, unknown> = { ...record.before };
  for (const c of record.changes) {
    if (c.after === undefined) delete next[c.field];
    else next[c.field] = c.after;
  }
  return next;
};

/** Webhook ids (workspace/webhooks/webhook-writer.ts): a webhook's records are the workspace's, told apart by their target. */
export const WEBHOOK_ID_PREFIX = 'hook_';
export const isWebhookRecord = (r: Pick<ActivityRecord, 'kind' | 'targetId'>): boolean =>
  r.kind === 'workspace' && r.targetId.startsWith(WEBHOOK_ID_PREFIX);
