/**
 * Every item key of the single workspace table, beside its definition (tables.ts): the workspace's
 * own items, the authorization server's records, and the few bookkeeping items (owners lock,
 * registration windows). Layout and access patterns: docs/workspace.md, "Data model". Every item of
 * a workspace lives under its `WS#` partition, so a query can never leave the caller's workspace.
 */

// ---- the directory: workspaces, members, e-mail claims, personal access tokens --------------------
export const wsPk = (workspaceId: string): string => `WS#${workspaceId}`;
export const WORKSPACE_SK = 'META';
export const memberSk = (userId: string): string => `USER#${userId}`;
export const MEMBER_PREFIX = 'USER#';
export const emailPk = (email: string): string => `EMAIL#${email.toLowerCase()}`;
export const EMAIL_SK = 'EMAIL';
export const tokenPk = (hash: string): string => `TOKEN#${hash}`;
export const TOKEN_SK = 'TOKEN';
export const tokensOfWorkspaceGsiPk = (workspaceId: string): string => `WS#${workspaceId}#TOKENS`;

// ---- the task workspace (layout and access patterns in docs/workspace.md, "Data model") ----------------------
export const PROJECT_PREFIX = 'PROJECT#';
export const projectSk = (projectId: string): string => `${PROJECT_PREFIX}${projectId}`;
export const TASK_PREFIX = 'TASK#';
export const taskSk = (taskId: string): string => `${TASK_PREFIX}${taskId}`;
/** A task's number, claimed once and for good in the write that creates the task: what `DEMO-42` resolves through. */
export const taskNumberSk = (n: number): string => `TASKNO#${n}`;
/** Comment ids are UUIDv7 (time-ordered), so a task's comments sort by creation under this prefix. */
export const commentsOfTaskPrefix = (taskId: string): string => `COMMENT#${taskId}#`;
export const commentSk = (taskId: string, commentId: string): string => `${commentsOfTaskPrefix(taskId)}${commentId}`;

// ---- the task workspace, layout 2 (docs/workspace.md, "Data model") -----------------------------
/*
 * Layout 2 gives every task its own partition and spreads what every change writes over many keys,
 * so no key takes a share of a workspace's writes that grows with it. The lists are three indexes,
 * each split by priority: the workspace's (gsi1), an assignee's (gsi2), a project's (gsi3). Text,
 * labels and counts are items the change writes in its own transaction.
 */

/** The small hash that spreads a workspace's shared items over a few keys: 0 … n-1. */
export const shardOf = (id: string, n: number): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % n;
};

/** A task's own partition: the task (`TASK`) and its notes (`NOTES`). */
export const taskPk = (workspaceId: string, taskId: string): string => `WS#${workspaceId}#T#${taskId}`;
export const TASK_ITEM_SK = 'TASK';
export const NOTES_ITEM_SK = 'NOTES';
/** A parent's entry of one of its subtasks, in the parent's partition (what task_get lists in the same read). */
export const SUBTASK_PREFIX = 'SUB#';
export const subtaskSk = (childId: string): string => `${SUBTASK_PREFIX}${childId}`;
/** The one value of an index key that stands for "none" (no assignee, no project). */
export const NONE_KEY = '-';
/** gsi1: the workspace's tasks of one priority. */
export const workspaceListPk = (workspaceId: string, priority: string): string => `WS#${workspaceId}#L#${priority}`;
/** gsi2: one assignee's (or nobody's) tasks of one priority. */
export const assigneeListPk = (workspaceId: string, assigneeId: string | undefined, priority: string): string =>
  `WS#${workspaceId}#A#${assigneeId ?? NONE_KEY}#${priority}`;
/** gsi3: one project's (or the inbox's) tasks of one priority. */
export const projectListPk = (workspaceId: string, projectId: string | undefined, priority: string): string =>
  `WS#${workspaceId}#P#${projectId ?? NONE_KEY}#${priority}`;
