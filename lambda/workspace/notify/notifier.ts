import { digestMail, noticeMail } from '../../delivery/email-body.js';
import { EmailRejectedError, type EmailSender, type Mail } from '../../delivery/email-sender.js';
import type { Notice } from '../../delivery/notice.js';
import { minuteCursorSk } from '../../platform/item-keys.js';
import type { Member, Workspace } from '../../vocabulary.js';
import { workspaceKeyOf } from '../../vocabulary.js';
import { fileEntry, firedReminder, leaseReminder, moveCursor, noteDigested, noteMailed, refileDigest } from '../inbox/inbox-writer.js';
import { digestUtcHour } from '../membership/members.js';
import { type ActivityRecord, activityIdBound } from '../model/activity.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Task } from '../model/types.js';
import { type DueReminder, type InboxEntry, minuteOf } from '../store/inbox-store.js';
import type { WorkspaceStores } from '../store/stores.js';
import { watchesOf } from '../store/task-items.js';
import { watchersOf } from '../tasks/watching.js';
import type { WebhookDispatch } from '../webhooks/webhook-dispatch.js';
import { eventsOf, noticesOf, summaryOf, type Telling, tellingsOf } from './notices.js';

/**
 * The notifier (docs/notifications.md): reads the activity records changes wrote (the outbox) and
 * tells people: an inbox entry for each person a change concerns, an e-mail for those who want each
 * event, and the workspace's webhooks. In AWS the table's stream hands it the records
 * (lambda/notifier-handler.ts); locally a poller over the same records does (lambda/local/notifier-loop.ts).
 * Everything it writes is keyed by the record, so a record handed over twice tells nobody twice.
 */

export interface NotifyDeps {
  readonly stores: WorkspaceStores;
  /** Absent: e-mail is off (no sender configured). */
  readonly mail?: EmailSender | undefined;
  readonly hooks?: WebhookDispatch | undefined;
  readonly publicUrl: string;
  readonly activityDays: number;
}

const DAY_SECONDS = 86_400;

/** What one run knows of a workspace: read once per run, not per record. */
interface Known {
  readonly workspace: Workspace;
  readonly members: Map<string, Member>;
}

const known = async (deps: NotifyDeps, cache: Map<string, Promise<Known | undefined>>, workspaceId: string) => {
  let k = cache.get(workspaceId);
  if (!k) {
    k = Promise.all([deps.stores.directory.getWorkspace(workspaceId), deps.stores.directory.listMembers(workspaceId)]).then(
      ([workspace, members]) => (workspace ? { workspace, members: new Map(members.map((m) => [m.userId, m])) } : undefined),
    );
    cache.set(workspaceId, k);
  }
  return k;
};

/**
 * Sends a mail; an address SES refuses for good is left (the entry stays in the inbox), so one bad
 * address never holds up the records after it. SES unavailable is thrown: the record is tried again.
 */
const sent = async (mail: EmailSender, m: Mail): Promise<boolean> => {
  try {
    await mail.send(m);
    return true;
  } catch (err) {
    if (err instanceof EmailRejectedError) return false;
    throw err;
  }
};

const isActive = (k: Known) => (userId: string) => k.members.get(userId)?.status === 'active';

/**
 * Files an entry, and mails it to a member who wants each event, once, whatever happens twice. An
 * entry to be mailed is filed as not mailed yet: a record handed over again mails only such an
 * entry (one filed before the member wanted mail stays unmailed).
 */
const fileAndMail = async (deps: NotifyDeps, k: Known, entry: InboxEntry, notice: Notice, expiresAt: number): Promise<void> => {
  const { workspaceId } = k.workspace;
  const member = k.members.get(entry.userId);
  const wants = !!deps.mail && !!member && member.notify?.email === 'each';
  const filed = await fileEntry(deps.stores, workspaceId, wants ? { ...entry, mailed: false } : entry, expiresAt);
  if (!wants) return;
  if (!filed && (await deps.stores.inbox.get(workspaceId, entry.userId, entry.entryId))?.mailed !== false) return;
  if (!(await sent(deps.mail!, { to: member!.email, ...noticeMail(notice, { recipientName: member!.name, publicUrl: deps.publicUrl }) })))
    return;
  await noteMailed(deps.stores, workspaceId, entry.userId, entry.entryId);
};

