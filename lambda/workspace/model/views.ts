import { foldedName } from './statuses.js';

/**
 * A saved view: a query with a name, a sort and a grouping, the member's own or shared with the
 * workspace (docs/workspace.md, "Views"). Its name is unique among the views a member sees (the
 * shared ones and their own), whatever its case or spacing.
 */

export const VIEW_GROUPS = ['list', 'status', 'assignee', 'due'] as const;
export type ViewGroup = (typeof VIEW_GROUPS)[number];

export interface View {
  readonly workspaceId: string;
  /** `view_` and 16 letters and digits: stable across renames. */
  readonly viewId: string;
  readonly name: string;
  readonly query: string;
  /** A sort as the query language writes it (`due`, `updated-desc`), when the view has its own. */
  readonly sort?: string;
  readonly group: ViewGroup;
  readonly shared: boolean;
  readonly ownerId: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly version: number;
}

/** How many views one member keeps, and the workspace shares: views_list reads them all, so they are few. */
export const MAX_VIEWS = 50;

/** A view's name as its key holds it: "My week", "my  WEEK" and "my-week" are one name. */
export const viewNameKey = (name: string): string => foldedName(name);

export const VIEW_ID_PATTERN = /^view_[0-9a-v]{16}$/;

/**
 * The query a view runs: its own and its sort. A query with OR is grouped first, so the sort stands
 * beside the whole of it (`(is:overdue OR due:today) sort:priority`).
 */
export const queryOfView = (v: Pick<View, 'query' | 'sort'>): string => {
  if (!v.sort) return v.query;
  const grouped = /(^|[\s)])OR([\s(]|$)/.test(v.query) ? `(${v.query})` : v.query;
  return `${grouped} sort:${v.sort}`.trim();
};

const ALPHABET = '0123456789abcdefghijklmnopqrstuv';
/** A new view's id. */
export const newViewId = (): string => {
  let id = 'view_';
  for (const b of crypto.getRandomValues(new Uint8Array(16))) id += ALPHABET[b % 32];
  return id;
};
