import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { batchGetConsistent } from '../lambda/platform/dynamodb.js';
import {
  ATTACHMENT_PREFIX,
  attachmentObjectKey,
  EMAIL_SK,
  emailPk,
  grantsOfWorkspaceGsiPk,
  MEMBER_PREFIX,
  taskPk,
  tokensOfWorkspaceGsiPk,
  trashObjectKey,
  WORKSPACE_SK,
  wsPk,
} from '../lambda/platform/item-keys.js';
import { WORKSPACE_KEY } from '../lambda/vocabulary.js';
import { EmailHeldElsewhere, restoreWorkspaceItems } from '../lambda/workspace/admin/restore.js';
import type { Attachment } from '../lambda/workspace/model/types.js';
import { taskOfAttachment } from '../lambda/workspace/store/attachment-store.js';
import { FORMATS, type Format, readExport as readCsv } from '../lambda/workspace/transfer/import-formats.js';
import { importTasks } from '../lambda/workspace/transfer/import-tasks.js';
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  emailClaims,
  exportLine,
  fromBase64,
  type ExportHeader as Header,
  type Item,
  readWorkspaceExport,
} from '../lambda/workspace/transfer/workspace-export.js';
import { type Command, existingWorkspace, type Options, type Out, required, workspaceOf } from './args.js';
import { CliError } from './errors.js';
import type { Target } from './target.js';
import { copyWorkspace } from './workspace-copy.js';

/**
 * A workspace out of one stack and into another, whole: `export` writes every item of the
 * workspace (its members, projects, tasks with their notes, comments, links, numbers, word and
 * label entries, counts and activity records) and its members' e-mail claims, one item per line as
 * DynamoDB's own attribute-value JSON, so nothing is lost or converted (string sets stay sets).
 * `import` writes them into a table that does not have the workspace, so ids, keys, versions and
 * history are the same on both sides. Credentials do not travel: personal access tokens and the
 * apps people connected are not in the file (they live outside the workspace's partitions), and the
 * people make new ones on the new stack (docs/deploy-and-operations.md, "Moving a workspace").
 */

/** Whether an item is one of the workspace's own: its partition is the workspace's or one under it. */
const ownPartition = (workspaceId: string, pk: unknown): boolean =>
  typeof pk === 'string' && (pk === wsPk(workspaceId) || pk.startsWith(`${wsPk(workspaceId)}#`));

const INDEX_KEYS = ['gsi1pk', 'gsi2pk', 'gsi3pk'] as const;
const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Whether an item of the workspace's own partitions would still act elsewhere, and how: a
 * `workspaceId` that names another workspace (a member item read by sign-in makes its caller act in
 * the workspace it names), or an index key in another workspace's lists, or in the lists of tokens
 * and connected apps (which an export never holds).
 */
const reachesOut = (workspaceId: string, item: Item): string | undefined => {
  if (item.workspaceId !== undefined && item.workspaceId !== workspaceId) return `names workspace ${String(item.workspaceId)}`;
  for (const key of INDEX_KEYS) {
    const v = item[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !v.startsWith(`${wsPk(workspaceId)}#`)) return `has ${key} outside workspace ${workspaceId}`;
    if (v === tokensOfWorkspaceGsiPk(workspaceId) || v === grantsOfWorkspaceGsiPk(workspaceId)) return `has ${key} of a credential list`;
  }
  return undefined;
};

