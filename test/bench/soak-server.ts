import { writeSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalServer } from '../../lambda/local/server.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { createTasks } from '../../lambda/workspace/tasks/task-writer.js';
import { addMember, createTestWorkspace, writeContextOf } from '../helpers/workspace-fixtures.js';

/**
 * The server of `npm run soak`, in a process of its own so its memory is measured alone: the local
 * server with the limits as the stack sets them (120 calls per 60 s, 4 in flight, per user) on the
 * DynamoDB at `SOAK_DYNAMODB_ENDPOINT` (in another process: an in-process dynalite's own memory
 * would be counted as the server's), and one workspace of `SOAK_USERS` members, each with a token and a
 * task of their own. Writes `{"url","pid","dataDir","users":[{"token","taskId"}]}` on one line to fd 3
 * once it answers.
 */
const users = Number(process.env.SOAK_USERS ?? 50);
const dataDir = await mkdtemp(join(tmpdir(), 'doers-soak-'));
// The real observer (Powertools audit lines and EMF meters to stdout, as in Lambda): it is part of
// what must not grow. The soak drains and discards the lines.
const server = await startLocalServer(
  loadConfig({
    PORT: '0',
    DOERS_DATA_DIR: dataDir,
    DOERS_DYNAMODB_ENDPOINT: process.env.SOAK_DYNAMODB_ENDPOINT,
    DOERS_RATE_LIMIT_CALLS: '120',
    DOERS_MAX_CONCURRENT_CALLS: '4',
  }),
  {
    timeZone: 'UTC',
    // The notifier is another function in AWS: its polling would only add load to what is measured.
    notifierPolls: false,
  },
);
const ws = await createTestWorkspace(server);
const members = await Promise.all(Array.from({ length: users }, () => addMember(server, ws.workspaceId, 'member', 'UTC')));
const out = await Promise.all(
  members.map(async (m) => {
    const [made] = await createTasks(await writeContextOf(server, ws.workspaceId, m), [
      { fields: { title: `Soak task of ${m.name}`, priority: 'P3', assigneeId: m.userId } },
    ]);
    if (!made?.ok || !('written' in made)) throw new Error(`the soak task of ${m.name} was not made`);
    return { token: m.token, taskId: made.written.task.taskId };
  }),
);
// On fd 3: stdout carries the audit lines and meters, which go to /dev/null as fast as they are
// written (a pipe the load generator drained would hold them in this process's memory instead).
writeSync(3, `${JSON.stringify({ url: server.mcpUrl, pid: process.pid, dataDir, users: out })}\n`);
