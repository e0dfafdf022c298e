import { ToolRefusal } from '../../errors.js';
import {
  BUILT_IN_NAMES,
  checkFieldValue,
  type FieldDef,
  type FieldType,
  type FieldValue,
  foldedFieldName,
  MAX_FIELD_NAME,
  MAX_FIELD_OPTIONS,
  MAX_FIELDS,
  MAX_OPTION_LENGTH,
  planFields,
} from '../model/custom-fields.js';
import { isCalendarDate } from '../model/date-words.js';

/**
 * The custom fields an import makes of a file's columns (docs/workspace.md, "Importing from other
 * tools"): which columns feed a field and its type (fixed by the tool's meaning, or read from the
 * values), and what each target project's fields become when the import adds them, merged by name
 * and type with those it has. Pure: lambda/workspace/transfer/import-tasks.ts writes the projects and the values.
 */

/** A row's value for a field, as the file says it (the field by its name). */
export interface FieldCell {
  readonly field: string;
  readonly value: string;
}

/** A field the file's columns feed: its name, its type when the tool's column fixes it, and the columns. */
export interface FieldSpec {
  readonly name: string;
  readonly columns: readonly string[];
  /** The type the column's meaning fixes (Jira's Issue Type a select, story points a number); else read from the values. */
  readonly type?: FieldType;
}

/** A field of the file as the import makes it: its type and (a select) its options, the values as seen. */
export interface FileField {
  readonly name: string;
  readonly type: FieldType;
  readonly options?: readonly string[];
  readonly columns: readonly string[];
}

/** The distinct values, first seen first, as a select's options: "Bug" and "bug " are one (spelled as first seen). */
const distinctOf = (values: readonly string[]): string[] => {
  const out = new Map<string, string>();
  for (const v of values) if (!out.has(foldedFieldName(v))) out.set(foldedFieldName(v), v.trim());
  return [...out.values()];
};

/** Few distinct values, one at least seen twice: a select. */
export const MAX_SELECT_OPTIONS = 20;

