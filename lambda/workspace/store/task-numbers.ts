import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BoundedMap } from '../../platform/bounded-map.js';
import { batchGetConsistent, isConditionFailure } from '../../platform/dynamodb.js';
import { numberPk, taskNumberSk, WORKSPACE_SK, wsPk } from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import type { Caller } from '../model/caller.js';
import { itemRefOutsideCreate, notAKeyHere, numbersBusy, taskNotFound, workspaceNotFound } from '../model/refusals.js';
import { parseTaskRef } from '../model/task-refs.js';

/**
 * Task numbers: `DEMO-42` names the task whose number is 42 in its workspace. A number is claimed in
 * the same all-or-nothing write that creates the task (the workspace's counter moves from n to n+k
 * only if it is still n, and each `TASKNO#<n>` claim is written only if absent), so concurrent
 * creates never share one, and none is ever reused. The number of a task never changes, so each
 * instance remembers number → task id for good.
 */

const MAX_REMEMBERED = 50_000;

/** Task numbers as a reader needs them: `DEMO-42` to a task id. */
export interface TaskNumberLookup {
  /** Teaches the instance a task's number (every task read does). */
  remember(workspaceId: string, number: number | undefined, taskId: string): void;
  /** The task id a reference names, or undefined when no task has that number. */
  idOf(principal: Caller, ref: string, param: string): Promise<string | undefined>;
  /** Like `idOf`, refusing a number no task has. */
  idOrRefuse(principal: Caller, ref: string, param: string): Promise<string>;
}

export class TaskNumbers implements TaskNumberLookup {
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
  async idOf(principal: Caller, ref: string, param: string): Promise<string | undefined> {
    const parsed = parseTaskRef(ref);
    if ('id' in parsed) return parsed.id;
    if ('item' in parsed) throw itemRefOutsideCreate(param, ref);
    if (parsed.prefix && parsed.prefix !== principal.workspaceKey && !principal.pastKeys.includes(parsed.prefix)) {
      throw notAKeyHere(ref, param, principal.workspaceKey);
    }
    const cached = this.ids.get(`${principal.workspaceId}#${parsed.number}`);
    if (cached) return cached;
    // Its claim, where numbers are claimed now and where layout 1 claimed them: one read either way.
    const items = await batchGetConsistent(this.db, this.table, [
      { pk: numberPk(principal.workspaceId, parsed.number), sk: taskNumberSk(parsed.number) },
      { pk: wsPk(principal.workspaceId), sk: taskNumberSk(parsed.number) },
    ]);
    const taskId = items[0]?.taskId as string | undefined;
    if (taskId) this.remember(principal.workspaceId, parsed.number, taskId);
    return taskId;
  }

  /** Like `idOf`, refusing a number no task has. */
  async idOrRefuse(principal: Caller, ref: string, param: string): Promise<string> {
    const id = await this.idOf(principal, ref, param);
    if (id === undefined) throw taskNotFound(ref, param);
    return id;
  }

  /** Where an allocation starts: the higher of what the principal read and what this instance saw. */
  counterHint(principal: Caller): number {
    return Math.max(principal.taskCounter, this.counters.get(principal.workspaceId) ?? 0);
  }

