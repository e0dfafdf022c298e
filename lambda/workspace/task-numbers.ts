import { type DynamoDBDocumentClient, GetCommand, paginateQuery } from '@aws-sdk/lib-dynamodb';
import { InvalidArgumentRefusal, NotFoundRefusal } from '../errors.js';
import { BoundedMap } from '../platform/bounded-map.js';
import { TASK_PREFIX, taskNumberSk, taskSk, WORKSPACE_SK, wsPk } from '../platform/item-keys.js';
import { commitWrites, type WriteOp } from '../platform/transact.js';
import { type Principal, WORKSPACE_KEY, type Workspace, workspaceKeyOf } from '../vocabulary.js';

/**
 * Task numbers: `DEMO-42` names the task whose number is 42 in its workspace. A number is claimed in
 * the same all-or-nothing write that creates the task (the workspace's counter moves from n to n+k
 * only if it is still n, and each `TASKNO#<n>` item is written only if absent), so concurrent
 * creates never share one, and none is ever reused. The number of a task never changes, so each
 * instance remembers number → task id for good.
 */

/** `DEMO-42`, `demo-42`, `#42`, `42`: a key in any of its spellings. */
const KEY_FORM = /^(?:([A-Za-z]{2,6})-|#)?(\d{1,9})$/;

export type TaskRef = { readonly number: number; readonly prefix?: string } | { readonly id: string };

/** A task reference as given: a key (any spelling) or an id. */
export const parseTaskRef = (ref: string): TaskRef => {
  const m = KEY_FORM.exec(ref.trim());
  if (!m) return { id: ref };
  return { number: Number(m[2]), ...(m[1] ? { prefix: m[1].toUpperCase() } : {}) };
};

/** How a task is shown: its key, or (not numbered yet) its id. */
export const keyOf = (workspaceKey: string, number: number | undefined): string | undefined =>
  number === undefined ? undefined : `${workspaceKey}-${number}`;

/** `{ key }` for an output that names a task, or nothing for one not numbered yet. */
export const keyField = (workspaceKey: string, number: number | undefined): { key?: string } => {
  const key = keyOf(workspaceKey, number);
  return key ? { key } : {};
};

const MAX_REMEMBERED = 50_000;

export class TaskNumbers {
  private readonly ids = new BoundedMap<string, string>(MAX_REMEMBERED);
  /** The highest counter this instance has seen per workspace: where its next allocation starts. */
  private readonly counters = new BoundedMap<string, number>(1_000);

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  remember(workspaceId: string, number: number | undefined, taskId: string): void {
    if (number !== undefined) this.ids.set(`${workspaceId}#${number}`, taskId);
  }

  /** The task id a reference names, or undefined when no task has that number. */
  async idOf(principal: Principal, ref: string, param: string): Promise<string | undefined> {
    const parsed = parseTaskRef(ref);
    if ('id' in parsed) return parsed.id;
    if (parsed.prefix && parsed.prefix !== principal.workspaceKey && !principal.pastKeys.includes(parsed.prefix)) {
      throw new InvalidArgumentRefusal(
        `${param}: ${ref} is not a key of this workspace; its tasks are ${principal.workspaceKey}-<number> (or #<number>).`,
      );
    }
    const cached = this.ids.get(`${principal.workspaceId}#${parsed.number}`);
    if (cached) return cached;
    const out = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: { pk: wsPk(principal.workspaceId), sk: taskNumberSk(parsed.number) },
        ConsistentRead: true,
      }),
    );
    const taskId = out.Item?.taskId as string | undefined;
    if (taskId) this.remember(principal.workspaceId, parsed.number, taskId);
    return taskId;
  }

  /** Like `idOf`, refusing a number no task has. */
  async idOrRefuse(principal: Principal, ref: string, param: string): Promise<string> {
    const id = await this.idOf(principal, ref, param);
    if (id === undefined) {
      throw new NotFoundRefusal(`${param}: no task is ${ref} in this workspace; tasks_search finds tasks and their keys.`);
    }
    return id;
  }

  /** Where an allocation starts: the higher of what the principal read and what this instance saw. */
  counterHint(principal: Principal): number {
    return Math.max(principal.taskCounter, this.counters.get(principal.workspaceId) ?? 0);
  }

  /** After a write, or a refusal that told the current counter. */
  sawCounter(workspaceId: string, counter: number): void {
    if (counter > (this.counters.get(workspaceId) ?? 0)) this.counters.set(workspaceId, counter);
  }

  /**
   * Moves the workspace's counter from `from` to `to`, only if it is still `from`; a refusal throws
   * `CounterMoved` with the counter as found (the item comes back with the failed condition).
   */
  counterOp(workspaceId: string, from: number, to: number): WriteOp {
    return {
      item: {
        Update: {
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
          UpdateExpression: 'SET taskCounter = :to',
          ConditionExpression:
            from === 0 ? 'attribute_exists(pk) AND (attribute_not_exists(taskCounter) OR taskCounter = :from)' : 'taskCounter = :from',
          ExpressionAttributeValues: { ':to': to, ':from': from },
        },
      },
      refused: (current) => {
        throw new CounterMoved(typeof current?.taskCounter === 'number' ? current.taskCounter : 0, current !== undefined);
      },
    };
  }

  /** Claims a number for a task: written only if no task had it (never: the counter guards it; this is the guarantee). */
  claimOp(workspaceId: string, number: number, taskId: string): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: { pk: wsPk(workspaceId), sk: taskNumberSk(number), taskId },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      refused: () => {
        throw new CounterMoved(number, true);
      },
    };
  }
}

