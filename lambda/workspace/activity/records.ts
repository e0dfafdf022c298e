import type { PersonalTokenRecord } from '../../auth/personal-tokens.js';
import type { Member, Workspace } from '../../vocabulary.js';
import {
  type ActivityAction,
  type ActivityRecord,
  buildRecord,
  type ChangeSource,
  type FieldChange,
  fieldChanges,
} from '../model/activity.js';
import { MAX_MENTIONS, mentionedIn } from '../model/mentions.js';
import { categoryOfKey, storedKey } from '../model/statuses.js';
import type { Attachment, Comment, Project, Task } from '../model/types.js';
import type { View } from '../model/views.js';
import type { ActivityStore } from '../store/activity-store.js';

/**
 * The record of each kind of change: what every door writes in the same all-or-nothing write as
 * the change (workspace/model/activity.ts has the record itself). A writer builds its record here,
 * so a task's record is the same whether the change came from a tool, a bulk call or an undo.
 */

/** The fields of a task and a project whose changes a record keeps (bookkeeping like `updatedAt` is not one). */
export const TASK_FIELDS = [
  'title',
  'notes',
  'status',
  'state',
  'priority',
  'dueDate',
  'dueTime',
  'assigneeId',
  'projectId',
  'labels',
  'repeat',
  'reminders',
  'fields',
  'completedAt',
  'completedBy',
  'blockedBy',
  'parentId',
  'parentNumber',
  'deletedAt',
] as const;
export const PROJECT_FIELDS = [
  'name',
  'description',
  'status',
  'statuses',
  'retiredStatuses',
  'fields',
  'archivedAt',
  'deletedAt',
] as const;
export const MEMBER_FIELDS = ['email', 'name', 'role', 'timeZone', 'notify', 'status', 'deletedAt'] as const;
export const TOKEN_FIELDS = ['label', 'userId', 'scopes', 'expiresAt', 'revokedAt'] as const;
export const WORKSPACE_FIELDS = ['name', 'key', 'status'] as const;
export const VIEW_FIELDS = ['name', 'query', 'sort', 'group', 'shared'] as const;

const snapshot = (o: object): Record<string, unknown> => ({ ...o }) as Record<string, unknown>;

/** What a record's action is, from the states before and after (a creation has no before). */
export const actionOf = (
  before: { status?: unknown; deletedAt?: unknown } | undefined,
  after: { status?: unknown; deletedAt?: unknown },
): ActivityAction => {
  if (!before) return 'created';
  if (after.deletedAt && !before.deletedAt) return 'deleted';
  if (!after.deletedAt && before.deletedAt) return 'restored';
  // A task closes as done or as canceled; one to the other is a completion or a cancellation too.
  const closedAs = (t: { status?: unknown }) =>
    t.status !== 'done' ? undefined : categoryOfKey(storedKey(t as Task)) === 'canceled' ? 'canceled' : 'completed';
  if (closedAs(after) && closedAs(after) !== closedAs(before)) return closedAs(after)!;
  if (after.status === 'open' && before.status === 'done') return 'reopened';
  if (after.status === 'archived' && before.status !== 'archived') return 'archived';
  if (after.status === 'active' && before.status === 'archived') return 'unarchived';
  return 'changed';
};

/** How much of the notes a change left its record keeps: enough to read what it said. */
export const NOTES_AFTER_KEPT = 200;

/**
 * Undo puts back what was before and reads the task as it is now, so the notes a change left are
 * never needed whole from its record; a record is written three times (the table and two indexes),
 * and 10,000 characters of notes kept there would be most of what a notes edit costs.
 */
const shortNotesAfter = (c: FieldChange): FieldChange =>
  c.field === 'notes' && typeof c.after === 'string' && c.after.length > NOTES_AFTER_KEPT
    ? { ...c, after: `${Array.from(c.after).slice(0, NOTES_AFTER_KEPT).join('')}…` }
    : c;

/** Members whose mention `next`'s notes add to what `before`'s held: the record names them for the notifier. */
export const newlyMentioned = (before: Pick<Task, 'notes'> | undefined, next: Pick<Task, 'notes'>): string[] => {
  if (next.notes === undefined || next.notes === before?.notes) return [];
  const had = new Set(before?.notes ? mentionedIn(before.notes) : []);
  // References written raw past the mention limit tell (and make watch) no more than it allows.
  return mentionedIn(next.notes)
    .filter((id) => !had.has(id))
    .slice(0, MAX_MENTIONS);
};

/**
 * The record of a task change: the fields that moved, each before and after, and the version it
 * made. Undo reads the task as it is now and puts those fields back; the task's whole state is not
 * copied into the record (nor, through the indexes, twice more).
 */
