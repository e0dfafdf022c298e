import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A call's reads start beside its admission (the limits' check, its own round trip); its writes wait
 * for it. A tool call runs inside `withAdmission`, given the admission's outcome; every write to
 * DynamoDB (platform/dynamodb.ts) and to the file store waits for that outcome before it is sent,
 * and fails with it when the call was refused, so nothing a refused call does is written. What the
 * call read meanwhile is dropped with its answer (lambda/mcp/tool-registry.ts).
 */

const current = new AsyncLocalStorage<Promise<void>>();

/** Runs `fn` as a call whose writes wait for `admitted`. */
export const withAdmission = <T>(admitted: Promise<void>, fn: () => Promise<T>): Promise<T> => current.run(admitted, fn);

/** Resolves once the current call is admitted (at once outside a call); rejects when it was not. */
export const afterAdmission = (): Promise<void> => current.getStore() ?? Promise.resolve();
