import { type GrammarSyntaxError, parse, type QueryNode, type TermNode } from './query-grammar.js';
import { queryFieldUnknown, queryTermBad, queryTooLong, queryUnreadable } from './refusals.js';

/**
 * The query language's fields and what each takes, checked before anything is looked up: the
 * grammar (query.peggy) only splits a query into terms; this file knows the fields, their operators
 * and the shape of their values, and refuses the rest naming the position, the term and a way to
 * write it. What the names and dates mean is the planner's (surface/task-query.ts): it needs the
 * workspace and the member's day.
 */

export type Comparison = ':' | '>' | '>=' | '<' | '<=';

export const IS_VALUES = ['open', 'done', 'canceled', 'blocked', 'overdue', 'recurring', 'subtask'] as const;
export const HAS_VALUES = ['files', 'subtasks', 'labels', 'due', 'blockers', 'assignee', 'project', 'parent', 'repeat'] as const;
export const SORT_FIELDS = ['due', 'priority', 'created', 'updated', 'completed', 'title', 'key'] as const;
export type IsValue = (typeof IS_VALUES)[number];
export type HasValue = (typeof HAS_VALUES)[number];
export type SortField = (typeof SORT_FIELDS)[number];

export type DateField = 'due' | 'created' | 'updated' | 'completed';

/** One condition of a query, its value as written (names and dates are the planner's to read). */
export type Term = { readonly at: number; readonly text: string } & (
  | { readonly field: 'assignee' | 'project' | 'status' | 'label' | 'parent' | 'key'; readonly value: string }
  | { readonly field: 'is'; readonly value: IsValue }
  | { readonly field: 'has'; readonly value: HasValue; readonly absent: boolean }
  | { readonly field: 'priority'; readonly op: Comparison; readonly value: 1 | 2 | 3 | 4 }
  | { readonly field: DateField; readonly op: Comparison; readonly value: string }
  | { readonly field: 'words'; readonly value: string }
  /** A project's custom field (model/custom-fields.ts), by its name as written. */
  | { readonly field: 'custom'; readonly name: string; readonly op: Comparison; readonly value: string }
);

export type Condition =
  | { readonly kind: 'and' | 'or'; readonly items: readonly Condition[] }
  | { readonly kind: 'not'; readonly item: Condition }
  | { readonly kind: 'term'; readonly term: Term };

export interface Sort {
  /** A built-in order, or `field`: a custom field's values (`sort:"story points"-desc`). */
  readonly by: SortField | 'field';
  readonly desc: boolean;
  /** The custom field sorted by, when `by` is `field`. */
  readonly field?: string;
}

export interface CheckedQuery {
  /** Absent for a query of only a sort (or nothing): every task of the default phase. */
  readonly root?: Condition;
  readonly sort?: Sort;
  /**
   * Whether any term speaks of the phase (status, is:open/done/canceled, completed): a query that
   * does not reads open tasks only, as every list of tasks does by default.
   */
  readonly namesPhase: boolean;
}

export const MAX_QUERY_TERMS = 20;
/** The longest value of a term (a name, a key, a date in words), and of a label (as labels are bounded). */
export const MAX_VALUE_LENGTH = 100;
export const MAX_LABEL_LENGTH = 40;
export const MAX_QUERY_LENGTH = 1_000;

/** Every field, with a term that shows how it is written (the refusals list them). */
export const QUERY_FIELDS: Readonly<Record<string, string>> = {
  assignee: 'assignee:me',
  no: 'no:assignee',
  project: 'project:"Website relaunch"',
  status: 'status:"In review"',
  is: 'is:overdue',
  label: 'label:legal',
  priority: 'priority<=2',
  due: 'due<friday',
  created: 'created>-7d',
  updated: 'updated>=-7d',
  completed: 'completed:yesterday',
  parent: 'parent:DEMO-12',
  key: 'key:DEMO-3',
  has: 'has:files',
  sort: 'sort:due',
};

const EQUALS_ONLY = new Set(['assignee', 'no', 'project', 'status', 'is', 'label', 'parent', 'key', 'has', 'sort']);
const DATE_FIELDS = new Set<string>(['due', 'created', 'updated', 'completed']);
const PRIORITY_WORD = /^p([1-4])$/i;

/** The whitespace-delimited part of the query at `at`: what a refusal quotes. */
const partAt = (query: string, at: number): string => {
  const from = Math.max(0, query.lastIndexOf(' ', at - 1) + 1);
  const end = query.indexOf(' ', at);
  return query.slice(from, end === -1 ? undefined : end) || query.slice(Math.max(0, at - 10), at + 10);
};

