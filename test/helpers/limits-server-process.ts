import { type LocalServer, startLocalServer } from '../../lambda/local/server.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { LIMITS_FIXTURES } from './limits-fixtures.js';
import { READY_PREFIX } from './limits-harness.js';

/**
 * One process standing for one Lambda instance: the contention tests start four of these on one
 * shared DynamoDB (DOERS_DYNAMODB_ENDPOINT). It runs one local server per entry of LIMITS_SERVERS
 * (configuration overrides, e.g. one with a rate limit and one with a concurrency bound), so one
 * spawn serves every scenario. Prints one READY line, then serves until stopped or killed.
 */
const variants = JSON.parse(process.env.LIMITS_SERVERS ?? '[{}]') as Record<string, string>[];
// One after another: each start-up creates tables and seeds the demo workspace, and a cold
// DynamoDB Local answering every server of every process at once can miss the SDK's timeout.
const servers: LocalServer[] = [];
for (const overrides of variants) {
  servers.push(
    await startLocalServer(loadConfig({ ...process.env, ...overrides, PORT: '0', DOERS_DATA_DIR: ':memory:' }), {
      fixtures: LIMITS_FIXTURES,
      timeZone: 'UTC',
      // The notifier is another function in AWS: its polling would only add load to what is measured.
      notifierPolls: false,
      // The default observer: audit lines and EMF records go to stdout as in Lambda, where the
      // harness collects them (ServerProcess.output), so a test checks what each refusal recorded.
    }),
  );
}
process.stdout.write(`${READY_PREFIX}${JSON.stringify(servers.map((s) => ({ mcpUrl: s.mcpUrl, token: s.token })))}\n`);
process.on('SIGTERM', () => void Promise.all(servers.map((s) => s.close())).then(() => process.exit(0)));
// Orphaned (the test process died without stopping us): exit rather than linger.
process.stdin.on('end', () => process.exit(0)).resume();
