import * as z from 'zod/mini';
import { InsufficientScopeError, InvalidParamsError, LimitExceededError, ToolRefusal } from '../errors.js';
import type { CallGuard } from '../limits/call-guard.js';
import type { Observer, ToolOutcome } from '../observability/observer.js';
import { withAdmission } from '../platform/admission-gate.js';
import { type Principal, roleCutting, type Scope } from '../vocabulary.js';
import { describeIssues, issuesOf, toJsonSchema } from './json-schema.js';
import { byKey } from './ordering.js';
import { ScopeCache } from './scope-cache.js';
import { isTaskStarted, type McpTask, type TaskStarted } from './tasks.js';
import type { ContentBlock, RequestMeta } from './types.js';

/**
 * A tool's hints. The protocol gives `destructiveHint` and `idempotentHint` a meaning only where
 * `readOnlyHint` is false, so a read-only tool need not carry them (every listing pays for them).
 */
export type ToolAnnotations =
  | {
      readonly readOnlyHint: true;
      readonly destructiveHint?: false;
      readonly idempotentHint?: true;
      readonly openWorldHint: boolean;
    }
  | {
      readonly readOnlyHint: false;
      readonly destructiveHint: boolean;
      readonly idempotentHint: boolean;
      readonly openWorldHint: boolean;
    };

/** A request for more input from the client (2026-07-28 multi round-trip, SEP-2322). */
export interface InputRequired {
  readonly kind: 'input_required';
  /** Keyed requests, e.g. `{ confirm: { method: 'elicitation/create', params: {…} } }`. */
  readonly inputRequests: Readonly<Record<string, { method: string; params?: Record<string, unknown> }>>;
  /** Handler state carried to the retry; signed by the dispatcher, so it comes back untampered. */
  readonly state: unknown;
}

export const inputRequired = (inputRequests: InputRequired['inputRequests'], state: unknown): InputRequired => ({
  kind: 'input_required',
  inputRequests,
  state,
});

/** Who reads a result's text: instants are shown in their zone, days relative to their today. */
export interface ToolReader {
  readonly timeZone: string;
  readonly now: Date;
}

export interface ToolContext<S> {
  readonly principal: Principal;
  readonly services: S;
  readonly now: Date;
  readonly meta: RequestMeta;
  readonly toolName: string;
  /** The answers of a retried multi round-trip request, with the state the handler left. */
  readonly input?: { readonly responses: Readonly<Record<string, unknown>>; readonly state: unknown };
  /**
   * Work that need not hold the answer (keeping it for a retry): awaited beside the release of the
   * call's lease, after the answer is made. Best effort: its failure does not change the answer.
   */
  readonly defer?: (work: Promise<unknown>) => void;
}

/**
 * A result may carry lines for its text only (`textNotes`): how the server read the caller's words,
 * for instance "dueDate 'friday' read as Fri 4 Dec 2026". The structured result already holds what
 * was read (the date itself), so the notes are not in its schema; they follow the text's first line.
 */
export type WithTextNotes<T> = T extends object ? T & { readonly textNotes?: readonly string[] } : T;

