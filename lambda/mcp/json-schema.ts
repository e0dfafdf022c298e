import * as z from 'zod/mini';
import '../platform/zod-locale.js';

/**
 * zod's own JSON Schema, made once per schema at registration. `$schema` is dropped: 2020-12 is
 * MCP's default dialect, and naming it trips validators in older clients that only know draft-07.
 */
export const toJsonSchema = (schema: z.core.$ZodType, io: 'input' | 'output'): Record<string, unknown> => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

/** One line naming every parameter at fault, for a model to correct its call. */
export const describeIssues = (error: z.core.$ZodError): string =>
  error.issues
    .map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        const where = issue.path.length ? `${issue.path.join('.')}.` : '';
        return issue.keys.map((k) => `${where}${k}: not a parameter of this call`).join('; ');
      }
      return `${issue.path.length ? issue.path.join('.') : 'arguments'}: ${issue.message}`;
    })
    .join('; ');
