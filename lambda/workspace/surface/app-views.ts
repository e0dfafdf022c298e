import type { StaticResourceDefinition } from '../../mcp/resource-registry.js';
import type { ToolDefinition } from '../../mcp/tool-registry.js';
import { VIEW_MIME_TYPE, VIEW_OF_TOOL, VIEWS, viewUri } from '../../views/links.js';
import type { WorkspaceServices } from './services.js';

/**
 * A built view's HTML by file name (`agenda.html`): in Lambda read from beside the bundle
 * (lambda/handler.ts), locally built on demand (lambda/local/server.ts). Never imported: the
 * function's module stays as small and as quick to load as without views.
 */
export type ViewSource = (file: string) => Promise<string>;

/** An hour: a release reaches the hosts' caches within it, and the views read older results meanwhile. */
const VIEW_TTL_MS = 3_600_000;

/** All script and style is inline, so a view needs no domain (an empty CSP, the hosts' strictest) and no origin of its own. */
const UI_META = { ui: { csp: {}, prefersBorder: true } };

/**
 * The tools' link to their view: `_meta.ui.resourceUri`, and the flat `ui/resourceUri` of earlier hosts
 * (the official SDK's `registerAppTool` still sets both). The one place the tools get it.
 */
export const linkViews = <S>(tools: readonly ToolDefinition<S>[]): ToolDefinition<S>[] =>
  tools.map((tool) => {
    const view = VIEW_OF_TOOL[tool.name];
    if (!view) return tool;
    const uri = viewUri(view);
    return { ...tool, meta: { ...tool.meta, ui: { resourceUri: uri }, 'ui/resourceUri': uri } };
  });

/** The views as `ui://` resources; each file is read on its first read and kept for the instance's life. */
export const viewResources = (source: ViewSource): StaticResourceDefinition<WorkspaceServices>[] =>
  VIEWS.map((view) => {
    const uri = viewUri(view);
    let html: Promise<string> | undefined;
    return {
      uri,
      name: view,
      mimeType: VIEW_MIME_TYPE,
      scope: 'tasks:read',
      meta: UI_META,
      ttlMs: VIEW_TTL_MS,
      read: async () => {
        // A failed read is not kept: the next one tries again.
        html ??= source(`${view}.html`).catch((err: unknown) => {
          html = undefined;
          throw err;
        });
        return [{ uri, mimeType: VIEW_MIME_TYPE, text: await html, _meta: UI_META }];
      },
    };
  });