/** On zod's core type, so a tool may declare classic schemas too (the test fixtures do). */
export interface ToolDefinition<S, I extends z.core.$ZodType = z.core.$ZodType, O extends z.core.$ZodType = z.core.$ZodType> {
  readonly name: string;
  readonly title: string;
  /** Written for the model: what the tool does and when to prefer it over its neighbours. */
  readonly description: string;
  readonly input: I;
  /**
   * What the listing shows when it is stricter than `input`: a bulk tool parses its items one by one
   * (a bad item refuses only itself), but lists their whole schema.
   */
  readonly listedInput?: z.core.$ZodType;
  /**
   * A bulk tool's items are its single tool's fields, described in that tool's listing: only these
   * fields of its items (the ones a bulk call reads its own way) keep their descriptions here.
   */
  readonly itemsDescribe?: readonly string[];
  /** Every product tool declares one; only conformance fixtures omit it. */
  readonly output?: O;
  /**
   * What the listing shows as the output schema when less than `output` says: the fields a client
   * acts on. Every answer still satisfies it (its objects allow more properties); `output` is what
   * the answer is checked against.
   */
  readonly listedOutput?: z.core.$ZodType;
  readonly annotations: ToolAnnotations;
  /** `null`: every valid token may call it (me_get). */
  readonly scope: Scope | null;
  readonly run: (args: z.output<I>, ctx: ToolContext<S>) => Promise<WithTextNotes<z.input<O>> | InputRequired | TaskStarted>;
  /** The compact text for `content[0]`, with the identifiers in it; never the JSON again. Times are the reader's. */
  readonly render?: (output: z.output<O>, reader: ToolReader) => string;
  /** A bulk tool's item count, for the audit line and the ToolCalls meter. */
  readonly itemsOf?: (args: z.output<I>) => number;
  /** Fixtures that answer with other content (images, resources) build it themselves. */
  readonly content?: (output: z.output<O>) => ContentBlock[];
  /** Listed as the tool's `_meta`: the MCP Apps view a host renders its results in (lambda/workspace/app-views.ts). */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** The group it is listed in (a connection chooses its groups: `/mcp?tools=a,b`); none: listed always. */
  readonly group?: string;
}

/** The groups a connection lists and may call: the defaults, every one (`undefined`), or those it named. */
export interface ToolSelection {
  /** What its listings are cached by. */
  readonly key: string;
  readonly groups?: ReadonlySet<string>;
}

/** Every group. */
export const ALL_TOOLS: ToolSelection = { key: 'all' };

/**
 * The tool declaration helper of one kind of services: `defineToolFor<S>()` returns a `defineTool`
 * that infers a tool's input and output types from its `input` and `output` schemas, so a tool is
 * declared without restating them, and keeps them together while the registry holds many tools.
 */
export const defineToolFor =
  <S>() =>
  <I extends z.core.$ZodType, O extends z.core.$ZodType>(def: ToolDefinition<S, I, O>): ToolDefinition<S> =>
    def as unknown as ToolDefinition<S>;

/**
 * What the registry knows of a tool before its definition is loaded: enough to list it, to choose it
 * by group and scope, and where its definition is (`load`). The workspace's tools are handles over a
 * listing made at build time (lambda/workspace/surface/catalog.ts), each definition a chunk loaded
 * on the tool's first call; a definition given whole (the conformance fixtures) is its own handle.
 */
export interface ToolHandle<S> {
  readonly name: string;
  readonly title: string;
  readonly annotations: ToolAnnotations;
  readonly scope: Scope | null;
  readonly group?: string | undefined;
  /** Its tools/list entry, JSON Schemas included (as `listingOf` makes it). */
  readonly listed: () => Record<string, unknown>;
  /** Its schemas and run. */
  readonly load: () => Promise<ToolDefinition<S>>;
}

const isHandle = <S>(t: ToolDefinition<S> | ToolHandle<S>): t is ToolHandle<S> => typeof (t as ToolHandle<S>).load === 'function';

/** A definition given whole, as a handle: its listing made on the first listing, once. */
export const handleOf = <S>(def: ToolDefinition<S>): ToolHandle<S> => {
  let entry: Record<string, unknown> | undefined;
  return {
    name: def.name,
    title: def.title,
    annotations: def.annotations,
    scope: def.scope,
    group: def.group,
    listed: () => {
      entry ??= listingOf(def);
      return entry;
    },
    load: async () => def,
  };
};

export interface ToolCallResult {
  readonly result: Record<string, unknown>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly inputRequired?: InputRequired;
  /** The call started long work: its answer is the task's handle (lambda/mcp/tasks.ts). */
  readonly task?: McpTask;
}

const LEGACY_INVALID_ARGS = new Set(['2025-03-26', '2025-06-18']);

/** No tool's arguments nest deeper than this (a bulk item's fields are four levels down). */
export const MAX_ARGUMENT_DEPTH = 32;

/**
 * The path of the first value nested deeper than `max` levels, or undefined: walked with a stack of
 * its own, never by recursion, so no depth of input can overflow the call stack.
 */
