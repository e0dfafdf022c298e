import { Logger } from '@aws-lambda-powertools/logger';

/**
 * One structured JSON logger per cold start; locally it prints the same lines to stdout (only
 * warnings and errors when `npm start` prints a short line per call instead).
 */
export const createLogger = (opts: { readonly quiet?: boolean } = {}): Logger =>
  new Logger({ serviceName: 'doers', ...(opts.quiet ? { logLevel: 'WARN' } : {}) });
