import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import type { Priority } from '../lambda/workspace/model/types.js';

/**
 * The CSV exports of four task tools, each read by its documented columns into one shape: what a
 * doers task can take from a row, and what it cannot (said per row, never dropped in silence).
 *
 * - Todoist (its import/export template): TYPE (task, section, note), CONTENT (the title, with
 *   `@label` words), DESCRIPTION, PRIORITY (1 = p1, the highest; empty is p1, as Todoist reads it),
 *   INDENT, AUTHOR, RESPONSIBLE ("Name (id)"), DATE (Todoist's own words: "tomorrow", "every monday"),
 *   DATE_LANG, TIMEZONE. A note row is the task above's comment; sections are not kept.
 * - Asana (project export): Task ID, Created At, Completed At, Name, Section/Column, Assignee,
 *   Assignee Email, Start Date, Due Date, Tags, Notes, Projects, Parent task.
 * - Linear (issue export): ID, Team, Title, Description, Status, Priority (No priority, Urgent,
 *   High, Medium, Low), Project, Creator, Assignee, Labels, Created, Completed, Canceled, Due Date,
 *   Parent issue.
 * - Jira (issue navigator export, all fields): Summary, Issue key, Issue id, Issue Type, Status,
 *   Project name, Priority (Highest … Lowest), Resolution, Assignee, Reporter, Created, Resolved,
 *   Due date, Labels (one column per label), Description, Parent; dates as "24/Dec/26 10:15 AM".
 */

export const FORMATS = ['todoist', 'asana', 'linear', 'jira'] as const;
export type Format = (typeof FORMATS)[number];

/** One row as a task: its fields as far as they map, and the row's problems in words. */
export interface ImportRow {
  /** The CSV line the row ends on (1 is the header). */
  readonly line: number;
  /** The row's own id in its tool, or a hash of the row where it has none (Todoist): a re-run finds it. */
  readonly sourceId: string;
  readonly title: string;
  readonly notes?: string;
  readonly priority: Priority;
  /** YYYY-MM-DD, or words to be read in the workspace's zone (Todoist's DATE). */
  readonly due?: string;
  readonly labels: string[];
  readonly assignee?: { readonly email?: string; readonly name?: string };
  readonly project?: string;
  /** Completed (or canceled) in the tool: when (an ISO instant), if it says. */
  readonly done?: { readonly at?: string };
  /** The workflow status it maps to (a key of model/statuses.ts), where its tool names one that does. */
  readonly state?: string;
  /** The row's comments (Todoist note rows under it). */
  readonly comments: string[];
  /**
   * The row's parent as its tool names it: another row's id (Linear, Jira; Todoist's, by INDENT, is
   * the row above one level up), or its title (Asana). cli/import-tasks.ts finds it in the file or
   * in an earlier run's claims.
   */
  readonly parent?: { readonly id?: string; readonly title?: string; readonly label: string };
  /** Another id the tool gives the row (Jira's numeric Issue id, which its Parent id names). */
  readonly altId?: string;
  /** Fields the row has that doers does not keep yet, or that do not map: said in the report. */
  readonly problems: string[];
}

