import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../lambda/platform/config.js';
import { startLocalServer } from '../../lambda/local/server.js';
import { addMember, createTestWorkspace } from '../helpers/workspace-fixtures.js';

/**
 * The server of `npm run soak`, in a process of its own so its memory is measured alone: the local
 * server with the limits as the stack sets them (120 calls per 60 s, 4 in flight, per user) on an
 * embedded DynamoDB kept on disk, and one workspace of `SOAK_USERS` members, each with a token and a
 * task of their own. Prints `{"url","pid","users":[{"token","taskId"}]}` on one line once it answers.
 */
const users = Number(process.env.SOAK_USERS ?? 50);
const dataDir = await mkdtemp(join(tmpdir(), 'doers-soak-'));
// The real observer (Powertools audit lines and EMF meters to stdout, as in Lambda): it is part of
// what must not grow. The soak drains and discards the lines.
const server = await startLocalServer(loadConfig({ PORT: '0', DOERS_DATA_DIR: dataDir, DOERS_RATE_LIMIT_CALLS: '120', DOERS_MAX_CONCURRENT_CALLS: '4' }), {
  timeZone: 'UTC',
});
const ws = await createTestWorkspace(server);
const members = await Promise.all(Array.from({ length: users }, () => addMember(server, ws.workspaceId, 'member', 'UTC')));
const out = await Promise.all(
  members.map(async (m) => {
    const now = new Date().toISOString();
    const taskId = randomUUID();
    await server.app.services.tasks.create({ workspaceId: ws.workspaceId, taskId, title: `Soak task of ${m.name}`, status: 'open', priority: 'P3', labels: [], createdBy: m.userId, createdAt: now, updatedAt: now, version: 1, assigneeId: m.userId });
    return { token: m.token, taskId };
  }),
);
console.log(JSON.stringify({ url: server.mcpUrl, pid: process.pid, dataDir, users: out }));