/** The people a completion unblocks: each waiting task's assignee, else its creator. */
const waitingOn = async (deps: NotifyDeps, task: Task | undefined): Promise<string[]> => {
  if (!task?.blocks?.length) return [];
  const waiting = await deps.stores.tasks.getMany(task.workspaceId, task.blocks);
  return [...waiting.values()].filter((t) => !t.deletedAt && t.status === 'open').map((t) => t.assigneeId ?? t.createdBy);
};

const entryOf = (r: ActivityRecord, t: Telling): InboxEntry => ({
  entryId: `${r.activityId}:${t.kind}`,
  userId: t.userId,
  kind: t.kind,
  taskId: r.taskId ?? r.targetId,
  ...(r.taskNumber !== undefined ? { taskNumber: r.taskNumber } : {}),
  taskTitle: r.targetLabel,
  actorId: r.actorId,
  actorName: r.actorName,
  client: r.client,
  at: r.at,
  state: 'unread',
  ...(t.detail ? { detail: t.detail } : {}),
});

/** One record: its entries, mails and webhook deliveries. */
const notifyOne = async (deps: NotifyDeps, cache: Map<string, Promise<Known | undefined>>, r: ActivityRecord, now: Date) => {
  if (r.kind !== 'task' && r.kind !== 'comment') return;
  const k = await known(deps, cache, r.workspaceId);
  if (!k) return;
  const taskId = r.taskId ?? r.targetId;
  // The task's partition holds its watch choices too: one read.
  const task = await deps.stores.tasks.getAny(r.workspaceId, taskId);
  const watchers = task ? watchersOf(task, watchesOf(task) ?? []) : [];
  const waiting = r.action === 'completed' ? await waitingOn(deps, task) : [];
  const events = eventsOf(r, { watchers, waiting });
  if (!events.length) return;
  const tellings = tellingsOf(events, r.actorId, isActive(k));
  const key = workspaceKeyOf(k.workspace);
  const nameOf = (id: string) => k.members.get(id)?.name ?? 'a former member';
  const expiresAt = Math.floor(Date.parse(r.at) / 1000) + deps.activityDays * DAY_SECONDS;
  // Webhooks beside the entries and the mail, each to its end: they keep and retry their own
  // deliveries, so an e-mail outage that fails this record (to be handed over again) never loses them,
  // and a slow receiver holds up no entry.
  await together([
    deps.hooks?.dispatch(r.workspaceId, noticesOf(r, events, key, nameOf), now),
    ...tellings.map((t) => {
      const [notice] = noticesOf(r, [{ kind: t.kind, to: [t.userId], ...(t.detail ? { detail: t.detail } : {}) }], key, nameOf);
      return fileAndMail(deps, k, entryOf(r, t), notice!, expiresAt);
    }),
  ]);
};

