import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../../platform/dynamodb.js';
import { callClaimKey } from '../../platform/item-keys.js';
import { WriteRace } from '../../platform/storage-errors.js';
import type { WriteOp } from '../../platform/transact.js';

/**
 * Calls that must not be made twice (a create, an add, an invite) claim themselves in the write that
 * makes them, after the design of Powertools' idempotency (a record per call with an in-progress
 * expiry and the stored answer, a typed error carrying the record it met), but inside the change's
 * own transaction rather than beside it: the claim and the change land together or not at all, so
 * no crash between them can leave a change without its claim. A claim is keyed by the caller, the
 * tool and the arguments; a second call with the same key within the window, on any instance, meets
 * the claim in its own write (which then writes nothing) and answers from it: the answer stored once
 * the first call answered, or that the first is still being made, or that it was made and its answer
 * lost. docs/workspace.md, "Retries", says what a caller sees.
 */

/** How long a call's claim holds: a retry after a timeout comes within it, a deliberate second call rarely. */
export const CLAIM_SECONDS = 5 * 60;

export type ClaimStatus = 'made' | 'answered' | 'unanswered';

/** A call's claim as stored. */
export interface ClaimRecord {
  readonly tool: string;
  /** The id of the first record the call wrote (its call id for a bulk call's items). */
  readonly callId: string;
  readonly at: string;
  readonly status: ClaimStatus;
  /** Until then (epoch ms) the call that made it may still be answering. */
  readonly inProgressUntil: number;
  /** The answer as the call gave it (JSON), once it answered. */
  readonly answer?: string;
}

/** The call met its own claim, made by an earlier call with the same key: the claim as found. */
export class CallMadeAlready extends Error {
  override name = 'CallMadeAlready';
  constructor(readonly record: ClaimRecord) {
    super(`this call was made already (${record.callId})`);
  }
}

/** Answers bigger than this are not kept: a retry is told the call was made, and where to read it. */
const MAX_ANSWER_BYTES = 300 * 1024;

export class CallClaims {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    /** How long the function may run: how long a claim counts as in progress. */
    private readonly inProgressSeconds: number,
  ) {}

  /**
   * The claim of one call, made by the writer that makes its first write. `replaces`: the call id of
   * a claim of the same key that this one may take over (its call was undone since).
   */
  claim(workspaceId: string, callKey: string, tool: string, now: Date, replaces?: string): CallClaim {
    return new CallClaim(this, workspaceId, callKey, tool, now, replaces);
  }

  /**
   * The claim's Put: written only where no live claim of the key is (an expired one not yet removed
   * is overwritten, and the one it `replaces`).
   */
  claimOp(c: CallClaim, callId: string): WriteOp {
    const nowSeconds = Math.floor(c.now.getTime() / 1000);
    const record: ClaimRecord = {
      tool: c.tool,
      callId,
      at: c.now.toISOString(),
      status: 'made',
      inProgressUntil: c.now.getTime() + this.inProgressSeconds * 1000,
    };
    return {
      item: {
        Put: {
          TableName: this.table,
          Item: { ...callClaimKey(c.workspaceId, c.callKey), ...record, expiresAt: nowSeconds + CLAIM_SECONDS },
          ConditionExpression: `attribute_not_exists(pk) OR expiresAt < :now${c.replaces ? ' OR callId = :replaced' : ''}`,
          ExpressionAttributeValues: { ':now': nowSeconds, ...(c.replaces ? { ':replaced': c.replaces } : {}) },
        },
      },
      refused: (current) => {
        // A claim's condition fails only on a claim that is there: without one, another write won a race.
        if (!current) throw new WriteRace();
        throw new CallMadeAlready(toRecord(current));
      },
    };
  }

  /** The claim as stored now (strongly consistent), if there is one. */
  async get(c: CallClaim): Promise<ClaimRecord | undefined> {
    const out = await this.db.send(
      new GetCommand({ TableName: this.table, Key: callClaimKey(c.workspaceId, c.callKey), ConsistentRead: true }),
    );
    return out.Item ? toRecord(out.Item) : undefined;
  }

  /** Keeps the call's answer on its claim (only its own: the claim still names its first record). */
  async answer(c: CallClaim, callId: string, answer: unknown): Promise<void> {
    const json = JSON.stringify(answer);
    await this.settle(
      c,
      callId,
      Buffer.byteLength(json) <= MAX_ANSWER_BYTES ? { status: 'answered', answer: json } : { status: 'unanswered' },
    );
  }

  /** The call ended without an answer to keep (its write was not confirmed, or a later step failed). */
  async unanswered(c: CallClaim, callId: string): Promise<void> {
    await this.settle(c, callId, { status: 'unanswered' });
  }

  private async settle(c: CallClaim, callId: string, to: { status: ClaimStatus; answer?: string }): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: callClaimKey(c.workspaceId, c.callKey),
          UpdateExpression: to.answer === undefined ? 'SET #s = :s' : 'SET #s = :s, answer = :a',
          ConditionExpression: 'callId = :id',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':s': to.status, ':id': callId, ...(to.answer === undefined ? {} : { ':a': to.answer }) },
        }),
      );
    } catch (err) {
      // Its write did not land after all (an unconfirmed one), or another call's claim is there now.
      if (!isConditionFailure(err)) throw err;
    }
  }
}

const toRecord = (item: Record<string, unknown>): ClaimRecord => ({
  tool: String(item.tool ?? ''),
  callId: String(item.callId ?? ''),
  at: String(item.at ?? ''),
  status: (item.status as ClaimStatus | undefined) ?? 'made',
  inProgressUntil: Number(item.inProgressUntil ?? 0),
  ...(typeof item.answer === 'string' ? { answer: item.answer } : {}),
});

/**
 * One call's claim, as its writers carry it: the first write of the call that lands takes the claim
 * with it (`op`, then `landed`); a write that does not land leaves it for the next one.
 */
export class CallClaim {
  private landedAs: string | undefined;

  constructor(
    private readonly claims: CallClaims,
    readonly workspaceId: string,
    readonly callKey: string,
    readonly tool: string,
    readonly now: Date,
    readonly replaces?: string,
  ) {}

  /** The op the next write carries, with the id of its first record; none once a write of the call landed. */
  op(callId: string): WriteOp | undefined {
    return this.landedAs === undefined ? this.claims.claimOp(this, callId) : undefined;
  }

  /** The write that carried the claim with this record id landed. */
  landed(callId: string): void {
    this.landedAs ??= callId;
  }

  /** The id of the record the claim names, once it landed. */
  get callId(): string | undefined {
    return this.landedAs;
  }

  /**
   * Whether a write DynamoDB did not confirm landed: its claim is there and names its record. A
   * false is not a proof of the contrary (a read that fails, a write still in flight), only that this
   * call cannot tell.
   */
  async confirm(callId: string): Promise<boolean> {
    try {
      const found = await this.claims.get(this);
      if (found?.callId !== callId) return false;
      this.landed(callId);
      return true;
    } catch {
      return false;
    }
  }

  /** Keeps the call's answer (after it answered), or says it ended without one. */
  settle(answer: unknown): Promise<void> {
    if (this.landedAs === undefined) return Promise.resolve();
    return answer === undefined ? this.claims.unanswered(this, this.landedAs) : this.claims.answer(this, this.landedAs, answer);
  }
}