/** A row that is not a task at all (no title, a section): reported, not imported. */
export interface SkippedRow {
  readonly line: number;
  readonly reason: string;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** A date as the tools export it (ISO, ISO instant, Jira's 24/Dec/26 10:15 AM) as YYYY-MM-DD, or undefined. */
export const exportedDate = (value: string): string | undefined => {
  const v = value.trim();
  const iso = /^(\d{4})-(\d{2})-(\d{2})/.exec(v);
  if (iso) return `${iso[1]}-${iso[2]}-${iso[3]}`;
  const jira = /^(\d{1,2})\/([A-Za-z]{3})\/(\d{2}|\d{4})\b/.exec(v);
  if (jira) {
    const month = MONTHS.indexOf(jira[2]!.toLowerCase());
    if (month < 0) return undefined;
    const year = jira[3]!.length === 2 ? 2000 + Number(jira[3]) : Number(jira[3]);
    return `${year}-${pad(month + 1)}-${pad(Number(jira[1]))}`;
  }
  return undefined;
};

/** An instant as the tools export it, as ISO; undefined when it is none. */
const exportedInstant = (value: string): string | undefined => {
  const v = value.trim();
  if (!v) return undefined;
  const jira = /^(\d{1,2})\/([A-Za-z]{3})\/(\d{2}|\d{4}) (\d{1,2}):(\d{2}) ?(AM|PM)$/i.exec(v);
  if (jira) {
    const day = exportedDate(v)!;
    const hour = (Number(jira[4]) % 12) + (jira[6]!.toUpperCase() === 'PM' ? 12 : 0);
    return `${day}T${pad(hour)}:${jira[5]}:00.000Z`;
  }
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
};

/** A label as doers keeps it (one lower-case word); undefined when it cannot be one. */
const labelOf = (raw: string): string | undefined => {
  const l = raw.trim().toLowerCase().replace(/\s+/g, '-').replace(/,/g, '');
  return l && l.length <= 40 ? l : undefined;
};

const splitList = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

type Cells = Record<string, string | string[] | undefined>;
const cell = (row: Cells, name: string): string => {
  const v = row[name];
  return (Array.isArray(v) ? v.join(',') : (v ?? '')).trim();
};
const cells = (row: Cells, name: string): string[] => {
  const v = row[name];
  return (Array.isArray(v) ? v : [v ?? '']).map((s) => s.trim()).filter(Boolean);
};

/**
 * A row without an id of its own (Todoist's) is known by what it says, not where it stands: a file
 * with rows added or moved finds the ones imported before. `nth` tells identical rows apart.
 */
const rowHash = (format: Format, row: Cells, nth: number): string =>
  createHash('sha256')
    .update(`${format}\n${nth}\n${JSON.stringify(Object.entries(row).sort(([a], [b]) => (a < b ? -1 : 1)))}`)
    .digest('hex')
    .slice(0, 32);

/** The format a file's header names: each tool's export has columns the others do not. */
export const detectFormat = (header: readonly string[]): Format | undefined => {
  const has = (c: string) => header.includes(c);
  if (has('TYPE') && has('CONTENT')) return 'todoist';
  if (has('Task ID') && has('Name')) return 'asana';
  if (has('Summary') && (has('Issue key') || has('Issue id'))) return 'jira';
  if (has('ID') && has('Title') && has('Team')) return 'linear';
  return undefined;
};

const PRIORITY_WORDS: Record<string, Priority> = {
  urgent: 'P1',
  highest: 'P1',
  blocker: 'P1',
  critical: 'P1',
  high: 'P2',
  major: 'P2',
  medium: 'P3',
  normal: 'P3',
  low: 'P4',
  lowest: 'P4',
  minor: 'P4',
  trivial: 'P4',
  'no priority': 'P4',
};

const DONE_STATUSES = new Set(['done', 'closed', 'resolved', 'completed', 'complete']);

/**
 * Linear's and Jira's workflow states, by name, as doers' default statuses; a state not named here
 * keeps only whether it is done (Todo or Done), said on the row.
 */
const STATES: Readonly<Record<string, string>> = {
  backlog: 'backlog',
  todo: 'todo',
  'to do': 'todo',
  'selected for development': 'todo',
  open: 'todo',
  'in progress': 'in_progress',
  'in development': 'in_progress',
  'in review': 'in_review',
  'code review': 'in_review',
  review: 'in_review',
  done: 'done',
  closed: 'done',
  resolved: 'done',
  completed: 'done',
  complete: 'done',
  canceled: 'canceled',
  cancelled: 'canceled',
  duplicate: 'canceled',
  "won't do": 'canceled',
  "won't fix": 'canceled',
};

const stateOf = (status: string, problems: string[]): { state?: string } => {
  if (!status) return {};
  const state = STATES[status.trim().toLowerCase()];
  if (!state) problems.push(`Status '${status}' is no status here; imported by whether it is done`);
  return state ? { state } : {};
};

/** The rows of a CSV export; `format` as given, or from its header. */
export const readExport = (
  text: string,
  given?: Format,
): { format: Format; rows: ImportRow[]; skipped: SkippedRow[]; unread: string[] } | { error: string } => {
  let records: { record: Cells; info: { lines: number } }[];
  let header: string[] = [];
  try {
    records = parse(text, {
      bom: true,
      columns: (h: string[]) => {
        header = h.map((c) => c.trim());
        return header;
      },
      group_columns_by_name: true,
      skip_empty_lines: true,
      relax_column_count: true,
      info: true,
    }) as { record: Cells; info: { lines: number } }[];
  } catch (err) {
    return { error: `not CSV this reads (${(err as Error).message})` };
  }
  const format = given ?? detectFormat(header);
  if (!format)
    return {
      error: `its columns (${header.slice(0, 6).join(', ')}…) are none of Todoist's, Asana's, Linear's or Jira's export; give --format`,
    };
  const rows: ImportRow[] = [];
  const skipped: SkippedRow[] = [];
  const seenRows = new Map<string, number>();
  const nthOf = (row: Cells): number => {
    const key = JSON.stringify(row);
    const n = seenRows.get(key) ?? 0;
    seenRows.set(key, n + 1);
    return n;
  };
  const unread = header.filter((c) => c && !READ_COLUMNS[format].includes(c));
  // Todoist: the last task row at each INDENT, whose row one level down is a subtask of it.
  const atIndent: ImportRow[] = [];
  for (const { record: row, info } of records) {
    // The line the row ends on, as csv-parse counts it (a quoted cell may hold line breaks).
    const line = info.lines;
    const problems: string[] = [];
    const add = (r: Omit<ImportRow, 'line' | 'problems' | 'comments'> & { comments?: string[] }) =>
      rows.push({ comments: [], ...r, line, problems });
    switch (format) {
      case 'todoist': {
        const type = cell(row, 'TYPE');
        if (type === 'note') {
          const above = rows.at(-1);
          if (above) above.comments.push(cell(row, 'CONTENT'));
          else skipped.push({ line, reason: 'a note with no task above it' });
          continue;
        }
        if (type === 'section' || type === 'meta' || type === '') {
          if (type === 'section')
            skipped.push({ line, reason: `section '${cell(row, 'CONTENT')}': doers has no sections (its tasks are imported)` });
          continue;
        }
        const content = cell(row, 'CONTENT');
        const labels: string[] = [];
        const title = content
          .replace(/(^|\s)@([^\s@]+)/g, (_m, space: string, l: string) => {
            const label = labelOf(l);
            if (label) labels.push(label);
            else problems.push(`label @${l} is not one word of at most 40 characters; left out`);
            return space;
          })
          .replace(/\s+/g, ' ')
          .trim();
        if (!title) {
          skipped.push({ line, reason: 'a task with no CONTENT' });
          continue;
        }
        const p = cell(row, 'PRIORITY');
        const priority = (p === '' ? 'P1' : /^[1-4]$/.test(p) ? `P${p}` : undefined) as Priority | undefined;
        if (!priority) problems.push(`PRIORITY '${p}' is not 1-4; P4 given`);
        const indent = Math.max(1, Math.trunc(Number(cell(row, 'INDENT')) || 1));
        const above = indent > 1 ? atIndent[indent - 2] : undefined;
        if (indent > 1 && !above) problems.push(`INDENT ${indent}: no task above it one level up; imported at the top level`);
        const responsible = cell(row, 'RESPONSIBLE').replace(/\s*\(\d+\)\s*$/, '');
        const date = cell(row, 'DATE');
        add({
          ...(above ? { parent: { id: above.sourceId, label: `the task above ('${above.title}')` } } : {}),
          sourceId: rowHash(format, row, nthOf(row)),
          title,
          ...(cell(row, 'DESCRIPTION') ? { notes: cell(row, 'DESCRIPTION') } : {}),
          priority: priority ?? 'P4',
          ...(date ? { due: date } : {}),
          labels,
          ...(responsible ? { assignee: { name: responsible } } : {}),
        });
        atIndent.length = indent;
        atIndent[indent - 1] = rows.at(-1)!;
        continue;
      }
      case 'asana': {
        const title = cell(row, 'Name');
        if (!title) {
          skipped.push({ line, reason: 'a task with no Name' });
          continue;
        }
        const due = cell(row, 'Due Date');
        const completed = cell(row, 'Completed At');
        add({
          sourceId: cell(row, 'Task ID') || rowHash(format, row, nthOf(row)),
          title,
          ...(cell(row, 'Notes') ? { notes: cell(row, 'Notes') } : {}),
          priority: 'P4',
          ...(due ? { due } : {}),
          labels: labelsOf(splitList(cell(row, 'Tags')), problems),
          ...(cell(row, 'Assignee Email') || cell(row, 'Assignee')
            ? { assignee: { ...(cell(row, 'Assignee Email') ? { email: cell(row, 'Assignee Email') } : {}), name: cell(row, 'Assignee') } }
            : {}),
          ...(splitList(cell(row, 'Projects'))[0] ? { project: splitList(cell(row, 'Projects'))[0]! } : {}),
          ...(completed ? { done: doneAt(completed, 'Completed At', problems) } : {}),
          ...(cell(row, 'Parent task')
            ? { parent: { title: cell(row, 'Parent task'), label: `Parent task '${cell(row, 'Parent task')}'` } }
            : {}),
        });
        continue;
      }
      case 'linear': {
        const title = cell(row, 'Title');
        if (!title) {
          skipped.push({ line, reason: 'an issue with no Title' });
          continue;
        }
        const status = cell(row, 'Status');
        const completed = cell(row, 'Completed') || cell(row, 'Canceled');
        add({
          sourceId: cell(row, 'ID') || rowHash(format, row, nthOf(row)),
          title,
          ...(cell(row, 'Description') ? { notes: cell(row, 'Description') } : {}),
          priority: priorityWord(cell(row, 'Priority'), 'Priority', problems),
          ...(cell(row, 'Due Date') ? { due: cell(row, 'Due Date') } : {}),
          labels: labelsOf(splitList(cell(row, 'Labels')), problems),
          ...(cell(row, 'Assignee') ? { assignee: personOf(cell(row, 'Assignee')) } : {}),
          ...(cell(row, 'Project') ? { project: cell(row, 'Project') } : {}),
          ...(completed || DONE_STATUSES.has(status.toLowerCase())
            ? { done: completed ? doneAt(completed, 'Completed', problems) : {} }
            : {}),
          ...(cell(row, 'Canceled') ? { state: 'canceled' } : stateOf(status, problems)),
          ...(cell(row, 'Parent issue')
            ? { parent: { id: cell(row, 'Parent issue'), label: `Parent issue ${cell(row, 'Parent issue')}` } }
            : {}),
        });
        continue;
      }
      case 'jira': {
        const title = cell(row, 'Summary');
        if (!title) {
          skipped.push({ line, reason: 'an issue with no Summary' });
          continue;
        }
        const status = cell(row, 'Status');
        const resolved = cell(row, 'Resolved');
        add({
          sourceId: cell(row, 'Issue key') || cell(row, 'Issue id') || rowHash(format, row, nthOf(row)),
          title,
          ...(cell(row, 'Description') ? { notes: cell(row, 'Description') } : {}),
          priority: priorityWord(cell(row, 'Priority'), 'Priority', problems),
          ...(cell(row, 'Due date') ? { due: cell(row, 'Due date') } : {}),
          labels: labelsOf(cells(row, 'Labels'), problems),
          ...(cell(row, 'Assignee') ? { assignee: personOf(cell(row, 'Assignee')) } : {}),
          ...(cell(row, 'Project name') ? { project: cell(row, 'Project name') } : {}),
          ...(DONE_STATUSES.has(status.toLowerCase()) || resolved ? { done: resolved ? doneAt(resolved, 'Resolved', problems) : {} } : {}),
          ...stateOf(status, problems),
          ...(cell(row, 'Issue key') && cell(row, 'Issue id') ? { altId: cell(row, 'Issue id') } : {}),
          ...(cell(row, 'Parent') || cell(row, 'Parent id')
            ? {
                parent: {
                  id: cell(row, 'Parent') || cell(row, 'Parent id'),
                  label: `Parent ${cell(row, 'Parent') || cell(row, 'Parent id')}`,
                },
              }
            : {}),
        });
        continue;
      }
    }
  }
  // One id twice (an export joined with itself, a hand edit): the first row is imported, the others said.
  const firstLine = new Map<string, number>();
  const unique = rows.filter((r) => {
    const first = firstLine.get(r.sourceId);
    if (first === undefined) {
      firstLine.set(r.sourceId, r.line);
      return true;
    }
    skipped.push({ line: r.line, reason: `the same id as line ${first}; imported once` });
    return false;
  });
  return { format, rows: unique, skipped, unread: [...new Set(unread)] };
};

/** The columns each format's reading uses; the others are named in the report as not imported. */
const READ_COLUMNS: Record<Format, readonly string[]> = {
  todoist: ['TYPE', 'CONTENT', 'DESCRIPTION', 'PRIORITY', 'INDENT', 'RESPONSIBLE', 'DATE', 'DATE_LANG'],
  asana: ['Task ID', 'Completed At', 'Name', 'Assignee', 'Assignee Email', 'Due Date', 'Tags', 'Notes', 'Projects', 'Parent task'],
  linear: [
    'ID',
    'Title',
    'Description',
    'Status',
    'Priority',
    'Project',
    'Assignee',
    'Labels',
    'Completed',
    'Canceled',
    'Due Date',
    'Parent issue',
  ],
  jira: [
    'Summary',
    'Issue key',
    'Issue id',
    'Status',
    'Project name',
    'Priority',
    'Assignee',
    'Resolved',
    'Due date',
    'Labels',
    'Description',
    'Parent',
    'Parent id',
  ],
};

const personOf = (v: string): { email?: string; name?: string } => (v.includes('@') ? { email: v } : { name: v });

const labelsOf = (raw: readonly string[], problems: string[]): string[] => {
  const out: string[] = [];
  for (const r of raw) {
    const l = labelOf(r);
    if (!l) problems.push(`label '${r}' is longer than 40 characters; left out`);
    else if (out.length >= 10) problems.push(`label '${r}': a task keeps 10 labels; left out`);
    else if (!out.includes(l)) out.push(l);
  }
  return out;
};

const priorityWord = (v: string, column: string, problems: string[]): Priority => {
  if (!v) return 'P4';
  const p = PRIORITY_WORDS[v.toLowerCase()];
  if (!p) problems.push(`${column} '${v}' is not one this reads; P4 given`);
  return p ?? 'P4';
};

const doneAt = (v: string, column: string, problems: string[]): { at?: string } => {
  const at = exportedInstant(v);
  if (!at) problems.push(`${column} '${v}' is not a time this reads; done now`);
  return at ? { at } : {};
};
