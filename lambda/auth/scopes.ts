export const SCOPES = ['tasks:read', 'tasks:write', 'team:read', 'team:admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** Keeps the known scopes of a token, in the canonical order (so cache keys are stable). */
export const normalizeScopes = (values: Iterable<string>): Scope[] => {
  const granted = new Set(values);
  return SCOPES.filter((s) => granted.has(s));
};
