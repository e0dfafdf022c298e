import fc from 'fast-check';
import { bulky, bulkyValue } from './bulky-values.js';

/**
 * Arguments from a tool's input JSON Schema, valid and then mutated. Neither npm package for this
 * fits (zod-fast-check wants zod 3 and fast-check < 4; json-schema-fast-check fast-check 1), so this
 * covers exactly the subset zod emits for the product tools, and refuses any other keyword loudly:
 * a tool that starts using one must not silently get unfuzzed arguments.
 */
export interface JsonSchema {
  readonly type?: 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'null';
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  readonly items?: JsonSchema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly anyOf?: readonly JsonSchema[];
}

const KNOWN_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'enum',
  'const',
  'minimum',
  'maximum',
  'anyOf',
  // annotations: no effect on validity
  'description',
  'default',
  'title',
  'examples',
  '$schema',
]);

/** Ids that exist, by argument name; read at generation time, since the pools change during a run. */
export type KnownValues = Readonly<Record<string, () => readonly string[]>>;

const checkKeywords = (schema: JsonSchema): void => {
  for (const key of Object.keys(schema)) {
    if (!KNOWN_KEYWORDS.has(key)) throw new Error(`schema-arbitrary: unsupported JSON Schema keyword "${key}"`);
  }
};

const INT32_MAX = 2 ** 31 - 1;
const ABSENT = Symbol('absent');

/** One of the values in a pool that may be empty or change size. */
const fromPool = (pool: () => readonly string[]): fc.Arbitrary<string | undefined> =>
  fc.nat().map((i) => {
    const values = pool();
    return values.length === 0 ? undefined : values[i % values.length];
  });

const isoDate = fc
  .date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2100-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

const stringValue = (schema: JsonSchema): fc.Arbitrary<string> => {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 200;
  if (schema.format === 'date') return isoDate;
  if (schema.pattern !== undefined) {
    // The pattern says it all (for e-mail, zod's stricter-than-RFC one): RFC-valid but refused addresses are boundary values.
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= max);
  }
  const small = fc
    .string({ minLength: min, maxLength: Math.min(max, 40), unit: 'grapheme' })
    .filter((s) => s.trim().length >= min && s.length <= max);
  // The longest value the schema allows: storage and rendering must take it. (Not blanks: zod trims some strings.)
  const longest = fc.constantFrom('x', 'é', '😀').map((c) => c.repeat(max).slice(0, max));
  return fc.oneof({ weight: 6, arbitrary: small }, { weight: 1, arbitrary: longest.filter((s) => s.length >= min) });
};

/**
 * tasks_search's and view_save's query language (docs/workspace.md, "Queries"): terms of every field
 * and a few that are not, every operator, values quoted or bare, words, AND, OR, - and NOT,
 * parentheses (closed or not), quotes (closed or not): what a person, or a model, types.
 */
const QUERY_FIELDS = [
  'assignee',
  'no',
  'project',
  'status',
  'is',
  'label',
  'priority',
  'due',
  'created',
  'updated',
  'completed',
  'parent',
  'key',
  'has',
  'sort',
];
const queryTerm: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...QUERY_FIELDS) }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z]{1,8}$/) }),
      fc.constantFrom(':', '=', '<', '<=', '>', '>='),
      fc.oneof(
        fc.constantFrom(
          'me',
          'none',
          'open',
          'done',
          'overdue',
          'files',
          'today',
          'friday',
          '-7d',
          '+2w',
          'this-week',
          '2026-02-30',
          'p1',
          '3',
          'due-desc',
        ),
        fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/),
        fc.string({ maxLength: 12 }).map((v) => `"${v.replaceAll('"', '')}"`),
      ),
    )
    .map(([f, op, v]) => `${f}${op}${v}`),
  fc.constantFrom('p1', 'p4', 'review', 'OR', 'AND', 'NOT', '-', '"', '(', ')', '""'),
  fc.string({ maxLength: 10, unit: 'grapheme' }),
);
export const queryValue: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(fc.constantFrom('', '-', 'NOT ', '('), queryTerm, fc.constantFrom('', ')', ' OR', ' AND')).map((p) => p.join('')),
    { minLength: 0, maxLength: 24 },
  )
  .map((parts) => parts.join(' ').slice(0, 1000));

/** Values the schema accepts (as far as this subset says: zod may still refine, e.g. a trimmed string). */
export const validValue = (schema: JsonSchema, known: KnownValues = {}, key?: string): fc.Arbitrary<unknown> => {
  checkKeywords(schema);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => validValue(s, known, key)));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'string': {
      const generic = stringValue(schema);
      if (key === 'query') {
        const fits = (q: string) => q.trim().length >= (schema.minLength ?? 0) && q.length <= (schema.maxLength ?? 1000);
        return fc.oneof({ weight: 3, arbitrary: queryValue.filter(fits) }, { weight: 1, arbitrary: generic });
      }
      const pool = key === undefined ? undefined : known[key];
      if (!pool) return generic;
      const existing = fromPool(pool).chain((v) => (v === undefined ? generic : fc.constant(v)));
      return fc.oneof({ weight: 3, arbitrary: existing }, { weight: 1, arbitrary: generic });
    }
    case 'integer': {
      const min = schema.minimum ?? -INT32_MAX;
      const max = Math.min(schema.maximum ?? INT32_MAX, INT32_MAX);
      // Small values are where versions and page sizes live; the bounds are where off-by-ones do.
      return fc.oneof(
        fc.integer({ min, max: Math.min(max, min + 5) }),
        fc.integer({ min, max }),
        fc.constantFrom(min, schema.maximum ?? max),
      );
    }
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schema.items ? validValue(schema.items, known) : fc.jsonValue({ maxDepth: 2 }), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 5, 10),
      });
    case 'object': {
      const required = new Set(schema.required ?? []);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, s] of Object.entries(schema.properties ?? {})) {
        const value = validValue(s, known, name);
        // Optional members left out more often than not: each one is another way for a call to be refused.
        model[name] = required.has(name) ? value : fc.oneof({ weight: 3, arbitrary: fc.constant(ABSENT) }, { weight: 2, arbitrary: value });
      }
      return fc.record(model).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== ABSENT)));
    }
    default:
      throw new Error(`schema-arbitrary: unsupported type ${String(schema.type)}`);
  }
};

