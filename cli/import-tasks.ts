import { randomUUID } from 'node:crypto';
import { ToolRefusal } from '../lambda/errors.js';
import { batchGetConsistent } from '../lambda/platform/dynamodb.js';
import { wsPk } from '../lambda/platform/item-keys.js';
import { type Member, workspaceKeyOf } from '../lambda/vocabulary.js';
import { doorSource } from '../lambda/workspace/activity/records.js';
import { addComment } from '../lambda/workspace/comments/comment-writer.js';
import { OPERATOR } from '../lambda/workspace/membership/rules.js';
import { bulkItemId, newActivityId } from '../lambda/workspace/model/activity.js';
import type { Caller } from '../lambda/workspace/model/caller.js';
import { readDay } from '../lambda/workspace/model/date-words.js';
import { MAX_LEVELS } from '../lambda/workspace/model/limits.js';
import { type RepeatRead, readRepeat } from '../lambda/workspace/model/repeat-rules.js';
import { taskNameOf } from '../lambda/workspace/model/task-refs.js';
import type { Project, Task } from '../lambda/workspace/model/types.js';
import { createProject } from '../lambda/workspace/projects/project-writer.js';
import { createWorkspaceStores } from '../lambda/workspace/store/create-stores.js';
import type { WriteContext } from '../lambda/workspace/store/stores.js';
import type { NewTask } from '../lambda/workspace/tasks/planner.js';
import { sourceClaimSk, sourceRowClaim } from '../lambda/workspace/tasks/source-claims.js';
import { type CreateItem, createTasks } from '../lambda/workspace/tasks/task-writer.js';
import { existingWorkspace, type Out } from './args.js';
import { exportedDate, type Format, type ImportRow, type SkippedRow } from './import-formats.js';
import type { Target } from './target.js';

/**
 * Tasks from another tool's CSV export (cli/import-formats.ts reads it), written through the one
 * task writer as the tools write them: numbered, recorded ("admin CLI: import from asana") and
 * undoable, fifty rows to a call (each call's id undoes its rows with change_undo). Each task is
 * written with a claim on its source row (`IMPORT#<format>#<row id>` in the workspace's partition)
 * in the same all-or-nothing write: a re-run of the same file finds the claims and creates nothing
 * twice, and two runs at once cannot both create one row.
 */

/** Rows per call: each call's records are `act_….01` … `act_….50`, within the two digits a bulk record id has. */
const PER_CALL = 50;

/** What a file says, as a terminal may print it: no control characters (an escape sequence in a title). */
const printable = (s: string): string => s.replace(/[\p{Cc}\p{Cf}]/gu, ' ');

/** The rows a run before this one created already: claim → the task's key and id. */
const claimed = async (
  target: Target,
  workspaceId: string,
  sks: readonly string[],
): Promise<Map<string, { readonly key: string; readonly taskId: string }>> => {
  const items = await batchGetConsistent(
    target.db,
    target.table,
    sks.map((sk) => ({ pk: wsPk(workspaceId), sk })),
  );
  return new Map(items.map((item) => [String(item.sk), { key: String(item.key ?? item.taskId), taskId: String(item.taskId) }]));
};

/** Where a row goes in the tree: below another row of the file, below a task an earlier run made, or at the top. */
type Place = { readonly row: ImportRow } | { readonly taskId: string; readonly key: string } | undefined;

/**
 * Each row's parent: a row of the file (by id, or Asana's by title: the first row of that title), or
 * a task an earlier run made from it (its claim). Rows nest three levels deep at most: a row deeper
 * goes below its nearest ancestor on the second level; a cycle (two rows naming each other) is
 * broken at the row that closes it. Each choice that is not the file's own is said.
 */
