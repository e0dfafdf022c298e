import fc from 'fast-check';

/**
 * Deep and huge JSON values stand in a generated message as short placeholder strings and become
 * raw JSON text only when the body is written: JSON.stringify itself overflows the stack near depth
 * 10,000 (JSON.parse does not), and a counterexample stays readable instead of printing megabytes.
 */
const PLACEHOLDER = /"@@(deep-array|deep-object|wide-object|wide-array|long-string):(\d+)@@"/g;

export type BulkyKind = 'deep-array' | 'deep-object' | 'wide-object' | 'wide-array' | 'long-string';

export const bulky = (kind: BulkyKind, size: number): string => `@@${kind}:${size}@@`;

const expand = (kind: string, n: number): string => {
  switch (kind) {
    case 'deep-array':
      return `${'['.repeat(n)}${']'.repeat(n)}`;
    case 'deep-object':
      return `${'{"a":'.repeat(n)}{}${'}'.repeat(n)}`;
    case 'wide-object':
      return `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    case 'wide-array':
      return `[${Array.from({ length: n }, (_, i) => i).join(',')}]`;
    default:
      return `"${'x'.repeat(n)}"`;
  }
};

/** JSON text of a generated value, placeholders expanded. */
export const writeJson = (value: unknown): string => expandBulky(JSON.stringify(value) ?? 'null');

export const expandBulky = (json: string): string => json.replace(PLACEHOLDER, (_m, kind: string, n: string) => expand(kind, Number(n)));

/** A value that makes parsers, validators and serializers recurse or copy a lot. */
export const bulkyValue: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 1, max: 13 }).map((exp) => bulky('deep-array', 2 ** exp)),
  fc.constantFrom(bulky('deep-array', 10_000), bulky('deep-object', 10_000), bulky('deep-array', 100_000)),
  fc.constantFrom(bulky('wide-object', 5_000), bulky('wide-array', 50_000), bulky('long-string', 200_000)),
);