/**
 * The sort key of a task in every list: open by due date (undated last), done by completion. The
 * priority is in the partition, so the lists merged back give due date, then priority.
 */
export const listSk = (t: {
  readonly taskId: string;
  readonly status: 'open' | 'done';
  readonly dueDate?: string | undefined;
  readonly completedAt?: string | undefined;
}): string => (t.status === 'open' ? `O#${t.dueDate ?? '~'}#${t.taskId}` : `X#${t.completedAt ?? ''}#${t.taskId}`);

/** A word of a task's title, labels or the start of its notes: found by any prefix of 3 and more. */
export const WORD_PREFIX_LENGTH = 3;
export const wordPk = (workspaceId: string, word: string): string =>
  `WS#${workspaceId}#W#${[...word].slice(0, WORD_PREFIX_LENGTH).join('')}`;
/** Who an entry names, in the order a search reads them. */
interface Entered {
  readonly createdAt: string;
  readonly number?: number | undefined;
  readonly taskId: string;
}
/**
 * The tail of a word's or a label's entry: the task's creation time and number (neither ever
 * changes; the number orders the tasks of one call), then its id, so a search reads newest first.
 */
const enteredAs = (t: Entered): string => `${t.createdAt}#${String(t.number ?? 0).padStart(10, '0')}#${t.taskId}`;
/** A word's entry of a task. */
export const wordSk = (word: string, task: Entered): string => `${word}#${enteredAs(task)}`;
/** A label's tasks (a label is one word, matched whole, case folded). */
export const labelPk = (workspaceId: string, label: string): string => `WS#${workspaceId}#LB#${label}`;
/** A label's entry of a task. */
export const labelSk = (task: Entered): string => enteredAs(task);

/**
 * Counts of a scope, kept by the changes that move them: the workspace's (spread over four keys by
 * task), an assignee's, a project's. `D#<date>` holds the open and done tasks due that day (`~`:
 * undated), `C#<quarter hour>` the completions in it (for "done today", kept two days), `B#PAST` the
 * older due dates folded together.
 */
export const WORKSPACE_COUNT_SHARDS = 4;
export const countsPk = (workspaceId: string, scope: string): string => `WS#${workspaceId}#N#${scope}`;
export const workspaceCountScope = (taskId: string): string => `W#${shardOf(taskId, WORKSPACE_COUNT_SHARDS)}`;
export const assigneeCountScope = (assigneeId: string | undefined): string => `A#${assigneeId ?? NONE_KEY}`;
export const projectCountScope = (projectId: string | undefined): string => `P#${projectId ?? NONE_KEY}`;
export const dueCountSk = (dueDate: string | undefined): string => `D#${dueDate ?? '~'}`;
export const completionCountSk = (quarterHour: string): string => `C#${quarterHour}`;
export const PAST_COUNT_SK = 'B#PAST';

/** Activity records, layout 2: spread over four partitions by the call that made them. */
export const ACTIVITY_SHARDS = 4;
export const activityPk = (workspaceId: string, callId: string): string => `WS#${workspaceId}#R${shardOf(callId, ACTIVITY_SHARDS)}`;
export const activityShardPks = (workspaceId: string): string[] =>
  Array.from({ length: ACTIVITY_SHARDS }, (_, s) => `WS#${workspaceId}#R${s}`);

/** Task number claims, layout 2: spread over eight partitions by number. */
export const NUMBER_SHARDS = 8;
export const numberPk = (workspaceId: string, n: number): string => `WS#${workspaceId}#NO${n % NUMBER_SHARDS}`;

/**
 * A call's claim (workspace/store/call-claims.ts): that this caller made this call with these
 * arguments, and its answer, for a few minutes; spread over four partitions by the call's key.
 */
export const CALL_CLAIM_SHARDS = 4;
export const callClaimKey = (workspaceId: string, callKey: string): { pk: string; sk: string } => ({
  pk: `WS#${workspaceId}#CALL${shardOf(callKey, CALL_CLAIM_SHARDS)}`,
  sk: callKey,
});

