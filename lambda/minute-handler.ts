import { createNotifyDeps } from './notifier-app.js';
import { createLogger } from './observability/logger.js';
import { loadConfig } from './platform/config.js';
import { createDocumentClient } from './platform/dynamodb.js';
import { loadTimeZoneData } from './workspace/model/time.js';
import { runMinute } from './workspace/notify/notifier.js';

/**
 * The minute function, run every minute by a schedule (lib/notifier.ts): the reminders due since it
 * last ran, the daily digests on the hour, and the webhook deliveries due for another try.
 */
const config = loadConfig();
const logger = createLogger();
const deps = createNotifyDeps(config, createDocumentClient({ region: config.region }), { allowLoopback: false });
loadTimeZoneData();

export const handler = async (): Promise<void> => {
  const done = await runMinute(deps, new Date());
  logger.info('minute', done);
};
