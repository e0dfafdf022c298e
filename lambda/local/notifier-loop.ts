import { type DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import { notifiedCursorSk, WORKSPACE_SK } from '../platform/item-keys.js';
import { moveCursor } from '../workspace/inbox/inbox-writer.js';
import { activityIdBound } from '../workspace/model/activity.js';
import { type NotifyDeps, notifyRecords, runMinute } from '../workspace/notify/notifier.js';

/**
 * The notifier inside `npm start` (docs/notifications.md, "Locally"): the same code the stream
 * function runs, fed by a poller over the same activity records instead of DynamoDB Streams, which the
 * embedded DynamoDB (dynalite) does not have. Each workspace's records are read from where the
 * poller left off (a cursor item, so a restart neither loses nor repeats one), oldest first, up to
 * a moment ago: a change whose id is a little older than one already read may still be committing.
 * The minute job runs on each new minute of the clock. Runs never overlap.
 */

export interface NotifierLoop {
  /** Tells everything written up to `now` (less the settling moment) and returns how many records it read. */
  drain(now?: Date): Promise<number>;
  /** The minute job as of `now` (tests move the clock). */
  minute(now: Date): Promise<{ minutes: number; reminders: number }>;
  stop(): Promise<void>;
}

/** How far behind the clock the poller stays: a transaction commits within this of its id's time. */
const SETTLE_MS = 1_000;
/**
 * How far back each poll reads again: a record whose id is older than one already read (a long bulk
 * call, a write retried after a conflict) is told when it lands. Telling twice tells nobody twice.
 */
const LOOK_BACK_MS = 30_000;
const PAGE = 100;

const workspaceIds = async (db: DynamoDBDocumentClient, table: string): Promise<{ id: string; createdAt: string }[]> => {
  const ids: { id: string; createdAt: string }[] = [];
  for await (const page of paginateScan(
    { client: db },
    {
      TableName: table,
      FilterExpression: 'sk = :m AND begins_with(pk, :w)',
      ExpressionAttributeValues: { ':m': WORKSPACE_SK, ':w': 'WS#' },
      ProjectionExpression: 'workspaceId, createdAt',
    },
  )) {
    for (const item of page.Items ?? [])
      if (item.workspaceId) ids.push({ id: String(item.workspaceId), createdAt: String(item.createdAt ?? '') });
  }
  return ids;
};

export const startNotifierLoop = (
  deps: NotifyDeps,
  db: DynamoDBDocumentClient,
  table: string,
  opts: { readonly intervalMs?: number; readonly poll?: boolean; readonly onError?: (error: unknown) => void } = {},
): NotifierLoop => {
  let chain: Promise<unknown> = Promise.resolve();
  const serially = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
  let known: { at: number; ids: { id: string; createdAt: string }[] } | undefined;
  let lastMinute = '';
  // A workspace older than this loop, with no cursor yet (a data dir from before the notifier): told
  // from now on, not of its whole history.
  const started = Date.now();

  /** Records this loop told, by id, with when: kept as long as the look back reaches. */
  const told = new Map<string, number>();
  const drainOnce = async (now: Date): Promise<number> => {
    for (const [id, at] of told) if (at < now.getTime() - 2 * LOOK_BACK_MS) told.delete(id);
    if (!known || now.getTime() - known.at > 30_000) known = { at: now.getTime(), ids: await workspaceIds(db, table) };
    const until = activityIdBound(now.getTime() - SETTLE_MS, 'high');
    let read = 0;
    for (const { id: workspaceId, createdAt } of known.ids) {
      const name = notifiedCursorSk(workspaceId);
      const cursor = await deps.stores.inbox.cursor(name);
      const from = cursor ?? (Date.parse(createdAt) < started - 60_000 ? activityIdBound(started, 'low') : activityIdBound(0, 'low'));
      const lookBack = activityIdBound(now.getTime() - LOOK_BACK_MS, 'low');
      // The earlier of the two (ids sort by time as text).
      let after = [from, lookBack].sort()[0]!;
      for (;;) {
        const records = await deps.stores.activity.since(workspaceId, after, until, PAGE);
        if (!records.length) break;
        // The look back reads what was told already: told again only if this loop has not told it.
        const fresh = records.filter((r) => !told.has(r.activityId));
        await notifyRecords(deps, fresh, now);
        for (const r of fresh) told.set(r.activityId, now.getTime());
        after = records.at(-1)!.activityId;
        await moveCursor(deps.stores, name, after);
        read += fresh.length;
        if (records.length < PAGE) break;
      }
    }
    return read;
  };

  const tick = async () => {
    const now = new Date();
    await drainOnce(now);
    const minute = now.toISOString().slice(0, 16);
    if (minute !== lastMinute) {
      lastMinute = minute;
      await runMinute(deps, now);
    }
  };

  let stopped = false;
  const timer =
    opts.poll === false
      ? undefined
      : setInterval(() => {
          // A failed run is said and tried again on the next tick, from where the cursors are.
          if (!stopped) serially(tick).catch((error: unknown) => opts.onError?.(error));
        }, opts.intervalMs ?? 2_000);
  timer?.unref();

  return {
    drain: (now = new Date(Date.now() + SETTLE_MS)) => serially(() => drainOnce(now)),
    minute: (now) => serially(() => runMinute(deps, now)),
    stop: async () => {
      stopped = true;
      if (timer) clearInterval(timer);
      await chain;
    },
  };
};
