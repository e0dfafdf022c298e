import { App, applyDocumentTheme, applyHostFonts, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';
import { isObject, type Json } from './model.js';

/** One tool call through the host, as the view needs it: did it work, its structured result, its text. */
export interface ToolOutcome {
  readonly ok: boolean;
  readonly data: Json;
  readonly text: string;
}

export interface ViewHost {
  /** The host's locale (BCP 47), for dates; undefined: the browser's. */
  locale(): string | undefined;
  /** Calls one of the server's tools through the host: the view never reaches the server itself and holds no token. */
  call(tool: string, args: Json): Promise<ToolOutcome>;
  /** Adds one line to what the model is told the user changed here, so the conversation stays true. */
  tellModel(line: string): void;
  /** Reads one of the server's resources through the host (an attachment's bytes): never the server itself. */
  read(uri: string): Promise<{ readonly mimeType?: string; readonly blob?: string; readonly text?: string } | undefined>;
}

export interface ViewEvents {
  /** The arguments the model called the tool with. */
  input(args: Json): void;
  result(outcome: ToolOutcome): void;
  cancelled(reason: string): void;
}

const outcomeOf = (r: { isError?: boolean; structuredContent?: unknown; content?: unknown }): ToolOutcome => ({
  ok: r.isError !== true,
  data: isObject(r.structuredContent) ? r.structuredContent : {},
  text: Array.isArray(r.content)
    ? r.content
        .filter((c): c is { type: 'text'; text: string } => isObject(c) && c.type === 'text' && typeof c.text === 'string')
        .map((c) => c.text)
        .join('\n')
    : '',
});

/** The model is told at most this many changes (newest kept): enough for a session in one view. */
const MAX_TOLD = 20;

/**
 * Connects the view to its host with the official App: the tool's input and result, the host's
 * theme, styles, fonts, size and safe area (applied to the document as they arrive and change).
 */
export const startView = (view: string, events: ViewEvents): ViewHost => {
  const app = new App({ name: `doers-${view}`, version: '1.0.0' }, { availableDisplayModes: ['inline'] });
  let context: McpUiHostContext = {};
  const told: string[] = [];

  const apply = (change: McpUiHostContext) => {
    context = { ...context, ...change };
    const root = document.documentElement;
    if (change.theme) applyDocumentTheme(change.theme);
    if (change.styles?.variables) applyHostStyleVariables(change.styles.variables);
    if (change.styles?.css?.fonts) applyHostFonts(change.styles.css.fonts);
    const size = change.containerDimensions;
    if (size) {
      // A fixed height is filled (the view scrolls inside it); a maximum bounds the view's own height.
      root.style.height = 'height' in size ? '100vh' : '';
      root.style.maxHeight = 'maxHeight' in size && size.maxHeight ? `${size.maxHeight}px` : '';
    }
    const inset = change.safeAreaInsets;
    if (inset)
      for (const side of ['top', 'right', 'bottom', 'left'] as const) root.style.setProperty(`--inset-${side}`, `${inset[side]}px`);
  };

  app.ontoolinput = (params) => events.input(isObject(params.arguments) ? params.arguments : {});
  app.ontoolresult = (result) => events.result(outcomeOf(result));
  app.ontoolcancelled = (params) => events.cancelled(params.reason ?? 'cancelled');
  app.onhostcontextchanged = apply;
  app.onteardown = async () => ({});
  void app.connect().then(
    () => apply(app.getHostContext() ?? {}),
    (err: unknown) => events.cancelled(`The host did not connect: ${err instanceof Error ? err.message : String(err)}`),
  );

  return {
    locale: () => context.locale,
    call: async (tool, args) => {
      for (let attempt = 0; ; attempt++) {
        let out: ToolOutcome;
        try {
          out = outcomeOf(await app.callServerTool({ name: tool, arguments: args }));
        } catch (err) {
          return { ok: false, data: {}, text: err instanceof Error ? err.message : String(err) };
        }
        // Refused for the moment (the user's calls in flight, or the rate limit about to reset): wait as told, twice at most.
        const wait = out.ok ? undefined : Number(/retry after (\d+) s/i.exec(out.text)?.[1]);
        if (attempt >= 2 || !wait || wait > 3) return out;
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      }
    },
    read: async (uri) => {
      try {
        const out = await app.readServerResource({ uri });
        const c = out.contents[0] as { mimeType?: string; blob?: string; text?: string } | undefined;
        return c;
      } catch {
        return undefined;
      }
    },
    tellModel: (line) => {
      told.push(line);
      told.splice(0, told.length - MAX_TOLD);
      // Each update replaces the previous one, so it carries every change made here so far.
      if (!app.getHostCapabilities()?.updateModelContext) return;
      const text = [`The user changed tasks in the doers ${view} view, after the tool result above:`, ...told.map((l) => `- ${l}`)].join(
        '\n',
      );
      void app.updateModelContext({ content: [{ type: 'text', text }] }).catch(() => undefined);
    },
  };
};