const deepestPath = (value: unknown, max: number): string | undefined => {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: 'arguments', depth: 0 }];
  while (stack.length) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return path;
    for (const [k, child] of Object.entries(v)) {
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, path: path === 'arguments' ? k : `${path}.${k}`, depth: depth + 1 });
    }
  }
  return undefined;
};

/**
 * Tools declared once. Their listing entries (with the JSON Schemas) are built on the first listing
 * and the per-scope lists once per scope set, so `tools/list` does no schema work per request and a
 * cold start whose first request is a `tools/call` does none at all: the 22 tools' 44 JSON Schemas
 * were a quarter of the bundle's import time.
 */
export class ToolRegistry<S> {
  private readonly tools = new Map<string, ToolHandle<S>>();
  /** Per selection and era (titled or not): the listing per scope set. */
  private readonly listCache = new Map<string, ScopeCache<readonly Record<string, unknown>[]>>();
  /** The groups in the order their first tool was declared. */
  readonly groups: readonly string[];
  private readonly defaults: ToolSelection;

  constructor(
    given: readonly (ToolDefinition<S> | ToolHandle<S>)[],
    private readonly guard: CallGuard,
    private readonly observer: Observer,
    /** What a connection that names no groups lists; all of them when absent. */
    defaultGroups?: readonly string[],
  ) {
    const defs = given.map((t) => (isHandle(t) ? t : handleOf(t)));
    for (const def of [...defs].sort(byKey((d) => d.name))) {
      if (this.tools.has(def.name)) throw new Error(`tool ${def.name} is declared twice`);
      this.tools.set(def.name, def);
    }
    this.groups = [...new Set(defs.flatMap((d) => (d.group ? [d.group] : [])))];
    for (const g of defaultGroups ?? []) if (!this.groups.includes(g)) throw new Error(`default tool group ${g} has no tools`);
    this.defaults = defaultGroups ? { key: 'default', groups: new Set(defaultGroups) } : ALL_TOOLS;
  }

  /**
   * The selection a connection's URL names (`/mcp?tools=a,b`; `all`; nothing: the defaults). An
   * unknown group is refused naming it and every group there is.
   */
  select(param: string | undefined): ToolSelection {
    if (param === undefined || param.trim() === '' || param.trim() === 'default') return this.defaults;
    const names = [
      ...new Set(
        param
          .split(',')
          .map((g) => g.trim().toLowerCase())
          .filter(Boolean),
      ),
    ];
    const unknown = names.filter((g) => !this.groups.includes(g) && g !== 'default' && g !== 'all');
    if (unknown.length)
      throw new InvalidParamsError(
        `tools=${param}: no tool group ${unknown.map((g) => `'${g}'`).join(', ')}; the groups are ${this.groups.join(', ')} (or all; the URL without tools= lists ${this.defaults.groups ? [...this.defaults.groups].join(', ') : 'all'}).`,
      );
    if (names.includes('all')) return ALL_TOOLS;
    const chosen = new Set(names.flatMap((g) => (g === 'default' ? [...(this.defaults.groups ?? this.groups)] : [g])));
    const sorted = this.groups.filter((g) => chosen.has(g));
    return { key: sorted.join(','), groups: new Set(sorted) };
  }

  private chosen(def: ToolHandle<S>, selection: ToolSelection): boolean {
    return !def.group || !selection.groups || selection.groups.has(def.group);
  }

  scopeOf(name: string): Scope | null | undefined {
    return this.tools.get(name)?.scope;
  }

  groupOf(name: string): string | undefined {
    return this.tools.get(name)?.group;
  }

  /** Scopes the registered tools need: `scopes_supported` and the challenge's `scope`. */
  get requiredScopes(): Scope[] {
    return [...new Set([...this.tools.values()].flatMap((t) => (t.scope ? [t.scope] : [])))];
  }

