import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A call's reads start beside its admission (the limits' check, its own round trip); its writes wait
 * for it. A tool call runs inside `withAdmission`, given the admission's outcome; every write to
 * DynamoDB (platform/dynamodb.ts) and to the file store waits for that outcome before it is sent,
 * and fails with it when the call was refused, so nothing a refused call does is written. Once the
 * refusal is known its reads stop too (`stopIfRefused`), so a refused call costs at most the reads
 * it had begun; what it read is dropped with its answer (lambda/mcp/tool-registry.ts).
 */

type Admission = { readonly admitted: Promise<void>; refusal?: { readonly reason: unknown } };

const current = new AsyncLocalStorage<Admission>();

/** Runs `fn` as a call whose writes wait for `admitted` and whose reads stop once it is refused. */
export const withAdmission = <T>(admitted: Promise<void>, fn: () => Promise<T>): Promise<T> => {
  const admission: Admission = { admitted };
  admitted.catch((reason: unknown) => {
    admission.refusal = { reason };
  });
  return current.run(admission, fn);
};

/** Resolves once the current call is admitted (at once outside a call); rejects when it was not. */
export const afterAdmission = (): Promise<void> => current.getStore()?.admitted ?? Promise.resolve();

/** Throws the refusal when the current call is already known to be refused; else returns at once. */
export const stopIfRefused = (): void => {
  const refusal = current.getStore()?.refusal;
  if (refusal) throw refusal.reason;
};