/** The counter was not where the write expected it: try again from `counter`. */
export class CounterMoved extends Error {
  override name = 'CounterMoved';
  constructor(
    readonly counter: number,
    readonly workspaceExists: boolean,
  ) {
    super(`the task counter is at ${counter}`);
  }
}

/** How often a create is tried again after another create took the numbers it meant to take. */
export const ALLOCATION_ATTEMPTS = 100;

/**
 * Writes a creation that needs `count` new numbers: `write(first)` builds the write for numbers
 * first … first + count - 1 (with the counter move and the claims in it) and is sent again with the
 * counter as found whenever another create got there first.
 */
export const withNewNumbers = async <T>(
  numbers: TaskNumbers,
  principal: Principal,
  count: number,
  write: (first: number, counterAndClaims: (taskIds: readonly string[]) => WriteOp[]) => Promise<T>,
): Promise<T> => {
  let counter = numbers.counterHint(principal);
  for (let attempt = 1; ; attempt++) {
    const first = counter + 1;
    try {
      const out = await write(first, (taskIds) => [
        numbers.counterOp(principal.workspaceId, counter, counter + count),
        ...taskIds.map((id, i) => numbers.claimOp(principal.workspaceId, first + i, id)),
      ]);
      numbers.sawCounter(principal.workspaceId, counter + count);
      return out;
    } catch (err) {
      if (!(err instanceof CounterMoved)) throw err;
      if (!err.workspaceExists) throw new NotFoundRefusal(`Workspace ${principal.workspaceId} was not found`);
      if (attempt >= ALLOCATION_ATTEMPTS) throw new Error('could not allocate a task number after many attempts');
      counter = Math.max(err.counter, counter + (err.counter === counter ? 1 : 0));
      numbers.sawCounter(principal.workspaceId, counter);
      // Spread the contenders a little: under heavy contention each round lets one through.
      if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, attempt * 5)));
    }
  }
};

/**
 * The migration of a workspace from before task numbers (`npm run admin -- tasks number`): every
 * task without a number gets the next one, oldest first, each in one write with the counter and its
 * claim; a task numbered meanwhile is skipped. Run again, it numbers nothing. Deleted tasks kept for
 * undo are numbered too, so an undo brings them back with a key.
 */
