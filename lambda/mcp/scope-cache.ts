import type { Principal } from '../vocabulary.js';

/**
 * What a listing shows depends only on the token's scope set (at most 16 of them), so each listing is
 * built once per set and cold start, and `tools/list` and friends do no work per request.
 */
export class ScopeCache<T> {
  private readonly byScopes = new Map<string, T>();

  get(principal: Principal, build: () => T): T {
    let value = this.byScopes.get(principal.scopeKey);
    if (value === undefined) {
      value = build();
      this.byScopes.set(principal.scopeKey, value);
    }
    return value;
  }
}
