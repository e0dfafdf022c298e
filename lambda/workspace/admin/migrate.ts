import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  paginateQuery,
  paginateScan,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { batchGetConsistent } from '../../platform/dynamodb.js';
import { ACTIVITY_PREFIX, activityPk, activityShardPks, activitySk, TASK_PREFIX, WORKSPACE_SK, wsPk } from '../../platform/item-keys.js';
import { commitWrites } from '../../platform/transact.js';
import { CURRENT_LAYOUT, type Workspace } from '../../vocabulary.js';
import type { ActivityRecord } from '../model/activity.js';
import { workspaceNotFound } from '../model/refusals.js';
import type { Task } from '../model/types.js';
import { indexPartition } from '../store/activity-store.js';
import { countOps, entryOps } from '../store/task-derived.js';
import { notesItemOf, taskItemOf, taskKey, toTask } from '../store/task-items.js';
import { numberExistingTasks } from './numbering.js';

/**
 * The migration of one workspace from data layout 1 to 2 (`npm run admin -- migrate`): what the
 * operator runs once after deploying the version that brings layout 2, on every workspace from
 * before it. Every step can be run again and any number of times, so a migration stopped anywhere
 * (a killed process, a lost connection) is finished by running it again.
 *
 * 1. The workspace is marked `migrating`: task changes are refused from then on (reads go on as
 *    before, on layout 1). The migration waits `drainMs` so that no change that started before the
 *    mark (a request in flight, a principal cached for a few seconds) is still writing.
 * 2. Tasks from before numbers get their numbers (numbering.ts).
 * 3. Every task is written in layout 2: its item, its notes, its word and label entries (Puts of
 *    what the task is: writing one twice writes the same). Tasks written already are skipped.
 * 4. The counts are computed from all the tasks and written whole (not added to): run twice, the same.
 * 5. Every activity record moves to its partition of layout 2, each in one transaction with its
 *    delete from layout 1, so it is in exactly one place at any moment and readers find it in either.
 * 6. The workspace is switched to layout 2, the mark removed: changes work again, on layout 2.
 * 7. After another `drainMs` (a reader that still saw layout 1 is done), the tasks of layout 1 are deleted.
 * 8. Every record gets its entry in the history's index by project and kind (gsi3; one Update each,
 *    of those without), and the workspace is marked `activityIndexed`: activity_list by project or
 *    by kind reads that index from then on. A workspace in layout 2 already gets this step alone.
 *
 * Comments and task number claims stay where they are: layout 2 reads them there.
 */

export interface MigrationSummary {
  readonly workspaceId: string;
  /** It was in layout 2 already (only leftovers of layout 1, if any, were removed). */
  readonly already: boolean;
  readonly numbered: number;
  readonly tasks: number;
  /** Of `tasks`, those written by this run (the others a run before had written). */
  readonly written: number;
  readonly deleted: number;
  readonly withNotes: number;
  readonly entries: number;
  readonly counts: number;
  readonly recordsMoved: number;
  readonly removed: number;
  /** Records given their entry in the history's index by project and kind (step 8). */
  readonly recordsIndexed: number;
  readonly seconds: number;
}

export interface MigrationOptions {
  /** How long to wait after marking the workspace, and after switching it, for requests that saw the state before. */
  readonly drainMs: number;
  readonly now?: () => Date;
  readonly progress?: (line: string) => void;
  /** Test hook: called with the tasks written so far after each batch of them in step 3 (a fault test stops the process there). */
  readonly afterTasks?: (written: number) => void | Promise<void>;
}

const BATCH = 25;
/** Writes in flight at once: a move of many tasks is bounded by round trips, not by the table. */
const PARALLEL = 8;

/** Runs `f` on every element, at most PARALLEL at a time. */
const inParallel = async <T>(items: readonly T[], f: (item: T) => Promise<void>): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, items.length) }, async () => {
      while (next < items.length) await f(items[next++]!);
    }),
  );
};

const batchWrite = async (db: DynamoDBDocumentClient, table: string, requests: Record<string, unknown>[]): Promise<void> => {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < requests.length; i += BATCH) batches.push(requests.slice(i, i + BATCH));
  await inParallel(batches, async (batch) => {
    let pending = batch;
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt > 8) throw Object.assign(new Error('BatchWriteItem left requests unprocessed'), { name: 'ThrottlingException' });
      if (attempt) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      const out = await db.send(new BatchWriteCommand({ RequestItems: { [table]: pending as never } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as Record<string, unknown>[];
    }
  });
};

const legacyItems = (db: DynamoDBDocumentClient, table: string, workspaceId: string, prefix: string) =>
  paginateQuery(
    { client: db },
    {
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':p': prefix },
      ConsistentRead: true,
    },
  );

