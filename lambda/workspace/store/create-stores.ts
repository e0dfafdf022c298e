import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoGrantStore } from '../../auth/grants.js';
import { DynamoTokenStore } from '../../auth/personal-tokens.js';
import { afterAdmission } from '../../platform/admission-gate.js';
import type { KeySource } from '../../platform/key-ring.js';
import { commitGroups, commitWrites } from '../../platform/transact.js';
import { refusalOfStorage } from '../model/refusals.js';
import { DynamoActivityStore } from './activity-store.js';
import { DynamoAttachmentStore } from './attachment-store.js';
import { CallClaims } from './call-claims.js';
import { DynamoCommentStore } from './comment-store.js';
import { DynamoDirectoryStore } from './directory-store.js';
import { DynamoInboxStore } from './inbox-store.js';
import { JobStore } from './job-store.js';
import { DirectoryNames } from './names.js';
import { DynamoProjectStore } from './project-store.js';
import type { AttachmentFiles, WorkspaceStores } from './stores.js';
import { TaskNumbers } from './task-numbers.js';
import { DynamoTaskStore } from './task-store.js';
import { DynamoViewStore } from './view-store.js';
import { DynamoWebhookStore } from './webhook-store.js';
import { withWrites } from './writes.js';

const asRefusal = (err: unknown): never => {
  throw refusalOfStorage(err) ?? err;
};

/**
 * The file store's writes wait for the call's admission, as DynamoDB's do (platform/admission-gate.ts):
 * a call the limits refuse puts no bytes in the bucket.
 */
const gatedFiles = (files: AttachmentFiles): AttachmentFiles => ({
  ...files,
  store: {
    ...files.store,
    put: async (key, bytes, type) => {
      await afterAdmission();
      return files.store.put(key, bytes, type);
    },
    copy: async (from, to) => {
      await afterAdmission();
      return files.store.copy(from, to);
    },
    delete: async (key) => {
      await afterAdmission();
      return files.store.delete(key);
    },
  },
});

/** A door with no file store (the admin CLI): an attachment's bytes are not reachable from it. */
const NO_FILES: AttachmentFiles = (() => {
  const none = (): never => {
    throw new Error('No file store here: attachments are written through the function (the admin CLI does not reach the bucket).');
  };
  return { store: { put: none, get: none, copy: none, delete: none, list: none }, sniff: none, maxBytes: 0, quotaBytes: 0 };
})();

/**
 * The stores of one workspace table, wired as every door uses them: the function (once per cold
 * start, lambda/app.ts) and the admin CLI's task import (lambda/workspace/transfer/import-tasks.ts) write through the
 * same writers with the same stores.
 */
export const createWorkspaceStores = (
  db: DynamoDBDocumentClient,
  table: string,
  keys: KeySource,
  activityDays: number,
  files: AttachmentFiles = NO_FILES,
  /** How long one call may run (the function's timeout): how long a call's claim counts as in progress. */
  callSeconds = 30,
): WorkspaceStores => {
  const names: DirectoryNames = new DirectoryNames(table, async (ws) => {
    const [m, p] = await Promise.all([directory.listMembers(ws), projects.all(ws)]);
    return { members: new Map(m.map((x) => [x.userId, x])), projects: new Map(p.map((x) => [x.projectId, x])) };
  });
  // A member or project write raises the directory's version in its own transaction: this instance only forgets its snapshot.
  const directory = new DynamoDirectoryStore(db, table, (ws) => names.forget(ws));
  const projects = new DynamoProjectStore(db, table);
  const numbers = new TaskNumbers(db, table);
  const tokens = new DynamoTokenStore(db, table, keys);
  const grants = new DynamoGrantStore(db, table);
  // Every task read teaches the instance its number, so a key named next costs no lookup.
  const tasks = new DynamoTaskStore(db, table, (t) => numbers.remember(t.workspaceId, t.number, t.taskId));
  const comments = new DynamoCommentStore(db, table);
  const attachments = new DynamoAttachmentStore(db, table);
  const activity = new DynamoActivityStore(db, table, activityDays);
  const calls = new CallClaims(db, table, callSeconds);
  const views = new DynamoViewStore(db, table);
  const inbox = new DynamoInboxStore(db, table);
  const webhooks = new DynamoWebhookStore(db, table);
  const jobs = new JobStore(db, table);
  // One object per store: the read side is each store as its read interface, the write side the same
  // objects as their writes (store/writes.ts), which only writers reach.
  const stores = {
    directory,
    tokens,
    grants,
    tasks,
    projects,
    comments,
    attachments,
    names,
    activity,
    numbers,
    calls,
    views,
    inbox,
    webhooks,
    jobs,
  };
  const reads: WorkspaceStores = { ...stores, files: gatedFiles(files) };
  return withWrites(reads, {
    ...stores,
    // What the storage layer could not do, in the workspace's words (model/refusals.ts): every writer's
    // write comes through here, so each door's caller gets the same refusal.
    commit: (ops) => commitWrites(db, ops).catch(asRefusal),
    commitEach: async (groups) => (await commitGroups(db, groups)).map((err) => (err ? (refusalOfStorage(err) ?? err) : undefined)),
  });
};
