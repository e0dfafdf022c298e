import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ToolRefusal } from '../../errors.js';
import { callBudget, withCallBudget } from '../../platform/call-budget.js';
import { batchGetConsistent } from '../../platform/dynamodb.js';
import { wsPk } from '../../platform/item-keys.js';
import type { KeySource } from '../../platform/key-ring.js';
import type { Member, Workspace } from '../../vocabulary.js';
import { clientSource, doorSource } from '../activity/records.js';
import { addComment } from '../comments/comment-writer.js';
import { OPERATOR } from '../membership/rules.js';
import type { ChangeSource } from '../model/activity.js';
import { bulkItemId, newActivityId } from '../model/activity.js';
import { type Caller, callerOf } from '../model/caller.js';
import { type FieldValue, foldedFieldName } from '../model/custom-fields.js';
import { readDay } from '../model/date-words.js';
import { MAX_BLOCKERS, MAX_LEVELS } from '../model/limits.js';
import { type RepeatRead, readRepeat } from '../model/repeat-rules.js';
import { NO_STATUSES, planStatusSet } from '../model/status-sets.js';
import { foldedName, phaseOf, type StatusCategory, setOf } from '../model/statuses.js';
import { taskNameOf } from '../model/task-refs.js';
import type { Project, Task } from '../model/types.js';
import { changeProject, createProject } from '../projects/project-writer.js';
import { createWorkspaceStores } from '../store/create-stores.js';
import type { WorkspaceStores, WriteContext } from '../store/stores.js';
import type { NewTask } from '../tasks/planner.js';
import { sourceClaimSk, sourceRowClaim } from '../tasks/source-claims.js';
import { type CreateItem, createTasks } from '../tasks/task-writer.js';
import { type FileField, fieldValueOf, fieldWords, type ProjectFields, planProjectFields } from './import-fields.js';
import {
  type ColumnUse,
  exportedDate,
  type ImportRow,
  type KeptValue,
  notesOf,
  type Person,
  type RowFormat,
  type RowRef,
  type SkippedRow,
} from './import-formats.js';

/**
 * Tasks from another tool's CSV export (lambda/workspace/transfer/import-formats.ts reads it), written through the one
 * task writer as the tools write them: numbered, recorded ("admin CLI: import from asana") and
 * undoable, fifty rows to a call (each call's id undoes its rows with change_undo). Each task is
 * written with a claim on its source row (`IMPORT#<format>#<row id>` in the workspace's partition)
 * in the same all-or-nothing write: a re-run of the same file finds the claims and creates nothing
 * twice, and two runs at once cannot both create one row. Rows are written after the rows they
 * name (their parent, the rows they wait on), so a blocked-by link is part of the task's own write.
 */

/** Rows per call: each call's records are `act_….01` … `act_….50`, within the two digits a bulk record id has. */
const PER_CALL = 50;
/** A progress line on the terminal (stderr) every this many rows. */
export const PROGRESS_EVERY = 500;

/** What a file says, as a terminal may print it: no control characters (an escape sequence in a title). */
const printable = (s: string): string => s.replace(/[\p{Cc}\p{Cf}]/gu, ' ');

/** Where the report's lines go: the terminal's two streams for the admin CLI, the task's result for workspace_import. */
export interface Out {
  stdout(line: string): void;
  stderr(line: string): void;
}

/** What an import works on: the workspace table as the functions and the admin CLI both wire it. */
export interface ImportTarget extends Pick<WorkspaceStores, 'directory'> {
  readonly db: DynamoDBDocumentClient;
  readonly table: string;
  readonly keys: KeySource;
  readonly activityDays: number;
}

type Claims = ReadonlyMap<string, { readonly key: string; readonly taskId: string }>;

/** The rows a run before this one created already: claim → the task's key and id. */
const claimed = async (target: ImportTarget, workspaceId: string, sks: readonly string[]): Promise<Claims> => {
  const items = await batchGetConsistent(
    target.db,
    target.table,
    sks.map((sk) => ({ pk: wsPk(workspaceId), sk })),
  );
  return new Map(items.map((item) => [String(item.sk), { key: String(item.key ?? item.taskId), taskId: String(item.taskId) }]));
};

/** Where a row goes in the tree: below another row of the file, below a task an earlier run made, or at the top. */
type Place = { readonly row: ImportRow } | { readonly taskId: string; readonly key: string } | undefined;

/** The rows of the file by their ids (and Asana's by title): what a parent or a blocker names. */
const indexRows = (rows: readonly ImportRow[]) => {
  const byId = new Map<string, ImportRow>();
  const byTitle = new Map<string, ImportRow>();
  for (const r of rows) {
    byId.set(r.sourceId, r);
    if (r.altId && !byId.has(r.altId)) byId.set(r.altId, r);
    if (!byTitle.has(r.title)) byTitle.set(r.title, r);
  }
  return (ref: RowRef | undefined): ImportRow | undefined =>
    ref?.id !== undefined ? (byId.get(ref.id) ?? byTitle.get(ref.id)) : ref?.title !== undefined ? byTitle.get(ref.title) : undefined;
};