export const taskRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  before: Task | undefined,
  after: Task,
  extra: Partial<Pick<ActivityRecord, 'undoOf' | 'commentCount' | 'occurrence'>> = {},
  activityId?: string,
): ActivityRecord => {
  const mentioned = after.deletedAt ? [] : newlyMentioned(before, after);
  return buildRecord(
    source,
    after.workspaceId,
    {
      kind: 'task',
      // A recurring task's completion leaves it open, due at its next occurrence: still a completion.
      action: extra.occurrence ? 'completed' : actionOf(before, after),
      targetId: after.taskId,
      targetLabel: after.title,
      taskId: after.taskId,
      ...(after.number !== undefined ? { taskNumber: after.number } : {}),
      ...((after.projectId ?? before?.projectId) ? { projectId: after.projectId ?? before?.projectId } : {}),
      changes: fieldChanges(before, after, TASK_FIELDS).map(shortNotesAfter),
      version: after.version,
      ...(mentioned.length ? { mentioned } : {}),
      ...extra,
    },
    activity.expiresAtFor(source.now),
    activityId,
  );
};

export const projectRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  before: Project | undefined,
  after: Project,
  extra: Partial<Pick<ActivityRecord, 'undoOf'>> = {},
): ActivityRecord =>
  buildRecord(
    source,
    after.workspaceId,
    {
      kind: 'project',
      action: actionOf(before, after),
      targetId: after.projectId,
      targetLabel: after.name,
      projectId: after.projectId,
      changes: fieldChanges(before, after, PROJECT_FIELDS),
      version: after.version,
      ...(before ? { before: snapshot(before) } : { after: snapshot(after) }),
      ...extra,
    },
    activity.expiresAtFor(source.now),
  );

/** The record of a comment added, deleted or restored: the comment itself is what undo needs. */
export const commentRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  action: 'created' | 'deleted' | 'restored',
  comment: Comment,
  task: Pick<Task, 'taskId' | 'title' | 'number' | 'projectId'>,
  extra: Partial<Pick<ActivityRecord, 'undoOf'>> = {},
): ActivityRecord => {
  // A comment added tells those it mentions (its restore by an undo does not again).
  const mentioned = action === 'created' && !extra.undoOf ? mentionedIn(comment.body).slice(0, MAX_MENTIONS) : [];
  return buildRecord(
    source,
    comment.workspaceId,
    {
      kind: 'comment',
      action,
      targetId: comment.commentId,
      targetLabel: task.title,
      taskId: task.taskId,
      ...(task.number !== undefined ? { taskNumber: task.number } : {}),
      ...(task.projectId ? { projectId: task.projectId } : {}),
      changes:
        action === 'created'
          ? [{ field: 'body', after: comment.body }]
          : action === 'deleted'
            ? [{ field: 'deletedAt', after: source.now.toISOString() }]
            : [{ field: 'deletedAt', before: source.now.toISOString() }],
      ...(action === 'created' ? { after: { ...comment } } : { before: { ...comment } }),
      ...(mentioned.length ? { mentioned } : {}),
      ...extra,
    },
    activity.expiresAtFor(source.now),
  );
};

/** The record of an attachment added, deleted or restored: its item is what undo needs (the bytes stay in the file store). */
export const attachmentRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  action: 'created' | 'deleted' | 'restored',
  a: Attachment,
  task: Pick<Task, 'taskId' | 'title' | 'number' | 'projectId'>,
  extra: Partial<Pick<ActivityRecord, 'undoOf'>> = {},
): ActivityRecord => {
  const { deletedAt: _d, ...live } = a;
  return buildRecord(
    source,
    a.workspaceId,
    {
      kind: 'attachment',
      action,
      targetId: a.attachmentId,
      targetLabel: a.name,
      taskId: task.taskId,
      ...(task.number !== undefined ? { taskNumber: task.number } : {}),
      ...(task.projectId ? { projectId: task.projectId } : {}),
      changes:
        action === 'created'
          ? [{ field: 'name', after: a.name }]
          : action === 'deleted'
            ? [{ field: 'deletedAt', after: source.now.toISOString() }]
            : [{ field: 'deletedAt', before: source.now.toISOString() }],
      ...(action === 'created' ? { after: { ...live } } : { before: { ...live } }),
      ...extra,
    },
    activity.expiresAtFor(source.now),
  );
};