  /**
   * The tools a principal may call, as `version` lists them. A tool's `title` sits beside its name
   * from 2025-06-18 on, where clients show it before `annotations.title`; 2025-03-26 has no such
   * field and gets it in the annotations instead. Never both: 26 titles are some 700 bytes of every
   * context.
   */
  list(principal: Principal, version: string, selection: ToolSelection = ALL_TOOLS): readonly Record<string, unknown>[] {
    const titled = version === '2025-03-26';
    const cacheKey = `${selection.key}|${titled}`;
    let cache = this.listCache.get(cacheKey);
    if (!cache) {
      cache = new ScopeCache();
      this.listCache.set(cacheKey, cache);
    }
    return cache.get(principal, () => {
      return [...this.tools.values()]
        .filter((def) => covers(principal, def.scope) && this.chosen(def, selection))
        .map((def) => {
          const entry = def.listed();
          if (!titled) return entry;
          const { title: _beside, ...rest } = entry;
          return { ...rest, annotations: { title: def.title, ...listedAnnotations(def.annotations) } };
        });
    });
  }

  async call(
    name: string,
    rawArgs: unknown,
    ctx: Omit<ToolContext<S>, 'toolName'>,
    selection: ToolSelection = ALL_TOOLS,
  ): Promise<ToolCallResult> {
    const handle = this.tools.get(name);
    if (!handle) throw new InvalidParamsError(`Unknown tool: ${name}`);
    if (!this.chosen(handle, selection))
      throw new InvalidParamsError(
        `Tool ${name} is in the tool group '${handle.group}', which this connection's URL does not list; connect with /mcp?tools=${[...(selection.groups ?? []), handle.group].join(',')} (or tools=all) to use it.`,
      );
    const started = performance.now();
    const argNames = rawArgs && typeof rawArgs === 'object' && !Array.isArray(rawArgs) ? Object.keys(rawArgs) : [];
    let items: number | undefined;
    const audit = (outcome: ToolOutcome) =>
      this.observer.toolCall({
        tool: name,
        argNames,
        outcome,
        durationMs: performance.now() - started,
        principal: ctx.principal,
        clientInfo: ctx.meta.clientInfo,
        ...(items !== undefined ? { items } : {}),
      });

    if (!covers(ctx.principal, handle.scope)) {
      audit('denied');
      throw new InsufficientScopeError(handle.scope!, `The tool ${name}`, ctx.principal.scopes, roleCutting(ctx.principal, handle.scope!));
    }
    // Its schemas and run: a chunk of its own, loaded on the tool's first call on this instance (and
    // not for a call its scope refuses). A chunk that cannot be loaded is an outright failure, audited.
    let def: ToolDefinition<S>;
    try {
      def = await handle.load();
    } catch (err) {
      audit('failed');
      throw err;
    }
    if (rawArgs !== undefined && (typeof rawArgs !== 'object' || rawArgs === null || Array.isArray(rawArgs))) {
      audit('invalid');
      throw new InvalidParamsError('arguments must be an object');
    }
    // Nested past any argument's depth: refused as invalid before anything walks it (a walk that
    // recursed through 100,000 levels would overflow the stack: a 500 for what is only bad input).
    const tooDeep = deepestPath(rawArgs, MAX_ARGUMENT_DEPTH);
    if (tooDeep !== undefined) {
      audit('invalid');
      const message = `Invalid arguments for ${name}: ${tooDeep}: nested deeper than ${MAX_ARGUMENT_DEPTH} levels; no argument is.`;
      if (LEGACY_INVALID_ARGS.has(ctx.meta.era.version)) throw new InvalidParamsError(message);
      return {
        result: refusalResult(message, {
          reason: 'invalid-argument',
          code: 'ERR_INVALID_ARGUMENT',
          data: { issues: [{ param: tooDeep, problem: `nested deeper than ${MAX_ARGUMENT_DEPTH} levels` }] },
        }),
      };
    }
    const parsed = z.safeParse(def.input, rawArgs ?? {});
    if (!parsed.success) {
      audit('invalid');
      const message = `Invalid arguments for ${name}: ${describeIssues(parsed.error)}`;
      if (LEGACY_INVALID_ARGS.has(ctx.meta.era.version)) throw new InvalidParamsError(message);
      return {
        result: refusalResult(message, {
          reason: 'invalid-argument',
          code: 'ERR_INVALID_ARGUMENT',
          data: { issues: issuesOf(parsed.error) },
        }),
      };
    }

    items = def.itemsOf?.(parsed.data);
    // The call starts beside its admission: its reads go out at once, its writes wait for the
    // admission (platform/admission-gate.ts). A call the limits refuse answers the refusal; what it
    // read is dropped, and it wrote nothing.
    const admission = this.guard.acquire(ctx.principal);
    const admitted = admission.then(() => undefined);
    // Heard by the writes that wait for it; a read-only call never asks.
    admitted.catch(() => undefined);
    const deferred: Promise<unknown>[] = [];
    const defer = (work: Promise<unknown>) => {
      deferred.push(work.catch(() => undefined));
    };
    const running = withAdmission(admitted, () => def.run(parsed.data, { ...ctx, toolName: name, defer }));
    // Settled in any case: a refused call's run fails on its first write or its first read after
    // the refusal (platform/admission-gate.ts), unheard.
    running.catch(() => undefined);
    let release: () => Promise<void>;
    try {
      release = await admission;
    } catch (err) {
      // What the refused call began (its reads, deferred work) is waited for, never answered.
      await Promise.allSettled([running, ...deferred]);
      if (!(err instanceof LimitExceededError)) {
        audit('failed'); // the limits could not be checked (answered 503)
        throw err;
      }
      audit(err.outcome);
      return {
        result: refusalResult(err.message, {
          reason: err.outcome,
          code: err.code,
          data: { retryAfterSeconds: err.retryAfterSeconds },
        }),
        headers: err.headers,
      };
    }
    let outcome: ToolOutcome = 'failed';
    try {
      const out = await running;
      if (isInputRequired(out)) {
        outcome = 'input_required';
        return { result: {}, inputRequired: out };
      }
      if (isTaskStarted(out)) {
        outcome = 'ok';
        return { result: {}, task: out.task };
      }
      const checked = def.output ? z.safeParse(def.output, out) : { success: true as const, data: out };
      if (!checked.success) throw new Error(`tool ${name} produced output outside its schema: ${describeIssues(checked.error)}`);
      // Fixtures may answer with no object at all (a bare string, or nothing).
      const notes = typeof out === 'object' && out !== null ? (out as WithTextNotes<object>).textNotes : undefined;
      const content = def.content
        ? def.content(checked.data)
        : [
            {
              type: 'text',
              text: withNotes(
                def.render ? def.render(checked.data, { timeZone: ctx.principal.timeZone, now: ctx.now }) : String(checked.data),
                notes,
              ),
            },
          ];
      outcome = 'ok';
      return { result: { content, ...(def.output ? { structuredContent: checked.data } : {}), isError: false } };
    } catch (err) {
      if (!(err instanceof ToolRefusal)) throw err;
      outcome = 'error';
      return { result: refusalResult(err.message, { reason: err.reason, code: err.code, data: err.data }) };
    } finally {
      await Promise.all([release(), ...deferred]);
      audit(outcome);
    }
  }
}

