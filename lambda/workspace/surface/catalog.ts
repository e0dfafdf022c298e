import type { PromptDefinition } from '../../mcp/prompt-registry.js';
import type { ResourceTemplateDefinition } from '../../mcp/resource-registry.js';
import type { ToolAnnotations, ToolDefinition, ToolHandle } from '../../mcp/tool-registry.js';
import type { Scope } from '../../vocabulary.js';
import { DEFAULT_TOOL_GROUPS } from '../../vocabulary.js';
import { WORKSPACE_PROMPTS } from './prompts.js';
import { WORKSPACE_RESOURCE_TEMPLATES } from './resources.js';
import type { WorkspaceServices } from './services.js';
import listing from './tool-listing.json' with { type: 'json' };
import type { ToolFile } from './tool-set.js';

/**
 * Everything the deployed function offers (docs/clients.md, "Tool groups"). The tools are listed
 * from the listing the build made of them (tool-listing.json: their names, groups, scopes and
 * tools/list entries, JSON Schemas included), so a cold start neither loads nor compiles the tools'
 * code and schemas to list them; a tool's file of `tools/` (its schemas and run, a chunk of the
 * bundle) is loaded on the tool's first call on the instance, the others never. tool-set.ts
 * declares them whole; test/unit/tool-listing.test.ts keeps the listing what it makes.
 */

type Tool = ToolDefinition<WorkspaceServices>;
type Loaded = Record<string, unknown>;

/** Each file, as the bundle's chunk of it: a literal import() per file, so the bundler makes one. */
const FILES: Readonly<Record<ToolFile, () => Promise<Loaded>>> = {
  activity: () => import('./tools/activity.js'),
  agenda: () => import('./tools/agenda.js'),
  attachments: () => import('./tools/attachments.js'),
  bulk: () => import('./tools/bulk.js'),
  comments: () => import('./tools/comments.js'),
  inbox: () => import('./tools/inbox.js'),
  me: () => import('./tools/me.js'),
  members: () => import('./tools/members.js'),
  projects: () => import('./tools/projects.js'),
  tasks: () => import('./tools/tasks.js'),
  transfer: () => import('./tools/transfer.js'),
  views: () => import('./tools/views.js'),
};

const isTool = (v: unknown): v is Tool => typeof v === 'object' && v !== null && typeof (v as Tool).run === 'function';

/** The tool of this name among a file's exports (each tool is exported by itself or in its file's list). */
const toolIn = (loaded: Loaded, name: string): Tool => {
  for (const value of Object.values(loaded)) {
    for (const t of Array.isArray(value) ? value : [value]) if (isTool(t) && t.name === name) return t;
  }
  throw new Error(`tool ${name} is not in its file: run npm run build:listing`);
};

interface Listed {
  readonly name: string;
  readonly title: string;
  readonly annotations: ToolAnnotations;
  readonly scope: Scope | null;
  readonly group: string;
  readonly file: ToolFile;
  readonly listed: Record<string, unknown>;
}

/** Every tool as the registry's handle: listed from the build's listing, loaded on its first call. */
export const PRODUCT_TOOLS: readonly ToolHandle<WorkspaceServices>[] = (listing.tools as readonly Listed[]).map((t) => {
  let loading: Promise<Tool> | undefined;
  return {
    name: t.name,
    title: t.title,
    annotations: t.annotations,
    scope: t.scope,
    group: t.group,
    listed: () => t.listed,
    load: () => {
      loading ??= FILES[t.file]()
        .then((loaded) => toolIn(loaded, t.name))
        .catch((err: unknown) => {
          loading = undefined;
          throw err;
        });
      return loading;
    },
  };
});

/** What `/mcp` lists without `tools=` (named in the vocabulary, which the authorization server reads too). */
export { DEFAULT_TOOL_GROUPS };
export const PRODUCT_PROMPTS: readonly PromptDefinition[] = WORKSPACE_PROMPTS;
export const PRODUCT_RESOURCE_TEMPLATES: readonly ResourceTemplateDefinition<WorkspaceServices>[] = WORKSPACE_RESOURCE_TEMPLATES;