/** The record of a member change, from the member as the change found it and as it leaves it. */
export const memberRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  before: Member | undefined,
  after: Member | undefined,
  extra: Partial<Pick<ActivityRecord, 'undoOf'>> = {},
): ActivityRecord => {
  const target = (after ?? before)!;
  const action: ActivityAction = !before
    ? extra.undoOf
      ? 'restored'
      : 'invited'
    : !after
      ? 'removed'
      : before.role !== after.role
        ? 'role_changed'
        : after.status === 'disabled'
          ? 'disabled'
          : 'enabled';
  const afterState = after ?? { ...before!, deletedAt: source.now.toISOString() };
  return buildRecord(
    source,
    target.workspaceId,
    {
      kind: 'member',
      action,
      targetId: target.userId,
      targetLabel: target.name,
      changes: fieldChanges(before, afterState, MEMBER_FIELDS),
      ...(before ? { before: snapshot(before) } : { after: snapshot(target) }),
      ...extra,
    },
    activity.expiresAtFor(source.now),
  );
};

/** The record of a personal access token made or revoked (never its secret: the store keeps only a hash). */
export const tokenRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  action: 'created' | 'revoked',
  token: PersonalTokenRecord,
  extra: Partial<Pick<ActivityRecord, 'undoOf'>> = {},
): ActivityRecord => {
  const after = action === 'revoked' ? { ...token, revokedAt: source.now.toISOString() } : token;
  return buildRecord(
    source,
    token.workspaceId,
    {
      kind: 'token',
      action,
      targetId: token.tokenId,
      targetLabel: token.label,
      changes: fieldChanges(action === 'created' ? undefined : token, after, TOKEN_FIELDS),
      ...(action === 'created' ? { after: snapshot(token) } : { before: snapshot(token) }),
      ...extra,
    },
    activity.expiresAtFor(source.now),
  );
};

/** The record of a connected app (an OAuth grant) disconnected: kind token, as it is a way in. */
export const grantRevokedRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  grant: {
    readonly grantId: string;
    readonly workspaceId: string;
    readonly userId: string;
    readonly clientId: string;
    readonly scopes: readonly string[];
  },
  appName: string,
): ActivityRecord =>
  buildRecord(
    source,
    grant.workspaceId,
    {
      kind: 'token',
      action: 'revoked',
      targetId: grant.grantId,
      targetLabel: `connected app ${appName}`,
      changes: [
        { field: 'userId', before: grant.userId },
        { field: 'scopes', before: [...grant.scopes] },
        { field: 'revokedAt', after: source.now.toISOString() },
      ],
      before: { ...grant, app: appName },
    },
    activity.expiresAtFor(source.now),
  );

/** A change made through a door other than a tool: the account page or the admin CLI. */
/** The record of a change of the workspace itself: made, switched off or on, its key changed. */
export const workspaceRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  action: 'created' | 'disabled' | 'enabled' | 'changed',
  before: Workspace | undefined,
  after: Workspace,
): ActivityRecord =>
  buildRecord(
    source,
    after.workspaceId,
    {
      kind: 'workspace',
      action,
      targetId: after.workspaceId,
      targetLabel: after.name,
      changes: fieldChanges(before, after, WORKSPACE_FIELDS),
      ...(before ? { before: { ...before } } : {}),
    },
    activity.expiresAtFor(source.now),
  );

/** A change made by a member through a client and one of its tools (a worker's job keeps both from its call). */
export const clientSource = (
  actor: { readonly userId: string; readonly name: string },
  client: string,
  tool: string,
  now: Date,
): ChangeSource => ({ actorId: actor.userId, actorName: actor.name, client, tool, now });

export const doorSource = (
  door: 'account page' | 'admin CLI' | 'local server',
  actor: { readonly userId: string; readonly name: string },
  action: string,
  now: Date,
): ChangeSource => clientSource(actor, door, `${door}: ${action}`, now);

/** The record of a view saved, changed, deleted or put back: the whole view is what undo needs. */
export const viewRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  action: 'created' | 'changed' | 'deleted' | 'restored',
  before: View | undefined,
  after: View,
  extra: Partial<Pick<ActivityRecord, 'undoOf'>> = {},
): ActivityRecord =>
  buildRecord(
    source,
    after.workspaceId,
    {
      kind: 'view',
      action,
      targetId: after.viewId,
      targetLabel: after.name,
      changes:
        action === 'deleted'
          ? [{ field: 'deletedAt', after: source.now.toISOString() }]
          : action === 'restored'
            ? [{ field: 'deletedAt', before: source.now.toISOString() }]
            : fieldChanges(before, after, VIEW_FIELDS),
      version: after.version,
      ...(before ? { before: snapshot(before) } : {}),
      after: snapshot(after),
      ...extra,
    },
    activity.expiresAtFor(source.now),
  );
