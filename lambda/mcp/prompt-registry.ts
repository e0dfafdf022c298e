import * as z from 'zod/mini';
import { InsufficientScopeError, InvalidParamsError } from '../errors.js';
import type { Principal, Scope } from '../vocabulary.js';
import { describeIssues } from './json-schema.js';
import { byKey } from './ordering.js';
import { ScopeCache } from './scope-cache.js';
import { ALL_TOOLS, covers, type InputRequired, isInputRequired, type ToolSelection } from './tool-registry.js';
import type { RequestMeta } from './types.js';

export interface PromptMessage {
  readonly role: 'user' | 'assistant';
  readonly content: Record<string, unknown> & { type: string };
}

/** What a prompt may look at besides its arguments: the caller's side and a multi round-trip's answers. */
export interface PromptContext {
  readonly meta: RequestMeta;
  /** The answers of a retried multi round-trip request, with the state the prompt left. */
  readonly input?: { readonly responses: Readonly<Record<string, unknown>>; readonly state: unknown };
}

export interface PromptDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /**
   * String arguments only (MCP prompt arguments are strings); a description becomes the listing's
   * text. zod's core type, so classic schemas (the test fixtures') serve as well.
   */
  readonly args: z.core.$ZodObject<Record<string, z.core.$ZodType<string | undefined>>>;
  /** The tools the prompt drives: it is listed only where every one is registered and covered. */
  readonly tools: readonly string[];
  /** Product prompts answer with messages; a prompt may instead ask for input (2026-07-28, SEP-2322). */
  readonly messages: (args: Record<string, string | undefined>, ctx: PromptContext) => PromptMessage[] | InputRequired;
}

export const definePrompt = <A extends Record<string, z.core.$ZodType<string | undefined>>>(def: {
  name: string;
  title: string;
  description: string;
  args: z.core.$ZodObject<A>;
  tools: readonly string[];
  messages: (args: z.output<z.core.$ZodObject<A>>, ctx: PromptContext) => PromptMessage[] | InputRequired;
}): PromptDefinition => def as unknown as PromptDefinition;

/** One user message: what every product prompt answers with. */
export const userText = (text: string): PromptMessage[] => [{ role: 'user', content: { type: 'text', text } }];

interface RegisteredPrompt {
  readonly def: PromptDefinition;
  readonly scopes: readonly Scope[];
  /** The tool groups its tools are in: a connection that does not list them all does not list it. */
  readonly groups: readonly string[];
  readonly listed: Record<string, unknown>;
  readonly strictArgs: z.core.$ZodType;
}

export class PromptRegistry {
  private readonly prompts = new Map<string, RegisteredPrompt>();
  /** Per tool selection (tool-registry.ts): the listing per scope set. */
  private readonly listCache = new Map<string, ScopeCache<readonly Record<string, unknown>[]>>();

  /** `scopeOfTool` answers undefined for a tool that is not registered: such a prompt is dropped. */
  constructor(
    defs: readonly PromptDefinition[],
    scopeOfTool: (tool: string) => Scope | null | undefined,
    groupOfTool: (tool: string) => string | undefined = () => undefined,
  ) {
    for (const def of [...defs].sort(byKey((d) => d.name))) {
      const shape = def.args._zod.def.shape;
      const toolScopes = def.tools.map(scopeOfTool);
      if (toolScopes.some((s) => s === undefined)) continue;
      this.prompts.set(def.name, {
        def,
        scopes: [...new Set(toolScopes.filter((s): s is Scope => !!s))],
        groups: [...new Set(def.tools.flatMap((t) => groupOfTool(t) ?? []))],
        strictArgs: z.strictObject(shape),
        listed: {
          name: def.name,
          title: def.title,
          description: def.description,
          arguments: Object.entries(shape).map(([name, schema]) => {
            const description = z.globalRegistry.get(schema)?.description;
            return { name, ...(description ? { description } : {}), required: !z.safeParse(schema, undefined).success };
          }),
        },
      });
    }
  }

  /** The prompts a principal may run whose tools the connection lists (`selection`: every group when absent). */
  list(principal: Principal, selection: ToolSelection = ALL_TOOLS): readonly Record<string, unknown>[] {
    let cache = this.listCache.get(selection.key);
    if (!cache) {
      cache = new ScopeCache();
      this.listCache.set(selection.key, cache);
    }
    return cache.get(principal, () =>
      [...this.prompts.values()]
        .filter((p) => p.scopes.every((s) => covers(principal, s)) && p.groups.every((g) => !selection.groups || selection.groups.has(g)))
        .map((p) => p.listed),
    );
  }

  /** The GetPromptResult, or the prompt's request for more input (the caller signs its state). */
  get(name: string, rawArgs: unknown, principal: Principal, ctx: PromptContext): Record<string, unknown> | InputRequired {
    const prompt = this.prompts.get(name);
    if (!prompt) throw new InvalidParamsError(`Unknown prompt: ${name}`);
    const missing = prompt.scopes.find((s) => !covers(principal, s));
    // Every scope the prompt needs, so one re-authorization is enough.
    if (missing) throw new InsufficientScopeError(missing, `The prompt ${name}`, [...principal.scopes, ...prompt.scopes]);
    if (rawArgs !== undefined && (typeof rawArgs !== 'object' || rawArgs === null || Array.isArray(rawArgs))) {
      throw new InvalidParamsError('arguments must be an object of strings');
    }
    const parsed = z.safeParse(prompt.strictArgs, rawArgs ?? {});
    if (!parsed.success) throw new InvalidParamsError(`Invalid arguments for prompt ${name}: ${describeIssues(parsed.error)}`);
    const messages = prompt.def.messages(parsed.data as Record<string, string | undefined>, ctx);
    return isInputRequired(messages) ? messages : { description: prompt.def.description, messages };
  }
}
