/**
 * The MCP Apps views (apps protocol 2026-01-26) and the tools whose results they render. Read by the
 * server (lambda/workspace/app-views.ts: the `ui://` resources and the tools' `_meta.ui`) and by the
 * build (lambda/views/build.ts: `<view>.html` from the browser entry `lambda/views/<view>.ts`).
 * Nothing here runs in a browser, and no browser source reaches the MCP function's bundle.
 */

/** The resource's mime type the extension defines for an HTML view. */
export const VIEW_MIME_TYPE = 'text/html;profile=mcp-app';

/** Tool → the view it renders in. */
export const VIEW_OF_TOOL: Readonly<Record<string, string>> = { agenda_get: 'agenda', project_get: 'board', tasks_search: 'board' };

export const VIEWS: readonly string[] = [...new Set(Object.values(VIEW_OF_TOOL))];

/** Stable across releases: hosts cache views by URI, so a release changes the content, never the URI. */
export const viewUri = (view: string): string => `ui://doers/${view}`;
