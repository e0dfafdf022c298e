import { AsyncLocalStorage } from 'node:async_hooks';
import { ReadCeilingReached } from './storage-errors.js';

/**
 * What one call may spend, and what it has: the one place the per-call ceilings are kept. A tool
 * call runs inside `withCallBudget`; the DynamoDB client counts every read's consumed units and
 * bytes into it (platform/dynamodb.ts) and refuses the next read once the call is past its read
 * ceiling, and writers take their estimated write units from it before they write. A call is cut at
 * one point: once an ask for write units is refused, every later ask of the call is refused too, so
 * a bulk call or a bulk undo stops where the units ran out and says so, item by item, in order.
 * Outside a call (the admin CLI, the seed) there is no budget and nothing is counted.
 */

export interface CallCeilings {
  /** Read units (4 KB of a strongly consistent read each) one call may spend. */
  readonly readUnits: number;
  /** Bytes of answers one call may read. */
  readonly readBytes: number;
  /** Write units (as estimated before each write) one call may spend. */
  readonly writeUnits: number;
}

export class CallBudget {
  readUnits = 0;
  readBytes = 0;
  writeUnits = 0;
  private writesSpent = false;

  constructor(readonly ceilings: CallCeilings) {}

  /**
   * Takes `units` write units for the next write: false when they would pass the ceiling, and from
   * then on for every ask of this call.
   */
  takeWrites(units: number): boolean {
    if (this.writesSpent || this.writeUnits + units > this.ceilings.writeUnits) {
      this.writesSpent = true;
      return false;
    }
    this.writeUnits += units;
    return true;
  }

  /** A write cost `actual` where `estimated` was taken: the difference is the call's. */
  settleWrites(estimated: number, actual: number): void {
    this.writeUnits += actual - estimated;
  }

  /** Refuses a read once the call is past its read ceiling (before it is sent). */
  checkRead(): void {
    if (this.readUnits > this.ceilings.readUnits || this.readBytes > this.ceilings.readBytes)
      throw new ReadCeilingReached(
        { units: this.readUnits, bytes: this.readBytes },
        { units: this.ceilings.readUnits, bytes: this.ceilings.readBytes },
      );
  }

  noteRead(units: number, bytes: number): void {
    this.readUnits += units;
    this.readBytes += bytes;
  }
}

const current = new AsyncLocalStorage<CallBudget>();

/** Runs `fn` as one call with its own budget. */
export const withCallBudget = <T>(ceilings: CallCeilings, fn: () => Promise<T>): Promise<T> => current.run(new CallBudget(ceilings), fn);

/** The budget of the call this code runs in, if it runs in one. */
export const callBudget = (): CallBudget | undefined => current.getStore();

/** Takes write units from the current call's budget; outside a call there is no ceiling. */
export const takeWriteUnits = (units: number): boolean => callBudget()?.takeWrites(units) ?? true;

/** A write that cost `actual` where `estimated` was taken. */
export const settleWriteUnits = (estimated: number, actual: number): void => callBudget()?.settleWrites(estimated, actual);