export const exportCommand: Command = {
  options: ['workspace', 'file'],
  async run(o, target, out, now) {
    const workspaceId = workspaceOf(o.workspace, target);
    const file = required(o.file, 'file');
    const workspace = await existingWorkspace(target, workspaceId);
    const members = await target.directory.listMembers(workspaceId);
    const { header, items, all } = await readWorkspaceExport(target.db, target.table, workspace, members, now);
    // Written to a new file only: an export never overwrites one.
    const handle = await open(file, 'wx').catch((err: NodeJS.ErrnoException) => {
      throw new CliError(`--file: ${err.code === 'EEXIST' ? `${file} exists already; name a new file` : err.message}`);
    });
    try {
      await handle.write(`${JSON.stringify(header)}\n`);
      for (const item of all) await handle.write(`${exportLine(item)}\n`);
    } finally {
      await handle.close();
    }
    const files = await exportFiles(target, workspaceId, items, filesDirOf(file), out);
    const tasks = items.filter((i) => i.sk === 'TASK').length;
    out.stdout(
      `Exported workspace ${workspaceId} (${workspace.name}) to ${file}: ${all.length} items (${members.length} members, ${tasks} tasks, their notes, comments, records and indexes)${
        files ? `, and ${files} attachment file(s) to ${filesDirOf(file)}` : ''
      }.`,
    );
    out.stderr('Tokens and connected apps are not exported: people make new ones on the stack the workspace moves to.');
  },
};

/** The file's header and items, each checked to belong to the workspace it names: a file cannot write anyone else's. */
const readExport = async (file: string): Promise<{ header: Header; items: Item[] }> => {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  let header: Header | undefined;
  const items: Item[] = [];
  let n = 0;
  try {
    for await (const text of lines) {
      n++;
      if (!text.trim()) continue;
      let parsed: unknown;
      try {
        parsed = n === 1 ? JSON.parse(text.replace(/^\uFEFF/, '')) : JSON.parse(text, fromBase64);
      } catch {
        throw new CliError(`--file: line ${n} is not JSON`);
      }
      if (!header) {
        const h = parsed as Partial<Header>;
        if (h.format !== EXPORT_FORMAT || typeof h.workspaceId !== 'string')
          throw new CliError(`--file: ${file} is not a doers workspace export (its first line names no ${EXPORT_FORMAT})`);
        // An id as ids are made: one with a `#` would make the workspace's partitions another's.
        if (!WORKSPACE_ID.test(h.workspaceId))
          throw new CliError(`--file: its header names "${h.workspaceId}", which is not a workspace id`);
        if (h.version !== EXPORT_VERSION) throw new CliError(`--file: export version ${h.version}; this version reads ${EXPORT_VERSION}`);
        // workspace_export's file holds the tasks only (lambda/workspace/transfer/workspace-export.ts): no workspace is made of it.
        if (h.content === 'tasks')
          throw new CliError(
            `--file: ${file} was made by workspace_export and holds the workspace's tasks only; bring them into a workspace with workspace_import, or move a whole workspace with npm run admin -- export`,
          );
        header = h as Header;
        continue;
      }
      const raw = (parsed as { item?: Record<string, AttributeValue> }).item;
      let item: Item;
      try {
        item = unmarshall(raw ?? {});
      } catch {
        throw new CliError(`--file: line ${n} holds no item`);
      }
      const claim = typeof item.pk === 'string' && item.pk.startsWith('EMAIL#') && item.sk === EMAIL_SK;
      if (claim && item.pk !== emailPk(String(item.pk).slice('EMAIL#'.length)))
        throw new CliError(`--file: line ${n} claims an e-mail not in lower case; nothing was imported`);
      if (claim ? item.workspaceId !== header.workspaceId : !ownPartition(header.workspaceId, item.pk) || typeof item.sk !== 'string')
        throw new CliError(`--file: line ${n} is not an item of workspace ${header.workspaceId}; nothing was imported`);
      const foreign = reachesOut(header.workspaceId, item);
      if (foreign) throw new CliError(`--file: line ${n} ${foreign}; nothing was imported`);
      items.push(item);
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`--file: ${(err as Error).message}`);
  }
  if (!header) throw new CliError(`--file: ${file} is empty`);
  // An e-mail is claimed only for a member the file holds: a file cannot take an address for nobody.
  const members = new Set(
    items.filter((i) => i.pk === wsPk(header!.workspaceId) && String(i.sk).startsWith(MEMBER_PREFIX)).map((i) => i.userId),
  );
  const stray = items.find((i) => String(i.pk).startsWith('EMAIL#') && !members.has(i.userId));
  if (stray) throw new CliError(`--file: it claims ${String(stray.pk).slice(6)} for no member of the workspace; nothing was imported`);
  if (items.length !== header.items)
    throw new CliError(`--file: ${items.length} items, the header says ${header.items}: the file is cut short`);
  return { header, items };
};

