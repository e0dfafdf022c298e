/**
 * Longest a limit check may wait for DynamoDB, SDK retries included. The client's requestTimeout
 * bounds each attempt, not the retries after it, so each round trip carries its own deadline:
 * at worst 2 × 2.5 s on the way in and 2.5 s on the way out, inside the function timeout, and then
 * 503 with Retry-After rather than a wait.
 */
export const ROUND_TRIP_DEADLINE_MS = 2_500;

export const roundTripOptions = (): { abortSignal: AbortSignal } => ({ abortSignal: AbortSignal.timeout(ROUND_TRIP_DEADLINE_MS) });
