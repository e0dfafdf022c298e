import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ConflictRefusal } from '../errors.js';
import { isTransientDynamoError } from './dynamodb.js';

/** One action of a TransactWriteItems: a Put, Update, Delete or ConditionCheck. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * One item's part of an all-or-nothing write, and what a failed condition on it means. `refused`
 * gets the item as the failed check saw it (every action asks for ALL_OLD) and throws the domain
 * refusal (a conflict naming the current version, a not-found); without it, a failed condition is
 * a race the whole write loses (a conflict to read again and retry).
 */
export interface WriteOp {
  readonly item: TransactItem;
  readonly refused?: (current: Record<string, unknown> | undefined) => never | Promise<never>;
}

/** DynamoDB's bound on the actions of one TransactWriteItems. */
export const MAX_TRANSACTION_ACTIONS = 100;

/** How often a transaction that met another one on the same item is sent again before it is 503. */
const CONFLICT_ATTEMPTS = 3;

/** A condition failed where the writer expected none to: someone else wrote first, and nothing was written. */
const raceRefusal = (): ConflictRefusal =>
  new ConflictRefusal('Conflict: the data changed while this change was being written, so nothing was changed; read it again and retry.');

interface CancellationReason {
  readonly Code?: string;
  readonly Item?: Record<string, AttributeValue> | Record<string, unknown>;
}

const isCancellation = (err: unknown): err is { name: string; CancellationReasons?: CancellationReason[] } =>
  typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'TransactionCanceledException';

const withAllOld = (item: TransactItem): TransactItem => {
  const [kind, action] = Object.entries(item)[0] as [keyof TransactItem, Record<string, unknown>];
  return action.ConditionExpression === undefined
    ? item
    : ({ [kind]: { ReturnValuesOnConditionCheckFailure: 'ALL_OLD', ...action } } as TransactItem);
};

/** lib-dynamodb unmarshalls answers, not errors: the item of a cancellation reason comes in wire form. */
const plain = (item: CancellationReason['Item']): Record<string, unknown> | undefined => {
  if (!item) return undefined;
  const wire = Object.values(item).every((v) => typeof v === 'object' && v !== null && Object.keys(v).length === 1);
  return wire ? unmarshall(item as Record<string, AttributeValue>) : (item as Record<string, unknown>);
};

/**
 * Writes every op in one TransactWriteItems: all of them or none. A failed condition becomes the
 * refusal its op declares (the first one in order, so the answer names what the caller touched
 * first); throttling inside the transaction becomes a ThrottlingException-named error (503); a
 * transaction that met another one on the same item is sent again a few times, since its
 * conditions make a second attempt safe.
 */
export const commitWrites = async (db: DynamoDBDocumentClient, ops: readonly WriteOp[]): Promise<void> => {
  if (ops.length === 0) return;
  if (ops.length > MAX_TRANSACTION_ACTIONS) throw new Error(`a transaction takes at most ${MAX_TRANSACTION_ACTIONS} actions`);
  const input: TransactWriteCommandInput = { TransactItems: ops.map((op) => withAllOld(op.item)) };
  for (let attempt = 1; ; attempt++) {
    try {
      await db.send(new TransactWriteCommand(input));
      return;
    } catch (err) {
      if (!isCancellation(err)) throw err;
      const reasons = err.CancellationReasons ?? [];
      const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
      if (failed >= 0) {
        const refused = ops[failed]?.refused;
        if (refused) await refused(plain(reasons[failed]!.Item));
        throw raceRefusal();
      }
      if (reasons.some((r) => r.Code === 'ThrottlingError' || r.Code === 'ProvisionedThroughputExceeded')) {
        throw Object.assign(new Error('a transaction was throttled'), { name: 'ThrottlingException', cause: err });
      }
      if (reasons.some((r) => r.Code === 'TransactionConflict') && attempt < CONFLICT_ATTEMPTS) {
        await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 30));
        continue;
      }
      if (reasons.some((r) => r.Code === 'TransactionConflict')) {
        throw Object.assign(new Error('a transaction kept meeting another one'), { name: 'ThrottlingException', cause: err });
      }
      throw err;
    }
  }
};