// ---- attachments' bytes, as files beside the export -------------------------------------------------

/** Where an export's attachment files go: `<file>.files/`, one file per attachment, named by its id. */
export const filesDirOf = (file: string): string => `${file}.files`;

/** An attachment item of the export (live, or deleted and kept for its undo) and where its bytes are in the bucket. */
const attachmentsOf = (items: readonly Item[]): { id: string; key: string }[] =>
  items.flatMap((i) => {
    const sk = String(i.sk);
    const live = sk.startsWith(ATTACHMENT_PREFIX);
    if (!live && !sk.startsWith('GONE#ATT#')) return [];
    const a = i as unknown as Attachment;
    // Its id names its task, as the function makes ids: anything else would name an object elsewhere.
    if (typeof a.attachmentId !== 'string' || taskOfAttachment(a.attachmentId) !== a.taskId)
      throw new CliError(
        `--file: an attachment item names ${String(a.attachmentId)}, which is no attachment id of its task; nothing was imported`,
      );
    const key = attachmentObjectKey(a.workspaceId, a.taskId, a.attachmentId);
    return [{ id: a.attachmentId, key: live ? key : trashObjectKey(key) }];
  });

const exportFiles = async (target: Target, workspaceId: string, items: readonly Item[], dir: string, out: Out): Promise<number> => {
  const wanted = attachmentsOf(items);
  if (!wanted.length) return 0;
  if (!target.bucket)
    throw new CliError(`${target.where} names no attachments bucket: the workspace's ${wanted.length} file(s) cannot be exported`);
  await mkdir(dir);
  let written = 0;
  for (const { id, key } of wanted) {
    const bytes = await target.bucket.get(key);
    if (!bytes) {
      out.stderr(
        `attachment ${id} of workspace ${workspaceId} has no bytes in the bucket (a crash at its upload?); its item is exported alone.`,
      );
      continue;
    }
    await writeFile(join(dir, id), bytes, { flag: 'wx' });
    written++;
  }
  return written;
};

const importFiles = async (
  target: Target,
  items: readonly Item[],
  dir: string,
  out: Out,
  /** The file's name of an attachment (a copy's ids are new; its files keep the export's names). */
  fileOf: (id: string) => string = (id) => id,
): Promise<number> => {
  const wanted = attachmentsOf(items);
  if (!wanted.length) return 0;
  if (!target.bucket)
    throw new CliError(`${target.where} names no attachments bucket: the file's ${wanted.length} attachment(s) cannot be imported`);
  let put = 0;
  for (const { id, key } of wanted) {
    // An id is `<taskId>.<random>`: a name of this directory, never a path.
    const bytes = await readFile(join(dir, basename(fileOf(id)))).catch(() => undefined);
    if (!bytes) {
      out.stderr(`attachment ${id}: no file ${join(dir, fileOf(id))} beside the export; its item is imported without its bytes.`);
      continue;
    }
    const item = items.find((i) => (i as { attachmentId?: unknown }).attachmentId === id) as unknown as Attachment;
    await target.bucket.put(key, new Uint8Array(bytes), item.type);
    put++;
  }
  return put;
};