/** Values just outside (or exactly on) the schema's bounds, and other types: what a sloppy model sends. */
export const boundaryValue = (schema: JsonSchema): fc.Arbitrary<unknown> => {
  const wrongType = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.string({ maxLength: 10 }),
    fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  );
  const s = schema.anyOf?.find((x) => x.type !== 'null') ?? schema;
  switch (s.type) {
    case 'string': {
      const max = s.maxLength ?? 200;
      return fc.oneof(
        wrongType,
        fc.constantFrom(
          '',
          ' ',
          '   ',
          '\t\n',
          '\u0000',
          'x'.repeat(max + 1),
          'é'.repeat(max + 1),
          '😀'.repeat(Math.ceil(max / 2) + 1),
          bulky('long-string', 200_000),
        ),
        // Strings that look like what the field wants, but are not: dates, times, enums.
        fc.constantFrom(
          '2023-02-29',
          '2024-13-01',
          '2024-00-10',
          '20240101',
          ' 2024-01-01',
          '24:00',
          '9:5',
          'P5',
          'p1',
          'OWNER',
          'me',
          'none',
          'anyone',
          'a b',
          'a,b',
          'ÄBC',
        ),
        fc.string({ unit: 'binary', maxLength: 30 }),
        fc.emailAddress(),
      );
    }
    case 'integer':
    case 'number': {
      const min = s.minimum ?? 0;
      const max = s.maximum ?? 100;
      return fc.oneof(
        wrongType,
        fc.constantFrom(min - 1, max + 1, 0, -1, 1.5, -0, 2 ** 53, -(2 ** 53), 1e308, -1e308, Number.MIN_VALUE, '1', '1e3'),
      );
    }
    case 'boolean':
      return fc.oneof(wrongType, fc.constantFrom('true', 'false', 0, 1, 'yes'));
    case 'array': {
      const n = (s.maxItems ?? 10) + 1;
      return fc.oneof(
        wrongType,
        fc.constant(Array.from({ length: n }, (_, i) => `l${i}`)),
        fc.constant([null]),
        fc.constant(['']),
        fc.constant([[]]),
      );
    }
    default:
      return wrongType;
  }
};

/** A huge or deeply nested value (as a placeholder, see bulky-values.ts), or a string JSON cannot carry well. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(bulkyValue, fc.constantFrom('\ud800', '\udfff\ud800', '__proto__', '\u0000'));

type Args = Record<string, unknown>;

/**
 * Valid arguments, then one mutation (or none): drop a required key, add an unknown one, put a
 * boundary or wrong-type value in a declared one, a hostile value anywhere, or no object at all.
 */
export const toolArguments = (schema: JsonSchema, known: KnownValues = {}): fc.Arbitrary<unknown> => {
  const valid = validValue(schema, known) as fc.Arbitrary<Args>;
  const props = Object.keys(schema.properties ?? {});
  const required = schema.required ?? [];
  const pick = <T>(values: readonly T[]) => fc.nat().map((i) => values[i % values.length]!);
  const mutations: fc.Arbitrary<unknown>[] = [
    fc
      .tuple(
        valid,
        fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'cursor', 'limit', 'arguments')),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .map(([args, key, value]) => withKey(args, key, value)),
    fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.constant([]),
      fc.string({ maxLength: 5 }),
      fc.integer(),
      fc.boolean(),
      fc.array(valid, { maxLength: 2 }),
    ),
    fc.tuple(valid, hostileValue).map(([args, v]) => withKey(args, props[0] ?? 'x', v)),
  ];
  if (required.length > 0) mutations.push(fc.tuple(valid, pick(required)).map(([args, key]) => withoutKey(args, key)));
  if (props.length > 0) {
    mutations.push(
      fc.tuple(valid, pick(props)).chain(([args, key]) => boundaryValue(schema.properties![key]!).map((v) => withKey(args, key, v))),
    );
  }
  return fc.oneof({ weight: 6, arbitrary: valid }, { weight: 4, arbitrary: fc.oneof(...mutations) });
};

/** Own data property even for "__proto__", as JSON.parse would make it. */
const withKey = (args: Args, key: string, value: unknown): Args => {
  const out = { ...args };
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
};

const withoutKey = (args: Args, key: string): Args => {
  const { [key]: _dropped, ...rest } = args;
  return rest;
};
