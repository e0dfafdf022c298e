import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { BoundedMap } from '../../platform/bounded-map.js';
import { batchGetConsistent, isConditionFailure } from '../../platform/dynamodb.js';
import { numberPk, taskNumberSk, WORKSPACE_SK, wsPk } from '../../platform/item-keys.js';
import type { WriteOp } from '../../platform/transact.js';
import type { Caller } from '../model/caller.js';
import { invalid, notAKeyHere, taskNotFound, workspaceNotFound } from '../model/refusals.js';
import { parseTaskRef } from '../model/task-refs.js';

/**
 * Task numbers: `DEMO-42` names the task whose number is 42 in its workspace. A number is claimed in
 * the same all-or-nothing write that creates the task (the workspace's counter moves from n to n+k
 * only if it is still n, and each `TASKNO#<n>` claim is written only if absent), so concurrent
 * creates never share one, and none is ever reused. The number of a task never changes, so each
 * instance remembers number → task id for good.
 */

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
  async idOf(principal: Caller, ref: string, param: string): Promise<string | undefined> {
    const parsed = parseTaskRef(ref);
    if ('id' in parsed) return parsed.id;
    if ('item' in parsed)
      throw invalid(param, `${ref} names an item of the same tasks_create call, and only tasks_create items can use it.`);
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

  /** Claims a number for a task: written only if no task had it (never: the counter guards it; this is the guarantee). */
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
  principal: Caller,
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
      if (!err.workspaceExists) throw workspaceNotFound(principal.workspaceId);
      if (attempt >= ALLOCATION_ATTEMPTS) throw new Error('could not allocate a task number after many attempts');
      counter = Math.max(err.counter, counter + (err.counter === counter ? 1 : 0));
      numbers.sawCounter(principal.workspaceId, counter);
      // Spread the contenders a little: under heavy contention each round lets one through.
      if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, attempt * 5)));
    }
  }
};