export const importCommand: Command = {
  options: ['workspace', 'file', 'format', 'dry-run', 'as', 'project'],
  async run(o, target, out, now) {
    const file = required(o.file, 'file');
    // A doers export starts with its JSON header; anything else is another tool's CSV.
    const head = await readFile(file, 'utf8').catch((err: Error) => {
      throw new CliError(`--file: ${err.message}`);
    });
    if (!head.trimStart().startsWith('{')) {
      if (o.as !== undefined) throw new CliError('--as is for a doers export; a CSV file goes into --workspace');
      return importCsv(head, o, target, out, now);
    }
    if (o.format !== undefined || o['dry-run'] || o.project !== undefined)
      throw new CliError('--format, --project and --dry-run are for CSV files; a doers export is imported whole');
    const exported = await readExport(file);
    const { header } = exported;
    const key = o.as?.trim().toUpperCase();
    if (key !== undefined && !WORKSPACE_KEY.test(key)) throw new CliError(`--as: '${o.as}' is no workspace key (2 to 6 letters)`);
    if (key === undefined && o.workspace !== undefined && o.workspace !== header.workspaceId)
      throw new CliError(
        `--workspace: the file holds workspace ${header.workspaceId}, not ${o.workspace} (ids are kept, so it keeps its id; --as KEY makes a copy with a new one)`,
      );
    if (o.workspace !== undefined && !WORKSPACE_ID.test(o.workspace))
      throw new CliError(`--workspace: '${o.workspace}' is no workspace id`);
    const workspaceId = key ? (o.workspace ?? `ws_${randomUUID().replace(/-/g, '').slice(0, 12)}`) : header.workspaceId;
    // A copy (--as): every id new, so it stands beside the original (cli/workspace-copy.ts).
    const copy = key ? copyWorkspace(header.workspaceId, exported.items, { workspaceId, key }) : undefined;
    const items = copy?.items ?? exported.items;
    if (await target.directory.getWorkspace(workspaceId))
      throw new CliError(
        `workspace ${workspaceId} exists in ${target.where} already; import only into a stack without it${key ? '' : ' (or as a copy: --as KEY)'}. Nothing was imported.`,
      );
    let claims = items.filter((i) => String(i.pk).startsWith('EMAIL#'));
    // A person is one member of one workspace: an e-mail another workspace holds here stops the import before it writes.
    const held = (
      await emailClaims(
        target.db,
        target.table,
        claims.map((c) => String(c.pk).slice('EMAIL#'.length)),
      )
    ).filter((c) => c.workspaceId !== workspaceId);
    const heldEmails = held.map((c) => String(c.pk).slice('EMAIL#'.length)).sort();
    if (held.length && !key)
      throw new CliError(
        `${heldEmails.join(', ')} ${held.length === 1 ? 'is a member' : 'are members'} of another workspace in ${target.where}; nothing was imported.`,
      );
    // A copy's members whose e-mail another workspace holds come along without it: they are named, they cannot sign in to it.
    if (held.length) claims = claims.filter((c) => !heldEmails.includes(String(c.pk).slice('EMAIL#'.length)));
    const meta = items.filter((i) => i.pk === wsPk(workspaceId) && i.sk === WORKSPACE_SK);
    const rest = items.filter((i) => !meta.includes(i) && !String(i.pk).startsWith('EMAIL#'));
    let files = 0;
    try {
      // The files before the workspace item too: a run cut short puts them again.
      await restoreWorkspaceItems(target.db, target.table, workspaceId, { rest, claims, workspace: meta }, async () => {
        files = await importFiles(target, items, filesDirOf(file), out, (id) => copy?.oldAttachmentId.get(id) ?? id);
      });
    } catch (err) {
      if (err instanceof EmailHeldElsewhere)
        throw new CliError(`${err.email} became a member of another workspace meanwhile; nothing more was imported. Run it again to see.`);
      throw err;
    }
    out.stdout(
      `Imported workspace ${workspaceId} (${header.name}) from ${file}: ${items.length - held.length} items${files ? ` and ${files} attachment file(s)` : ''}, exported ${header.exportedAt}${
        key ? `; a copy of ${header.workspaceId}, its tasks ${key}-<number>, ${copy!.remapped.ids} ids made new` : ''
      }.`,
    );
    if (held.length)
      out.stderr(
        `${heldEmails.join(', ')} ${held.length === 1 ? 'is a member' : 'are members'} of another workspace here: their members came along (tasks keep their assignees) without the e-mail, so they cannot sign in to this copy.`,
      );
    out.stderr('Its members sign in as before; each makes new tokens (npm run admin -- token create, or the account page).');
  },
};