const withNotes = (text: string, notes: readonly string[] | undefined): string => {
  if (!notes?.length) return text;
  const end = text.indexOf('\n');
  return end < 0 ? `${text}\n${notes.join('\n')}` : `${text.slice(0, end)}\n${notes.join('\n')}${text.slice(end)}`;
};

/**
 * The input with its array items' fields as their types alone (their bounds, patterns and
 * descriptions are the single tool's, listed beside it), but for `keep`'s descriptions. Each item
 * is still checked whole, and refused naming its field, by the single tool's schema.
 */
const plainItems = (schema: Record<string, unknown>, keep: readonly string[]): Record<string, unknown> => {
  const props = schema.properties as Record<string, { items?: { properties?: Record<string, Record<string, unknown>> } }>;
  const typeOf = (field: Record<string, unknown>): unknown => {
    if (field.type !== undefined) return field.type;
    const variants = (field.anyOf as Record<string, unknown>[] | undefined)?.map((v) => v.type).filter((t) => t !== undefined);
    return variants?.length ? [...new Set(variants.flat())] : undefined;
  };
  for (const prop of Object.values(props)) {
    const fields = prop.items?.properties ?? {};
    for (const [name, field] of Object.entries(fields)) {
      const type = typeOf(field);
      fields[name] = {
        ...(field.enum ? { enum: field.enum } : type !== undefined ? { type } : {}),
        ...(keep.includes(name) && field.description ? { description: field.description } : {}),
      };
    }
  }
  return schema;
};