  /**
   * Takes `count` numbers at once (a bulk create that needs more than one transaction): the counter
   * moves by `count` in one update that cannot conflict, and the first number is returned. The
   * transactions after it claim those numbers only; a task the call then does not create leaves its
   * number unused (numbers are never reused, so a gap is all it leaves).
   */
  async reserve(workspaceId: string, count: number): Promise<number> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
          UpdateExpression: 'SET taskCounter = if_not_exists(taskCounter, :zero) + :k',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':zero': 0, ':k': count },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const counter = Number(out.Attributes?.taskCounter);
      this.sawCounter(workspaceId, counter);
      return counter - count + 1;
    } catch (err) {
      if (isConditionFailure(err)) throw workspaceNotFound(workspaceId);
      throw err;
    }
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

  /** Claims a number for a task: written only if no task had it. A refusal throws `NumberTaken` (a claim left above the counter). */
  claimOp(workspaceId: string, number: number, taskId: string): WriteOp {
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: { pk: numberPk(workspaceId, number), sk: taskNumberSk(number), taskId },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      refused: () => {
        throw new NumberTaken(number);
      },
    };
  }

  /**
   * Moves the counter past claims found from `taken` on: what heals a workspace where a claim was
   * left above the counter (by an earlier version's bulk create). The claims after it are read a
   * window at a time, the counter is raised to the highest one found (never lowered), and the
   * counter as it then is comes back.
   */
  async movePast(workspaceId: string, taken: number): Promise<number> {
    let highest = taken;
    for (let window = 0; window < HEAL_WINDOWS; window++) {
      const from = highest + 1;
      const found = await batchGetConsistent(
        this.db,
        this.table,
        Array.from({ length: HEAL_WINDOW }, (_, k) => ({ pk: numberPk(workspaceId, from + k), sk: taskNumberSk(from + k) })),
      );
      const numbers = found.map((item) => Number(String(item.sk).slice('TASKNO#'.length)));
      if (!numbers.length) break;
      highest = Math.max(highest, ...numbers);
      if (highest < from + HEAL_WINDOW - 1) break;
    }
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK },
          UpdateExpression: 'SET taskCounter = :h',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(taskCounter) OR taskCounter < :h)',
          ExpressionAttributeValues: { ':h': highest },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      this.sawCounter(workspaceId, Number(out.Attributes?.taskCounter));
      return highest;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // Past it already (another create healed it, or the workspace is gone): as it is now.
      const meta = await this.db.send(
        new GetCommand({ TableName: this.table, Key: { pk: wsPk(workspaceId), sk: WORKSPACE_SK }, ConsistentRead: true }),
      );
      if (!meta.Item) throw workspaceNotFound(workspaceId);
      const counter = Number(meta.Item.taskCounter ?? 0);
      this.sawCounter(workspaceId, counter);
      return counter;
    }
  }
}

/** How many numbers past a claim found above the counter one read looks at, and how many such reads one heal makes at most. */
const HEAL_WINDOW = 100;
const HEAL_WINDOWS = 3;

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

/** A number's claim was there already though the counter was below it: the counter must move past it first. */
export class NumberTaken extends Error {
  override name = 'NumberTaken';
  constructor(readonly number: number) {
    super(`task number ${number} is claimed already`);
  }
}

/**
 * How often a create moves the counter in its own write before it takes its numbers with an update
 * that cannot conflict (`reserve`): under contention each round lets at least one create through,
 * and the reservation lets every other one through at the cost of one more request.
 */
export const OPTIMISTIC_ATTEMPTS = 3;
/** Reservations tried (each after healing a claim found above the counter) before the create is refused as busy. */
export const RESERVED_ATTEMPTS = 2;

/**
 * Writes a creation that needs `count` new numbers: `write(numbers, counterAndClaims)` builds the
 * write for those numbers (with the counter move, if any, and the claims in it). The counter moves
 * in the same write at first; after a few creates got there first it is moved by a reservation
 * instead, which never conflicts. A claim found above the counter moves the counter past it. What
 * still cannot get numbers is refused as busy (a typed refusal to retry), never retried without end.
 */
export const withNewNumbers = async <T>(
  numbers: TaskNumbers,
  principal: Caller,
  count: number,
  write: (taken: readonly number[], counterAndClaims: (taskIds: readonly string[]) => WriteOp[]) => Promise<T>,
): Promise<T> => {
  const ws = principal.workspaceId;
  const run = (first: number, counter: number | undefined) =>
    write(
      Array.from({ length: count }, (_, k) => first + k),
      (taskIds) => [
        ...(counter === undefined ? [] : [numbers.counterOp(ws, counter, counter + count)]),
        ...taskIds.map((id, k) => numbers.claimOp(ws, first + k, id)),
      ],
    );
  let counter = numbers.counterHint(principal);
  for (let attempt = 1; attempt <= OPTIMISTIC_ATTEMPTS; attempt++) {
    try {
      const out = await run(counter + 1, counter);
      numbers.sawCounter(ws, counter + count);
      return out;
    } catch (err) {
      if (err instanceof NumberTaken) {
        counter = Math.max(counter, await numbers.movePast(ws, err.number));
        continue;
      }
      if (!(err instanceof CounterMoved)) throw err;
      if (!err.workspaceExists) throw workspaceNotFound(ws);
      counter = Math.max(err.counter, counter + (err.counter === counter ? 1 : 0));
      numbers.sawCounter(ws, counter);
    }
  }
  for (let attempt = 1; ; attempt++) {
    const first = await numbers.reserve(ws, count);
    try {
      return await run(first, undefined);
    } catch (err) {
      if (!(err instanceof NumberTaken)) throw err;
      if (attempt >= RESERVED_ATTEMPTS) throw numbersBusy();
      await numbers.movePast(ws, err.number);
    }
  }
};
