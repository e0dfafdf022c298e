import { Logger } from '@aws-lambda-powertools/logger';

/** One structured JSON logger per cold start; locally it prints the same lines to stdout. */
export const createLogger = (): Logger => new Logger({ serviceName: 'doers' });
