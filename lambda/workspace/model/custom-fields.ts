import { randomBytes } from 'node:crypto';
import { isCalendarDate } from './date-words.js';
import { QUERY_FIELDS } from './query.js';
import {
  fieldNameBuiltIn,
  fieldNameEmpty,
  fieldNameTwice,
  fieldNotHere,
  fieldOptionsNeeded,
  fieldTypeChanged,
  fieldTypeUnknown,
  fieldValueInvalid,
  fieldWasUnknown,
  tooManyFields,
  tooManyOptions,
} from './refusals.js';

/**
 * Custom fields (docs/workspace.md, "Custom fields"): a project's own typed fields (story points, an
 * issue type, a sprint), defined by its admins, and the values its tasks carry. A value is kept by
 * the field's id, so renaming a field keeps every value; a task that moves to another project keeps
 * the values whose field exists there by name and type. Pure: the callers read and write.
 */

export const FIELD_TYPES = ['text', 'number', 'date', 'select', 'multi-select', 'person', 'url'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

export const MAX_FIELDS = 20;
export const MAX_FIELD_OPTIONS = 50;
export const MAX_TEXT_VALUE = 1_000;
export const MAX_FIELD_NAME = 40;
export const MAX_OPTION_LENGTH = 100;

/**
 * The fields every task has, as the query language names them (model/query.ts): a custom field of
 * such a name could never be asked for, the built-in one answering first.
 */
export const BUILT_IN_NAMES: ReadonlySet<string> = new Set(Object.keys(QUERY_FIELDS));

export interface FieldDef {
  readonly fieldId: string;
  readonly name: string;
  readonly type: FieldType;
  /** The choices of a select or multi-select field, in order. */
  readonly options?: readonly string[];
}

/** A field as a tool gives it: its name, its type, its options, and `was` (its name before, to rename it). */
export interface FieldInput {
  readonly name: string;
  readonly type: string;
  readonly options?: readonly string[] | undefined;
  readonly was?: string | undefined;
}

/** A value as stored: text, a number, a date (YYYY-MM-DD), an option, options, a userId, a URL. */
export type FieldValue = string | number | readonly string[];

/** A task's values, by field id. */
export type FieldValues = Readonly<Record<string, FieldValue>>;

/** Names compare without case or surrounding space: "Story points" and "story points " are one. */
export const foldedFieldName = (name: string): string => name.trim().toLocaleLowerCase('en');

const newFieldId = (): string => `fld_${randomBytes(5).toString('hex')}`;

const isSelect = (type: FieldType): boolean => type === 'select' || type === 'multi-select';

export interface FieldsPlan {
  readonly fields: readonly FieldDef[];
  /** Fields that are no longer there (their values go with them). */
  readonly removed: readonly FieldDef[];
  /** Fields renamed: their values stay. */
  readonly renamed: readonly { readonly from: string; readonly to: string }[];
}

/**
 * A project's fields as `given` (the whole list, in order) makes them from `current`: a field named
 * as before (or by its `was`) keeps its id and so its values, a new name is a new field, a field not
 * named is removed. Refused, naming the part: more than 20, a name twice, an unknown type, a select
 * without options, a field whose type changes (remove it and add another), a `was` that names nothing.
 */
export const planFields = (current: readonly FieldDef[], given: readonly FieldInput[], param = 'fields'): FieldsPlan => {
  if (given.length > MAX_FIELDS) throw tooManyFields(param, given.length, MAX_FIELDS);
  const byName = new Map(current.map((f) => [foldedFieldName(f.name), f]));
  // A field renamed (`was`) takes its id first: a new field given its old name is a new field.
  const claimed = new Set(
    given.flatMap((g) => (g.was !== undefined ? [byName.get(foldedFieldName(g.was))?.fieldId].filter((x) => x !== undefined) : [])),
  );
  const seen = new Set<string>();
  const kept = new Set<string>();
  const renamed: { from: string; to: string }[] = [];
  const fields = given.map((g, i) => {
    const at = `${param}[${i}]`;
    const name = g.name.trim();
    if (!name || [...name].length > MAX_FIELD_NAME) throw fieldNameEmpty(`${at}.name`);
    const folded = foldedFieldName(name);
    if (seen.has(folded)) throw fieldNameTwice(`${at}.name`, name);
    seen.add(folded);
    if (!(FIELD_TYPES as readonly string[]).includes(g.type)) throw fieldTypeUnknown(`${at}.type`, g.type, FIELD_TYPES);
    const type = g.type as FieldType;
    if (BUILT_IN_NAMES.has(folded)) throw fieldNameBuiltIn(`${at}.name`, name);
    // Options compare without case, as values are chosen: "Bug" and "bug" are one.
    const folds = new Set<string>();
    const options = isSelect(type)
      ? (g.options ?? []).map((o) => o.trim()).filter((o) => o && !folds.has(foldedFieldName(o)) && folds.add(foldedFieldName(o)))
      : undefined;
    if (isSelect(type) && !options?.length) throw fieldOptionsNeeded(`${at}.options`, name);
    if (options && (options.length > MAX_FIELD_OPTIONS || options.some((o) => [...o].length > MAX_OPTION_LENGTH)))
      throw tooManyOptions(`${at}.options`, name, MAX_FIELD_OPTIONS, MAX_OPTION_LENGTH);
    const named = byName.get(folded);
    const before = g.was !== undefined ? byName.get(foldedFieldName(g.was)) : named && !claimed.has(named.fieldId) ? named : undefined;
    if (g.was !== undefined && !before)
      throw fieldWasUnknown(
        `${at}.was`,
        g.was,
        current.map((f) => f.name),
      );
    if (before && before.type !== type) throw fieldTypeChanged(`${at}.type`, before.name, before.type, type);
    if (before) {
      kept.add(before.fieldId);
      if (before.name !== name) renamed.push({ from: before.name, to: name });
    }
    return { fieldId: before?.fieldId ?? newFieldId(), name, type, ...(options ? { options } : {}) };
  });
  return { fields, removed: current.filter((f) => !kept.has(f.fieldId)), renamed };
};

/** A value given by a tool, checked by its field's type: what is stored. `member` checks a person. */
export const checkFieldValue = (def: FieldDef, value: unknown, param: string, member: (ref: string) => string | undefined): FieldValue => {
  const refuse = (expected: string): never => {
    throw fieldValueInvalid(param, def.name, def.type, expected, def.options);
  };
  switch (def.type) {
    case 'text':
      return typeof value === 'string' && value.length <= MAX_TEXT_VALUE ? value : refuse(`text of at most ${MAX_TEXT_VALUE} characters`);
    case 'number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
      return Number.isFinite(n) ? n : refuse('a number');
    }
    case 'date':
      return typeof value === 'string' && isCalendarDate(value) ? value : refuse('a date (YYYY-MM-DD)');
    case 'select': {
      const found = typeof value === 'string' ? def.options?.find((o) => foldedFieldName(o) === foldedFieldName(value)) : undefined;
      return found ?? refuse('one of its options');
    }
    case 'multi-select': {
      const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value : refuse('its options, a list');
      const out = list.map((v) =>
        typeof v === 'string'
          ? (def.options?.find((o) => foldedFieldName(o) === foldedFieldName(v)) ?? refuse('its options'))
          : refuse('its options'),
      );
      return [...new Set(out)];
    }
    case 'person':
      return (typeof value === 'string' ? member(value) : undefined) ?? refuse('a member ("me" or a userId)');
    case 'url': {
      if (typeof value !== 'string') return refuse('an http or https URL');
      try {
        const u = new URL(value);
        return u.protocol === 'https:' || u.protocol === 'http:' ? value : refuse('an http or https URL');
      } catch {
        return refuse('an http or https URL');
      }
    }
  }
};