/**
 * Each row's parent: a row of the file (by id, or Asana's by title: the first row of that title), or
 * a task an earlier run made from it (its claim). Rows nest three levels deep at most: a row deeper
 * goes below its nearest ancestor on the second level; a cycle (two rows naming each other) is
 * broken at the row that closes it. Each choice that is not the file's own is said.
 */
const placesOf = (
  format: RowFormat,
  rows: readonly ImportRow[],
  find: (ref: RowRef | undefined) => ImportRow | undefined,
  claims: Claims,
): Map<ImportRow, { place: Place; level: number; problem?: string }> => {
  const out = new Map<ImportRow, { place: Place; level: number; problem?: string }>();
  const parentRow = (r: ImportRow): ImportRow | undefined => {
    const found = find(r.parent);
    return found === r ? undefined : found;
  };
  const placeOf = (r: ImportRow, path: readonly ImportRow[]): { place: Place; level: number; problem?: string } => {
    const known = out.get(r);
    if (known) return known;
    let result: { place: Place; level: number; problem?: string };
    const up = parentRow(r);
    if (!r.parent) result = { place: undefined, level: 1 };
    else if (up && path.includes(up))
      result = { place: undefined, level: 1, problem: `${r.parent.label}: a cycle in the file; imported at the top level` };
    else if (up) {
      const above = placeOf(up, [...path, r]);
      if (above.level < MAX_LEVELS) result = { place: { row: up }, level: above.level + 1 };
      else {
        // Below the ancestor on the level above the last: the row is then on the last level.
        let at = up;
        while (out.get(at)!.level >= MAX_LEVELS) at = (out.get(at)!.place as { row: ImportRow }).row;
        result = {
          place: { row: at },
          level: MAX_LEVELS,
          problem: `${r.parent.label}: nested deeper than ${MAX_LEVELS} levels; imported below '${at.title}'`,
        };
      }
    } else {
      const claim = r.parent.id !== undefined ? claims.get(sourceClaimSk(format, r.parent.id)) : undefined;
      result = claim
        ? { place: claim, level: 2 }
        : { place: undefined, level: 1, problem: `${r.parent.label} is not in this file; imported at the top level` };
    }
    out.set(r, result);
    return result;
  };
  for (const r of rows) placeOf(r, []);
  return out;
};

/** A blocker of a row: another row of the file, or a task an earlier run made. */
type Blocker = { readonly row: ImportRow } | { readonly taskId: string };

/**
 * The rows in the order they are written: each after its parent and the rows it waits on, else in
 * the file's order. A blocked-by link that would close a cycle of the file's links is left out,
 * and so is one to a row neither in the file nor imported before; each is said on its row.
 */
const writeOrder = (
  format: RowFormat,
  rows: readonly ImportRow[],
  find: (ref: RowRef | undefined) => ImportRow | undefined,
  places: ReadonlyMap<ImportRow, { place: Place }>,
  claims: Claims,
  problems: Map<ImportRow, string[]>,
): { order: ImportRow[]; blockers: Map<ImportRow, Blocker[]> } => {
  const say = (r: ImportRow, p: string) => problems.set(r, [...(problems.get(r) ?? []), p]);
  const blockers = new Map<ImportRow, Blocker[]>();
  for (const r of rows) {
    const list: Blocker[] = [];
    for (const ref of r.blockedBy) {
      const other = find(ref);
      const claim = ref.id !== undefined ? claims.get(sourceClaimSk(format, ref.id)) : undefined;
      if (other === r) say(r, `${ref.label}: names the row itself; link left out`);
      else if (other) list.push({ row: other });
      else if (claim) list.push({ taskId: claim.taskId });
      else say(r, `${ref.label} is not in this file nor imported before; link left out`);
    }
    if (list.length > MAX_BLOCKERS)
      say(r, `waits on ${list.length} tasks; a task waits on ${MAX_BLOCKERS} at most: the first ${MAX_BLOCKERS} kept`);
    blockers.set(r, list.slice(0, MAX_BLOCKERS));
  }
  const order: ImportRow[] = [];
  const state = new Map<ImportRow, 'visiting' | 'done'>();
  const visit = (r: ImportRow) => {
    state.set(r, 'visiting');
    const place = places.get(r)?.place;
    if (place && 'row' in place && !state.has(place.row)) visit(place.row);
    const kept: Blocker[] = [];
    for (const b of blockers.get(r) ?? []) {
      if ('row' in b && state.get(b.row) === 'visiting') {
        say(r, `blocked by '${b.row.title}' closes a cycle of blocked-by links in the file; that link left out`);
        continue;
      }
      if ('row' in b && !state.has(b.row)) visit(b.row);
      kept.push(b);
    }
    blockers.set(r, kept);
    state.set(r, 'done');
    order.push(r);
  };
  for (const r of rows) if (!state.has(r)) visit(r);
  return { order, blockers };
};

