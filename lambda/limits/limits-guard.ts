import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Principal } from '../auth/principal.js';
import { DependencyUnavailableError, LimitExceededError } from '../errors.js';
import type { Config } from '../platform/config.js';
import { isTransientDynamoError } from '../platform/dynamodb.js';
import { noRelease, unlimitedGuard, type CallGuard } from './call-guard.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';
import { RateLimiter } from './rate-limiter.js';

/** What a caller is told to wait when DynamoDB cannot check the limits (as for credentials). */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;
/** DESIGN.md §5: a call refused for concurrency retries after one second. */
const BUSY_RETRY_AFTER_SECONDS = 1;


/** Limits are per member: a user id is only unique within its workspace. */
const subjectOf = (principal: Principal): string => `${principal.workspaceId}#${principal.userId}`;

/**
 * The limits of DESIGN.md §5 as one CallGuard. The lease is taken first, so a call refused as busy
 * never reaches the rate limiter and takes no permit; a call refused by the rate limiter gives its
 * lease straight back. In: at most two round trips (lease, permit); out: one (lease back).
 * Throttling or an unreachable DynamoDB becomes DependencyUnavailableError (503, Retry-After).
 */
export const createLimitsGuard = (db: DynamoDBDocumentClient, config: Config, logger: Logger): CallGuard => {
  const { calls, windowSeconds } = config.rateLimit;
  const rate = calls > 0 ? new RateLimiter(db, config.tables.rateLimits, calls, windowSeconds) : undefined;
  const leases =
    config.maxConcurrentCalls > 0
      ? new ConcurrencyLimiter(db, config.tables.leases, config.maxConcurrentCalls, config.functionTimeoutSeconds)
      : undefined;

  // Once per cold start: a limit that is off looks in the metrics exactly like one nobody reaches.
  logger.info(
    `Limits in force: rate limit ${rate ? `${calls} calls per ${windowSeconds} s per user` : 'off (DOERS_RATE_LIMIT_CALLS=0)'}; ` +
      `concurrency ${leases ? `at most ${config.maxConcurrentCalls} calls in flight per user, a dead call's lease stops counting within ${leases.boundSeconds} s` : 'off (DOERS_MAX_CONCURRENT_CALLS=0)'}`,
    {
      rateLimit: rate ? { calls, windowSeconds } : 'off',
      maxConcurrentCalls: leases ? config.maxConcurrentCalls : 'off',
      ...(leases ? { leaseBoundSeconds: leases.boundSeconds } : {}),
    },
  );
  if (!rate && !leases) return unlimitedGuard;

  const unavailable = (err: unknown): unknown =>
    isTransientDynamoError(err) ? new DependencyUnavailableError('dynamodb', UNAVAILABLE_RETRY_AFTER_SECONDS, err) : err;

  /** The answer is built by now: a failed give-back must not turn it into an error. */
  const safeRelease = (release: () => Promise<void>) => {
    let released = false;
    return async (): Promise<void> => {
      if (released) return;
      released = true;
      try {
        await release();
      } catch (err) {
        logger.warn(`Could not give a concurrency lease back; it stops counting on its own within ${leases!.boundSeconds} s`, {
          error: err as Error,
        });
      }
    };
  };

  return {
    async acquire(principal) {
      const subject = subjectOf(principal);
      let release = noRelease;
      if (leases) {
        const lease = await leases.acquire(subject, Date.now()).catch((err: unknown) => {
          throw unavailable(err);
        });
        if (!lease.granted) throw new LimitExceededError('busy', BUSY_RETRY_AFTER_SECONDS);
        release = safeRelease(lease.release);
      }
      if (rate) {
        let decision: Awaited<ReturnType<RateLimiter['take']>>;
        try {
          decision = await rate.take(subject, Date.now());
        } catch (err) {
          await release();
          throw unavailable(err);
        }
        if (!decision.granted) {
          await release();
          throw new LimitExceededError('ratelimited', decision.retryAfterSeconds);
        }
      }
      return release;
    },
  };
};
