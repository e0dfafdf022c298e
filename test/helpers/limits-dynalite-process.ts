import { startEmbeddedDynamo } from '../../lambda/local/embedded-dynamodb.js';
import { READY_PREFIX } from './limits-harness.js';

/**
 * The embedded DynamoDB (dynalite) in a process of its own, shared by the server processes of the
 * contention tests, so the test process's own HTTP clients do not compete with it for an event loop.
 */
const dynamo = await startEmbeddedDynamo(':memory:');
process.stdout.write(`${READY_PREFIX}${JSON.stringify({ endpoint: dynamo.endpoint })}\n`);
process.on('SIGTERM', () => void dynamo.close().then(() => process.exit(0)));
// Orphaned (the test process died without stopping us): exit rather than linger.
process.stdin.on('end', () => process.exit(0)).resume();
