export const SCOPES = ['tasks:read', 'tasks:write', 'team:read', 'team:admin'] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** Keeps the known scopes of a token, in the canonical order (so cache keys are stable). */
export const normalizeScopes = (values: Iterable<string>): Scope[] => {
  const granted = new Set(values);
  return SCOPES.filter((s) => granted.has(s));
};

/**
 * The scopes a person of a role can use at all: what the role may do in the tools. The account page
 * offers no more when someone makes a token (a viewer's `tasks:write` would open nothing but
 * still read as if it did).
 */
export const scopesForRole = (role: 'owner' | 'admin' | 'member' | 'viewer'): readonly Scope[] =>
  role === 'owner' || role === 'admin'
    ? SCOPES
    : role === 'member'
      ? ['tasks:read', 'tasks:write', 'team:read']
      : ['tasks:read', 'team:read'];
