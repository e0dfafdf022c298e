/**
 * What the storage layer says when it cannot do what it was asked, as typed errors with stable codes
 * and the data a caller acts on (in the manner of Powertools' `IdempotencyItemAlreadyExistsError`,
 * which carries the record it met). The stores and `transact.ts` throw these; they carry no words
 * for a person: the workspace turns each into its refusal in one place
 * (`workspace/model/refusals.ts`, `refusalOfStorage`), so a store never words a refusal itself.
 */
export abstract class StorageError extends Error {
  abstract readonly code: string;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A write refused before it was sent: more actions, bytes, or bytes of one item than one transaction holds. */
export class WriteTooLarge extends StorageError {
  readonly code = 'ERR_WRITE_TOO_LARGE';
  constructor(
    readonly what: 'actions' | 'bytes' | 'item',
    /** The actions or bytes it would have written. */
    readonly size: number,
    /** What one transaction (or one item) holds. */
    readonly most: number,
  ) {
    super(`a write of ${size} ${what === 'actions' ? 'actions' : 'bytes'} is past ${most}`);
  }
}

/** A condition failed where the writer expected none to: someone else wrote first, and nothing was written. */
export class WriteRace extends StorageError {
  readonly code = 'ERR_WRITE_RACE';
  constructor() {
    super('a condition failed while the write was being made');
  }
}

/** DynamoDB could not take a write now (throttled, or meeting other transactions after the retries): nothing was written. */
export class WriteBusy extends StorageError {
  readonly code = 'ERR_WRITE_BUSY';
  constructor(cause?: unknown) {
    super('the write could not be made now', { cause });
  }
}

/** A call read more than its ceiling (platform/call-budget.ts) allows: what it spent, and the ceiling. */
export class ReadCeilingReached extends StorageError {
  readonly code = 'ERR_READ_CEILING';
  constructor(
    readonly spent: { readonly units: number; readonly bytes: number },
    readonly ceiling: { readonly units: number; readonly bytes: number },
  ) {
    super(`a call read ${spent.units} units and ${spent.bytes} bytes, past its ceiling`);
  }
}
