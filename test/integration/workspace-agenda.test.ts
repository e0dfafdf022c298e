import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import type { LocalServer } from '../../lambda/local/server.js';
import {
  addMember,
  caller,
  createTestWorkspace,
  startOwnWorkspacesServer,
  type TestWorkspace,
  toolText,
} from '../helpers/workspace-fixtures.js';

/**
 * The clock is fixed at 2026-03-10 18:00 UTC: already Wednesday 11 March in Auckland (07:00,
 * UTC+13) and still Tuesday 10 March in Los Angeles (11:00, UTC-7), so the two users' "today" differ.
 */
const NOW = Date.parse('2026-03-10T18:00:00Z');

let server: LocalServer;
let ws: TestWorkspace;

before(async () => {
  mock.timers.enable({ apis: ['Date'], now: NOW });
  server = await startOwnWorkspacesServer();
  ws = await createTestWorkspace(server);
});
after(async () => {
  await server.close();
  mock.timers.reset();
});

const as = (token: string) => caller(server, token);
const text = toolText;

describe('agenda_get', () => {
  test('counts open, overdue, due today and done today, and lists overdue and today by priority', async () => {
    const me = as(ws.member.token);
    const mk = async (title: string, extra: Record<string, unknown>) =>
      (await me('task_create', { title, assignee: 'me', ...extra })).structuredContent.taskId as string;
    const quote = await mk('Send the Acme renewal quote', { dueDate: '2026-03-08', priority: 'P3' });
    const call = await mk('Call the bank', { dueDate: '2026-03-10', priority: 'P1', dueTime: '16:00' });
    await mk('Later thing', { dueDate: '2026-03-20', priority: 'P1' });
    await mk('Someday', {});
    const finished = await mk('Finished thing', { dueDate: '2026-03-10' });
    await me('task_complete', { taskId: finished });
    await as(ws.admin.token)('task_create', { title: 'Not mine', dueDate: '2026-03-01', assignee: 'me' });

    const r = await me('agenda_get');

    assert.equal(r.isError, false);
    const a = r.structuredContent;
    assert.equal(a.day, '2026-03-10');
    assert.equal(a.timeZone, 'UTC');
    assert.deepEqual(a.counts, { open: 4, overdue: 1, dueToday: 1, doneToday: 1 });
    assert.deepEqual(
      a.tasks.map((t: { taskId: string }) => t.taskId),
      [call, quote],
    );
    assert.equal(a.returned, 2);
    assert.equal(a.truncated, false);
    const lines = text(r).split('\n');
    const keys = a.tasks.map((t: { key: string }) => t.key);
    assert.equal(lines[0], `4 open, 1 overdue, 1 due today, 1 done today (@${ws.member.name}).`);
    assert.equal(lines[1], `- ${keys[0]} Call the bank · P1, due today 16:00 · v1`);
    assert.equal(lines[2], `- ${keys[1]} Send the Acme renewal quote · P3, 2 days overdue · v1`);
    assert.doesNotMatch(text(r), new RegExp(`${call}|${quote}`), 'text names tasks by key, never by id');
  });

  test('assignee "anyone" shows the whole team; a date shows another day', async () => {
    const team = await as(ws.viewer.token)('agenda_get', { assignee: 'anyone' });
    const tomorrow = await as(ws.member.token)('agenda_get', { date: '2026-03-20' });

    assert.equal(team.structuredContent.counts.overdue, 2);
    assert.ok(team.structuredContent.tasks.some((t: { title: string }) => t.title === 'Not mine'));
    assert.equal(tomorrow.structuredContent.day, '2026-03-20');
    assert.equal(tomorrow.structuredContent.counts.dueToday, 1);
    assert.equal(tomorrow.structuredContent.counts.overdue, 2);
  });

  test('pages the list with a cursor', async () => {
    const first = await as(ws.viewer.token)('agenda_get', { assignee: 'anyone', limit: 1 });
    const rest = await as(ws.viewer.token)('agenda_get', { assignee: 'anyone', limit: 10, cursor: first.structuredContent.nextCursor });

    assert.equal(first.structuredContent.truncated, true);
    assert.equal(rest.structuredContent.truncated, false);
    const all = [...first.structuredContent.tasks, ...rest.structuredContent.tasks].map((t: { taskId: string }) => t.taskId);
    assert.equal(all.length, 3);
    assert.equal(new Set(all).size, 3);
  });

  test('says so when nothing is due, and refuses an invalid date naming it', async () => {
    const empty = await as(ws.member.token)('agenda_get', { date: '2026-01-01' });
    const bad = await as(ws.member.token)('agenda_get', { date: 'someday' });

    // Another day than today is named, never called today.
    assert.match(text(empty), /^4 open, 0 overdue by then, 0 due on Thu 1 Jan 2026\.\nNothing overdue or due on Thu 1 Jan 2026\.$/);
    assert.equal(bad.isError, true);
    assert.match(text(bad), /^date: 'someday' is not a date this server reads/);
  });
});