export const numberExistingTasks = async (
  db: DynamoDBDocumentClient,
  table: string,
  workspaceId: string,
  extra: (numbered: number) => readonly WriteOp[],
): Promise<{ readonly numbered: number; readonly counter: number }> => {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateQuery(
    { client: db },
    {
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      ExpressionAttributeValues: { ':pk': wsPk(workspaceId), ':t': TASK_PREFIX },
      ProjectionExpression: 'taskId, createdAt, #n',
      ExpressionAttributeNames: { '#n': 'number' },
    },
  ))
    items.push(...(page.Items ?? []));
  const todo = items
    .filter((i) => i.number === undefined)
    .sort((a, b) => `${String(a.createdAt)}#${String(a.taskId)}`.localeCompare(`${String(b.createdAt)}#${String(b.taskId)}`));
  const meta = (await db.send(new GetCommand({ TableName: table, Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK }, ConsistentRead: true })))
    .Item;
  if (!meta) throw new NotFoundRefusal(`Workspace ${workspaceId} was not found`);
  const numbers = new TaskNumbers(db, table);
  let counter = typeof meta.taskCounter === 'number' ? meta.taskCounter : 0;
  let numbered = 0;
  for (const item of todo) {
    const taskId = String(item.taskId);
    for (let attempt = 1; ; attempt++) {
      const n = counter + 1;
      try {
        await commitWrites(db, [
          numbers.counterOp(workspaceId, counter, n),
          numbers.claimOp(workspaceId, n, taskId),
          {
            item: {
              Update: {
                TableName: table,
                Key: { pk: wsPk(workspaceId), sk: taskSk(taskId) },
                UpdateExpression: 'SET #n = :n',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#n)',
                ExpressionAttributeNames: { '#n': 'number' },
                ExpressionAttributeValues: { ':n': n },
              },
            },
            refused: () => {
              throw new AlreadyNumbered();
            },
          },
        ]);
        counter = n;
        numbered++;
        break;
      } catch (err) {
        if (err instanceof AlreadyNumbered) break;
        if (!(err instanceof CounterMoved) || attempt >= ALLOCATION_ATTEMPTS) throw err;
        counter = Math.max(err.counter, counter + 1);
      }
    }
  }
  // The key itself: a workspace from before keys had it only derived from its name.
  await commitWrites(db, [
    {
      item: {
        Update: {
          TableName: table,
          Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
          UpdateExpression: 'SET #k = if_not_exists(#k, :k)',
          ExpressionAttributeNames: { '#k': 'key' },
          ExpressionAttributeValues: { ':k': workspaceKeyOf(meta as unknown as Workspace) },
        },
      },
    },
    ...extra(numbered),
  ]);
  return { numbered, counter };
};

class AlreadyNumbered extends Error {}

/**
 * Changes a workspace's key; the old one keeps naming its tasks (`pastKeys`). Refused for a key
 * that is not 2 to 6 letters.
 */
export const setWorkspaceKey = async (
  db: DynamoDBDocumentClient,
  table: string,
  workspace: Workspace,
  key: string,
  extra: readonly WriteOp[],
): Promise<void> => {
  const next = key.toUpperCase();
  if (!WORKSPACE_KEY.test(next)) throw new InvalidArgumentRefusal(`key: ${key} is not 2 to 6 letters (A–Z), like DEMO or ACME.`);
  const current = workspaceKeyOf(workspace);
  const past = [...new Set([...(workspace.pastKeys ?? []), current])].filter((k) => k !== next);
  await commitWrites(db, [
    {
      item: {
        Update: {
          TableName: table,
          Key: { pk: wsPk(workspace.workspaceId), sk: WORKSPACE_SK },
          UpdateExpression: 'SET #k = :k, pastKeys = :past',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#k': 'key' },
          ExpressionAttributeValues: { ':k': next, ':past': past },
        },
      },
      refused: () => {
        throw new NotFoundRefusal(`Workspace ${workspace.workspaceId} was not found`);
      },
    },
    ...extra,
  ]);
};