const importCsv = async (text: string, o: Options, target: Target, out: Out, now: Date): Promise<void> => {
  const format = o.format?.toLowerCase();
  if (format !== undefined && !(FORMATS as readonly string[]).includes(format))
    throw new CliError(`--format: '${o.format}' is none of ${FORMATS.join(', ')}`);
  const read = readCsv(text, format as Format | undefined);
  if ('error' in read) throw new CliError(`--file: ${o.file} is ${read.error}${read.unknownFormat ? '; give --format' : ''}`);
  // Todoist exports one project a file and names it only by the file's name.
  const project = o.project?.trim() || (read.format === 'todoist' ? basename(o.file!, extname(o.file!)).trim() : undefined);
  const workspaceId = workspaceOf(o.workspace, target);
  const workspace = await existingWorkspace(target, workspaceId);
  await importTasks(
    target,
    {
      workspaceId,
      workspace,
      // The rows, the rows skipped, and what each column becomes.
      ...read,
      ...(project ? { project } : {}),
      dryRun: !!o['dry-run'],
      file: o.file!,
    },
    out,
    now,
  );
};

/** An object younger than this may be an upload whose item is being written: the sweep leaves it. */
const SWEEP_AFTER_MS = 60 * 60_000;

/**
 * `files sweep`: the objects of a workspace's attachments that no item names, which only a crash
 * between an upload and its write leaves (the bucket's lifecycle cannot see the table), removed. A
 * deleted attachment's item names its trash copy, which the lifecycle removes after the undo window.
 */
export const sweepCommand: Command = {
  options: ['workspace', 'dry-run'],
  async run(o, target, out, now) {
    const workspaceId = workspaceOf(o.workspace, target);
    await existingWorkspace(target, workspaceId);
    if (!target.bucket) throw new CliError(`${target.where} names no attachments bucket`);
    const prefix = `workspaces/${workspaceId}/tasks/`;
    const old = (await target.bucket.list(prefix)).filter((f) => now.getTime() - f.at.getTime() > SWEEP_AFTER_MS);
    const parsed = old.flatMap((f) => {
      const [taskId, attachmentId] = f.key.slice(prefix.length).split('/');
      return taskId && attachmentId ? [{ key: f.key, taskId, attachmentId }] : [];
    });
    const named = new Set<string>();
    for (let i = 0; i < parsed.length; i += 50) {
      const chunk = parsed.slice(i, i + 50);
      const items = await batchGetConsistent(
        target.db,
        target.table,
        chunk.flatMap((f) => [
          { pk: taskPk(workspaceId, f.taskId), sk: `${ATTACHMENT_PREFIX}${f.attachmentId}` },
          { pk: taskPk(workspaceId, f.taskId), sk: `GONE#ATT#${f.attachmentId}` },
        ]),
      );
      for (const item of items) named.add(String((item as { attachmentId?: unknown }).attachmentId));
    }
    const orphans = parsed.filter((f) => !named.has(f.attachmentId));
    if (!o['dry-run']) for (const f of orphans) await target.bucket.delete(f.key);
    out.stdout(
      `${o['dry-run'] ? 'Would remove' : 'Removed'} ${orphans.length} object(s) of workspace ${workspaceId} that no attachment names (of ${old.length} older than an hour).`,
    );
    for (const f of orphans) out.stderr(`  ${f.key}`);
  },
};

export const TRANSFER_COMMANDS: Readonly<Record<string, Command>> = {
  export: exportCommand,
  import: importCommand,
  'files sweep': sweepCommand,
};