describe('time zones', () => {
  test('a user in Pacific/Auckland and one in America/Los_Angeles see different "today"', async () => {
    const tz = await createTestWorkspace(server);
    const auckland = await addMember(server, tz.workspaceId, 'member', 'Pacific/Auckland');
    const losAngeles = await addMember(server, tz.workspaceId, 'member', 'America/Los_Angeles');
    await as(tz.owner.token)('task_create', { title: 'Due on the 10th', dueDate: '2026-03-10' });
    await as(tz.owner.token)('task_create', { title: 'Due on the 11th', dueDate: '2026-03-11' });

    const [nz, la] = await Promise.all([
      as(auckland.token)('agenda_get', { assignee: 'anyone' }),
      as(losAngeles.token)('agenda_get', { assignee: 'anyone' }),
    ]);
    const [nzMe, laMe] = await Promise.all([as(auckland.token)('me_get'), as(losAngeles.token)('me_get')]);
    const [nzOverdue, laOverdue] = await Promise.all([
      as(auckland.token)('tasks_search', { overdue: true }),
      as(losAngeles.token)('tasks_search', { overdue: true }),
    ]);

    assert.equal(nzMe.structuredContent.today, '2026-03-11');
    assert.equal(laMe.structuredContent.today, '2026-03-10');
    assert.equal(nz.structuredContent.day, '2026-03-11');
    assert.equal(la.structuredContent.day, '2026-03-10');
    assert.deepEqual(nz.structuredContent.counts, { open: 2, overdue: 1, dueToday: 1, doneToday: 0 });
    assert.deepEqual(la.structuredContent.counts, { open: 2, overdue: 0, dueToday: 1, doneToday: 0 });
    assert.match(text(nz), /Due on the 10th · P4, 1 day overdue/);
    assert.match(text(nz), /Due on the 11th · P4, due today/);
    assert.match(text(la), /Due on the 10th · P4, due today/);
    assert.ok(!text(la).includes('Due on the 11th'));
    assert.deepEqual(
      nzOverdue.structuredContent.tasks.map((t: { title: string }) => t.title),
      ['Due on the 10th'],
    );
    assert.equal(laOverdue.structuredContent.returned, 0);
  });

  test('"done today" is the user\'s day: a task completed at 18:00 UTC is done on the 11th in Auckland', async () => {
    const tz = await createTestWorkspace(server);
    const auckland = await addMember(server, tz.workspaceId, 'member', 'Pacific/Auckland');
    const losAngeles = await addMember(server, tz.workspaceId, 'member', 'America/Los_Angeles');
    const t = await as(auckland.token)('task_create', { title: 'Quick win' });
    await as(auckland.token)('task_complete', { taskId: t.structuredContent.taskId });

    const nz = await as(auckland.token)('agenda_get', { assignee: 'anyone', date: '2026-03-11' });
    const nzYesterday = await as(auckland.token)('agenda_get', { assignee: 'anyone', date: '2026-03-10' });
    const la = await as(losAngeles.token)('agenda_get', { assignee: 'anyone', date: '2026-03-10' });

    assert.equal(nz.structuredContent.counts.doneToday, 1);
    assert.equal(nzYesterday.structuredContent.counts.doneToday, 0);
    assert.equal(la.structuredContent.counts.doneToday, 1);
  });
});