// ---- layout 1 (kept readable until a workspace is migrated: npm run admin -- migrate) ------------

/** gsi1 partition holding every task of a workspace, ordered by `taskOrderKey`. */
export const tasksGsiPk = (workspaceId: string): string => `WS#${workspaceId}#TASKS`;
/** Sorts below every real date, so an undated open task comes after all dated ones. */
export const UNDATED = '~';
export const OPEN_ORDER_PREFIX = 'O#';
export const DONE_ORDER_PREFIX = 'X#';
/**
 * gsi1sk of a task: open tasks by due date (undated last), then priority (P1 first); done tasks
 * by completion time. One key range per status, so status and due-date filters become key ranges.
 */
export const taskOrderKey = (t: {
  readonly taskId: string;
  readonly status: 'open' | 'done';
  readonly priority: string;
  readonly dueDate?: string | undefined;
  readonly completedAt?: string | undefined;
}): string =>
  t.status === 'open'
    ? `${OPEN_ORDER_PREFIX}${t.dueDate ?? UNDATED}#${t.priority}#${t.taskId}`
    : `${DONE_ORDER_PREFIX}${t.completedAt ?? ''}#${t.taskId}`;

/** gsi2 partition holding the tasks assigned to one member (unassigned tasks are not in gsi2). */
export const tasksOfAssigneeGsiPk = (workspaceId: string, assigneeId: string): string => `WS#${workspaceId}#A#${assigneeId}`;
/** Sorts before `O#`, so one key range from `D#<instant>` holds the done-since and every open task. */
export const AGENDA_DONE_PREFIX = 'D#';
/**
 * gsi2sk of an assigned task: open tasks as in gsi1; done tasks by completion under `D#`. A
 * person's agenda (open tasks, done on a day) is then one range of one partition: one request.
 */
export const agendaOrderKey = (t: Parameters<typeof taskOrderKey>[0]): string =>
  t.status === 'open' ? taskOrderKey(t) : `${AGENDA_DONE_PREFIX}${t.completedAt ?? ''}#${t.taskId}`;

/**
 * A deleted comment moves here (workspace/comment-store.ts), out of its task's comment range, so a
 * task's comment list stays one exact key range; it is kept for undo until its `expiresAt`.
 */
export const deletedCommentSk = (taskId: string, commentId: string): string => `GONE#COMMENT#${taskId}#${commentId}`;

// ---- the activity record (workspace/activity-store.ts) -------------------------------------------
/**
 * One item per change, `ACT#<activityId>` under the workspace partition: activity ids are
 * time-ordered, so the partition's `ACT#` range is the workspace's history and a time window is a
 * key range. Two index entries make the two narrow questions one key range each: gsi1 by target
 * (a task's records hold its comments' too), gsi2 by actor.
 */
export const ACTIVITY_PREFIX = 'ACT#';
export const activitySk = (activityId: string): string => `${ACTIVITY_PREFIX}${activityId}`;
export const activityOfTargetGsiPk = (workspaceId: string, kind: string, targetId: string): string =>
  `WS#${workspaceId}#ACT#${kind}#${targetId}`;
export const activityOfActorGsiPk = (workspaceId: string, userId: string): string => `WS#${workspaceId}#ACT#BY#${userId}`;
/**
 * The history's third index (gsi3): a task's, comment's or attachment's record under its project
 * (`-` for none), every other record under its kind, so a page by project or by a rare kind reads
 * what it returns (workspace/store/activity-store.ts).
 */
export const activityOfProjectGsiPk = (workspaceId: string, projectId: string | undefined): string =>
  `WS#${workspaceId}#ACT#P#${projectId ?? '-'}`;
export const activityOfKindGsiPk = (workspaceId: string, kind: string): string => `WS#${workspaceId}#ACT#K#${kind}`;

/**
 * Sort key of the workspace's links epoch: every change that adds a link reads it before looking for
 * cycles and moves it in its write, so two link changes that each looked acyclic cannot both land.
 */
