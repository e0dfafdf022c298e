import * as z from 'zod/mini';
import '../platform/zod-locale.js';

/**
 * zod's own JSON Schema, made once per schema at registration. `$schema` is dropped: 2020-12 is
 * MCP's default dialect, and naming it trips validators in older clients that only know draft-07.
 */
export const toJsonSchema = (schema: z.core.$ZodType, io: 'input' | 'output'): Record<string, unknown> => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return slim(rest, io) as Record<string, unknown>;
};

/**
 * What every listing carries for every tool is paid for in every conversation's context, so what
 * says nothing is left out: an integer's bounds when they are JavaScript's safe-integer range (the
 * type says it), a date's or an instant's 300-character pattern beside `format: date` or
 * `date-time` (which say the same, RFC 3339's full-date and date-time), and on results their bounds and `additionalProperties: false` (a client needs to know what a
 * result holds, not to refuse one that holds more: the server checks its results itself) and the
 * fields' descriptions and `required` lists (a result holds what its tool's text says; the lists
 * were some 2,000 bytes of every listing, and a client that validates a result finds it valid the
 * same). An object's `propertyNames: {type: string}` says what JSON says of every key, so it goes too.
 * What an argument may be is listed whole: the server accepts exactly what the listing says.
 */
const DATE_FORMATS = new Set<unknown>(['date', 'date-time']);
/** A result's bounds (a count is at least 0): what the server keeps its results within, which no client acts on. */
const BOUNDS = new Set(['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);

const isStringEnum = (node: object): boolean => {
  const values = (node as { enum?: unknown }).enum;
  return Array.isArray(values) && values.every((v) => typeof v === 'string');
};

const slim = (node: unknown, io: 'input' | 'output'): unknown => {
  if (Array.isArray(node)) return node.map((n) => slim(n, io));
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
    if (k === 'minimum' && v === Number.MIN_SAFE_INTEGER) continue;
    if (io === 'output' && k === 'additionalProperties' && v === false) continue;
    if (io === 'output' && BOUNDS.has(k)) continue;
    if (k === 'pattern' && DATE_FORMATS.has((node as { format?: unknown }).format)) continue;
    if (io === 'output' && k === 'required' && Array.isArray(v)) continue;
    if (k === 'propertyNames' && JSON.stringify(v) === '{"type":"string"}') continue;
    // A result's fields are described by the tool's description and its text; their descriptions
    // would be read by no one but paid for in every context.
    if (io === 'output' && k === 'description' && typeof v === 'string') continue;
    // A constant, or a list of strings to choose from, says its type itself.
    if (io === 'output' && k === 'type' && ('const' in node || isStringEnum(node))) continue;
    out[k] = slim(v, io);
  }
  return out;
};

/** Each parameter at fault and what is wrong with it, for code: `{ param, problem }`, in the order of the line above. */
export const issuesOf = (error: z.core.$ZodError): { readonly param: string; readonly problem: string }[] =>
  error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const where = issue.path.length ? `${issue.path.join('.')}.` : '';
      return issue.keys.map((k) => ({ param: `${where}${k}`, problem: 'not a parameter of this call' }));
    }
    return [{ param: issue.path.length ? issue.path.join('.') : 'arguments', problem: issue.message }];
  });

/** One line naming every parameter at fault, for a model to correct its call. */
export const describeIssues = (error: z.core.$ZodError): string =>
  issuesOf(error)
    .map((i) => `${i.param}: ${i.problem}`)
    .join('; ');
