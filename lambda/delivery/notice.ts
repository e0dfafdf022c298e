/**
 * What a person or a webhook is told: one event of the inbox's kinds, already worded, carrying no
 * notes, no comment text and nothing of a credential (docs/notifications.md, "What leaves"). The
 * notifier (lambda/workspace/notify/) builds it from the activity record a change wrote; the
 * senders in this room only carry it: e-mail through SES, webhooks signed per Standard Webhooks.
 */

export const INBOX_KINDS = ['assigned', 'mentioned', 'status', 'completed', 'comment', 'due', 'unblocked', 'reminder'] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];

export interface Notice {
  /**
   * Stable across retries and instances: `<activityId>:<kind>` for a change, `<reminderId>` for a
   * reminder. It is the webhook's `webhook-id`, so a receiver deduplicates on it.
   */
  readonly id: string;
  readonly kind: InboxKind;
  readonly workspaceKey: string;
  /** The task's key (`DEMO-42`) and its id. */
  readonly taskKey: string;
  readonly taskId: string;
  readonly taskTitle: string;
  /** Who did it (a reminder: the member it reminds). */
  readonly actorName: string;
  /** Through which client ("Claude 1.2", "account page", "reminder"). */
  readonly client: string;
  /** When it happened, ISO 8601 UTC. */
  readonly at: string;
  /** One line in the third person: `Ada assigned DEMO-42 "Acme quote" to Grace`. */
  readonly summary: string;
}
