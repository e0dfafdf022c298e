/** Attributes and properties of {@link h}: `on*` functions become listeners, `false`/`undefined` are left out. */
type Props = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;
type Child = Node | string | false | null | undefined;

/**
 * One element with its attributes and children. Text always goes in as text (never as HTML), so
 * whatever a task's title holds is shown, not run.
 */
export const h = (tag: string, props: Props = {}, ...children: (Child | Child[])[]): HTMLElement => {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, '');
    else if (value !== false && value !== undefined) el.setAttribute(key, String(value));
  }
  for (const child of children.flat()) if (child !== false && child !== null && child !== undefined) el.append(child);
  return el;
};

/** A control that had focus but could not take it back yet (disabled while its change was on its way). */
let pending: string | undefined;

/**
 * Replaces the contents of `root`, keeping the keyboard where it was: the element that had focus
 * (by its `data-focus` key) has it again after the render, so a control used from the keyboard
 * stays under the user's hands, also when it waited disabled for a render or two.
 */
export const renderInto = (root: HTMLElement, ...children: Child[]): void => {
  const active = document.activeElement as HTMLElement | null;
  const key = active?.dataset?.focus ?? (!active || active === document.body ? pending : undefined);
  root.replaceChildren(...children.filter((c): c is Node | string => !!c));
  const target = key ? root.querySelector<HTMLElement>(`[data-focus="${CSS.escape(key)}"]`) : null;
  target?.focus();
  pending = target && document.activeElement !== target ? key : undefined;
};