/** A parse failure in words a person acts on: what is unclosed, or what could not be read where. */
const unreadable = (query: string, e: GrammarSyntaxError): Error => {
  const quotes = [...query.matchAll(/"/g)].map((m) => m.index);
  if (quotes.length % 2 === 1) {
    const at = quotes.at(-1)!;
    return queryUnreadable(at, partAt(query, at), 'opens a quote that is never closed', `${partAt(query, at)}"`);
  }
  let depth = 0;
  const open: number[] = [];
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (c === '"') i = query.indexOf('"', i + 1);
    else if (c === '(') {
      open.push(i);
      depth++;
    } else if (c === ')') {
      if (!depth)
        return queryUnreadable(
          i,
          partAt(query, i),
          "closes a parenthesis that was never opened; remove the ')'",
          '(due:today OR is:overdue) p1',
        );
      open.pop();
      depth--;
    }
  }
  if (open.length) {
    const at = open.at(-1)!;
    return queryUnreadable(at, partAt(query, at), "opens a parenthesis that is never closed; add the ')'", '(due:today OR is:overdue) p1');
  }
  const at = e.location.start.offset;
  const found = e.found === null ? 'the query ends' : `'${e.found}'`;
  return queryUnreadable(
    at,
    partAt(query, at) || query,
    `cannot be read here (${found} where a term was expected)`,
    'assignee:me -status:done due<friday',
  );
};

/** The names of the workspace's custom fields a query may use (any project's), or `any`: a check that only reads the query (a saved view's writer). */
export type CustomFieldNames = readonly string[] | 'any';

const customNamed = (custom: CustomFieldNames, name: string): string | undefined => {
  const folded = name.trim().toLocaleLowerCase('en');
  if (custom === 'any') return name.trim();
  return custom.find((c) => c.trim().toLocaleLowerCase('en') === folded);
};

const checkTerm = (node: TermNode, custom: CustomFieldNames): Term | Sort => {
  const field = node.field.toLowerCase();
  const op: Comparison = node.op === '=' ? ':' : node.op;
  const value = node.value.trim();
  const base = { at: node.at, text: node.text };
  if (!(field in QUERY_FIELDS)) {
    // Not a field of every task: a custom field of a project, or nothing here.
    const name = customNamed(custom, node.field);
    if (!name) throw queryFieldUnknown(node.at, node.text, node.field, [...Object.keys(QUERY_FIELDS), ...(custom === 'any' ? [] : custom)]);
    if (!value) throw queryTermBad(node.at, node.text, `gives ${node.field} no value`, `"${name}":value`);
    if ([...value].length > MAX_VALUE_LENGTH)
      throw queryTermBad(node.at, node.text.slice(0, 40), `has a value longer than ${MAX_VALUE_LENGTH} characters`, `"${name}":value`);
    return { ...base, field: 'custom', name, op, value };
  }
  const example = QUERY_FIELDS[field]!;
  if (op !== ':' && EQUALS_ONLY.has(field)) throw queryTermBad(node.at, node.text, `${field} takes ':' only (no ${node.op})`, example);
  if (!value) throw queryTermBad(node.at, node.text, `gives ${field} no value`, example);
  // As the arguments are bounded: a label as a label argument is, anything else as a name or key is.
  const most = field === 'label' ? MAX_LABEL_LENGTH : MAX_VALUE_LENGTH;
  if ([...value].length > most) throw queryTermBad(node.at, node.text.slice(0, 40), `has a value longer than ${most} characters`, example);
  switch (field) {
    case 'is': {
      const v = value.toLowerCase();
      if (!(IS_VALUES as readonly string[]).includes(v))
        throw queryTermBad(node.at, node.text, `is one of ${IS_VALUES.join(', ')}`, example);
      return { ...base, field: 'is', value: v as IsValue };
    }
    case 'has':
    case 'no': {
      const v = value.toLowerCase().replace(/s$/, '') === 'file' ? 'files' : value.toLowerCase();
      const known = (HAS_VALUES as readonly string[]).includes(v) ? v : (HAS_VALUES as readonly string[]).find((h) => h === `${v}s`);
      if (!known) throw queryTermBad(node.at, node.text, `${field} is followed by one of ${HAS_VALUES.join(', ')}`, example);
      return { ...base, field: 'has', value: known as HasValue, absent: field === 'no' };
    }
    case 'priority': {
      const n = Number(/^p?([1-4])$/i.exec(value)?.[1]);
      if (!n) throw queryTermBad(node.at, node.text, 'priority is 1 (most urgent) to 4, or P1 to P4', example);
      return { ...base, field: 'priority', op, value: n as 1 | 2 | 3 | 4 };
    }
    case 'sort': {
      const [, by, dir] = /^(.+?)(?:-(asc|desc))?$/i.exec(value) ?? [];
      const f = by?.toLowerCase();
      if (f && (SORT_FIELDS as readonly string[]).includes(f)) return { by: f as SortField, desc: dir?.toLowerCase() === 'desc' };
      const name = by ? customNamed(custom, by) : undefined;
      if (!name)
        throw queryTermBad(
          node.at,
          node.text,
          `sorts by one of ${[...SORT_FIELDS, ...(custom === 'any' ? [] : custom.map((c) => `"${c}"`))].join(', ')}, optionally -desc`,
          'sort:updated-desc',
        );
      return { by: 'field', field: name, desc: dir?.toLowerCase() === 'desc' };
    }
    default:
      if (DATE_FIELDS.has(field)) return { ...base, field: field as DateField, op, value };
      return { ...base, field: field as 'assignee', value };
  }
};

/**
 * Reads a query: its conditions, its sort, and whether it names the phase. Refused, naming the
 * position and the part, when it cannot be read, names an unknown field or value, sorts twice or
 * inside a condition, or has more than MAX_QUERY_TERMS terms.
 */
export const checkQuery = (query: string, custom: CustomFieldNames = []): CheckedQuery => {
  let tree: QueryNode;
  try {
    tree = parse(query);
  } catch (e) {
    if (e instanceof Error && 'location' in e) throw unreadable(query, e as GrammarSyntaxError);
    throw e;
  }
  let terms = 0;
  let sort: Sort | undefined;
  let namesPhase = false;
  const walk = (node: QueryNode, top: boolean): Condition | undefined => {
    switch (node.type) {
      case 'and':
      case 'or': {
        const items = node.items.map((n) => walk(n, top && node.type === 'and')).filter((c): c is Condition => !!c);
        if (!items.length) return undefined;
        return items.length === 1 ? items[0] : { kind: node.type, items };
      }
      case 'not': {
        const item = walk(node.item, false);
        if (!item) throw queryTermBad(node.at, node.text, 'negates a sort, which is not a condition', 'sort:due-desc');
        return { kind: 'not', item };
      }
      case 'word': {
        if (++terms > MAX_QUERY_TERMS) throw queryTooLong(node.at, MAX_QUERY_TERMS);
        const p = node.quoted ? undefined : PRIORITY_WORD.exec(node.value);
        if (p) return { kind: 'term', term: { at: node.at, text: node.text, field: 'priority', op: ':', value: Number(p[1]) as 1 } };
        return { kind: 'term', term: { at: node.at, text: node.text, field: 'words', value: node.value } };
      }
      case 'term': {
        if (++terms > MAX_QUERY_TERMS) throw queryTooLong(node.at, MAX_QUERY_TERMS);
        const checked = checkTerm(node, custom);
        if ('by' in checked) {
          if (!top)
            throw queryTermBad(
              node.at,
              node.text,
              'sorts the whole query, so it stands on its own, not inside OR, - or ()',
              'is:open sort:due',
            );
          if (sort) throw queryTermBad(node.at, node.text, 'is a second sort; give one', 'sort:due');
          sort = checked;
          return undefined;
        }
        if (
          checked.field === 'status' ||
          checked.field === 'completed' ||
          (checked.field === 'is' && ['open', 'done', 'canceled'].includes(checked.value))
        )
          namesPhase = true;
        return { kind: 'term', term: checked };
      }
    }
  };
  const root = walk(tree, true);
  return { ...(root ? { root } : {}), ...(sort ? { sort } : {}), namesPhase };
};

/** The conditions that every match must meet: the query's own terms when it is a plain AND of them. */
export const conjunctsOf = (c: Condition | undefined): readonly Condition[] =>
  !c ? [] : c.kind === 'and' ? c.items.flatMap(conjunctsOf) : [c];

/** Every term of a condition, wherever it stands. */
export const termsOf = (c: Condition | undefined): Term[] =>
  !c ? [] : c.kind === 'term' ? [c.term] : c.kind === 'not' ? termsOf(c.item) : c.items.flatMap(termsOf);
