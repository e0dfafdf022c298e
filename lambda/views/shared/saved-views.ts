/**
 * Saved views in the MCP Apps views: what `views_list` and a view's `tasks_search` answer name, and
 * the picker that opens one (the board shows its tasks, the agenda a section of them).
 */
import { h } from './dom.js';
import { isObject, type Json, str } from './model.js';

export interface SavedView {
  readonly viewId: string;
  readonly name: string;
  readonly query: string;
  /** list | status | assignee | due */
  readonly group: string;
}

export const toSavedView = (v: unknown): SavedView | undefined => {
  if (!isObject(v) || !str(v.viewId) || !str(v.name)) return undefined;
  return { viewId: str(v.viewId)!, name: str(v.name)!, query: typeof v.query === 'string' ? v.query : '', group: str(v.group) ?? 'list' };
};

/** The views of `views_list`'s answer. */
export const savedViewsOf = (data: Json): SavedView[] =>
  Array.isArray(data.views) ? data.views.map(toSavedView).filter((v): v is SavedView => !!v) : [];

/** A select of the saved views; choosing one (or none) calls `onPick`. */
export const viewPicker = (views: readonly SavedView[], current: string | undefined, onPick: (view: SavedView | undefined) => void) =>
  h(
    'label',
    { class: 'view-picker' },
    'Saved view ',
    h(
      'select',
      {
        'data-focus': 'view-picker',
        onchange: (e: Event) => onPick(views.find((v) => v.viewId === (e.target as HTMLSelectElement).value)),
      },
      h('option', { value: '', selected: current === undefined }, '—'),
      ...views.map((v) => h('option', { value: v.viewId, selected: v.viewId === current }, v.name)),
    ),
  );