export const LINKS_EPOCH_SK = 'LINKS';

/** Sort key of the workspace's owners lock (workspace/directory-store.ts, withOwnersLock). */
export const OWNERS_LOCK_SK = 'OWNERS_LOCK';

// ---- the authorization server (lambda/oauth/) ------------------------------------------------------
/**
 * Every oidc-provider model instance is one item under its own `OAUTH#` partition; the two indexes
 * answer the lookups the library and the account pages make by something other than the id.
 */
export const oauthPk = (model: string, id: string): string => `OAUTH#${model}#${id}`;
export const OAUTH_SK = 'OAUTH';
/** A grant's item: what the MCP function reads with the member, and what a revocation deletes last. */
export const grantKey = (grantId: string): { pk: string; sk: string } => ({ pk: oauthPk('Grant', grantId), sk: OAUTH_SK });

/** gsi1 partition holding every token issued under one grant (revocation by grant). */
export const tokensOfGrantGsiPk = (grantId: string): string => `OAUTH#GRANT#${grantId}`;
/** Model first, so one model's tokens of a grant are a key range: oidc-provider revokes model by model. */
export const tokenOfGrantGsiSk = (model: string, id: string): string => `${model}#${id}`;
export const modelPrefix = (model: string): string => `${model}#`;

/** gsi2 partition of the items carrying a `uid` (Session, Interaction); the sort key is the model. */
export const uidGsiPk = (uid: string): string => `OAUTH#UID#${uid}`;

/** gsi1 partition holding the grants of one workspace, one person's grants being a key range. */
export const grantsOfWorkspaceGsiPk = (workspaceId: string): string => `WS#${workspaceId}#GRANTS`;
/**
 * The user id is encoded so that one person's prefix cannot also match another's: with ids `a` and
 * `a#b`, a raw `a#` prefix would list both.
 */
export const grantsOfUserPrefix = (userId: string): string => `${encodeURIComponent(userId)}#`;
export const grantOfUserGsiSk = (userId: string, grantId: string): string => `${grantsOfUserPrefix(userId)}${grantId}`;

/** Dynamic Client Registrations counted per source address and window (oauth/registration-limit.ts). */
export const registrationWindowKey = (source: string, windowStart: number): { pk: string; sk: string } => ({
  pk: oauthPk('RegistrationWindow', `${source}#${windowStart}`),
  sk: OAUTH_SK,
});

// ---- attachments (lambda/workspace/store/attachment-store.ts) -----------------------------------

/** In the task's own partition, so task_get reads them with the task. */
export const ATTACHMENT_PREFIX = 'ATT#';
export const attachmentSk = (attachmentId: string): string => `${ATTACHMENT_PREFIX}${attachmentId}`;
/** A deleted one, kept as long as its record for its undo (the TTL removes it). */
export const deletedAttachmentSk = (attachmentId: string): string => `GONE#ATT#${attachmentId}`;
/** The bytes a workspace's attachments hold: one item, held to the quota by each add. */
export const attachmentBytesPk = (workspaceId: string): string => `WS#${workspaceId}#FILES`;
export const ATTACHMENT_BYTES_SK = 'BYTES';

/** Where an attachment's bytes are in the bucket: under its workspace's prefix, built from the caller's workspace only. */
export const attachmentObjectKey = (workspaceId: string, taskId: string, attachmentId: string): string =>
  `workspaces/${workspaceId}/tasks/${taskId}/${attachmentId}`;
/** A deleted one's bytes, for its undo; the bucket's lifecycle removes them after the undo window. */
export const TRASH_PREFIX = 'trash/';
export const trashObjectKey = (objectKey: string): string => `${TRASH_PREFIX}${objectKey}`;

/**
 * Saved views (workspace/store/view-store.ts): the shared ones in one partition, each member's own in
 * another, each view keyed by its name folded (`N#<name>`), so a name is its own uniqueness check.
 */