const memberOf = (members: readonly Member[], who: Person): Member | undefined => {
  const email = who.email?.toLowerCase();
  const name = who.name?.toLowerCase();
  return (
    (email ? members.find((m) => m.email.toLowerCase() === email) : undefined) ??
    (name ? members.find((m) => m.name.toLowerCase() === name) : undefined)
  );
};

/**
 * A status category for an Asana section by its name (the project's own statuses are named after
 * its sections): Done, Complete(d), Finished, Shipped… done; Cancel(l)ed, Won't do… canceled; In
 * progress, Doing, Started, Review, QA, Testing… started; Backlog, Icebox, Someday… backlog;
 * anything else unstarted.
 */
export const categoryOfSection = (name: string): StatusCategory => {
  const n = foldedName(name);
  if (/\b(done|complete|completed|finished|closed|shipped|released|resolved)\b/.test(n)) return 'done';
  if (/\b(cancel+ed|won'?t do|abandoned|dropped)\b/.test(n)) return 'canceled';
  if (/\b(in progress|doing|started|wip|active|in review|review|qa|testing|in development)\b/.test(n)) return 'started';
  if (/\b(backlog|icebox|someday|later)\b/.test(n)) return 'backlog';
  return 'unstarted';
};

/**
 * A project's own statuses from the sections its rows are in (in the order they first appear),
 * with a done one (and an open one) added when the sections have none: the set a project needs.
 */
const statusesOfSections = (sections: readonly string[], problems: string[]) => {
  const given: { name: string; category: StatusCategory }[] = [];
  for (const s of sections) {
    const name = s.trim();
    if (given.some((g) => foldedName(g.name) === foldedName(name))) continue;
    if (name.length > 40 || ['open', 'any'].includes(foldedName(name))) {
      problems.push(`section '${name}' cannot be a status's name (40 characters at most; not open or any); its tasks go by category`);
      continue;
    }
    if (given.length >= 19) {
      problems.push(`section '${name}': a project has 20 statuses at most; its tasks go by category`);
      continue;
    }
    given.push({ name, category: categoryOfSection(name) });
  }
  if (!given.some((g) => phaseOf(g.category) === 'open')) given.unshift({ name: 'To do', category: 'unstarted' });
  if (!given.some((g) => g.category === 'done')) given.push({ name: 'Done', category: 'done' });
  return given;
};

interface Planned {
  readonly row: ImportRow;
  /** How the report names its parent (a title, or a key), when it has one. */
  readonly parentName?: string;
  readonly fields: Omit<NewTask, 'projectId'> & { readonly project?: string };
  /** Its custom field values as the report names them (`Type 'Bug'`). */
  readonly values: readonly string[];
  /** The lines its notes end with: field values no field took, then the row's own kept values. */
  readonly kept: readonly KeptValue[];
  readonly problems: string[];
}

/**
 * A row's custom field values by field id, each checked by its field's type; a value its project's
 * fields do not take (none of that name and type there, past the 20 a project holds, a word in a
 * number column, no project at all) stays a line of the notes, said on the row where the project
 * lines do not say it already.
 */
const valuesOf = (row: ImportRow, projectName: string | undefined, plan: ProjectFields | undefined, problems: string[]) => {
  const values: Record<string, FieldValue> = {};
  const words: string[] = [];
  const kept: KeptValue[] = [];
  const homeless: string[] = [];
  for (const c of row.values) {
    const def = plan?.use.get(foldedFieldName(c.field));
    const value = def ? fieldValueOf(def, c.value) : undefined;
    if (def && value !== undefined) {
      values[def.fieldId] = value;
      words.push(`${def.name} ${typeof value === 'number' ? value : `'${value}'`}`);
      continue;
    }
    kept.push({ field: c.field, value: c.value });
    if (def) problems.push(`${c.field} '${c.value}': the field ${def.name} (${def.type}) does not take it; kept in the notes`);
    else if (!projectName) homeless.push(c.field);
  }
  if (homeless.length) problems.push(`no project to hold the field(s) ${homeless.join(', ')}; kept in the notes`);
  return { values, words, kept };
};

/** A row's fields as the writer takes them; a field that does not map is left out and said. */
const planRow = async (
  row: ImportRow,
  format: RowFormat,
  members: readonly Member[],
  caller: Caller,
  now: Date,
  project: string | undefined,
  fieldsOf: (projectName: string) => ProjectFields | undefined,
): Promise<Planned> => {
  const problems = [...row.problems];
  const projectName = row.project ?? project;
  const custom = valuesOf(row, projectName, projectName ? fieldsOf(projectName) : undefined, problems);
  const kept = [...custom.kept, ...row.kept];
  let dueDate: string | undefined;
  let dueTime: string | undefined;
  let repeat: RepeatRead | undefined;
  if (row.due) {
    const opts = { now, timeZone: caller.timeZone };
    try {
      if (/^every\b|^daily|^weekly|^monthly|^yearly/i.test(row.due)) {
        repeat = await readRepeat(row.due, 'DATE', opts);
        dueTime = repeat.time;
      } else {
        const day = await readDay(exportedDate(row.due) ?? row.due, 'due date', { ...opts, forward: true });
        dueDate = day.date;
        dueTime = day.time;
      }
    } catch (err) {
      if (!(err instanceof ToolRefusal)) throw err;
      problems.push(`due '${row.due}' is not a date or rule this reads; imported without it`);
    }
  }
  let assigneeId: string | undefined;
  if (row.assignee) {
    const m = memberOf(members, row.assignee);
    if (m) assigneeId = m.userId;
    else problems.push(`assignee '${row.assignee.email ?? row.assignee.name}' is no member of the workspace; imported unassigned`);
  }
  let title = row.title;
  if (Array.from(title).length > 300) {
    title = Array.from(title).slice(0, 300).join('');
    problems.push('title longer than 300 characters; cut');
  }
  let notes = notesOf({ notes: row.notes, kept }, format);
  if (notes && Array.from(notes).length > 10_000) {
    notes = Array.from(notes).slice(0, 10_000).join('');
    problems.push('notes longer than 10,000 characters; cut');
  }
  return {
    row,
    problems,
    values: custom.words,
    kept,
    fields: {
      title,
      ...(notes ? { notes } : {}),
      priority: row.priority,
      ...(dueDate ? { dueDate } : {}),
      ...(dueTime && (dueDate || repeat) ? { dueTime } : {}),
      ...(repeat ? { repeat } : {}),
      ...(assigneeId ? { assigneeId } : {}),
      labels: row.labels,
      ...(projectName ? { project: projectName } : {}),
      ...(row.done ? { completed: { at: row.done.at ?? now.toISOString(), by: caller.userId } } : {}),
      // A key of the workspace's statuses: a project of its own takes the one of its category (model/statuses.ts statusOfKey).
      ...(row.state ? { stateKey: row.state } : {}),
      ...(Object.keys(custom.values).length ? { fields: custom.values } : {}),
    },
  };
};

const describe = (p: Planned, blockers: number): string => {
  const f = p.fields;
  const facts = [
    f.priority,
    f.dueDate ? `due ${f.dueDate}${f.dueTime ? ` ${f.dueTime}` : ''}` : undefined,
    f.repeat ? f.repeat.words : undefined,
    f.assigneeId ? `@${f.assigneeId}` : undefined,
    f.project ? `project '${f.project}'` : undefined,
    f.labels?.length ? f.labels.map((l) => `#${l}`).join(' ') : undefined,
    f.stateKey && f.stateKey !== 'done' && f.stateKey !== 'todo' ? f.stateKey.replace('_', ' ') : undefined,
    p.row.section ? `status '${p.row.section}'` : undefined,
    f.completed ? `${f.stateKey === 'canceled' ? 'closed' : 'done'} ${f.completed.at}` : undefined,
    p.parentName ? `subtask of ${p.parentName}` : undefined,
    blockers ? `waits on ${blockers}` : undefined,
    p.row.comments.length ? `${p.row.comments.length} comment(s)` : undefined,
    p.values.length ? `fields: ${p.values.join(', ')}` : undefined,
    p.kept.length ? `kept: ${[...new Set(p.kept.map((k) => k.field))].join(', ')}` : undefined,
  ].filter(Boolean);
  return `'${f.title}' (${facts.join(', ')})`;
};

export interface ImportRun {
  readonly workspaceId: string;
  readonly format: RowFormat;
  readonly rows: readonly ImportRow[];
  readonly skipped: readonly SkippedRow[];
  /** Columns of the file the format's reading does not use: named once, so nothing goes unsaid. */
  readonly unread: readonly string[];
  /** Every column of the file and what it becomes (`--dry-run` lists them). */
  readonly columns: readonly ColumnUse[];
  /** The custom fields the file's values make (lambda/workspace/transfer/import-fields.ts), added to each project its rows go to. */
  readonly fields: readonly FileField[];
  /** The project of rows that name none (`--project`; Todoist's: the file's name). */
  readonly project?: string;
  readonly dryRun: boolean;
  readonly file: string;
  /** The workspace, read by the door before it reads the file. */
  readonly workspace: Workspace;
  /** Who imports: the operator through the admin CLI (without it), or a member through workspace_import and their client. */
  readonly by?: { readonly member: Member; readonly client: string };
  /**
   * Asked after each call's rows (fifty) are written, with the rows done and planned: whether to go
   * on. A cancelled workspace_import stops there, every call before it whole (each undone by its id).
   */
  readonly between?: (done: number, total: number) => Promise<boolean>;
}

/** What a run wrote, as the report's last line says it. */
export interface ImportSummary {
  readonly created: number;
  readonly refused: number;
  /** Write units the task writes were estimated at (platform/transact.ts opWriteUnits: what a call's ceiling counts). */
  readonly writeUnits: number;
  readonly seconds: number;
  /** The calls the tasks were written in, in order: change_undo of each takes its rows back. */
  readonly changes: readonly string[];
  /** Stopped before its last rows (`between` said so). */
  readonly stopped: boolean;
}

/** A change's source: the admin CLI's operator, or the member of a workspace_import and their client. */
const importSource = (run: ImportRun, actor: { readonly userId: string; readonly name: string }, at: Date): ChangeSource =>
  run.by ? clientSource(actor, run.by.client, 'workspace_import', at) : doorSource('admin CLI', actor, `import from ${run.format}`, at);

export const importTasks = async (target: ImportTarget, run: ImportRun, out: Out, now: Date): Promise<ImportSummary | undefined> => {
  const { workspaceId, format, workspace } = run;
  const members = await target.directory.listMembers(workspaceId);
  const owner = members.find((m) => m.role === 'owner' && m.status === 'active');
  // The member who imports, or the operator acting as an owner (dates in words read in the first owner's zone).
  const caller: Caller = callerOf(workspace, run.by?.member ?? { ...OPERATOR, timeZone: owner?.timeZone ?? 'UTC' });
  const stores = createWorkspaceStores(target.db, target.table, target.keys, target.activityDays);
  const importer = run.by?.member ?? OPERATOR;
  const source = importSource(run, importer, now);
  const ctx: WriteContext = { stores, caller, source };

  if (run.dryRun) {
    out.stdout('columns of the file and what each becomes:');
    for (const c of run.columns) out.stdout(printable(`  ${c.column}: ${c.use === 'mapped' ? '' : `${c.use}: `}${c.becomes}`));
  } else if (run.unread.length) out.stdout(`columns not imported (doers keeps nothing of them): ${printable(run.unread.join(', '))}`);
  for (const s of run.skipped) out.stdout(`line ${s.line}: skipped: ${printable(s.reason)}`);
  const find = indexRows(run.rows);
  // The rows' own claims, and those of the rows they name by id (made by a run before).
  const done = await claimed(target, workspaceId, [
    ...new Set([
      ...run.rows.map((r) => sourceClaimSk(format, r.sourceId)),
      ...run.rows.flatMap((r) =>
        [r.parent, ...r.blockedBy].flatMap((ref) => (ref?.id && !find(ref) ? [sourceClaimSk(format, ref.id)] : [])),
      ),
    ]),
  ]);
  const places = placesOf(format, run.rows, find, done);
  const linkProblems = new Map<ImportRow, string[]>();
  const { order, blockers } = writeOrder(format, run.rows, find, places, done, linkProblems);
  // Parents and blockers before the rows that name them, else in the file's order.
  const fresh = order.filter((r) => {
    const claim = done.get(sourceClaimSk(format, r.sourceId));
    if (claim) out.stdout(`line ${r.line}: imported before as ${claim.key}; not again`);
    return !claim;
  });
  const projects = new Map(
    (await stores.projects.all(workspaceId)).filter((p: Project) => p.status === 'active').map((p) => [p.name.toLowerCase(), p]),
  );
  // The custom fields each project its rows go to takes: the file's fields its rows have values of, merged with its own.
  const rowsOfProject = new Map<string, ImportRow[]>();
  for (const r of fresh) {
    const name = (r.project ?? run.project)?.toLowerCase();
    if (name !== undefined && r.values.length) rowsOfProject.set(name, [...(rowsOfProject.get(name) ?? []), r]);
  }
  const fieldPlans = new Map<string, ProjectFields>(
    [...rowsOfProject].map(([name, rows]) => [
      name,
      planProjectFields(
        projects.get(name)?.fields ?? [],
        run.fields.filter((f) => rows.some((r) => r.values.some((v) => v.field === f.name))),
      ),
    ]),
  );
  const planned = await Promise.all(
    fresh.map(async (r) => {
      const p = await planRow(r, format, members, caller, now, run.project, (name) => fieldPlans.get(name.toLowerCase()));
      const more = [places.get(r)!.problem, ...(linkProblems.get(r) ?? [])].filter((x): x is string => !!x);
      return more.length ? { ...p, problems: [...p.problems, ...more] } : p;
    }),
  );
  // Each new task's id, known before any is written, so a subtask or a dependent can name one the same run makes.
  const idOf = new Map(planned.map((p) => [p.row, randomUUID()]));
  const wanted = [...new Set(planned.flatMap((p) => (p.fields.project ? [p.fields.project] : [])))];
  const missing = wanted.filter((name) => !projects.has(name.toLowerCase()));
  /** The records of the projects made or changed for the file: change_undo of each takes it back. */
  const projectChanges: string[] = [];
  // Asana's sections: the statuses of each project the import makes, from its rows' sections.
  const sectionsOf = (name: string) =>
    planned.filter((p) => p.fields.project?.toLowerCase() === name.toLowerCase() && p.row.section).map((p) => p.row.section!);

  const parentNameOf = (r: ImportRow): string | undefined => {
    const place = places.get(r)!.place;
    return !place ? undefined : 'row' in place ? `'${place.row.title}'` : place.key;
  };
  // What the import does to each project's fields, as the report says it; and the fields left to the notes.
  const fieldsSaid = (name: string, would: boolean): string[] => {
    const plan = fieldPlans.get(name.toLowerCase());
    if (!plan) return [];
    return [
      ...(plan.added.length ? [`${would ? 'would add' : 'added'} the fields ${plan.added.map(fieldWords).join(', ')}`] : []),
      ...plan.grown.map((f) => `${would ? 'would add' : 'added'} options to its field ${fieldWords(f)}`),
      ...plan.left.map((l) => `field ${l.name} ${would ? 'would not be' : 'not'} added (${l.why}): its values kept in the notes`),
    ].map((line) => `project '${name}': ${line}`);
  };
  const leftWords = [...fieldPlans].flatMap(([key, plan]) =>
    plan.left.map((l) => `${l.name} in '${wanted.find((w) => w.toLowerCase() === key) ?? key}'`),
  );
  const leftSaid = leftWords.length
    ? ` The values of ${leftWords.length} field(s) stay lines of the notes (said above): ${printable(leftWords.join(', '))}.`
    : '';
  if (run.dryRun) {
    for (const name of missing) {
      const sections = sectionsOf(name);
      const statuses = sections.length ? statusesOfSections(sections, []) : [];
      out.stdout(
        printable(
          `project '${name}': would be created${statuses.length ? ` with the statuses ${statuses.map((s) => `${s.name} (${s.category})`).join(', ')}` : ''}`,
        ),
      );
      for (const line of fieldsSaid(name, true)) out.stdout(printable(line));
    }
    for (const name of wanted.filter((n) => !missing.includes(n))) for (const line of fieldsSaid(name, true)) out.stdout(printable(line));
    for (const planned0 of planned) {
      const parentName = parentNameOf(planned0.row);
      const p = parentName ? { ...planned0, parentName } : planned0;
      out.stdout(printable(`line ${p.row.line}: would create ${describe(p, blockers.get(p.row)?.length ?? 0)}`));
      for (const problem of p.problems) out.stdout(printable(`line ${p.row.line}:   ${problem}`));
    }
    out.stderr(
      `Dry run: ${planned.length} task(s) would be created, ${run.rows.length - fresh.length} imported before, ${run.skipped.length} row(s) skipped.${leftSaid} Nothing was written.`,
    );
    return undefined;
  }
  for (const name of missing) {
    const sections = sectionsOf(name);
    const problems: string[] = [];
    const statuses = sections.length ? statusesOfSections(sections, problems) : [];
    let statusSet: ReturnType<typeof planStatusSet>['set'] | undefined;
    try {
      statusSet = statuses.length ? planStatusSet(NO_STATUSES, statuses, undefined).set : undefined;
    } catch (err) {
      if (!(err instanceof ToolRefusal)) throw err;
      problems.push(`its sections cannot be its statuses (${err.message}); it takes the workspace's`);
    }
    const fields = fieldPlans.get(name.toLowerCase())?.fields;
    const made = await createProject(ctx, { name, ...(statusSet ? { statusSet } : {}), ...(fields?.length ? { fields } : {}) });
    projects.set(name.toLowerCase(), made.project);
    projectChanges.push(made.record.activityId);
    out.stdout(
      printable(
        `project '${name}': created${statusSet ? ` with the statuses ${statusSet.statuses.map((s) => `${s.name} (${s.category})`).join(', ')}` : ''}`,
      ),
    );
    for (const problem of problems) out.stdout(printable(`project '${name}': ${problem}`));
    for (const line of fieldsSaid(name, false)) out.stdout(printable(line));
  }
  // A project that was there: its fields changed once, before its tasks are written (the values name the fields' ids).
  for (const name of wanted.filter((n) => !missing.includes(n))) {
    const plan = fieldPlans.get(name.toLowerCase());
    const before = projects.get(name.toLowerCase());
    if (plan && before && (plan.added.length || plan.grown.length)) {
      const changed = await changeProject(ctx, before, { fields: plan.fields });
      if (changed) {
        projects.set(name.toLowerCase(), changed.project);
        projectChanges.push(changed.record.activityId);
      }
    }
    for (const line of fieldsSaid(name, false)) out.stdout(printable(line));
  }
  const started = Date.now();
  const summary = await withCallBudget(
    { readUnits: Number.POSITIVE_INFINITY, readBytes: Number.POSITIVE_INFINITY, writeUnits: Number.POSITIVE_INFINITY },
    () => writeRows(ctx, workspace, members, run, planned, { places, blockers, idOf, projects, done }, out),
  );
  const seconds = (Date.now() - started) / 1000;
  out.stderr(
    `Imported ${summary.created} task(s) from ${run.file} (${format})${summary.refused ? `, ${summary.refused} refused` : ''}; ${run.rows.length - fresh.length} imported before, ${run.skipped.length} row(s) skipped.${
      summary.byOperator
        ? run.by
          ? ` ${summary.byOperator} comment(s) were added by ${run.by.member.name}, each headed by its author's name.`
          : ` ${summary.byOperator} comment(s) whose author is no member here were added by the operator (said on their rows).`
        : ''
    }${leftSaid}`,
  );
  if (summary.created)
    out.stderr(
      `Tasks written in ${seconds.toFixed(1)} s (${Math.round(summary.created / Math.max(seconds, 0.001))} rows/s), ${summary.writeUnits} write units as estimated (${(summary.writeUnits / summary.created).toFixed(1)} a task).`,
    );
  return {
    created: summary.created,
    refused: summary.refused,
    writeUnits: summary.writeUnits,
    seconds,
    changes: [...projectChanges, ...summary.changes],
    stopped: summary.stopped,
  };
};

interface Layout {
  readonly places: ReadonlyMap<ImportRow, { place: Place }>;
  readonly blockers: ReadonlyMap<ImportRow, readonly Blocker[]>;
  readonly idOf: Map<ImportRow, string>;
  readonly projects: ReadonlyMap<string, Project>;
  readonly done: Claims;
}

/** The planned rows written, fifty to a call, each with its links; then their comments, each by its author where they are a member. */
const writeRows = async (
  ctx: WriteContext,
  workspace: Workspace,
  members: readonly Member[],
  run: ImportRun,
  planned: readonly Planned[],
  { places, blockers, idOf, projects, done }: Layout,
  out: Out,
): Promise<{ created: number; refused: number; byOperator: number; writeUnits: number; changes: string[]; stopped: boolean }> => {
  const { format, caller } = { format: run.format, caller: ctx.caller };
  const importer = run.by?.member ?? OPERATOR;
  const byWhom = run.by ? run.by.member.name : 'the operator';
  const changes: string[] = [];
  let stopped = false;
  let created = 0;
  let refused = 0;
  let byOperator = 0;
  let comments = 0;
  let sinceProgress = 0;
  const started = Date.now();
  // Rows written (or refused) so far: a subtask of a refused row goes to the top level instead.
  const made = new Set<ImportRow>();
  // Where a row named by another is: its new task's id, or why the link cannot be made.
  const idOfRow = (row: ImportRow, inGroup: ReadonlyMap<ImportRow, number>): { id?: string; at?: number } => {
    const j = inGroup.get(row);
    if (j !== undefined) return { id: idOf.get(row)!, at: j };
    if (idOf.has(row) && made.has(row)) return { id: idOf.get(row)! };
    const before = done.get(sourceClaimSk(format, row.sourceId));
    return before ? { id: before.taskId } : {};
  };
  for (let i = 0; i < planned.length; i += PER_CALL) {
    const group = planned.slice(i, i + PER_CALL);
    const callId = newActivityId(ctx.source.now);
    const inGroup = new Map(group.map((p, j) => [p.row, j]));
    const parentOf = (p: Planned): { parentId?: string; after?: number; problem?: string } => {
      const place = places.get(p.row)!.place;
      if (!place) return {};
      if (!('row' in place)) return { parentId: place.taskId };
      const at = idOfRow(place.row, inGroup);
      if (at.id) return { parentId: at.id, ...(at.at !== undefined ? { after: at.at } : {}) };
      return { problem: `its parent '${place.row.title}' was not imported; imported at the top level` };
    };
    // An earlier item of this call, as the rules see it before it is stored: new, below its own parent.
    const stubOf = (j: number): Task => {
      const up = parentOf(group[j]!);
      const f = group[j]!.fields;
      return {
        taskId: idOf.get(group[j]!.row)!,
        // A link holds its blocker to the phase it was planned with: a row that arrives done is done.
        status: f.completed || /^(done|canceled)\b/.test(f.stateKey ?? '') ? 'done' : 'open',
        labels: [],
        version: 1,
        ...(up.parentId ? { parentId: up.parentId } : {}),
      } as unknown as Task;
    };
    const items: CreateItem[] = group.map((p, j) => {
      const { project, ...fields } = p.fields;
      const parent = parentOf(p);
      if (parent.problem) p.problems.push(parent.problem);
      const after = new Set<number>(parent.after !== undefined ? [parent.after] : []);
      const blockedBy: string[] = [];
      for (const b of blockers.get(p.row) ?? []) {
        if (!('row' in b)) {
          blockedBy.push(b.taskId);
          continue;
        }
        const at = idOfRow(b.row, inGroup);
        if (!at.id) {
          p.problems.push(`blocked by '${b.row.title}', which was not imported; link left out`);
          continue;
        }
        blockedBy.push(at.id);
        if (at.at !== undefined) after.add(at.at);
      }
      // The earlier items it names, and their own parents (the levels are counted through them).
      const fresh = new Map<string, Task>();
      const add = (k: number) => {
        const id = idOf.get(group[k]!.row)!;
        if (fresh.has(id)) return;
        fresh.set(id, stubOf(k));
        const up = parentOf(group[k]!).after;
        if (up !== undefined) add(up);
      };
      for (const k of after) add(k);
      const projectItem = project ? projects.get(project.toLowerCase()) : undefined;
      return {
        fields: {
          ...fields,
          ...statusOfSection(p, projectItem),
          taskId: idOf.get(p.row)!,
          ...(projectItem ? { projectId: projectItem.projectId } : {}),
          ...(parent.parentId ? { parentId: parent.parentId } : {}),
          ...(blockedBy.length ? { blockedBy } : {}),
        },
        ...(after.size ? { after: [...after], plan: { fresh } } : {}),
        recordId: bulkItemId(callId, j),
        also: sourceRowClaim(ctx, format, p.row.sourceId, p.row.line),
      };
    });
    const outcomes = await createTasks(ctx, items);
    let first: string | undefined;
    let last: string | undefined;
    for (const [j, o] of outcomes.entries()) {
      const p = group[j]!;
      made.add(p.row);
      if (!o.ok || !('written' in o)) {
        idOf.delete(p.row);
        refused++;
        out.stdout(printable(`line ${p.row.line}: not imported: ${o.ok ? 'unchanged' : o.error.message}`));
        continue;
      }
      created++;
      const name = taskNameOf(caller.workspaceKey, o.written.task);
      first ??= name;
      last = name;
      for (const c of p.row.comments) {
        const author = c.author ? memberOf(members, c.author) : undefined;
        // The operator's import writes a member's comment as theirs; a member's import (workspace_import)
        // never writes as anyone else: the file is anyone's to make, so it adds the comment itself, named.
        const writes = !run.by && author && author.status === 'active' && author.role !== 'viewer';
        const who = c.author ? (author?.name ?? c.author.name ?? c.author.email) : undefined;
        if (c.author && !writes) {
          byOperator++;
          if (!run.by || !author)
            p.problems.push(
              author
                ? `a comment by ${c.author.email ?? c.author.name}, a ${author.role === 'viewer' ? 'viewer' : 'disabled member'} here: added by ${byWhom}`
                : `a comment by '${c.author.email ?? c.author.name}', no member here: added by ${byWhom}`,
            );
        }
        // Each comment a millisecond after the one before: a task's comments sort by their ids' time (UUIDv7).
        const at = new Date(ctx.source.now.getTime() + ++comments);
        const as: WriteContext = writes
          ? { ...ctx, caller: callerOf(workspace, author), source: importSource(run, author, at) }
          : { ...ctx, source: importSource(run, importer, at) };
        const body = run.by && who ? `*${who} wrote:*\n\n${c.body}` : c.body;
        await addComment(as, o.written.task, body.slice(0, 10_000));
      }
      for (const problem of p.problems) out.stdout(printable(`line ${p.row.line} (${name}): ${problem}`));
    }
    if (first) {
      out.stdout(`${first} … ${last}: undo with change_undo ${callId}`);
      changes.push(callId);
    }
    sinceProgress += group.length;
    if (sinceProgress >= PROGRESS_EVERY || i + PER_CALL >= planned.length) {
      if (planned.length >= PROGRESS_EVERY) {
        const seconds = (Date.now() - started) / 1000;
        out.stderr(
          `… ${Math.min(i + PER_CALL, planned.length)} of ${planned.length} rows (${Math.round(Math.min(i + PER_CALL, planned.length) / Math.max(seconds, 0.001))} rows/s)`,
        );
      }
      sinceProgress = 0;
    }
    if (run.between && i + PER_CALL < planned.length && !(await run.between(i + PER_CALL, planned.length))) {
      stopped = true;
      out.stdout(
        `stopped after ${i + PER_CALL} of ${planned.length} rows, as asked: each call above is whole; the rows after it were not written`,
      );
      break;
    }
  }
  return { created, refused, byOperator, writeUnits: callBudget()?.writeUnits ?? 0, changes, stopped };
};

/**
 * An Asana row's status: the status named after its section in its project's own set, when that
 * status agrees with whether the row is done (a section named Done holding an open task: the task
 * stays open, said); else none, and the row goes by whether it is done.
 */
const statusOfSection = (p: Planned, project: Project | undefined): { state?: string } => {
  const section = p.row.section;
  if (!section) return {};
  const status = project ? setOf(project).statuses.find((s) => foldedName(s.name) === foldedName(section)) : undefined;
  if (!status) {
    p.problems.push(
      project
        ? `section '${section}' is no status of project '${project.name}'; imported by whether it is done`
        : `section '${section}': no project to hold it as a status; imported by whether it is done`,
    );
    return {};
  }
  const closed = phaseOf(status.category) === 'done';
  if (closed !== !!p.fields.completed) {
    p.problems.push(
      `section '${section}' is ${closed ? 'a closed' : 'an open'} status but the task is ${p.fields.completed ? 'completed' : 'not'}; imported by whether it is done`,
    );
    return {};
  }
  return { state: status.name };
};
