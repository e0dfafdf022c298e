/**
 * An item's size as DynamoDB counts it (its developer guide, "Item sizes and formats"): each
 * attribute's name in UTF-8 bytes plus its value; a string its UTF-8 bytes, a number about one byte
 * per two significant digits plus one, a binary its bytes, a boolean or null one byte, a set the sum
 * of its members, a list or map three bytes plus one per element plus the elements (a map's keys
 * too). Values are the plain JavaScript ones lib-dynamodb marshals (strings, numbers, booleans,
 * arrays, objects, Sets, Uint8Arrays). What packs transactions (transact.ts) and what bounds a call's
 * cost is measured with it.
 */

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

const numberSize = (n: number | bigint): number => {
  const digits = String(n).replace(/^-/, '').replace('.', '').replace(/e.*$/i, '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
};

export const valueSize = (value: unknown): number => {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberSize(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let sum = 0;
    for (const member of value) sum += valueSize(member);
    return sum;
  }
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueSize(v), 0);
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return 3 + entries.reduce((sum, [k, v]) => sum + 1 + utf8(k) + valueSize(v), 0);
  }
  return 0;
};

/** The size of an item (or of a key, or of a map of expression values): the sum of its attributes. */
export const itemSize = (item: Readonly<Record<string, unknown>> | undefined): number => {
  if (!item) return 0;
  let sum = 0;
  for (const [name, value] of Object.entries(item)) if (value !== undefined) sum += utf8(name) + valueSize(value);
  return sum;
};

/** Write units of a standard write of an item this size: one per KB begun. */
export const writeUnitsOf = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));