/**
 * A change's answer as listed: its own fields, each nested one as the bare type it is (`object`,
 * `array`). What a change returns a client reads by name (the key, the version, the record's id);
 * the nested detail is in its text and in the read tools' listings. `listedOutput` overrides.
 */
const listedOutputOf = <S>(def: ToolDefinition<S>): Record<string, unknown> => {
  if (def.listedOutput) return toJsonSchema(def.listedOutput, 'output');
  const schema = toJsonSchema(def.output!, 'output');
  if (def.annotations.readOnlyHint) return schema;
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const bare = (p: Record<string, unknown>): Record<string, unknown> =>
    p.type === 'object' ? { type: 'object' } : p.type === 'array' ? { type: 'array' } : p;
  return { ...schema, properties: Object.fromEntries(Object.entries(props).map(([k, p]) => [k, bare(p)])) };
};

/** A tool's tools/list entry: what the build writes for the workspace's tools (lib/build-tool-listing.ts). */
export const listingOf = <S>(def: ToolDefinition<S>): Record<string, unknown> => ({
  name: def.name,
  title: def.title,
  description: def.description,
  inputSchema: def.itemsDescribe
    ? plainItems(toJsonSchema(def.listedInput ?? def.input, 'input'), def.itemsDescribe)
    : toJsonSchema(def.listedInput ?? def.input, 'input'),
  ...(def.output ? { outputSchema: listedOutputOf(def) } : {}),
  annotations: listedAnnotations(def.annotations),
  ...(def.meta ? { _meta: def.meta } : {}),
});

/**
 * The annotations as listed: a hint at the protocol's default (readOnlyHint and idempotentHint
 * false) says nothing a client does not assume, so it is left out; destructiveHint and
 * openWorldHint default to true and stay. Some 450 bytes of every listing.
 */
const listedAnnotations = (a: ToolAnnotations): Partial<ToolAnnotations> =>
  Object.fromEntries(
    Object.entries(a).filter(([k, v]) => !((k === 'readOnlyHint' || k === 'idempotentHint') && v === false)),
  ) as Partial<ToolAnnotations>;

export const covers = (principal: Principal, scope: Scope | null | undefined): boolean =>
  scope === null || scope === undefined || principal.scopes.includes(scope);

export const isInputRequired = (value: unknown): value is InputRequired =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'input_required';

export const textResult = (text: string, isError: boolean): Record<string, unknown> => ({
  content: [{ type: 'text', text }],
  isError,
});

/**
 * Where a refused call's reason and data are, for a client to act on without reading the words:
 * `_meta["sh.doers/refusal"]` of the `isError` result, on every revision (docs/protocol.md lists the
 * reasons). A key of ours, as the protocol asks of `_meta` keys that are not its own.
 */
export const REFUSAL_META = 'sh.doers/refusal';

export interface RefusalMeta {
  /** Stable: what happened, for code to branch on (errors.ts RefusalReason, or ratelimited, busy). */
  readonly reason: string;
  /** The error's stable code (ERR_NOT_FOUND, ERR_CONFLICT, ERR_RATE_LIMITED, …). */
  readonly code: string;
  /** What to act on: the current version, the limit, when to retry, the later changes. */
  readonly data: Readonly<Record<string, unknown>>;
}

export const refusalResult = (text: string, refusal: RefusalMeta): Record<string, unknown> => ({
  ...textResult(text, true),
  _meta: { [REFUSAL_META]: refusal },
});
