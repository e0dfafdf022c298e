import { type DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { batchGetConsistent } from '../../platform/dynamodb.js';
import { EMAIL_SK, emailPk, wsPk } from '../../platform/item-keys.js';
import type { Member, Workspace } from '../../vocabulary.js';

/**
 * A workspace as one doers export: a header line, then every item of the workspace (its members,
 * projects, tasks with their notes, comments, links, numbers, word and label entries, counts and
 * activity records) and its members' e-mail claims, one item per line as DynamoDB's own
 * attribute-value JSON, so nothing is lost or converted (string sets stay sets). The admin CLI's
 * `export` writes it to a file and its `import` writes it into another table whole; workspace_export
 * writes it to an attachment. Long work's own records (`WS#<ws>#JOB`) are not the workspace's data
 * and stay out.
 */

export const EXPORT_FORMAT = 'doers-workspace-export';
export const EXPORT_VERSION = 1;

export interface ExportHeader {
  readonly format: typeof EXPORT_FORMAT;
  readonly version: number;
  readonly workspaceId: string;
  readonly name: string;
  readonly exportedAt: string;
  readonly items: number;
  /** `tasks`: workspace_export's, which holds the workspace's tasks only (below); absent: the whole workspace. */
  readonly content?: 'tasks';
}

export type Item = Record<string, unknown>;

/**
 * Every item of the workspace: a scan of the table (the workspace's items are spread over many
 * partitions, none of which lists the others). It reads the whole table once, about its size in
 * 4 KB read units (halved: eventually consistent), which is what a move costs.
 */
export const workspaceItems = async (db: DynamoDBDocumentClient, table: string, workspaceId: string): Promise<Item[]> => {
  const items: Item[] = [];
  const pages = paginateScan(
    { client: db },
    {
      TableName: table,
      FilterExpression: '(pk = :ws OR begins_with(pk, :under)) AND pk <> :jobs',
      ExpressionAttributeValues: { ':ws': wsPk(workspaceId), ':under': `${wsPk(workspaceId)}#`, ':jobs': `${wsPk(workspaceId)}#JOB` },
    },
  );
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items;
};

/** The e-mail claims of these addresses that exist. */
export const emailClaims = (db: DynamoDBDocumentClient, table: string, emails: readonly string[]): Promise<Item[]> =>
  batchGetConsistent(
    db,
    table,
    emails.map((e) => ({ pk: emailPk(e), sk: EMAIL_SK })),
  );

/**
 * Binary values as base64 (JSON has no bytes; `JSON.stringify` of a Uint8Array is an object of
 * indices), read back into bytes: the file holds the item exactly.
 */
const toBase64 = (_k: string, v: unknown) => (v instanceof Uint8Array ? { $base64: Buffer.from(v).toString('base64') } : v);
export const fromBase64 = (_k: string, v: unknown) =>
  v && typeof v === 'object' && typeof (v as { $base64?: unknown }).$base64 === 'string'
    ? new Uint8Array(Buffer.from((v as { $base64: string }).$base64, 'base64'))
    : v;

export const exportLine = (item: Item): string => JSON.stringify({ item: marshall(item, { removeUndefinedValues: true }) }, toBase64);

/** What an export holds, read: the header and the items in the order they are written. */
export interface WorkspaceExport {
  readonly header: ExportHeader;
  /** The workspace's own items (their attachment files are not in them). */
  readonly items: readonly Item[];
  /** Every line after the header: the items, then the e-mail claims. */
  readonly all: readonly Item[];
}

/** The workspace's items and its members' e-mail claims, with the header that names them. */
export const readWorkspaceExport = async (
  db: DynamoDBDocumentClient,
  table: string,
  workspace: Workspace,
  members: readonly Member[],
  now: Date,
): Promise<WorkspaceExport> => {
  const { workspaceId } = workspace;
  const [items, claims] = await Promise.all([
    workspaceItems(db, table, workspaceId),
    emailClaims(
      db,
      table,
      members.map((m) => m.email),
    ),
  ]);
  const all = [...items, ...claims.filter((c) => c.workspaceId === workspaceId)];
  return { header: headerOf(workspace, all.length, now), items, all };
};

/** The first line: what the file is, of which workspace, when, and how many items follow. */
const headerOf = (workspace: Workspace, items: number, now: Date, content?: 'tasks'): ExportHeader => ({
  format: EXPORT_FORMAT,
  version: EXPORT_VERSION,
  workspaceId: workspace.workspaceId,
  name: workspace.name,
  exportedAt: now.toISOString(),
  items,
  ...(content ? { content } : {}),
});

/**
 * What workspace_export writes (its file is an attachment any reader of its task can read, where the
 * admin CLI's export is the operator's own file): the workspace's item, its projects, its live tasks
 * with their notes and subtask entries, its live comments, and its members by name, e-mail and role,
 * which is what workspace_import reads back. Left out: webhooks (their signing secrets), inboxes,
 * saved views, the history, call claims, what is kept only for undo, the search and count entries,
 * attachments, who watches what and each member's reminders. The header says `content: tasks`, and
 * the CLI's import of a whole workspace refuses such a file.
 */
const MEMBER_FIELDS = ['pk', 'sk', 'workspaceId', 'userId', 'name', 'email', 'role', 'status'] as const;

const taskExportItem = (workspaceId: string, item: Item): Item | undefined => {
  const pk = String(item.pk);
  const sk = String(item.sk);
  if (item.deletedAt !== undefined) return undefined;
  if (pk === wsPk(workspaceId)) {
    if (sk === 'META' || sk.startsWith('PROJECT#') || sk.startsWith('COMMENT#')) return item;
    if (sk.startsWith('USER#')) return Object.fromEntries(MEMBER_FIELDS.flatMap((k) => (item[k] === undefined ? [] : [[k, item[k]]])));
    return undefined;
  }
  if (!pk.startsWith(`${wsPk(workspaceId)}#T#`)) return undefined;
  if (sk === 'NOTES' || sk.startsWith('SUB#')) return item;
  if (sk !== 'TASK') return undefined;
  const { reminders: _reminders, ...task } = item;
  return task;
};

export const readTaskExport = async (
  db: DynamoDBDocumentClient,
  table: string,
  workspace: Workspace,
  now: Date,
): Promise<WorkspaceExport> => {
  const { workspaceId } = workspace;
  const items = (await workspaceItems(db, table, workspaceId)).flatMap((item) => {
    const kept = taskExportItem(workspaceId, item);
    return kept ? [kept] : [];
  });
  return { header: headerOf(workspace, items.length, now, 'tasks'), items, all: items };
};
