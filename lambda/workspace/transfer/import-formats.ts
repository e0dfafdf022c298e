import { createHash } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import type { Priority } from '../model/types.js';
import { type FieldCell, type FieldSpec, type FileField, fieldWords, fileFields } from './import-fields.js';
import { jiraToMarkdown } from './jira-markup.js';

/**
 * The CSV exports of four task tools, each read by its documented columns into one shape: what a
 * doers task can take from a row, and what it cannot (said per row, never dropped in silence).
 * `COLUMNS` below says what each column becomes; `--dry-run` prints it for the file's header. The
 * columns that become custom fields of the project (`fieldSpecsOf`) are typed by the file's values
 * in lambda/workspace/transfer/import-fields.ts, and each row carries its values for them by field name.
 *
 * - Todoist (its import/export template): TYPE (task, section, note), CONTENT (the title, with
 *   `@label` words; `* ` first: an uncompletable item), DESCRIPTION, PRIORITY (1 = p1, the highest;
 *   empty is p1, as Todoist reads it), INDENT, AUTHOR, RESPONSIBLE ("Name (id)"), DATE (Todoist's
 *   own words: "tomorrow", "every monday"), DATE_LANG, TIMEZONE, DURATION, DURATION_UNIT. A note row
 *   is the task above's comment (a file on it: JSON naming `file_name` and `file_url`); sections are
 *   not kept. The file names the project (Todoist exports one project a file).
 * - Asana (project export): Task ID, Created At, Completed At, Last Modified, Name, Section/Column,
 *   Assignee, Assignee Email, Start Date, Due Date, Tags, Notes, Projects, Parent task, Blocked By
 *   (Dependencies), Blocking (Dependencies), then one column per custom field, by its name.
 * - Linear (issue export): ID, Team, Title, Description, Status, Estimate, Priority (No priority,
 *   Urgent, High, Medium, Low), Project ID, Project, Creator, Assignee, Labels, Cycle Number, Cycle
 *   Name, Cycle Start, Cycle End, Created, Updated, Started, Triaged, Completed, Canceled, Archived,
 *   Due Date, Parent issue, Initiatives, Project Milestone ID, Project Milestone, SLA Status, and in
 *   its wider shape UUID, Time in status (minutes), Related to, Blocked by, Duplicate of. Text a
 *   spreadsheet would read as a formula is written with a `'` before it, which is taken off.
 * - Jira (issue navigator export, all fields): Summary, Issue key, Issue id, Issue Type, Status,
 *   Project name, Priority (Highest … Lowest), Resolution, Assignee, Reporter, Created, Resolved,
 *   Due date, Labels, Sprint, Outward issue link (Blocks), Inward issue link (Blocks), Attachment and
 *   Comment (each one column per value, under the same header), Custom field (Story Points) and any
 *   other Custom field (X),
 *   Description (wiki markup), Parent; dates as "24/Dec/26 10:15 AM"; a comment as
 *   "date;author;text", an attachment as "date;author;name;url".
 */

export const FORMATS = ['todoist', 'asana', 'linear', 'jira'] as const;
export type Format = (typeof FORMATS)[number];
/** What rows may come from: another tool's CSV, or a doers export read row by row (lambda/workspace/transfer/doers-rows.ts). */
export const ROW_FORMATS = [...FORMATS, 'doers'] as const;
export type RowFormat = (typeof ROW_FORMATS)[number];

/** A person as an export names them: an e-mail, a display name, or both. */
export interface Person {
  readonly email?: string;
  readonly name?: string;
}

/** A comment of a row: its text as Markdown, and who wrote it as the export says. */
export interface ImportComment {
  readonly body: string;
  readonly author?: Person;
}

/** Another row a row names (its parent, a blocker): by its id in the tool, or (Asana) by its title. */
export interface RowRef {
  readonly id?: string;
  readonly title?: string;
  /** How the report names it: `Parent issue ENG-1`. */
  readonly label: string;
}

/**
 * A value kept as a labelled line of the task's notes: one doers has no field for (a Jira attachment,
 * Linear's Related to), or a custom field's value the project cannot take (lambda/workspace/transfer/import-fields.ts).
 */