/** The items an action writes or checks: two actions on one item cannot share a transaction. */
const keyOf = (item: TransactItem): string => {
  const action = Object.values(item)[0] as { Key?: Record<string, unknown>; Item?: Record<string, unknown>; TableName?: string };
  const k = action.Key ?? action.Item ?? {};
  return `${action.TableName}|${String(k.pk)}|${String(k.sk)}`;
};

/**
 * Writes many independent groups of ops, each all or nothing, packed into as few transactions as
 * fit (at most 100 actions, never two touching one item). A group whose condition fails is refused
 * on its own (its op's refusal, as `commitWrites` would throw it) and the others of its
 * transaction are sent again; a group that cannot be written now (throttling) is refused on its
 * own too. Returns each group's error, or undefined when it was written.
 */
export const commitGroups = async (db: DynamoDBDocumentClient, groups: readonly (readonly WriteOp[])[]): Promise<(Error | undefined)[]> => {
  const results: (Error | undefined)[] = groups.map(() => undefined);
  let pending = groups.map((_, i) => i).filter((i) => groups[i]!.length > 0);
  while (pending.length) {
    // Pack in order: a group that would overflow the transaction or touch an item of it waits.
    const batch: number[] = [];
    const keys = new Set<string>();
    let size = 0;
    const rest: number[] = [];
    for (const g of pending) {
      const own = groups[g]!.map((op) => keyOf(op.item));
      const fits = size + own.length <= MAX_TRANSACTION_ACTIONS && own.every((k) => !keys.has(k)) && new Set(own).size === own.length;
      if (fits || batch.length === 0) {
        batch.push(g);
        for (const k of own) keys.add(k);
        size += own.length;
      } else rest.push(g);
    }
    const ops = batch.flatMap((g) => groups[g]!.map((op) => ({ op, g })));
    try {
      await db.send(new TransactWriteCommand({ TransactItems: ops.map(({ op }) => withAllOld(op.item)) }));
      pending = rest;
    } catch (err) {
      if (!isCancellation(err)) {
        // DynamoDB could not take the write now (after the SDK's retries): these groups are not
        // written, and say so; the rest are tried (they usually meet the same).
        if (!isTransientDynamoError(err)) throw err;
        for (const g of batch) results[g] = busyRefusal();
        pending = rest;
        continue;
      }
      const reasons = err.CancellationReasons ?? [];
      const failed = new Set<number>();
      for (const [i, r] of reasons.entries()) {
        if (r.Code === 'ConditionalCheckFailed') failed.add(ops[i]!.g);
      }
      if (!failed.size) {
        // Throttled or meeting another transaction as a whole: each group once more on its own.
        for (const g of batch) results[g] = await commitOne(db, groups[g]!);
        pending = rest;
        continue;
      }
      for (const g of failed) {
        const i = reasons.findIndex((r, j) => r.Code === 'ConditionalCheckFailed' && ops[j]!.g === g);
        results[g] = await refusalOf(ops[i]!.op, reasons[i]!);
      }
      pending = [...batch.filter((g) => !failed.has(g)), ...rest];
    }
  }
  return results;
};

const busyRefusal = (): ConflictRefusal =>
  new ConflictRefusal(
    'Not confirmed: the database was too busy or did not answer in time, so this item may not have been written; read it before retrying.',
  );

const commitOne = async (db: DynamoDBDocumentClient, ops: readonly WriteOp[]): Promise<Error | undefined> => {
  try {
    await commitWrites(db, ops);
    return undefined;
  } catch (err) {
    return err as Error;
  }
};

const refusalOf = async (op: WriteOp, reason: CancellationReason): Promise<Error> => {
  try {
    if (op.refused) await op.refused(plain(reason.Item));
    return raceRefusal();
  } catch (err) {
    return err as Error;
  }
};