/**
 * A task's values after a change: `given` by field name (null clears one) checked against the
 * project's fields and laid over what it has. A name that is no field of the project is refused
 * naming the fields there are.
 */
export const valuesAfter = (
  defs: readonly FieldDef[],
  current: FieldValues | undefined,
  given: Readonly<Record<string, unknown>>,
  param: string,
  member: (ref: string) => string | undefined,
  projectName: string | undefined,
): FieldValues => {
  const out: Record<string, FieldValue> = { ...(current ?? {}) };
  for (const [name, value] of Object.entries(given)) {
    const def = defs.find((d) => foldedFieldName(d.name) === foldedFieldName(name));
    if (!def)
      throw fieldNotHere(
        `${param}.${name}`,
        name,
        projectName,
        defs.map((d) => d.name),
      );
    if (value === null) delete out[def.fieldId];
    else out[def.fieldId] = checkFieldValue(def, value, `${param}.${name}`, member);
  }
  return out;
};

/**
 * A task's values as it moves from one project's fields to another's: each kept where the other has a
 * field of the same name and type (under that field's id), and the names of the rest, which go.
 */
export const carryValues = (
  values: FieldValues | undefined,
  from: readonly FieldDef[],
  to: readonly FieldDef[],
): { readonly values: FieldValues; readonly left: readonly string[] } => {
  const out: Record<string, FieldValue> = {};
  const left: string[] = [];
  for (const [fieldId, value] of Object.entries(values ?? {})) {
    const def = from.find((d) => d.fieldId === fieldId);
    if (!def) continue;
    const there = to.find((d) => foldedFieldName(d.name) === foldedFieldName(def.name) && d.type === def.type);
    const ok =
      there && (!isSelect(there.type) || (Array.isArray(value) ? value : [value]).every((v) => there.options?.includes(String(v))));
    if (there && ok) out[there.fieldId] = value;
    else left.push(def.name);
  }
  return { values: out, left };
};

/** Values by field name, as outputs show them (a field removed since shows no more). */
export const valuesByName = (defs: readonly FieldDef[], values: FieldValues | undefined): Record<string, FieldValue> => {
  const out: Record<string, FieldValue> = {};
  for (const d of defs) {
    const v = values?.[d.fieldId];
    if (v !== undefined) out[d.name] = v;
  }
  return out;
};