const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)$/;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;
const ISO_INSTANT = /^(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const JIRA_DAY = /^(\d{1,2})\/([A-Za-z]{3})\/(\d{2}|\d{4})( \d{1,2}:\d{2} ?(AM|PM))?$/i;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** A whole cell that is a date as the tools export one (ISO day or instant, Jira's 24/Dec/26 10:15 AM), as YYYY-MM-DD. */
export const dateOfCell = (raw: string): string | undefined => {
  const v = raw.trim();
  const day = ISO_DAY.test(v) ? v : ISO_INSTANT.exec(v)?.[1];
  if (day) return isCalendarDate(day) ? day : undefined;
  const jira = JIRA_DAY.exec(v);
  const month = jira ? MONTHS.indexOf(jira[2]!.toLowerCase()) : -1;
  if (!jira || month < 0) return undefined;
  const year = jira[3]!.length === 2 ? 2000 + Number(jira[3]) : Number(jira[3]);
  const out = `${year}-${String(month + 1).padStart(2, '0')}-${jira[1]!.padStart(2, '0')}`;
  return isCalendarDate(out) ? out : undefined;
};

const isUrl = (v: string): boolean => {
  if (/\s/.test(v)) return false;
  try {
    return ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    return false;
  }
};

/**
 * A field's type by its values (none empty): all numbers a number, all dates a date, all http(s)
 * URLs a url, at most 20 distinct values with one seen twice a select of them (first seen first),
 * else text.
 */
export const typeOfValues = (values: readonly string[]): { type: FieldType; options?: string[] } => {
  if (values.every((v) => NUMBER.test(v.trim()))) return { type: 'number' };
  if (values.every((v) => dateOfCell(v) !== undefined)) return { type: 'date' };
  if (values.every(isUrl)) return { type: 'url' };
  const distinct = distinctOf(values);
  if (distinct.length <= MAX_SELECT_OPTIONS && distinct.length < values.length) return { type: 'select', options: distinct };
  return { type: 'text' };
};

/**
 * The fields of a file from its rows' values: each spec with a value on some row, typed as its
 * column fixes or by its values. A select takes the values as options, first seen first; one with
 * more than a select holds (50) is text. A spec no row fills makes no field.
 */
export const fileFields = (specs: readonly FieldSpec[], rows: readonly { readonly values: readonly FieldCell[] }[]): FileField[] => {
  const out: FileField[] = [];
  for (const spec of specs) {
    const values = rows.flatMap((r) => r.values.filter((c) => c.field === spec.name).map((c) => c.value));
    if (!values.length) continue;
    const typed = spec.type
      ? spec.type === 'select'
        ? { type: spec.type, options: distinctOf(values) }
        : { type: spec.type }
      : typeOfValues(values);
    const fits =
      !typed.options || (typed.options.length <= MAX_FIELD_OPTIONS && typed.options.every((o) => [...o].length <= MAX_OPTION_LENGTH));
    out.push({ name: spec.name, columns: spec.columns, ...(fits ? typed : { type: 'text' }) });
  }
  return out;
};

/** How --dry-run and the report name a field: `Type (select: Bug, Story)`. */
export const fieldWords = (f: { readonly name: string; readonly type: FieldType; readonly options?: readonly string[] | undefined }) =>
  `${f.name} (${f.type}${f.options?.length ? `: ${f.options.join(', ')}` : ''})`;

export interface ProjectFields {
  /** The project's fields after the import: its own, then the ones added, as the project writer takes them. */
  readonly fields: readonly FieldDef[];
  /** The fields the import's values go to, by folded name. */
  readonly use: ReadonlyMap<string, FieldDef>;
  /** Fields added, and fields of the project whose options the import adds to. */
  readonly added: readonly FieldDef[];
  readonly grown: readonly FieldDef[];
  /** Fields whose values stay lines of the notes, and why. */
  readonly left: readonly { readonly name: string; readonly why: string }[];
}

/**
 * A project's fields with the file's `wanted` ones added: a field it has of the same name and type
 * takes the values (a select's new options added to its own, 50 at most); one of the same name and
 * another type, or one past the 20 a project holds, takes none (its values stay lines of the notes).
 */
export const planProjectFields = (current: readonly FieldDef[], wanted: readonly FileField[]): ProjectFields => {
  const inputs = current.map((f) => ({ name: f.name, type: f.type as string, options: f.options }));
  const left: { name: string; why: string }[] = [];
  const addedNames: string[] = [];
  const grownNames: string[] = [];
  // A column named like a field every task has (Priority, Status) becomes "<name> (custom)": the query
  // language would answer the built-in one first. A name longer than a field's stays in the notes.
  const asName = new Map(wanted.map((w) => [w.name, BUILT_IN_NAMES.has(foldedFieldName(w.name)) ? `${w.name} (custom)` : w.name]));
  for (const w0 of wanted) {
    const w = { ...w0, name: asName.get(w0.name)! };
    if ([...w.name].length > MAX_FIELD_NAME) {
      left.push({ name: w0.name, why: `its name is longer than ${MAX_FIELD_NAME} characters` });
      continue;
    }
    const at = inputs.findIndex((f) => foldedFieldName(f.name) === foldedFieldName(w.name));
    const there = inputs[at];
    if (there && there.type !== w.type) {
      left.push({ name: w0.name, why: `the project's field '${there.name}' is ${there.type}, not ${w.type}` });
    } else if (there) {
      const options = distinctOf([...(there.options ?? []), ...(w.options ?? [])]).slice(0, MAX_FIELD_OPTIONS);
      if (options.length > (there.options?.length ?? 0)) {
        inputs[at] = { ...there, options };
        grownNames.push(there.name);
      }
    } else if (inputs.length >= MAX_FIELDS) {
      left.push({ name: w0.name, why: `a project holds ${MAX_FIELDS} fields at most` });
    } else {
      inputs.push({ name: w.name, type: w.type, options: w.options });
      addedNames.push(w.name);
    }
  }
  const { fields } = planFields(current, inputs);
  const named = (names: readonly string[]) => fields.filter((f) => names.includes(f.name));
  const leftNames = new Set(left.map((l) => foldedFieldName(l.name)));
  const use = new Map(
    wanted
      .filter((w) => !leftNames.has(foldedFieldName(w.name)))
      .flatMap((w) => {
        const def = fields.find((f) => foldedFieldName(f.name) === foldedFieldName(asName.get(w.name)!));
        return def ? [[foldedFieldName(w.name), def] as const] : [];
      }),
  );
  return { fields, use, added: named(addedNames), grown: named(grownNames), left };
};

/** A cell's value as its field stores it (a date as YYYY-MM-DD), or undefined when the field does not take it. */
export const fieldValueOf = (def: FieldDef, raw: string): FieldValue | undefined => {
  const value = def.type === 'date' ? (dateOfCell(raw) ?? raw) : raw.trim();
  try {
    return checkFieldValue(def, value, `fields.${def.name}`, () => undefined);
  } catch (err) {
    if (err instanceof ToolRefusal) return undefined;
    throw err;
  }
};