const placesOf = (
  format: Format,
  rows: readonly ImportRow[],
  claims: ReadonlyMap<string, { readonly key: string; readonly taskId: string }>,
): Map<ImportRow, { place: Place; level: number; problem?: string }> => {
  const byId = new Map<string, ImportRow>();
  const byTitle = new Map<string, ImportRow>();
  for (const r of rows) {
    byId.set(r.sourceId, r);
    if (r.altId && !byId.has(r.altId)) byId.set(r.altId, r);
    if (!byTitle.has(r.title)) byTitle.set(r.title, r);
  }
  const out = new Map<ImportRow, { place: Place; level: number; problem?: string }>();
  const parentRow = (r: ImportRow): ImportRow | undefined => {
    const p = r.parent;
    const found = p?.id !== undefined ? byId.get(p.id) : p?.title !== undefined ? byTitle.get(p.title) : undefined;
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

const memberOf = (members: readonly Member[], who: NonNullable<ImportRow['assignee']>): Member | undefined => {
  const email = who.email?.toLowerCase();
  const name = who.name?.toLowerCase();
  return (
    (email ? members.find((m) => m.email.toLowerCase() === email) : undefined) ??
    (name ? members.find((m) => m.name.toLowerCase() === name) : undefined)
  );
};

interface Planned {
  readonly row: ImportRow;
  /** How the report names its parent (a title, or a key), when it has one. */
  readonly parentName?: string;
  readonly fields: Omit<NewTask, 'projectId'> & { readonly project?: string };
  readonly problems: string[];
}

/** A row's fields as the writer takes them; a field that does not map is left out and said. */
const planRow = async (row: ImportRow, members: readonly Member[], caller: Caller, now: Date): Promise<Planned> => {
  const problems = [...row.problems];
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
  let notes = row.notes;
  if (notes && Array.from(notes).length > 10_000) {
    notes = Array.from(notes).slice(0, 10_000).join('');
    problems.push('notes longer than 10,000 characters; cut');
  }
  return {
    row,
    problems,
    fields: {
      title,
      ...(notes ? { notes } : {}),
      priority: row.priority,
      ...(dueDate ? { dueDate } : {}),
      ...(dueTime && (dueDate || repeat) ? { dueTime } : {}),
      ...(repeat ? { repeat } : {}),
      ...(assigneeId ? { assigneeId } : {}),
      labels: row.labels,
      ...(row.project ? { project: row.project } : {}),
      ...(row.done ? { completed: { at: row.done.at ?? now.toISOString(), by: OPERATOR.userId } } : {}),
      // A key of the workspace's statuses: a project of its own takes the one of its category (model/statuses.ts statusOfKey).
      ...(row.state ? { stateKey: row.state } : {}),
    },
  };
};

const describe = (p: Planned): string => {
  const f = p.fields;
  const facts = [
    f.priority,
    f.dueDate ? `due ${f.dueDate}${f.dueTime ? ` ${f.dueTime}` : ''}` : undefined,
    f.repeat ? f.repeat.words : undefined,
    f.assigneeId ? `@${f.assigneeId}` : undefined,
    f.project ? `project '${f.project}'` : undefined,
    f.labels?.length ? f.labels.map((l) => `#${l}`).join(' ') : undefined,
    f.stateKey && f.stateKey !== 'done' && f.stateKey !== 'todo' ? f.stateKey.replace('_', ' ') : undefined,
    f.completed ? `${f.stateKey === 'canceled' ? 'closed' : 'done'} ${f.completed.at}` : undefined,
    p.parentName ? `subtask of ${p.parentName}` : undefined,
    p.row.comments.length ? `${p.row.comments.length} comment(s)` : undefined,
  ].filter(Boolean);
  return `'${f.title}' (${facts.join(', ')})`;
};

export interface ImportRun {
  readonly workspaceId: string;
  readonly format: Format;
  readonly rows: readonly ImportRow[];
  readonly skipped: readonly SkippedRow[];
  /** Columns of the file the format's reading does not use: named once, so nothing goes unsaid. */
  readonly unread: readonly string[];
  readonly dryRun: boolean;
  readonly file: string;
}

export const importTasks = async (target: Target, run: ImportRun, out: Out, now: Date): Promise<void> => {
  const { workspaceId, format } = run;
  const [workspace, members] = await Promise.all([existingWorkspace(target, workspaceId), target.directory.listMembers(workspaceId)]);
  const owner = members.find((m) => m.role === 'owner' && m.status === 'active');
  // The operator, acting as an owner; dates in words are read in the first owner's zone.
  const caller: Caller = {
    workspaceId,
    workspaceKey: workspaceKeyOf(workspace),
    pastKeys: workspace.pastKeys ?? [],
    taskCounter: workspace.taskCounter ?? 0,
    directoryVersion: workspace.directoryVersion ?? 0,
    userId: OPERATOR.userId,
    name: OPERATOR.name,
    role: 'owner',
    timeZone: owner?.timeZone ?? 'UTC',
    layout: workspace.layout ?? 1,
    ...(workspace.migrating ? { migrating: true } : {}),
  };
  const stores = createWorkspaceStores(target.db, target.table, target.keys, target.activityDays);
  const source = doorSource('admin CLI', OPERATOR, `import from ${format}`, now);
  const ctx: WriteContext = { stores, caller, source };

  if (run.unread.length) out.stdout(`columns not imported (doers keeps nothing of them): ${printable(run.unread.join(', '))}`);
  for (const s of run.skipped) out.stdout(`line ${s.line}: skipped: ${printable(s.reason)}`);
  // The rows' own claims, and those of the parents they name by id (made by a run before).
  const done = await claimed(target, workspaceId, [
    ...new Set([
      ...run.rows.map((r) => sourceClaimSk(format, r.sourceId)),
      ...run.rows.flatMap((r) => (r.parent?.id ? [sourceClaimSk(format, r.parent.id)] : [])),
    ]),
  ]);
  const places = placesOf(format, run.rows, done);
  // Parents before their subtasks, else in the file's order.
  const fresh = run.rows
    .filter((r) => {
      const claim = done.get(sourceClaimSk(format, r.sourceId));
      if (claim) out.stdout(`line ${r.line}: imported before as ${claim.key}; not again`);
      return !claim;
    })
    .sort((a, b) => places.get(a)!.level - places.get(b)!.level);
  const planned = await Promise.all(
    fresh.map(async (r) => {
      const p = await planRow(r, members, caller, now);
      const problem = places.get(r)!.problem;
      return problem ? { ...p, problems: [...p.problems, problem] } : p;
    }),
  );
  // Each new task's id, known before any is written, so a subtask can name a parent the same run makes.
  const idOf = new Map(planned.map((p) => [p.row, randomUUID()]));
  const projects = new Map(
    (await stores.projects.all(workspaceId)).filter((p: Project) => p.status === 'active').map((p) => [p.name.toLowerCase(), p]),
  );
  const wanted = [...new Set(planned.flatMap((p) => (p.fields.project ? [p.fields.project] : [])))];
  const missing = wanted.filter((name) => !projects.has(name.toLowerCase()));

  const parentNameOf = (r: ImportRow): string | undefined => {
    const place = places.get(r)!.place;
    return !place ? undefined : 'row' in place ? `'${place.row.title}'` : place.key;
  };
  if (run.dryRun) {
    for (const name of missing) out.stdout(printable(`project '${name}': would be created`));
    for (const planned0 of planned) {
      const parentName = parentNameOf(planned0.row);
      const p = parentName ? { ...planned0, parentName } : planned0;
      out.stdout(printable(`line ${p.row.line}: would create ${describe(p)}`));
      for (const problem of p.problems) out.stdout(printable(`line ${p.row.line}:   ${problem}`));
    }
    out.stderr(
      `Dry run: ${planned.length} task(s) would be created, ${run.rows.length - fresh.length} imported before, ${run.skipped.length} row(s) skipped. Nothing was written.`,
    );
    return;
  }
  for (const name of missing) {
    const made = await createProject(ctx, { name });
    projects.set(name.toLowerCase(), made.project);
    out.stdout(printable(`project '${name}': created`));
  }
  let created = 0;
  let refused = 0;
  // Rows written (or refused) so far: a subtask of a refused row goes to the top level instead.
  const made = new Set<ImportRow>();
  for (let i = 0; i < planned.length; i += PER_CALL) {
    const group = planned.slice(i, i + PER_CALL);
    const callId = newActivityId(now);
    const inGroup = new Map(group.map((p, j) => [p.row, j]));
    const parentOf = (p: Planned): { parentId?: string; after?: number; problem?: string } => {
      const place = places.get(p.row)!.place;
      if (!place) return {};
      if (!('row' in place)) return { parentId: place.taskId };
      const j = inGroup.get(place.row);
      if (j !== undefined) return { parentId: idOf.get(place.row)!, after: j };
      // Parents come first (by level): one of an earlier call is written by now, or was refused.
      if (idOf.has(place.row) && made.has(place.row)) return { parentId: idOf.get(place.row)! };
      const before = done.get(sourceClaimSk(format, place.row.sourceId));
      if (before) return { parentId: before.taskId };
      return { problem: `its parent '${place.row.title}' was not imported; imported at the top level` };
    };
    const items: CreateItem[] = group.map((p, j) => {
      const { project, ...fields } = p.fields;
      const parent = parentOf(p);
      if (parent.problem) p.problems.push(parent.problem);
      // A parent made in this same call, as the rules see it before it is stored: its own parent with it.
      const fresh = new Map<string, Task>();
      for (let at: Planned | undefined = parent.after !== undefined ? group[parent.after] : undefined; at; ) {
        const up = parentOf(at);
        fresh.set(idOf.get(at.row)!, {
          taskId: idOf.get(at.row)!,
          status: 'open',
          labels: [],
          version: 1,
          ...(up.parentId ? { parentId: up.parentId } : {}),
        } as unknown as Task);
        at = up.after !== undefined ? group[up.after] : undefined;
      }
      return {
        fields: {
          ...fields,
          taskId: idOf.get(p.row)!,
          ...(project ? { projectId: projects.get(project.toLowerCase())!.projectId } : {}),
          ...(parent.parentId ? { parentId: parent.parentId } : {}),
        },
        ...(parent.after !== undefined ? { after: [parent.after], plan: { fresh } } : {}),
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
      for (const problem of p.problems) out.stdout(printable(`line ${p.row.line} (${name}): ${problem}`));
      for (const body of p.row.comments) await addComment(ctx, o.written.task, body.slice(0, 10_000));
    }
    if (first) out.stdout(`${first} … ${last}: undo with change_undo ${callId}`);
  }
  out.stderr(
    `Imported ${created} task(s) from ${run.file} (${format})${refused ? `, ${refused} refused` : ''}; ${run.rows.length - fresh.length} imported before, ${run.skipped.length} row(s) skipped.`,
  );
};
