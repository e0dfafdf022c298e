/**
 * The one expression builder of the stores: key conditions, conditions, filters and updates are
 * written against it, so attribute names and values get placeholders one way everywhere (`#n0`,
 * `:v0`), a condition is a list of clauses joined once, and an update's SET, REMOVE, ADD and DELETE
 * parts are assembled once. A store builds one per request and spreads `input()` into it.
 */
export class Expression {
  private readonly names = new Map<string, string>();
  private readonly values: Record<string, unknown> = {};
  private nextValue = 0;

  /** The placeholder of an attribute name (a path's parts each get one: `a.b` → `#n0.#n1`). */
  name(attr: string): string {
    let placeholder = this.names.get(attr);
    if (!placeholder) {
      placeholder = `#n${this.names.size}`;
      this.names.set(attr, placeholder);
    }
    return placeholder;
  }

  /** A map entry's path: `blockedBy.<id>` with both parts as placeholders. */
  path(...parts: readonly string[]): string {
    return parts.map((p) => this.name(p)).join('.');
  }

  value(value: unknown): string {
    const placeholder = `:v${this.nextValue++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  // ---- clauses (conditions, key conditions, filters) ----------------------------------------------

  eq(attr: string, value: unknown): string {
    return `${this.name(attr)} = ${this.value(value)}`;
  }
  lt(attr: string, value: unknown): string {
    return `${this.name(attr)} < ${this.value(value)}`;
  }
  le(attr: string, value: unknown): string {
    return `${this.name(attr)} <= ${this.value(value)}`;
  }
  ge(attr: string, value: unknown): string {
    return `${this.name(attr)} >= ${this.value(value)}`;
  }
  between(attr: string, low: unknown, high: unknown): string {
    return `${this.name(attr)} BETWEEN ${this.value(low)} AND ${this.value(high)}`;
  }
  beginsWith(attr: string, prefix: string): string {
    return `begins_with(${this.name(attr)}, ${this.value(prefix)})`;
  }
  exists(attr: string): string {
    return `attribute_exists(${this.name(attr)})`;
  }
  absent(attr: string): string {
    return `attribute_not_exists(${this.name(attr)})`;
  }
  contains(attr: string, value: unknown): string {
    return `contains(${this.name(attr)}, ${this.value(value)})`;
  }
  sizeAtMost(attr: string, n: number): string {
    return `size(${this.name(attr)}) <= ${this.value(n)}`;
  }
  oneOf(attr: string, values: readonly unknown[]): string {
    return `${this.name(attr)} IN (${values.map((v) => this.value(v)).join(', ')})`;
  }

  // ---- the request's part -----------------------------------------------------------------------

  input(): { ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> } {
    return {
      ...(this.names.size ? { ExpressionAttributeNames: Object.fromEntries([...this.names].map(([attr, p]) => [p, attr])) } : {}),
      ...(this.nextValue ? { ExpressionAttributeValues: { ...this.values } } : {}),
    };
  }
}

export const and = (...clauses: readonly (string | undefined | false)[]): string =>
  clauses.filter((c): c is string => typeof c === 'string' && c.length > 0).join(' AND ');

export const or = (...clauses: readonly string[]): string => `(${clauses.join(' OR ')})`;

export const not = (clause: string): string => `NOT (${clause})`;

/** An update's actions, in DynamoDB's four clauses. */
export class Update {
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];
  private readonly adds: string[] = [];
  private readonly deletes: string[] = [];

  constructor(readonly x: Expression) {}

  set(attr: string, value: unknown): this {
    this.sets.push(`${this.x.name(attr)} = ${this.x.value(value)}`);
    return this;
  }
  setPath(path: string, value: unknown): this {
    this.sets.push(`${path} = ${this.x.value(value)}`);
    return this;
  }
  remove(attrOrPath: string, isPath = false): this {
    this.removes.push(isPath ? attrOrPath : this.x.name(attrOrPath));
    return this;
  }
  add(attr: string, value: unknown): this {
    this.adds.push(`${this.x.name(attr)} ${this.x.value(value)}`);
    return this;
  }
  delete(attr: string, value: unknown): this {
    this.deletes.push(`${this.x.name(attr)} ${this.x.value(value)}`);
    return this;
  }

  get empty(): boolean {
    return !this.sets.length && !this.removes.length && !this.adds.length && !this.deletes.length;
  }

  toString(): string {
    return [
      this.sets.length ? `SET ${this.sets.join(', ')}` : '',
      this.removes.length ? `REMOVE ${this.removes.join(', ')}` : '',
      this.adds.length ? `ADD ${this.adds.join(', ')}` : '',
      this.deletes.length ? `DELETE ${this.deletes.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
  }
}
