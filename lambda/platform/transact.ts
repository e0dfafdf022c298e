import { randomUUID } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { isTransientDynamoError } from './dynamodb.js';
import { itemSize, writeUnitsOf } from './item-size.js';
import { WriteBusy, WriteRace, WriteTooLarge } from './storage-errors.js';

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
  /**
   * Two changes of one item cannot share a transaction, but some can be one action: a task created
   * and another task's link to it, two links to one blocker. `merge` gives the one action that does
   * both, or undefined when they do not combine (the second then waits for the next transaction).
   */
  readonly merge?: (other: WriteOp) => WriteOp | undefined;
  /** The size of the item this action leaves, when the writer knows it better than the request shows (bytes). */
  readonly sizeHint?: number;
  /** How many index entries the write changes (each billed 1 per KB of the item, outside the transaction's 2 per KB). */
  readonly indexEntries?: number;
}

/** DynamoDB's bounds on one TransactWriteItems: actions, payload, and any one item. */
export const MAX_TRANSACTION_ACTIONS = 100;
export const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;
export const MAX_ITEM_BYTES = 400 * 1024;
/** What packing aims at, under DynamoDB's 4 MB: what the request shows may be a little less than what it counts. */
const PACKED_BYTES = MAX_TRANSACTION_BYTES - 64 * 1024;

/** How often a transaction that met another one on the same item is sent again before it is 503. */
const CONFLICT_ATTEMPTS = 3;
/**
 * How often a transaction whose outcome DynamoDB did not tell (still in progress under its token, a
 * timeout, a dropped connection) is sent again with the same token, and how long it waits first: a
 * replay within ten minutes answers what the first attempt did, and commits it only if it did not.
 */
const REPLAY_DELAYS_MS = [150, 400, 900, 1_800];
/** Past this much time since the first send, nothing is replayed any more: the answer says the outcome is not known. */
const REPLAY_BUDGET_MS = 5_000;

const kindOf = (item: TransactItem): { kind: 'Put' | 'Update' | 'Delete' | 'ConditionCheck'; action: Record<string, unknown> } => {
  const [kind, action] = Object.entries(item)[0] as ['Put' | 'Update' | 'Delete' | 'ConditionCheck', Record<string, unknown>];
  return { kind, action };
};

/** The bytes of an action as DynamoDB counts them against its 4 MB: the item put, or the key and the values sent. */
export const opBytes = (op: WriteOp): number => {
  const { kind, action } = kindOf(op.item);
  const sent =
    kind === 'Put'
      ? itemSize(action.Item as Record<string, unknown>)
      : itemSize(action.Key as Record<string, unknown>) + itemSize(action.ExpressionAttributeValues as Record<string, unknown> | undefined);
  return Math.max(sent, op.sizeHint ?? 0);
};

/**
 * The write units an action costs in a transaction, as estimated before it is sent: two per KB of the
 * item, and one per KB for each index entry it changes.
 */
export const opWriteUnits = (op: WriteOp): number =>
  kindOf(op.item).kind === 'ConditionCheck' ? 2 : (2 + (op.indexEntries ?? 0)) * writeUnitsOf(opBytes(op));

/** The item an action writes or checks: two actions on one item cannot share a transaction. */
export const opKey = (op: WriteOp): string => {
  const { action } = kindOf(op.item);
  const k = (action.Key ?? action.Item ?? {}) as Record<string, unknown>;
  return `${String(action.TableName)}|${String(k.pk)}|${String(k.sk)}`;
};

/**
 * DynamoDB did not say whether a write happened, after every replay under its token: it may have
 * committed. The writer that sent it turns this into the refusal a caller reads (`unconfirmed`).
 */
export class WriteNotConfirmed extends Error {
  override name = 'WriteNotConfirmed';
  constructor(
    readonly input: TransactWriteCommandInput,
    cause: unknown,
  ) {
    super('DynamoDB did not confirm a transaction', { cause });
  }
}

interface CancellationReason {
  readonly Code?: string;
  readonly Item?: Record<string, AttributeValue> | Record<string, unknown>;
}

const isCancellation = (err: unknown): err is { name: string; CancellationReasons?: CancellationReason[] } =>
  typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'TransactionCanceledException';

const UNCERTAIN = new Set([
  'TransactionInProgressException',
  'InternalServerError',
  'TimeoutError',
  'RequestTimeout',
  'AbortError',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
]);

/** An answer that does not say whether the transaction committed: it was sent, and then nothing (or "still running") came back. */
const isUncertain = (err: unknown): boolean => {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  return UNCERTAIN.has(e.name ?? '') || UNCERTAIN.has(e.code ?? '') || (e.$metadata?.httpStatusCode ?? 0) >= 500;
};

