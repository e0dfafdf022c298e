import * as z from 'zod/mini';
import type { PersonalTokenRecord } from '../auth/personal-tokens.js';
import type { ToolContext } from '../mcp/tool-registry.js';
import { MAX_TRANSACTION_ACTIONS, type WriteOp } from '../platform/transact.js';
import { type ActivityAction, type ActivityRecord, buildRecord, type ChangeSource, clientLabel, fieldChanges } from './activity.js';
import type { ActivityStore } from './activity-store.js';
import type { MemberAudit } from './membership.js';
import type { Project, Task } from './model.js';
import type { WorkspaceServices } from './services.js';

/** The fields of a task and a project whose changes a record keeps (bookkeeping like `updatedAt` is not one). */
export const TASK_FIELDS = [
  'title',
  'notes',
  'status',
  'priority',
  'dueDate',
  'dueTime',
  'assigneeId',
  'projectId',
  'labels',
  'completedAt',
  'completedBy',
  'blockedBy',
  'deletedAt',
] as const;
export const PROJECT_FIELDS = ['name', 'description', 'status', 'archivedAt', 'deletedAt'] as const;

/** The change's source as a tool call: the caller, the client its request names, the tool. */
export const sourceOf = (ctx: Pick<ToolContext<WorkspaceServices>, 'principal' | 'meta' | 'toolName' | 'now'>): ChangeSource => ({
  actorId: ctx.principal.userId,
  actorName: ctx.principal.name,
  client: clientLabel(ctx.meta.clientInfo),
  tool: ctx.toolName,
  now: ctx.now,
});

const snapshot = (o: object): Record<string, unknown> => ({ ...o }) as Record<string, unknown>;

/** The record of a task change: the whole task before it (for undo) and the fields that moved. */
export const taskRecord = (
  services: WorkspaceServices,
  source: ChangeSource,
  action: ActivityAction,
  before: Task | undefined,
  after: Task,
  extra: Partial<Pick<ActivityRecord, 'undoOf' | 'commentCount'>> = {},
  activityId?: string,
): ActivityRecord =>
  buildRecord(
    source,
    after.workspaceId,
    {
      kind: 'task',
      action,
      targetId: after.taskId,
      targetLabel: after.title,
      taskId: after.taskId,
      ...(after.number !== undefined ? { taskNumber: after.number } : {}),
      ...((after.projectId ?? before?.projectId) ? { projectId: after.projectId ?? before?.projectId } : {}),
      changes: fieldChanges(before, after, TASK_FIELDS),
      version: after.version,
      ...(before ? { before: snapshot(before) } : { after: snapshot(after) }),
      ...extra,
    },
    services.activity.expiresAtFor(source.now),
    activityId,
  );

export const projectRecord = (
  services: WorkspaceServices,
  source: ChangeSource,
  action: ActivityAction,
  before: Project | undefined,
  after: Project,
  extra: Partial<Pick<ActivityRecord, 'undoOf'>> = {},
): ActivityRecord =>
  buildRecord(
    source,
    after.workspaceId,
    {
      kind: 'project',
      action,
      targetId: after.projectId,
      targetLabel: after.name,
      projectId: after.projectId,
      changes: fieldChanges(before, after, PROJECT_FIELDS),
      version: after.version,
      ...(before ? { before: snapshot(before) } : { after: snapshot(after) }),
      ...extra,
    },
    services.activity.expiresAtFor(source.now),
  );

/** Commits the change with its record: both or neither. */
/**
 * Sets (or with `undefined` clears) the `expiresAt` of comments past what a task's own delete or
 * restore write holds, a transaction's worth at a time (docs/workspace.md, "Deletes keep what undo needs").
 */
export const markCommentsExpiring = async (
  services: WorkspaceServices,
  keys: readonly Parameters<WorkspaceServices['comments']['expiryOp']>[0][],
  expiresAt: number | undefined,
): Promise<void> => {
  for (let i = 0; i < keys.length; i += MAX_TRANSACTION_ACTIONS) {
    await services.commit(keys.slice(i, i + MAX_TRANSACTION_ACTIONS).map((key) => services.comments.expiryOp(key, expiresAt)));
  }
};

export const commitWithRecord = (services: WorkspaceServices, ops: readonly WriteOp[], record: ActivityRecord): Promise<void> =>
  services.commit([...ops, services.activity.recordOp(record)]);

/** Every writing tool's answer names its record, which is what change_undo takes. */
export const activityIdOutput = { activityId: z.optional(z.string().check(z.describe('The change, for activity_list and change_undo'))) };

/** The line a change's text ends with: how to take it back. */
export const undoLine = (activityId: string | undefined): string => (activityId ? `\nUndo: change_undo ${activityId}` : '');

export const MEMBER_FIELDS = ['email', 'name', 'role', 'timeZone', 'status', 'deletedAt'] as const;

/**
 * The records of one call's member changes, for the membership rules to write with each change
 * (membership.ts runs the change, possibly under the owners lock; the record rides in its write).
 */
export const memberAudit = (
  activity: ActivityStore,
  source: ChangeSource,
  extra: Partial<Pick<ActivityRecord, 'undoOf'>> = {},
): { readonly audit: MemberAudit; readonly records: ActivityRecord[] } => {
  const records: ActivityRecord[] = [];
  const audit: MemberAudit = (before, after) => {
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
    const record = buildRecord(
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
    records.push(record);
    return [activity.recordOp(record)];
  };
  return { audit, records };
};

export const TOKEN_FIELDS = ['label', 'userId', 'scopes', 'expiresAt', 'revokedAt'] as const;

/** The record of a personal access token made or revoked (never its secret: the store keeps only a hash). */
export const tokenRecord = (
  activity: ActivityStore,
  source: ChangeSource,
  action: 'created' | 'revoked',
  token: PersonalTokenRecord,
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
    },
    activity.expiresAtFor(source.now),
  );
};

/** Revokes a member's tokens, each with its record. Returns how many were live. */
export const revokeTokensOf = async (
  services: Pick<WorkspaceServices, 'tokens' | 'activity'>,
  source: ChangeSource,
  workspaceId: string,
  userId: string,
): Promise<number> => {
  const live = (await services.tokens.list(workspaceId)).filter((t) => t.userId === userId && !t.revokedAt);
  await Promise.all(
    live.map((t) =>
      services.tokens.revoke(workspaceId, t.tokenId, source.now.toISOString(), [
        services.activity.recordOp(tokenRecord(services.activity, source, 'revoked', t)),
      ]),
    ),
  );
  return live.length;
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
export const doorSource = (
  door: 'account page' | 'admin CLI',
  actor: { readonly userId: string; readonly name: string },
  action: string,
  now: Date,
): ChangeSource => ({ actorId: actor.userId, actorName: actor.name, client: door, tool: `${door}: ${action}`, now });
