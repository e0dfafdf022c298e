import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DependencyUnavailableError, LimitExceededError } from '../errors.js';
import type { Config } from '../platform/config.js';
import { isTransientDynamoError } from '../platform/dynamodb.js';
import type { Principal } from '../vocabulary.js';
import { AdmissionLimiter } from './admission.js';
import { type CallGuard, unlimitedGuard } from './call-guard.js';

/** What a caller is told to wait when DynamoDB cannot check the limits (as for credentials). */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** Limits are per member: a user id is only unique within its workspace. */
const subjectOf = (principal: Principal): string => `${principal.workspaceId}#${principal.userId}`;

/**
 * The limits of docs/limits.md as one CallGuard: a rate permit and a concurrency lease are taken
 * together in one conditional write, or neither (a busy call takes no permit, a rate-limited one
 * holds no lease). In: one round trip; out: one (lease back). Throttling or an unreachable DynamoDB
 * becomes DependencyUnavailableError (503, Retry-After).
 */
export const createLimitsGuard = (db: DynamoDBDocumentClient, config: Config, logger: Logger): CallGuard => {
  const { calls, windowSeconds } = config.rateLimit;
  const maxConcurrent = config.maxConcurrentCalls;
  const limiter =
    calls > 0 || maxConcurrent > 0
      ? new AdmissionLimiter(db, config.tables.limits, {
          calls,
          windowSeconds,
          maxConcurrent,
          functionTimeoutSeconds: config.functionTimeoutSeconds,
        })
      : undefined;

  // Once per cold start: a limit that is off looks in the metrics exactly like one nobody reaches.
  logger.info(
    `Limits in force: rate limit ${calls > 0 ? `${calls} calls per ${windowSeconds} s per user` : 'off (DOERS_RATE_LIMIT_CALLS=0)'}; ` +
      `concurrency ${maxConcurrent > 0 ? `at most ${maxConcurrent} calls in flight per user, a dead call's lease stops counting within ${limiter!.boundSeconds} s` : 'off (DOERS_MAX_CONCURRENT_CALLS=0)'}`,
    {
      rateLimit: calls > 0 ? { calls, windowSeconds } : 'off',
      maxConcurrentCalls: maxConcurrent > 0 ? maxConcurrent : 'off',
      ...(maxConcurrent > 0 ? { leaseBoundSeconds: limiter!.boundSeconds } : {}),
    },
  );
  if (!limiter) return unlimitedGuard;

  /** The answer is built by now: a failed give-back must not turn it into an error. */
  const safeRelease = (release: () => Promise<void>) => {
    let released = false;
    return async (): Promise<void> => {
      if (released) return;
      released = true;
      try {
        await release();
      } catch (err) {
        logger.warn(`Could not give a concurrency lease back; it stops counting on its own within ${limiter.boundSeconds} s`, {
          error: err as Error,
        });
      }
    };
  };

  return {
    async acquire(principal) {
      let admission: Awaited<ReturnType<AdmissionLimiter['acquire']>>;
      try {
        admission = await limiter.acquire(subjectOf(principal), Date.now());
      } catch (err) {
        throw isTransientDynamoError(err) ? new DependencyUnavailableError('dynamodb', UNAVAILABLE_RETRY_AFTER_SECONDS, err) : err;
      }
      if (!admission.granted) throw new LimitExceededError(admission.reason, admission.retryAfterSeconds);
      return safeRelease(admission.release);
    },
  };
};
