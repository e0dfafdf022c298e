/** The parse of model/query.peggy (query-grammar.js is generated from it: npm run build:grammar). */

export interface QueryPart {
  /** Where it starts in the query, from 0. */
  readonly at: number;
  /** Its text as written. */
  readonly text: string;
}
export interface TermNode extends QueryPart {
  readonly type: 'term';
  readonly field: string;
  readonly op: ':' | '=' | '>' | '>=' | '<' | '<=';
  readonly value: string;
  readonly quoted: boolean;
}
export interface WordNode extends QueryPart {
  readonly type: 'word';
  readonly value: string;
  readonly quoted: boolean;
}
export interface NotNode extends QueryPart {
  readonly type: 'not';
  readonly item: QueryNode;
}
export interface ListNode extends QueryPart {
  readonly type: 'and' | 'or';
  readonly items: readonly QueryNode[];
}
export type QueryNode = TermNode | WordNode | NotNode | ListNode;

export interface GrammarSyntaxError extends Error {
  readonly expected: readonly { readonly type: string; readonly text?: string; readonly description?: string }[] | null;
  readonly found: string | null;
  readonly location: { readonly start: { readonly offset: number } };
}

export function parse(input: string): QueryNode;
// biome-ignore lint/suspicious/noShadowRestrictedNames: the generated module exports it under this name.
export const SyntaxError: new (...args: never[]) => GrammarSyntaxError;