const withAllOld = (item: TransactItem): TransactItem => {
  const { kind, action } = kindOf(item);
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Refuses, before anything is sent, a write DynamoDB would refuse for its size or length. */
const checkBounds = (ops: readonly WriteOp[]): void => {
  if (ops.length > MAX_TRANSACTION_ACTIONS) throw new WriteTooLarge('actions', ops.length, MAX_TRANSACTION_ACTIONS);
  let total = 0;
  for (const op of ops) {
    const bytes = opBytes(op);
    if (bytes > MAX_ITEM_BYTES) throw new WriteTooLarge('item', bytes, MAX_ITEM_BYTES);
    total += bytes;
  }
  if (total > MAX_TRANSACTION_BYTES) throw new WriteTooLarge('bytes', total, MAX_TRANSACTION_BYTES);
};

/**
 * Sends one TransactWriteItems under a request token of its own, and resolves what DynamoDB leaves
 * open: a transaction still in progress under that token, a timeout, a dropped connection are sent
 * again with the same token (DynamoDB answers a replay as it did the first attempt, and commits it
 * only if the first did not) until the answer is committed or cancelled. If even that stays open,
 * WriteNotConfirmed, with the request, so a later replay can be made with the same token.
 */
export const sendTransaction = async (db: DynamoDBDocumentClient, input: TransactWriteCommandInput): Promise<void> => {
  const tokened: TransactWriteCommandInput = { ...input, ClientRequestToken: input.ClientRequestToken ?? randomUUID() };
  const started = Date.now();
  for (let replay = 0; ; replay++) {
    try {
      await db.send(new TransactWriteCommand(tokened));
      return;
    } catch (err) {
      if (!isUncertain(err)) throw err;
      const delay = REPLAY_DELAYS_MS[replay];
      if (delay === undefined || Date.now() - started + delay > REPLAY_BUDGET_MS) throw new WriteNotConfirmed(tokened, err);
      await sleep(delay);
    }
  }
};

/**
 * Writes every op in one TransactWriteItems: all of them or none. A failed condition becomes the
 * refusal its op declares (the first one in order, so the answer names what the caller touched
 * first); throttling inside the transaction becomes a ThrottlingException-named error (503); a
 * transaction that met another one on the same item is sent again a few times, since its
 * conditions make a second attempt safe. A write too large for one transaction is refused before it is sent.
 */
export const commitWrites = async (
  db: DynamoDBDocumentClient,
  ops: readonly WriteOp[],
  input: Partial<TransactWriteCommandInput> = {},
): Promise<void> => {
  if (ops.length === 0) return;
  checkBounds(ops);
  const request: TransactWriteCommandInput = { ...input, TransactItems: ops.map((op) => withAllOld(op.item)) };
  for (let attempt = 1; ; attempt++) {
    try {
      // Each attempt its own token: a cancelled transaction commits nothing, so a new attempt is a new write.
      await sendTransaction(db, { ...request, ClientRequestToken: randomUUID() });
      return;
    } catch (err) {
      if (!isCancellation(err)) throw err;
      const reasons = err.CancellationReasons ?? [];
      const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
      if (failed >= 0) {
        const refused = ops[failed]?.refused;
        if (refused) await refused(plain(reasons[failed]!.Item));
        throw new WriteRace();
      }
      if (reasons.some((r) => r.Code === 'ThrottlingError' || r.Code === 'ProvisionedThroughputExceeded')) {
        throw Object.assign(new Error('a transaction was throttled'), { name: 'ThrottlingException', cause: err });
      }
      if (reasons.some((r) => r.Code === 'TransactionConflict') && attempt < CONFLICT_ATTEMPTS) {
        await sleep(20 * attempt + Math.random() * 30);
        continue;
      }
      if (reasons.some((r) => r.Code === 'TransactionConflict')) {
        throw Object.assign(new Error('a transaction kept meeting another one'), { name: 'ThrottlingException', cause: err });
      }
      throw err;
    }
  }
};

/**
 * Whether a write landed or a condition refused it: `write` is handed the `refused` to give the ops
 * whose failed condition means "not written" (an item already there, one already gone), and the
 * answer is false when one of them refused; every other failure is thrown as it came.
 */
export const writtenUnlessRefused = async (write: (refused: () => never) => Promise<void>): Promise<boolean> => {
  const notWritten = new Error('not written');
  try {
    await write(() => {
      throw notWritten;
    });
    return true;
  } catch (err) {
    if (err === notWritten) return false;
    throw err;
  }
};

/** Of a group that failed, why; `retryAlone`: it met only a combined action, so alone it may pass. */
interface Outcome {
  error?: Error;
}

/**
 * Writes many independent groups of ops, each all or nothing, packed into as few transactions as
 * fit: at most 100 actions and 4 MB each, never two actions on one item, unless they combine into
 * one (`WriteOp.merge`: two new links to one blocker become one update that adds both). A group
 * waits for a later transaction when an item of its is taken and does not combine, so a group that
 * refers to one written earlier in the call (a link to a task the call creates) lands after it. A
 * group whose condition fails is refused on its own (its op's refusal, as `commitWrites` would throw
 * it); a combined action that fails is tried again for each of its groups alone, so only the ones
 * at fault are refused; a group that cannot be written now (throttling) is refused on its own too.
 * Returns each group's error, or undefined when it was written.
 */
export const commitGroups = async (db: DynamoDBDocumentClient, groups: readonly (readonly WriteOp[])[]): Promise<(Error | undefined)[]> => {
  const results: Outcome[] = groups.map(() => ({}));
  const alone = new Set<number>();
  for (const [g, ops] of groups.entries()) {
    try {
      checkBounds(ops);
    } catch (err) {
      results[g]!.error = err as Error;
    }
  }
  let pending = groups.map((_, i) => i).filter((i) => groups[i]!.length > 0 && !results[i]!.error);
  while (pending.length) {
    const { batch, ops, rest } = pack(groups, pending, alone);
    try {
      await sendTransaction(db, { TransactItems: ops.map(({ op }) => withAllOld(op.item)) });
      pending = rest;
    } catch (err) {
      if (err instanceof WriteNotConfirmed) {
        for (const g of batch) results[g]!.error = err;
        pending = rest;
        continue;
      }
      if (!isCancellation(err)) {
        // DynamoDB could not take the write now (after the SDK's retries): these groups are not
        // written, and say so; the rest are tried (they usually meet the same).
        if (!isTransientDynamoError(err)) throw err;
        for (const g of batch) results[g]!.error = new WriteBusy(err);
        pending = rest;
        continue;
      }
      const reasons = err.CancellationReasons ?? [];
      const failed = new Set<number>();
      const again = new Set<number>();
      for (const [i, r] of reasons.entries()) {
        if (r.Code !== 'ConditionalCheckFailed') continue;
        const owners = ops[i]!.groups;
        if (owners.length > 1) for (const g of owners) again.add(g);
        else failed.add(owners[0]!);
      }
      if (!failed.size && !again.size) {
        // Throttled or meeting another transaction as a whole: each group once more on its own.
        for (const g of batch) results[g]!.error = await commitOne(db, groups[g]!);
        pending = rest;
        continue;
      }
      for (const g of failed) {
        const i = reasons.findIndex(
          (r, j) => r.Code === 'ConditionalCheckFailed' && ops[j]!.groups[0] === g && ops[j]!.groups.length === 1,
        );
        results[g]!.error = await refusalOf(ops[i]!.op, reasons[i]!);
      }
      for (const g of again) if (!failed.has(g)) alone.add(g);
      pending = [...batch.filter((g) => !failed.has(g)), ...rest];
    }
  }
  return results.map((r) => r.error);
};

interface PackedOp {
  op: WriteOp;
  /** The groups this action serves (more than one when combined). */
  groups: number[];
}

/** Packs groups in order into one transaction: those that fit (actions, bytes, items) go in, the others wait. */
const pack = (groups: readonly (readonly WriteOp[])[], pending: readonly number[], alone: ReadonlySet<number>) => {
  const batch: number[] = [];
  const rest: number[] = [];
  const ops: PackedOp[] = [];
  const byKey = new Map<string, number>();
  let bytes = 0;
  for (const g of pending) {
    // A group stays whole: it goes in with all its ops, combined where they meet, or waits.
    const plan: { at?: number; op: WriteOp }[] = [];
    let fits = true;
    let added = 0;
    let addedBytes = 0;
    const own = new Set<string>();
    for (const op of groups[g]!) {
      const key = opKey(op);
      if (own.has(key)) {
        fits = false;
        break;
      }
      own.add(key);
      const at = byKey.get(key);
      if (at === undefined) {
        plan.push({ op });
        added++;
        addedBytes += opBytes(op);
        continue;
      }
      const combined =
        alone.has(g) || ops[at]!.groups.some((o) => alone.has(o)) ? undefined : (ops[at]!.op.merge?.(op) ?? op.merge?.(ops[at]!.op));
      if (!combined) {
        fits = false;
        break;
      }
      addedBytes += opBytes(combined) - opBytes(ops[at]!.op);
      plan.push({ at, op: combined });
    }
    const room = ops.length + added <= MAX_TRANSACTION_ACTIONS && bytes + addedBytes <= PACKED_BYTES;
    if (batch.length === 0 || (fits && room)) {
      if (!fits && batch.length === 0) {
        // Alone it must fit (its own bounds were checked), or it could never be written.
        plan.length = 0;
        for (const op of groups[g]!) plan.push({ op });
      }
      for (const p of plan) {
        if (p.at === undefined) {
          byKey.set(opKey(p.op), ops.length);
          ops.push({ op: p.op, groups: [g] });
        } else {
          ops[p.at]!.op = p.op;
          ops[p.at]!.groups.push(g);
        }
      }
      bytes += addedBytes;
      batch.push(g);
    } else rest.push(g);
  }
  return { batch, ops, rest };
};

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
    return new WriteRace();
  } catch (err) {
    return err as Error;
  }
};