/** Runs them side by side, every one to its end, then fails with the first failure: one slow or failing channel holds up no other. */
const together = async (work: readonly (Promise<unknown> | undefined)[]): Promise<void> => {
  const failed = (await Promise.allSettled(work)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
};

/**
 * Tells what `records` say, in their order (a task's records are in the order they were written).
 * A record that fails stops the run there: the caller hands it, and every later one, over again.
 * Returns how many were done.
 */
export const notifyRecords = async (deps: NotifyDeps, records: readonly ActivityRecord[], now = new Date()): Promise<number> => {
  const cache = new Map<string, Promise<Known | undefined>>();
  let done = 0;
  for (const r of records) {
    await notifyOne(deps, cache, r, now);
    done++;
  }
  return done;
};

// ---- the minute job: reminders, digests, webhook retries -------------------------------------------

/** Minutes the job catches up on after it was down: as long as a reminder's minute is kept. */
const CATCH_UP_MINUTES = 2 * 24 * 60;
/**
 * Minutes before the last one done that each run reads again: a reminder a failed run left unfired,
 * or one written into its minute just after that minute was read, fires then (fired ones are marked).
 */
const LOOK_BACK_MINUTES = 10;
/** Minutes read at once while catching up. */
const CATCH_UP_BATCH = 60;

const nextMinute = (minute: string): string => new Date(Date.parse(`${minute}:00.000Z`) + 60_000).toISOString().slice(0, 16);

/** A reminder's inbox entry id: its minute first, so it sorts by time among the others. */
const reminderEntryId = (due: Pick<DueReminder, 'at' | 'reminderId'>): string =>
  `${activityIdBound(Date.parse(due.at), 'low')}${due.reminderId}:reminder`;

const fireReminder = async (deps: NotifyDeps, cache: Map<string, Promise<Known | undefined>>, due: DueReminder, now: Date) => {
  const task = await deps.stores.tasks.getAny(due.workspaceId, due.taskId);
  const reminder = task?.reminders?.find((r) => r.reminderId === due.reminderId && r.at === due.at);
  // A reminder taken away, moved, or of a task done or deleted since, does not fire.
  if (!task || !reminder || task.deletedAt || task.status !== 'open') return;
  const k = await known(deps, cache, due.workspaceId);
  if (!k || !isActive(k)(due.userId)) return;
  // One runner tells it: two runs at once (a late one, a slow one) do not both.
  if (!(await leaseReminder(deps.stores, due, now))) return;
  const key = taskNameOf(workspaceKeyOf(k.workspace), task);
  const member = k.members.get(due.userId)!;
  const entry: InboxEntry = {
    entryId: reminderEntryId(due),
    userId: due.userId,
    kind: 'reminder',
    taskId: task.taskId,
    ...(task.number !== undefined ? { taskNumber: task.number } : {}),
    taskTitle: task.title,
    actorName: member.name,
    client: 'reminder',
    at: due.at,
    state: 'unread',
    detail: reminder.words,
  };
  const notice: Notice = {
    id: entry.entryId,
    kind: 'reminder',
    workspaceKey: workspaceKeyOf(k.workspace),
    taskKey: key,
    taskId: task.taskId,
    taskTitle: task.title,
    actorName: member.name,
    client: 'reminder',
    at: due.at,
    summary: summaryOf('reminder', { actorName: member.name, key, title: task.title, detail: reminder.words, targetName: member.name }),
  };
  // Told first (the entry and the webhooks are keyed by the reminder, the mail marked once sent), and
  // marked fired last: a run that fails half way leaves it, once its lease is old, to a later run's look back.
  await together([
    deps.hooks?.dispatch(due.workspaceId, [notice], now),
    fileAndMail(deps, k, entry, notice, Math.floor(now.getTime() / 1000) + deps.activityDays * DAY_SECONDS),
  ]);
  await firedReminder(deps.stores, due, now);
};

/** The members whose digest hour (UTC) this is: what came in since their last digest, unread, in one mail. */
const sendDigests = async (deps: NotifyDeps, cache: Map<string, Promise<Known | undefined>>, utcHour: string, now: Date) => {
  if (!deps.mail) return;
  for (const sub of await deps.stores.inbox.digestSubscribers(utcHour)) {
    const k = await known(deps, cache, sub.workspaceId);
    const member = k?.members.get(sub.userId);
    if (!k || !member || member.status !== 'active') continue;
    // Their local hour falls on another UTC hour since a clock change (or they chose otherwise): filed there.
    const hourNow = digestUtcHour(member, now);
    if (hourNow !== utcHour) {
      await refileDigest(deps.stores, sub, utcHour, hourNow);
      continue;
    }
    const since = await deps.stores.inbox.since(sub.workspaceId, sub.userId, sub.lastEntryId, 200);
    const unread = since.filter((e) => e.state === 'unread');
    const key = workspaceKeyOf(k.workspace);
    if (unread.length) {
      const notices = unread.map((e) => noticeOfEntry(e, key, member.name));
      const date = now.toISOString().slice(0, 10);
      await sent(deps.mail, {
        to: member.email,
        ...digestMail(notices, { recipientName: member.name, date, publicUrl: deps.publicUrl, workspaceKey: key }),
      });
    }
    if (since.length) await noteDigested(deps.stores, sub, utcHour, since.at(-1)!.entryId);
  }
};

/** An inbox entry as a notice (a digest's line). */
const noticeOfEntry = (e: InboxEntry, workspaceKey: string, recipientName: string): Notice => {
  const key = taskNameOf(workspaceKey, { taskId: e.taskId, ...(e.taskNumber !== undefined ? { number: e.taskNumber } : {}) });
  return {
    id: e.entryId,
    kind: e.kind,
    workspaceKey,
    taskKey: key,
    taskId: e.taskId,
    taskTitle: e.taskTitle,
    actorName: e.actorName,
    client: e.client,
    at: e.at,
    summary: summaryOf(e.kind, {
      actorName: e.actorName,
      key,
      title: e.taskTitle,
      ...(e.detail ? { detail: e.detail } : {}),
      targetName: recipientName,
    }),
  };
};

/**
 * The minute job: every minute since it last ran (at most two days back), the reminders due in it
 * and, on the hour, the digests; then the webhook deliveries due for another try. Two runners at
 * once fire each reminder once (store/inbox-store.ts, claimReminder).
 */
export const runMinute = async (deps: NotifyDeps, now = new Date()): Promise<{ minutes: number; reminders: number }> => {
  const cache = new Map<string, Promise<Known | undefined>>();
  const failures: unknown[] = [];
  const attempt = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (err) {
      failures.push(err);
    }
  };
  const last = await deps.stores.inbox.cursor(minuteCursorSk);
  const upTo = minuteOf(now.toISOString());
  const earliest = minuteOf(new Date(now.getTime() - CATCH_UP_MINUTES * 60_000).toISOString());
  const fresh = last && last >= earliest ? nextMinute(last) : upTo;
  const lookBack = minuteOf(new Date(Date.parse(`${fresh}:00.000Z`) - LOOK_BACK_MINUTES * 60_000).toISOString());
  let minute = last ? lookBack : fresh;
  let minutes = 0;
  let reminders = 0;
  try {
    // Minutes are read a batch at a time (a job that was down catches up in seconds), and handled in order.
    while (minute <= upTo) {
      const batch: string[] = [];
      for (let m = minute; m <= upTo && batch.length < CATCH_UP_BATCH; m = nextMinute(m)) batch.push(m);
      const due = await Promise.all(batch.map((m) => deps.stores.inbox.remindersDue(m)));
      for (const [i, m] of batch.entries()) {
        // One reminder or digest that fails is left to a later run; the others go on.
        for (const d of due[i]!.filter((x) => !x.firedAt)) await attempt(() => fireReminder(deps, cache, d, now));
        reminders += due[i]!.length;
        // Digests only in minutes not done before (the look back would send one twice).
        if (m >= fresh && m.endsWith(':00')) await attempt(() => sendDigests(deps, cache, m.slice(11, 13), now));
      }
      if (batch.at(-1)! >= fresh) await moveCursor(deps.stores, minuteCursorSk, batch.at(-1)!);
      minutes += batch.length;
      minute = nextMinute(batch.at(-1)!);
    }
  } finally {
    await deps.hooks?.retryDue(now);
  }
  if (failures.length) throw new AggregateError(failures, `${failures.length} reminder(s) or digest(s) failed; a later run tries again`);
  return { minutes, reminders };
};