export interface KeptValue {
  readonly field: string;
  readonly value: string;
}

/** One row as a task: its fields as far as they map, and the row's problems in words. */
export interface ImportRow {
  /** The CSV line the row ends on (1 is the header). */
  readonly line: number;
  /** The row's own id in its tool, or a hash of the row where it has none (Todoist): a re-run finds it. */
  readonly sourceId: string;
  readonly title: string;
  /** Markdown (Jira's wiki markup converted). */
  readonly notes?: string;
  readonly priority: Priority;
  /** YYYY-MM-DD, or words to be read in the workspace's zone (Todoist's DATE). */
  readonly due?: string;
  readonly labels: string[];
  readonly assignee?: Person;
  readonly project?: string;
  /** Completed (or canceled) in the tool: when (an ISO instant), if it says. */
  readonly done?: { readonly at?: string };
  /** The workflow status it maps to (a key of model/statuses.ts), where its tool names one that does. */
  readonly state?: string;
  /** Asana: its section, which becomes a status of the project's own (lambda/workspace/transfer/import-tasks.ts). */
  readonly section?: string;
  /** The row's comments (Todoist's note rows under it, Jira's Comment columns). */
  readonly comments: ImportComment[];
  /**
   * The row's parent as its tool names it: another row's id (Linear, Jira; Todoist's, by INDENT, is
   * the row above one level up), or its title (Asana). lambda/workspace/transfer/import-tasks.ts finds it in the file or
   * in an earlier run's claims.
   */
  readonly parent?: RowRef;
  /** The rows it waits on (blocked-by links), found like the parent. */
  readonly blockedBy: RowRef[];
  /** Values kept as lines of the notes (see KeptValue). */
  readonly kept: KeptValue[];
  /** Its values for the file's custom fields (lambda/workspace/transfer/import-fields.ts), by field name. */
  readonly values: FieldCell[];
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

/** What one column of the file becomes: `--dry-run` lists every column so. */
export interface ColumnUse {
  readonly column: string;
  /** mapped: a doers field; field: a custom field of the project; kept: a line of the notes; ignored: not imported, and why. */
  readonly use: 'mapped' | 'field' | 'kept' | 'ignored';
  readonly becomes: string;
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

export const stateOf = (status: string, problems: string[]): { state?: string } => {
  if (!status) return {};
  const state = STATES[status.trim().toLowerCase()];
  if (!state) problems.push(`Status '${status}' is no status here; imported by whether it is done`);
  return state ? { state } : {};
};

/**
 * What each column of each export becomes. A column not named here is ignored, said so, except
 * Asana's (every other column of its export is a custom field) and Jira's `Custom field (X)`: each
 * a custom field of the project (lambda/workspace/transfer/import-fields.ts; `fieldSpecsOf` below), typed by its values.
 * A field column's words are those of the field the file's values make (`readExport`).
 */
const MAPPED = (becomes: string) => ({ use: 'mapped' as const, becomes });
const FIELD = (becomes: string) => ({ use: 'field' as const, becomes });
const KEPT = (becomes: string) => ({ use: 'kept' as const, becomes });
const IGNORED = (why: string) => ({ use: 'ignored' as const, becomes: why });
type Use = Omit<ColumnUse, 'column'>;
const STAMPED = IGNORED('doers stamps its own times (the import is the task’s creation)');

export const COLUMNS: Readonly<Record<Format, Readonly<Record<string, Use>>>> = {
  todoist: {
    TYPE: MAPPED('task, or a note (a comment of the task above), or a section (skipped)'),
    CONTENT: MAPPED('title (@words become labels; "* " first: the label uncompletable); a note’s text, or its file as a link'),
    DESCRIPTION: MAPPED('notes'),
    PRIORITY: MAPPED('priority (1 = P1; empty: P1)'),
    INDENT: MAPPED('parent (the task above, one level up)'),
    AUTHOR: MAPPED('a note’s comment author (a member by name, else the operator)'),
    RESPONSIBLE: MAPPED('assignee (a member by name)'),
    DATE: MAPPED('due date, or a repeat rule ("every monday")'),
    DATE_LANG: MAPPED('read with DATE (English words)'),
    TIMEZONE: IGNORED('dates are read in the first owner’s time zone'),
    DURATION: IGNORED('doers has no duration'),
    DURATION_UNIT: IGNORED('doers has no duration'),
  },
  asana: {
    'Task ID': MAPPED('the row’s id (a re-run finds it; links and parents name it)'),
    'Created At': STAMPED,
    'Completed At': MAPPED('completed, at that time'),
    'Last Modified': STAMPED,
    Name: MAPPED('title'),
    'Section/Column': MAPPED('status: a status of the project’s own, named after the section'),
    Assignee: MAPPED('assignee (by name, when there is no e-mail)'),
    'Assignee Email': MAPPED('assignee (a member by e-mail)'),
    'Start Date': FIELD('custom field Start date (date)'),
    'Due Date': MAPPED('due date'),
    Tags: MAPPED('labels'),
    Notes: MAPPED('notes'),
    Projects: MAPPED('project (the first named; made when missing, with the sections as statuses)'),
    'Parent task': MAPPED('parent (by title)'),
    'Blocked By (Dependencies)': MAPPED('blocked-by links (by Task ID, else by title)'),
    'Blocking (Dependencies)': MAPPED('blocked-by links of the tasks it names'),
  },
  linear: {
    ID: MAPPED('the row’s id (a re-run finds it; links and parents name it)'),
    Team: MAPPED('project, when Project is empty'),
    Title: MAPPED('title'),
    Description: MAPPED('notes (Markdown already)'),
    Status: MAPPED('status of that name (In Progress, In Review, Backlog, Canceled, …)'),
    Estimate: FIELD('custom field Estimate (number)'),
    Priority: MAPPED('priority (Urgent P1, High P2, Medium P3, Low P4)'),
    'Project ID': IGNORED('Project names it'),
    Project: MAPPED('project (made when missing)'),
    Creator: IGNORED('the import’s tasks are made by the operator'),
    Assignee: MAPPED('assignee (a member by e-mail, else by name)'),
    Labels: MAPPED('labels'),
    'Cycle Number': FIELD('custom field Cycle (text: "name (number) start – end")'),
    'Cycle Name': FIELD('custom field Cycle (text: "name (number) start – end")'),
    'Cycle Start': FIELD('custom field Cycle (text: "name (number) start – end")'),
    'Cycle End': FIELD('custom field Cycle (text: "name (number) start – end")'),
    Created: STAMPED,
    Updated: STAMPED,
    Started: IGNORED('the status says it is started'),
    Triaged: IGNORED('doers has no triage'),
    Completed: MAPPED('completed, at that time'),
    Canceled: MAPPED('canceled, at that time'),
    Archived: IGNORED('doers keeps no archive apart'),
    'Due Date': MAPPED('due date'),
    'Parent issue': MAPPED('parent (by ID)'),
    Initiatives: IGNORED('doers has no initiatives'),
    'Project Milestone ID': IGNORED('Project Milestone names it'),
    'Project Milestone': FIELD('custom field Project milestone (typed by its values)'),
    'SLA Status': IGNORED('doers has no SLA'),
    Roadmaps: IGNORED('doers has no roadmaps'),
    UUID: IGNORED('ID names the issue'),
    'Time in status (minutes)': IGNORED('the history starts with the import'),
    'Related to': KEPT('a line of the notes: "Related to: …" (doers links only blocked-by)'),
    'Blocked by': MAPPED('blocked-by links (by ID)'),
    'Duplicate of': KEPT('a line of the notes: "Duplicate of: …"'),
  },
  jira: {
    Summary: MAPPED('title'),
    'Issue key': MAPPED('the row’s id (a re-run finds it; links and parents name it)'),
    'Issue id': MAPPED('the row’s second id (Parent id names it)'),
    'Issue Type': FIELD('custom field Type (select: the types seen)'),
    Status: MAPPED('status of that name (To Do, In Progress, Code Review, Done, Won’t Do, …)'),
    'Project name': MAPPED('project (made when missing)'),
    Priority: MAPPED('priority (Highest/Blocker P1 … Lowest P4)'),
    Resolution: IGNORED('Status and Resolved say whether and when it is done'),
    Assignee: MAPPED('assignee (a member by e-mail, else by name)'),
    Resolved: MAPPED('completed, at that time'),
    'Due date': MAPPED('due date'),
    'Due Date': MAPPED('due date'),
    Labels: MAPPED('labels'),
    Description: MAPPED('notes (wiki markup as Markdown)'),
    Parent: MAPPED('parent (by issue key)'),
    'Parent id': MAPPED('parent (by issue id)'),
    'Outward issue link (Blocks)': MAPPED('blocked-by links: the issues named wait on this one'),
    'Inward issue link (Blocks)': MAPPED('blocked-by links: this one waits on the issues named'),
    Comment: MAPPED('comments (wiki markup as Markdown; author a member by e-mail or name, else the operator)'),
    Attachment: KEPT('a line of the notes: a link to the file (and what the description shows of it)'),
    Sprint: FIELD('custom field Sprint (text: every sprint, in the columns’ order)'),
    'Custom field (Story Points)': FIELD('custom field Story points (number)'),
    'Custom field (Story point estimate)': FIELD('custom field Story points (number)'),
    Reporter: IGNORED('the import’s tasks are made by the operator'),
    Creator: IGNORED('the import’s tasks are made by the operator'),
    Created: STAMPED,
    Updated: STAMPED,
    'Last Viewed': STAMPED,
    'Project key': IGNORED('Project name names the project'),
  },
};

/** What a column of this format's file becomes. */
const useOf = (format: Format, column: string): Use => {
  const known = COLUMNS[format][column];
  if (known) return known;
  if (format === 'asana') return FIELD(`custom field ${column} (an Asana custom field; typed by its values)`);
  if (format === 'jira' && JIRA_CUSTOM.test(column)) return FIELD(`custom field ${JIRA_CUSTOM.exec(column)![1]} (typed by its values)`);
  if (format === 'jira' && /^(Outward|Inward) issue link \(/.test(column)) return IGNORED('doers links only blocked-by (Blocks)');
  return IGNORED(`not a field doers has`);
};

const JIRA_CUSTOM = /^Custom field \((.+)\)$/;

type Spec = FieldSpec & { readonly value?: (row: Cells) => string };

/** Linear's cycle as one value: "name (number) start – end". */
const linearCycle = (row: Cells): string =>
  [
    cell(row, 'Cycle Name') || (cell(row, 'Cycle Number') ? `Cycle ${cell(row, 'Cycle Number')}` : ''),
    cell(row, 'Cycle Name') && cell(row, 'Cycle Number') ? `(${cell(row, 'Cycle Number')})` : '',
    cell(row, 'Cycle Start') || cell(row, 'Cycle End')
      ? `${exportedDate(cell(row, 'Cycle Start')) ?? '?'} – ${exportedDate(cell(row, 'Cycle End')) ?? '?'}`
      : '',
  ]
    .filter(Boolean)
    .join(' ');

/**
 * The custom fields a file's columns feed, by the tool's meaning: Jira's Issue Type a select "Type",
 * its story points a number, its Sprint columns one text (every sprint an issue was in, in order: a
 * team's sprints outgrow the 50 options a multi-select holds, and text finds one by a part of it);
 * Linear's Estimate a number and its cycle a text; Asana's Start Date a date. Each other Jira `Custom
 * field (X)`, Linear's Project Milestone and each Asana custom column is a field of its name, typed
 * by its values (lambda/workspace/transfer/import-fields.ts). Two columns of one name feed one field.
 */
const fieldSpecsOf = (format: Format, header: readonly string[]): Spec[] => {
  const has = (c: string) => header.includes(c);
  const out: Spec[] = [];
  const add = (s: Spec) => {
    const at = out.findIndex((o) => o.name.toLowerCase() === s.name.toLowerCase());
    if (at < 0) out.push(s);
    else out[at] = { ...out[at]!, columns: [...out[at]!.columns, ...s.columns] };
  };
  const fixed = (name: string, columns: string[], type?: FieldSpec['type']) => {
    const present = columns.filter(has);
    if (present.length) add({ name, columns: present, ...(type ? { type } : {}) });
  };
  if (format === 'jira') {
    fixed('Type', ['Issue Type'], 'select');
    fixed('Story points', ['Custom field (Story Points)', 'Custom field (Story point estimate)'], 'number');
    fixed('Sprint', ['Sprint'], 'text');
    for (const c of header) {
      const name = JIRA_CUSTOM.exec(c)?.[1]?.trim();
      if (name && !COLUMNS.jira[c]) fixed(name, [c]);
    }
  }
  if (format === 'linear') {
    fixed('Estimate', ['Estimate'], 'number');
    const cycle = ['Cycle Name', 'Cycle Number', 'Cycle Start', 'Cycle End'].filter(has);
    if (cycle.length) add({ name: 'Cycle', columns: cycle, type: 'text', value: linearCycle });
    fixed('Project milestone', ['Project Milestone']);
  }
  if (format === 'asana') {
    fixed('Start date', ['Start Date'], 'date');
    for (const c of header) if (c && !COLUMNS.asana[c]) fixed(c, [c]);
  }
  return out;
};

/** Linear writes `'` before text a spreadsheet would read as a formula (=, +, -, @); it is not the text's. */
const unformula = (v: string): string => (/^'[=+\-@]/.test(v) ? v.slice(1) : v);

/** Jira's "date;author;rest" (a comment, an attachment), or undefined when the cell is not so. */
const jiraParts = (v: string, parts: number): string[] | undefined => {
  const out: string[] = [];
  let rest = v;
  for (let i = 0; i < parts - 1; i++) {
    const at = rest.indexOf(';');
    if (at < 0) return undefined;
    out.push(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  out.push(rest);
  return exportedDate(out[0]!) ? out : undefined;
};

/** A Todoist note's file: JSON (alone, or in `[[file …]]`) naming `file_name` and `file_url`, as a Markdown link. */
export const todoistFile = (content: string): string | undefined => {
  const json = /\{[\s\S]*"file_url"[\s\S]*\}/.exec(content)?.[0];
  if (!json) return undefined;
  try {
    const f = JSON.parse(json) as { file_name?: unknown; file_url?: unknown; file_type?: unknown };
    if (typeof f.file_url !== 'string') return undefined;
    const name = typeof f.file_name === 'string' && f.file_name ? f.file_name : 'file';
    const before = content
      .slice(0, content.indexOf(json))
      .replace(/\[\[file\s*$/, '')
      .trim();
    const link = `${typeof f.file_type === 'string' && f.file_type.startsWith('image/') ? '!' : ''}[${name.replace(/[[\]]/g, '')}](${encodeURI(f.file_url)})`;
    return before ? `${before}\n\n${link}` : link;
  } catch {
    return undefined;
  }
};

/** Todoist's "Name (id)": the name. */
const todoistPerson = (v: string): string => v.replace(/\s*\(\d+\)\s*$/, '');

/** The rows of a CSV export; `format` as given, or from its header. */
export const readExport = (
  text: string,
  given?: Format,
):
  | { format: Format; rows: ImportRow[]; skipped: SkippedRow[]; unread: string[]; columns: ColumnUse[]; fields: FileField[] }
  | { error: string; header: string[]; unknownFormat?: true } => {
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
    return { error: `not CSV this reads (${(err as Error).message})`, header };
  }
  const format = given ?? detectFormat(header);
  if (!format)
    return {
      error: `its columns (${header.slice(0, 6).join(', ')}…) are none of Todoist's, Asana's, Linear's or Jira's export`,
      header,
      unknownFormat: true,
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
  const columns = [...new Set(header.filter(Boolean))].map((column) => ({ column, ...useOf(format, column) }));
  const unread = columns.filter((c) => c.use === 'ignored').map((c) => c.column);
  const specs = fieldSpecsOf(format, header);
  // Jira's "Outward issue link (Blocks)": the issues named wait on this row; gathered, then given to them.
  const waitsOn = new Map<string, RowRef[]>();
  // Todoist: the last task row at each INDENT, whose row one level down is a subtask of it.
  const atIndent: ImportRow[] = [];
  for (const { record: raw, info } of records) {
    const row: Cells =
      format === 'linear'
        ? Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Array.isArray(v) ? v.map(unformula) : v && unformula(v)]))
        : raw;
    // The line the row ends on, as csv-parse counts it (a quoted cell may hold line breaks).
    const line = info.lines;
    const problems: string[] = [];
    const kept: KeptValue[] = [];
    const keep = (field: string, value: string) => {
      if (value) kept.push({ field, value });
    };
    const values = specs.flatMap((spec) => {
      const value = spec.value ? spec.value(row) : (spec.columns.map((c) => cells(row, c).join(', ')).find(Boolean) ?? '');
      return value ? [{ field: spec.name, value }] : [];
    });
    const add = (r: Omit<ImportRow, 'line' | 'problems' | 'comments' | 'kept' | 'blockedBy' | 'values'> & Partial<ImportRow>) =>
      rows.push({ comments: [], blockedBy: [], ...r, kept: [...kept, ...(r.kept ?? [])], values, line, problems });
    switch (format) {
      case 'todoist': {
        const type = cell(row, 'TYPE');
        if (type === 'note') {
          const above = rows.at(-1);
          const content = cell(row, 'CONTENT');
          const author = todoistPerson(cell(row, 'AUTHOR'));
          if (above) above.comments.push({ body: todoistFile(content) ?? content, ...(author ? { author: { name: author } } : {}) });
          else skipped.push({ line, reason: 'a note with no task above it' });
          continue;
        }
        if (type === 'section' || type === 'meta' || type === '') {
          if (type === 'section')
            skipped.push({ line, reason: `section '${cell(row, 'CONTENT')}': doers has no sections (its tasks are imported)` });
          continue;
        }
        let content = cell(row, 'CONTENT');
        const labels: string[] = [];
        // "* " first: an item that cannot be completed (a heading in the list).
        if (/^\*\s/.test(content)) {
          content = content.replace(/^\*\s+/, '');
          labels.push('uncompletable');
        }
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
        const responsible = todoistPerson(cell(row, 'RESPONSIBLE'));
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
        const section = cell(row, 'Section/Column');
        const byIdOrTitle = (v: string, label: string): RowRef => (/^\d+$/.test(v) ? { id: v, label } : { title: v, label });
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
          ...(section ? { section } : {}),
          ...(cell(row, 'Parent task')
            ? { parent: { title: cell(row, 'Parent task'), label: `Parent task '${cell(row, 'Parent task')}'` } }
            : {}),
          blockedBy: splitList(cell(row, 'Blocked By (Dependencies)')).map((v) => byIdOrTitle(v, `Blocked By '${v}'`)),
        });
        const self = cell(row, 'Task ID') || title;
        for (const v of splitList(cell(row, 'Blocking (Dependencies)')))
          waitsOn.set(v, [...(waitsOn.get(v) ?? []), byIdOrTitle(self, `Blocking of '${title}'`)]);
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
        keep('Related to', cell(row, 'Related to'));
        keep('Duplicate of', cell(row, 'Duplicate of'));
        const project = cell(row, 'Project') || cell(row, 'Team');
        add({
          sourceId: cell(row, 'ID') || rowHash(format, row, nthOf(row)),
          title,
          ...(cell(row, 'Description') ? { notes: cell(row, 'Description') } : {}),
          priority: priorityWord(cell(row, 'Priority'), 'Priority', problems),
          ...(cell(row, 'Due Date') ? { due: cell(row, 'Due Date') } : {}),
          labels: labelsOf(splitList(cell(row, 'Labels')), problems),
          ...(cell(row, 'Assignee') ? { assignee: personOf(cell(row, 'Assignee')) } : {}),
          ...(project ? { project } : {}),
          ...(completed || DONE_STATUSES.has(status.toLowerCase())
            ? { done: completed ? doneAt(completed, 'Completed', problems) : {} }
            : {}),
          ...(cell(row, 'Canceled') ? { state: 'canceled' } : stateOf(status, problems)),
          ...(cell(row, 'Parent issue')
            ? { parent: { id: cell(row, 'Parent issue'), label: `Parent issue ${cell(row, 'Parent issue')}` } }
            : {}),
          blockedBy: idsIn(cell(row, 'Blocked by')).map((id) => ({ id, label: `Blocked by ${id}` })),
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
        const key = cell(row, 'Issue key') || cell(row, 'Issue id');
        // Its files: what the description's !name! shows, and a line of the notes each.
        const files = new Map<string, string>();
        for (const a of cells(row, 'Attachment')) {
          const parts = jiraParts(a, 4);
          if (parts) files.set(parts[2]!, parts[3]!);
        }
        const description = cell(row, 'Description');
        for (const [name, url] of files) keep('Attachment', `[${name}](${url})`);
        const waitsFor = cells(row, 'Inward issue link (Blocks)').flatMap(idsIn);
        for (const other of cells(row, 'Outward issue link (Blocks)').flatMap(idsIn))
          if (key) waitsOn.set(other, [...(waitsOn.get(other) ?? []), { id: key, label: `Outward issue link (Blocks) of ${key}` }]);
        add({
          sourceId: key || rowHash(format, row, nthOf(row)),
          title,
          ...(description ? { notes: jiraToMarkdown(description, files) } : {}),
          priority: priorityWord(cell(row, 'Priority'), 'Priority', problems),
          ...(cell(row, 'Due date') || cell(row, 'Due Date') ? { due: cell(row, 'Due date') || cell(row, 'Due Date') } : {}),
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
          blockedBy: waitsFor.map((id) => ({ id, label: `Inward issue link (Blocks) ${id}` })),
          comments: cells(row, 'Comment').map((c) => {
            const parts = jiraParts(c, 3);
            const author = parts?.[1]?.trim();
            return {
              body: jiraToMarkdown(parts ? parts[2]! : c, files),
              ...(author ? { author: personOf(author) } : {}),
            };
          }),
        });
        continue;
      }
    }
  }
  // The other side of "X blocks Y" links (Jira's outward, Asana's Blocking): Y waits on X.
  if (waitsOn.size) {
    for (const r of rows) {
      const more = [...(waitsOn.get(r.sourceId) ?? []), ...(r.altId ? (waitsOn.get(r.altId) ?? []) : []), ...(waitsOn.get(r.title) ?? [])];
      for (const ref of more) if (!r.blockedBy.some((b) => sameRef(b, ref))) r.blockedBy.push(ref);
    }
  }
  for (const r of rows) {
    const once = r.blockedBy.filter((b, i) => r.blockedBy.findIndex((x) => sameRef(x, b)) === i);
    r.blockedBy.splice(0, r.blockedBy.length, ...once);
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
  // The fields the values make, and what their columns become so.
  const fields = fileFields(specs, unique);
  const described = columns.map((c) => {
    const spec = specs.find((s) => s.columns.includes(c.column));
    if (!spec) return c;
    const field = fields.find((f) => f.name === spec.name);
    return field
      ? { column: c.column, use: 'field' as const, becomes: `custom field ${fieldWords(field)}` }
      : { column: c.column, use: 'ignored' as const, becomes: 'empty in every row: no field' };
  });
  return { format, rows: unique, skipped, unread, columns: described, fields };
};

const sameRef = (a: RowRef, b: RowRef): boolean => (a.id ?? `title:${a.title}`) === (b.id ?? `title:${b.title}`);

/** Issue ids a cell names (`ENG-1, ENG-2`; Jira writes one a column). */
const idsIn = (v: string): string[] => v.split(/[\s,;]+/).filter(Boolean);

const personOf = (v: string): Person => (v.includes('@') ? { email: v } : { name: v });

export const labelsOf = (raw: readonly string[], problems: string[]): string[] => {
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

/** A row's notes as written: its own, then the values kept (`kept`: the row's, and field values no field took), one labelled line each. */
export const notesOf = (row: Pick<ImportRow, 'notes'> & { readonly kept: readonly KeptValue[] }, format: RowFormat): string | undefined => {
  if (!row.kept.length) return row.notes;
  const tool = { todoist: 'Todoist', asana: 'Asana', linear: 'Linear', jira: 'Jira', doers: 'doers' }[format];
  const block = [`Kept from ${tool}:`, ...row.kept.map((k) => `- ${k.field}: ${k.value.replace(/\s*\n\s*/g, ' ')}`)].join('\n');
  return row.notes ? `${row.notes}\n\n${block}` : block;
};
