import type { InboxKind, Notice } from '../../delivery/notice.js';
import type { ActivityRecord } from '../model/activity.js';
import { taskNameOf } from '../model/task-refs.js';

/**
 * Who a change tells, and of what (docs/notifications.md, "Who is told"): a pure reading of the
 * activity record a change wrote, the task's watchers and the members. Each person gets at most one
 * entry per change, of its most telling kind; the one who made the change is never told of it.
 */

/** The most telling kind first: a person both assigned and mentioned by one change is told "assigned". */
const PRECEDENCE: readonly InboxKind[] = ['assigned', 'mentioned', 'completed', 'unblocked', 'status', 'due', 'comment', 'reminder'];

export interface TaskSide {
  readonly watchers: readonly string[];
  /** The assignee (else the creator) of each task waiting on this one: told when it is done. */
  readonly waiting: readonly string[];
}

export interface Telling {
  readonly userId: string;
  readonly kind: InboxKind;
  /** A few words: the due date it moved to, the status it took. */
  readonly detail?: string;
}

const changed = (r: ActivityRecord, field: string) => r.changes.find((c) => c.field === field);

/** What a record says happened, each with the people it concerns (before leaving out the one who did it). */
export interface NoticeEvent {
  readonly kind: InboxKind;
  readonly to: readonly string[];
  readonly detail?: string;
}

/** The events of a record: what webhooks hear of, whoever is told. */
export const eventsOf = (r: ActivityRecord, side: TaskSide): NoticeEvent[] => {
  const out: NoticeEvent[] = [];
  if (r.mentioned?.length) out.push({ kind: 'mentioned', to: r.mentioned });
  if (r.kind === 'comment') {
    if (r.action === 'created' && !r.undoOf) out.push({ kind: 'comment', to: side.watchers });
    return out;
  }
  if (r.kind !== 'task' || r.action === 'deleted' || r.action === 'restored') return out;
  const assignee = changed(r, 'assigneeId')?.after;
  if (typeof assignee === 'string') out.push({ kind: 'assigned', to: [assignee] });
  if (r.action === 'created') return out;
  if (r.action === 'completed') {
    out.push({ kind: 'completed', to: side.watchers });
    if (side.waiting.length) out.push({ kind: 'unblocked', to: side.waiting });
  } else if (r.action === 'canceled' || r.action === 'reopened' || changed(r, 'state') || changed(r, 'status')) {
    out.push({ kind: 'status', to: side.watchers, detail: r.action === 'changed' ? 'status changed' : r.action });
  }
  const due = changed(r, 'dueDate') ?? changed(r, 'dueTime');
  if (due && r.action !== 'completed') {
    const date = changed(r, 'dueDate')?.after;
    out.push({
      kind: 'due',
      to: side.watchers,
      detail: typeof date === 'string' ? date : changed(r, 'dueDate') ? 'no due date' : 'a new time',
    });
  }
  return out;
};

/** Each person the events tell, once, of the most telling kind; never the one who made the change. */
export const tellingsOf = (events: readonly NoticeEvent[], actorId: string, active: (userId: string) => boolean): Telling[] => {
  const out = new Map<string, Telling>();
  for (const e of events) {
    for (const userId of e.to) {
      if (userId === actorId || !active(userId)) continue;
      const had = out.get(userId);
      if (had && PRECEDENCE.indexOf(had.kind) <= PRECEDENCE.indexOf(e.kind)) continue;
      out.set(userId, { userId, kind: e.kind, ...(e.detail ? { detail: e.detail } : {}) });
    }
  }
  return [...out.values()];
};

/** One line in the third person, for a webhook and a digest: what happened, by whom, to which task. */
export const summaryOf = (
  kind: InboxKind,
  who: { actorName: string; key: string; title: string; detail?: string; targetName?: string },
): string => {
  const task = `${who.key} "${who.title}"`;
  switch (kind) {
    case 'assigned':
      return `${who.actorName} assigned ${task}${who.targetName ? ` to ${who.targetName}` : ''}`;
    case 'mentioned':
      return `${who.actorName} mentioned ${who.targetName ?? 'someone'} on ${task}`;
    case 'completed':
      return `${who.actorName} completed ${task}`;
    case 'unblocked':
      return `${task} is done: the tasks waiting on it can go ahead`;
    case 'status':
      return `${who.actorName} changed the status of ${task}${who.detail ? ` (${who.detail})` : ''}`;
    case 'due':
      return `${who.actorName} moved the due date of ${task} to ${who.detail ?? 'none'}`;
    case 'comment':
      return `${who.actorName} commented on ${task}`;
    case 'reminder':
      return `Reminder for ${who.targetName ?? 'you'}: ${task}${who.detail ? ` (${who.detail})` : ''}`;
  }
};

/** The notices a record gives webhooks: one per event, worded for the workspace. */
export const noticesOf = (
  r: ActivityRecord,
  events: readonly NoticeEvent[],
  workspaceKey: string,
  nameOf: (userId: string) => string,
): Notice[] => {
  const key = taskNameOf(workspaceKey, { taskId: r.taskId ?? r.targetId, ...(r.taskNumber !== undefined ? { number: r.taskNumber } : {}) });
  return events.map((e) => ({
    id: `${r.activityId}:${e.kind}`,
    kind: e.kind,
    workspaceKey,
    taskKey: key,
    taskId: r.taskId ?? r.targetId,
    taskTitle: r.targetLabel,
    actorName: r.actorName,
    client: r.client,
    at: r.at,
    summary: summaryOf(e.kind, {
      actorName: r.actorName,
      key,
      title: r.targetLabel,
      ...(e.detail ? { detail: e.detail } : {}),
      targetName: e.to.map(nameOf).join(', '),
    }),
  }));
};
