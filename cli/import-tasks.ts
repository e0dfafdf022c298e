import { ToolRefusal } from '../lambda/errors.js';
import { batchGetConsistent } from '../lambda/platform/dynamodb.js';
import { wsPk } from '../lambda/platform/item-keys.js';
import type { WriteOp } from '../lambda/platform/transact.js';
import { type Member, workspaceKeyOf } from '../lambda/vocabulary.js';
import { doorSource } from '../lambda/workspace/activity/records.js';
import { addComment } from '../lambda/workspace/comments/comment-writer.js';
import { OPERATOR } from '../lambda/workspace/membership/rules.js';
import { bulkItemId, newActivityId } from '../lambda/workspace/model/activity.js';
import type { Caller } from '../lambda/workspace/model/caller.js';
import { readDay } from '../lambda/workspace/model/date-words.js';
import { invalid } from '../lambda/workspace/model/refusals.js';
import { type RepeatRead, readRepeat } from '../lambda/workspace/model/repeat-rules.js';
import { taskNameOf } from '../lambda/workspace/model/task-refs.js';
import type { Project } from '../lambda/workspace/model/types.js';
import { createProject } from '../lambda/workspace/projects/project-writer.js';
import { createWorkspaceStores } from '../lambda/workspace/store/create-stores.js';
import type { WriteContext } from '../lambda/workspace/store/stores.js';
import type { NewTask } from '../lambda/workspace/tasks/planner.js';
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
const claimSk = (format: Format, sourceId: string) => `IMPORT#${format}#${sourceId}`;

/** The rows a run before this one created already: claim → the task's key. */
const claimed = async (target: Target, workspaceId: string, sks: readonly string[]): Promise<Map<string, string>> => {
  const items = await batchGetConsistent(
    target.db,
    target.table,
    sks.map((sk) => ({ pk: wsPk(workspaceId), sk })),
  );
  return new Map(items.map((item) => [String(item.sk), String(item.key ?? item.taskId)]));
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
    f.completed ? `done ${f.completed.at}` : undefined,
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
  const done = await claimed(
    target,
    workspaceId,
    run.rows.map((r) => claimSk(format, r.sourceId)),
  );
  const fresh = run.rows.filter((r) => {
    const key = done.get(claimSk(format, r.sourceId));
    if (key) out.stdout(`line ${r.line}: imported before as ${key}; not again`);
    return !key;
  });
  const planned = await Promise.all(fresh.map((r) => planRow(r, members, caller, now)));
  const projects = new Map(
    (await stores.projects.all(workspaceId)).filter((p: Project) => p.status === 'active').map((p) => [p.name.toLowerCase(), p]),
  );
  const wanted = [...new Set(planned.flatMap((p) => (p.fields.project ? [p.fields.project] : [])))];
  const missing = wanted.filter((name) => !projects.has(name.toLowerCase()));

  if (run.dryRun) {
    for (const name of missing) out.stdout(printable(`project '${name}': would be created`));
    for (const p of planned) {
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
  for (let i = 0; i < planned.length; i += PER_CALL) {
    const group = planned.slice(i, i + PER_CALL);
    const callId = newActivityId(now);
    const items: CreateItem[] = group.map((p, j) => {
      const { project, ...fields } = p.fields;
      return {
        fields: { ...fields, ...(project ? { projectId: projects.get(project.toLowerCase())!.projectId } : {}) },
        recordId: bulkItemId(callId, j),
        also: (task): WriteOp[] => [
          {
            item: {
              Put: {
                TableName: target.table,
                Item: {
                  pk: wsPk(workspaceId),
                  sk: claimSk(format, p.row.sourceId),
                  taskId: task.taskId,
                  key: taskNameOf(caller.workspaceKey, task),
                  line: p.row.line,
                  importedAt: now.toISOString(),
                },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            refused: () => {
              throw invalid('file', `line ${p.row.line} was imported by another run meanwhile`);
            },
          },
        ],
      };
    });
    const outcomes = await createTasks(ctx, items);
    let first: string | undefined;
    let last: string | undefined;
    for (const [j, o] of outcomes.entries()) {
      const p = group[j]!;
      if (!o.ok || !('written' in o)) {
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