export const sharedViewsPk = (workspaceId: string): string => `WS#${workspaceId}#V#S`;
export const ownViewsPk = (workspaceId: string, userId: string): string => `WS#${workspaceId}#V#U#${userId}`;
export const viewSk = (foldedName: string): string => `N#${foldedName}`;
export const VIEW_PREFIX = 'N#';

// ---- telling people (lambda/workspace/inbox/, lambda/workspace/notify/; docs/notifications.md) ---

/** Who chose to watch a task or not, in the task's own partition, so task_get reads it with the task. */
export const WATCH_PREFIX = 'WATCH#';
export const watchSk = (userId: string): string => `${WATCH_PREFIX}${userId}`;

/**
 * A member's inbox: one partition per member, entries keyed by an id that starts with the time of
 * what happened (an activity id), so the partition's range is newest last. gsi1 holds the entry by
 * its state (`…#unread`, `…#read`, `…#done`), so the unread ones are a key range of their own.
 */
export const inboxPk = (workspaceId: string, userId: string): string => `WS#${workspaceId}#IN#${userId}`;
export const inboxStatePk = (workspaceId: string, userId: string, state: string): string => `WS#${workspaceId}#IN#${userId}#${state}`;

/**
 * A reminder's entry in the minute it is due: the minute job reads the minutes since it last ran, one
 * key each, across workspaces (the only items outside a workspace's partitions besides the
 * authorization server's: only the minute job reads them). The task holds the reminder itself.
 */
export const reminderMinutePk = (minute: string): string => `REMIND#${minute}`;
export const reminderSk = (workspaceId: string, taskId: string, reminderId: string): string => `${workspaceId}#${taskId}#${reminderId}`;

/** Members who take a daily digest at this hour (UTC, 00-23): the minute job reads it on the hour. */
export const digestHourPk = (utcHour: string): string => `DIGEST#${utcHour}`;
export const digestSk = (workspaceId: string, userId: string): string => `${workspaceId}#${userId}`;

/** Where a runner of the minute job and the local notifier left off. */
export const JOBS_PK = 'JOBS';
export const minuteCursorSk = 'MINUTE';
export const notifiedCursorSk = (workspaceId: string): string => `NOTIFIED#${workspaceId}`;

/**
 * Outbound webhooks (workspace/store/webhook-store.ts, docs/notifications.md "Webhooks"). A webhook
 * is an item of the workspace partition (`HOOK#<id>`), counted by one item beside it (`HOOKS`) that
 * holds the workspace to its most. Each delivery is one item per webhook and notice, and each
 * task's deliveries to a webhook wait in line behind one lane item, so they arrive in order. A
 * delivery waiting for its next try has one item in the partition of the minute it is due: the
 * minute job reads those partitions by time, from the cursor item on.
 */
export const WEBHOOK_PREFIX = 'HOOK#';
export const webhookSk = (webhookId: string): string => `${WEBHOOK_PREFIX}${webhookId}`;
export const WEBHOOK_COUNT_SK = 'HOOKS';
export const webhookDeliveriesPk = (workspaceId: string, webhookId: string): string => `WS#${workspaceId}#HOOKD#${webhookId}`;
export const webhookDeliverySk = (noticeId: string): string => `N#${noticeId}`;
export const webhookLaneSk = (taskId: string): string => `T#${taskId}`;
/** The deliveries one workspace started in one minute (`YYYY-MM-DDTHH:MM`): its rate. */
export const webhookRatePk = (workspaceId: string): string => `WS#${workspaceId}#HOOKRATE`;
export const webhookDuePk = (minute: string): string => `HOOKDUE#${minute}`;
export const webhookDueSk = (workspaceId: string, webhookId: string, noticeId: string): string => `${workspaceId}#${webhookId}#${noticeId}`;
export const WEBHOOK_DUE_CURSOR = { pk: 'HOOKDUE#CURSOR', sk: 'CURSOR' } as const;