const readMeta = async (db: DynamoDBDocumentClient, table: string, workspaceId: string): Promise<Workspace> => {
  const out = await db.send(new GetCommand({ TableName: table, Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK }, ConsistentRead: true }));
  if (!out.Item) throw workspaceNotFound(workspaceId);
  return out.Item as unknown as Workspace;
};

export const migrateWorkspace = async (
  db: DynamoDBDocumentClient,
  table: string,
  workspaceId: string,
  opts: MigrationOptions,
): Promise<MigrationSummary> => {
  const now = opts.now ?? (() => new Date());
  const say = opts.progress ?? (() => {});
  const started = Date.now();
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const meta = await readMeta(db, table, workspaceId);
  const already = (meta.layout ?? 1) >= CURRENT_LAYOUT && !meta.migrating;
  let numbered = 0;
  let tasks = 0;
  let written = 0;
  let deleted = 0;
  let withNotes = 0;
  let entries = 0;
  let countItems = 0;
  let recordsMoved = 0;

  if (!already) {
    // 1. The mark: from now on no task change lands on layout 1.
    if (!meta.migrating) {
      await db.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
          UpdateExpression: 'SET migrating = :at',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(layout) OR layout < :v)',
          ExpressionAttributeValues: { ':at': now().toISOString(), ':v': CURRENT_LAYOUT },
        }),
      );
    }
    say(`${workspaceId}: task changes paused; waiting ${Math.round(opts.drainMs / 1000)} s for requests in flight`);
    await wait(opts.drainMs);

    // 2. Numbers for tasks from before numbers.
    numbered = (await numberExistingTasks(db, table, workspaceId, {}, () => undefined)).numbered;
    if (numbered) say(`${workspaceId}: numbered ${numbered} task(s) from before task keys`);

    // 3. The tasks in layout 2, and 4. their counts.
    const counts = new Map<string, { pk: string; sk: string; values: Record<string, number>; expiresAt?: number }>();
    const nowMs = now().getTime();
    for await (const page of legacyItems(db, table, workspaceId, TASK_PREFIX)) {
      const legacy = (page.Items ?? []).map((i) => toTask(i));
      if (!legacy.length) continue;
      const present = new Map(
        (
          await batchGetConsistent(
            db,
            table,
            legacy.map((t) => taskKey(workspaceId, t.taskId)),
          )
        ).map((i) => [String(i.taskId), Number(i.version)]),
      );
      const parts: Record<string, unknown>[] = [];
      const wholes: Record<string, unknown>[] = [];
      for (const task of legacy) {
        tasks++;
        if (task.deletedAt) deleted++;
        if (task.notes) withNotes++;
        for (const op of countOps(table, undefined, task, nowMs)) {
          const u = op.item.Update!;
          const key = `${u.Key!.pk}|${u.Key!.sk}`;
          const c = counts.get(key) ?? { pk: String(u.Key!.pk), sk: String(u.Key!.sk), values: {} };
          const d = (op as unknown as { count: { deltas: Record<string, number>; expiresAt?: number } }).count;
          for (const [a, v] of Object.entries(d.deltas)) c.values[a] = (c.values[a] ?? 0) + v;
          if (d.expiresAt) c.expiresAt = d.expiresAt;
          counts.set(key, c);
        }
        if (present.get(task.taskId) === task.version) continue;
        const expiresAt = legacyExpiry(page.Items!, task);
        const puts = [
          taskItemOf(task, expiresAt),
          ...(task.notes ? [notesItemOf(task, task.deletedAt ? expiresAt : undefined)] : []),
          ...entryOps(table, undefined, task).map((op) => op.item.Put!.Item as Record<string, unknown>),
        ];
        entries += puts.length - 1 - (task.notes ? 1 : 0);
        wholes.push(puts[0]!);
        parts.push(...puts.slice(1));
      }
      // The task items last: a task is "written" (and skipped by a run after) only when all of it is.
      await batchWrite(
        db,
        table,
        parts.map((Item) => ({ PutRequest: { Item } })),
      );
      for (let i = 0; i < wholes.length; i += BATCH) {
        const batch = wholes.slice(i, i + BATCH);
        await batchWrite(
          db,
          table,
          batch.map((Item) => ({ PutRequest: { Item } })),
        );
        written += batch.length;
        await opts.afterTasks?.(written);
      }
      say(`${workspaceId}: ${tasks} task(s) in layout 2`);
    }
    await batchWrite(
      db,
      table,
      [...counts.values()].map((c) => ({
        PutRequest: { Item: { pk: c.pk, sk: c.sk, ...c.values, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}) } },
      })),
    );
    countItems = counts.size;
    say(`${workspaceId}: ${countItems} count item(s) written`);

    // 5. The records, each moved in one write with its delete.
    for await (const page of legacyItems(db, table, workspaceId, ACTIVITY_PREFIX)) {
      const items = page.Items ?? [];
      const chunks: Record<string, unknown>[][] = [];
      for (let i = 0; i < items.length; i += 50) chunks.push(items.slice(i, i + 50));
      await inParallel(chunks, async (chunk) => {
        await commitWrites(
          db,
          chunk.flatMap((item) => {
            const id = String(item.activityId);
            return [
              {
                item: {
                  Put: {
                    TableName: table,
                    Item: {
                      ...item,
                      pk: activityPk(workspaceId, id.split('.')[0]!),
                      sk: activitySk(id),
                      gsi3pk: indexPartition(item as unknown as ActivityRecord),
                      gsi3sk: id,
                    },
                  },
                },
              },
              { item: { Delete: { TableName: table, Key: { pk: item.pk, sk: item.sk } } } },
            ];
          }),
        );
        recordsMoved += chunk.length;
      });
    }
    if (recordsMoved) say(`${workspaceId}: ${recordsMoved} activity record(s) moved`);

    // 6. The switch.
    await db.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
        UpdateExpression: 'SET layout = :v REMOVE migrating',
        ConditionExpression: 'attribute_exists(migrating)',
        ExpressionAttributeValues: { ':v': CURRENT_LAYOUT },
      }),
    );
    say(
      `${workspaceId}: switched to layout ${CURRENT_LAYOUT}; task changes work again. Removing layout 1 after ${Math.round(opts.drainMs / 1000)} s`,
    );
    await wait(opts.drainMs);
  }

  // 7. What is left of layout 1 (its tasks), once nobody reads it any more.
  let removed = 0;
  for await (const page of legacyItems(db, table, workspaceId, TASK_PREFIX)) {
    const keys = (page.Items ?? []).map((i) => ({ pk: i.pk, sk: i.sk }));
    await batchWrite(
      db,
      table,
      keys.map((Key) => ({ DeleteRequest: { Key } })),
    );
    removed += keys.length;
  }
  // 8. The history's index by project and kind, for the records written before it.
  let recordsIndexed = 0;
  if (!meta.activityIndexed) {
    for (const pk of activityShardPks(workspaceId)) {
      for await (const page of paginateQuery(
        { client: db },
        {
          TableName: table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :act)',
          FilterExpression: 'attribute_not_exists(gsi3pk)',
          ExpressionAttributeValues: { ':pk': pk, ':act': ACTIVITY_PREFIX },
          ConsistentRead: true,
        },
      )) {
        await inParallel(page.Items ?? [], async (item) => {
          // An Update of the two keys only: an undo marking the record meanwhile is kept.
          await db.send(
            new UpdateCommand({
              TableName: table,
              Key: { pk: item.pk, sk: item.sk },
              UpdateExpression: 'SET gsi3pk = :p, gsi3sk = :s',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':p': indexPartition(item as unknown as ActivityRecord), ':s': item.activityId },
            }),
          );
          recordsIndexed++;
        });
      }
    }
    await db.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
        UpdateExpression: 'SET activityIndexed = :t',
        ExpressionAttributeValues: { ':t': true },
      }),
    );
    say(`${workspaceId}: ${recordsIndexed} activity record(s) indexed by project and kind`);
  }
  return {
    workspaceId,
    already,
    numbered,
    tasks,
    written,
    deleted,
    withNotes,
    entries,
    counts: countItems,
    recordsMoved,
    removed,
    recordsIndexed,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
};

/** A deleted task's `expiresAt` as layout 1 kept it. */
const legacyExpiry = (items: Record<string, unknown>[], task: Task): number | undefined => {
  const item = items.find((i) => i.taskId === task.taskId);
  return typeof item?.expiresAt === 'number' ? item.expiresAt : undefined;
};

/** Every workspace of the table (their META items), for `migrate --all`. */
export const listWorkspaceIds = async (db: DynamoDBDocumentClient, table: string): Promise<string[]> => {
  const ids: string[] = [];
  for await (const page of paginateScan(
    { client: db },
    {
      TableName: table,
      FilterExpression: 'sk = :m',
      ExpressionAttributeValues: { ':m': WORKSPACE_SK },
      ProjectionExpression: 'workspaceId',
    },
  ))
    ids.push(...(page.Items ?? []).map((i) => String(i.workspaceId)));
  return ids.sort();
};
