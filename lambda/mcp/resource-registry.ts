import { InsufficientScopeError, LimitExceededError, ResourceNotFoundError } from '../errors.js';
import type { CallGuard } from '../limits/call-guard.js';
import type { Observer, ReadOutcome } from '../observability/observer.js';
import { type Principal, roleCutting, type Scope } from '../vocabulary.js';
import { byKey } from './ordering.js';
import { ScopeCache } from './scope-cache.js';
import { covers } from './tool-registry.js';
import type { RequestMeta } from './types.js';

export interface ResourceContents {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text?: string;
  readonly blob?: string;
  readonly _meta?: Record<string, unknown>;
}

export interface ReadContext<S> {
  readonly principal: Principal;
  readonly services: S;
  readonly now: Date;
  readonly meta: RequestMeta;
}

/** A family of resources addressed by a URI template with single-segment variables. */
export interface ResourceTemplateDefinition<S> {
  readonly uriTemplate: string;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** Its contents' one type; none for a template whose resources differ (an attachment is any file). */
  readonly mimeType?: string;
  readonly scope: Scope | null;
  /** Resolves to contents, or undefined when the URI names nothing the caller may see. */
  readonly read: (vars: Readonly<Record<string, string>>, uri: string, ctx: ReadContext<S>) => Promise<ResourceContents[] | undefined>;
}

/** A fixed resource that `resources/list` enumerates (the product's MCP Apps views; fixtures). */
export interface StaticResourceDefinition<S> {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType: string;
  readonly scope: Scope | null;
  /** Listed as `_meta` (a view's CSP and border, which hosts review when they connect). */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** How long a 2026-07-28 client may keep a read (default: 0, stale at once, as live data is). */
  readonly ttlMs?: number;
  readonly read: (uri: string, ctx: ReadContext<S>) => Promise<ResourceContents[]>;
}

interface CompiledTemplate<S> {
  readonly def: ResourceTemplateDefinition<S>;
  readonly pattern: RegExp;
  readonly vars: readonly string[];
  /** The literal part before the first variable: the audit line's provider and a metric dimension. */
  readonly prefix: string;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const compile = <S>(def: ResourceTemplateDefinition<S>): CompiledTemplate<S> => {
  const vars: string[] = [];
  const source = def.uriTemplate
    .split(/(\{[A-Za-z0-9_]+\})/)
    .map((part) => {
      const m = /^\{([A-Za-z0-9_]+)\}$/.exec(part);
      if (!m) return escapeRegExp(part);
      vars.push(m[1]!);
      return '([^/?#]+)';
    })
    .join('');
  return { def, pattern: new RegExp(`^${source}$`), vars, prefix: def.uriTemplate.slice(0, def.uriTemplate.indexOf('{')) };
};

export class ResourceRegistry<S> {
  private readonly templates: readonly CompiledTemplate<S>[];
  private readonly statics: ReadonlyMap<string, StaticResourceDefinition<S>>;
  private readonly templateCache = new ScopeCache<readonly Record<string, unknown>[]>();
  private readonly staticCache = new ScopeCache<readonly Record<string, unknown>[]>();

  constructor(
    templates: readonly ResourceTemplateDefinition<S>[],
    statics: readonly StaticResourceDefinition<S>[],
    private readonly guard: CallGuard,
    private readonly observer: Observer,
  ) {
    this.templates = [...templates].sort(byKey((t) => t.uriTemplate)).map(compile);
    this.statics = new Map([...statics].sort(byKey((r) => r.uri)).map((r) => [r.uri, r]));
  }

  get requiredScopes(): Scope[] {
    return [...this.templates.map((t) => t.def.scope), ...[...this.statics.values()].map((r) => r.scope)].filter((s): s is Scope => !!s);
  }

  listTemplates(principal: Principal): readonly Record<string, unknown>[] {
    return this.templateCache.get(principal, () =>
      this.templates
        .filter((t) => covers(principal, t.def.scope))
        .map(({ def }) => ({
          uriTemplate: def.uriTemplate,
          name: def.name,
          title: def.title,
          description: def.description,
          ...(def.mimeType ? { mimeType: def.mimeType } : {}),
        })),
    );
  }

  listResources(principal: Principal): readonly Record<string, unknown>[] {
    return this.staticCache.get(principal, () =>
      [...this.statics.values()]
        .filter((r) => covers(principal, r.scope))
        .map((r) => ({
          uri: r.uri,
          name: r.name,
          ...(r.title ? { title: r.title } : {}),
          ...(r.description ? { description: r.description } : {}),
          mimeType: r.mimeType,
          ...(r.meta ? { _meta: r.meta } : {}),
        })),
    );
  }

  /** The cache hint of a fixed resource's read, if it has its own. */
  ttlOf(uri: string): number | undefined {
    return this.statics.get(uri)?.ttlMs;
  }

  async read(uri: string, ctx: ReadContext<S>): Promise<Record<string, unknown>> {
    const started = performance.now();
    const legacy = !ctx.meta.era.modern;
    const target = this.resolve(uri);
    const provider = target?.provider ?? 'other';
    let outcome: ReadOutcome = 'failed';
    try {
      if (!target) {
        outcome = 'notfound';
        throw new ResourceNotFoundError(uri, legacy);
      }
      if (!covers(ctx.principal, target.scope)) {
        outcome = 'denied';
        throw new InsufficientScopeError(
          target.scope!,
          `Reading ${provider}`,
          ctx.principal.scopes,
          roleCutting(ctx.principal, target.scope!),
        );
      }
      let release: () => Promise<void>;
      try {
        release = await this.guard.acquire(ctx.principal);
      } catch (err) {
        if (err instanceof LimitExceededError) outcome = err.outcome;
        throw err;
      }
      try {
        const contents = await target.read(ctx);
        if (!contents) {
          outcome = 'notfound';
          throw new ResourceNotFoundError(uri, legacy);
        }
        outcome = 'ok';
        return { contents };
      } finally {
        await release();
      }
    } finally {
      this.observer.resourceRead({
        provider,
        outcome,
        durationMs: performance.now() - started,
        principal: ctx.principal,
        clientInfo: ctx.meta.clientInfo,
      });
    }
  }

  private resolve(
    uri: string,
  ): { provider: string; scope: Scope | null; read: (ctx: ReadContext<S>) => Promise<ResourceContents[] | undefined> } | undefined {
    const fixed = this.statics.get(uri);
    if (fixed) return { provider: fixed.uri, scope: fixed.scope, read: (ctx) => fixed.read(uri, ctx) };
    for (const t of this.templates) {
      const m = t.pattern.exec(uri);
      if (!m) continue;
      const vars: Record<string, string> = {};
      try {
        for (const [i, name] of t.vars.entries()) vars[name] = decodeURIComponent(m[i + 1]!);
      } catch {
        return undefined; // malformed percent-encoding names nothing
      }
      return { provider: t.prefix, scope: t.def.scope, read: (ctx) => t.def.read(vars, uri, ctx) };
    }
    return undefined;
  }
}
