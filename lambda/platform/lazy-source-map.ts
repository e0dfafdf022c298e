import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces that point at `lambda/*.ts` lines, with the source map read on the first stack anyone
 * formats instead of at every cold start. Node's `--enable-source-maps` reads and indexes the bundle's
 * map while it loads the bundle: about 8 ms of a 115 ms cold start (docs/testing.md, "Benchmarks"),
 * for the few stacks a function ever logs (a 500's). With it on, Node maps the stacks itself and this
 * does nothing.
 *
 * V8 calls `Error.prepareStackTrace` when an error's `stack` is first read; frames of the bundle's
 * files (`bundle` and the chunks beside it, lib/bundling.ts MCP_CHUNKS_DIR) are written as
 * `name (lambda/…/file.ts:line:column)` from each file's `<file>.map`, read on its first frame, the
 * others as V8 would. Without a readable map a frame stays the bundle's own.
 */
export const mapStacksLazily = (bundle: URL): void => {
  if (process.sourceMapsEnabled) return;
  const dir = fileURLToPath(new URL('.', bundle));
  const maps = new Map<string, SourceMap | null>();
  const sourceMap = (file: string): SourceMap | null => {
    let map = maps.get(file);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
      } catch {
        map = null;
      }
      maps.set(file, map);
    }
    return map;
  };
  /** The file of a frame of the bundle's, or undefined for any other frame. */
  const bundleFile = (at: string | null): string | undefined => {
    if (!at) return undefined;
    const file = at.startsWith('file:') ? fileURLToPath(at) : at;
    return file.startsWith(dir) && file.endsWith('.mjs') ? file : undefined;
  };
  const frameLine = (frame: NodeJS.CallSite): string => {
    const file = bundleFile(frame.getFileName() ?? null);
    const line = frame.getLineNumber();
    const column = frame.getColumnNumber();
    if (file && line !== null && column !== null) {
      const entry = sourceMap(file)?.findEntry(line - 1, column - 1) as
        | { originalSource?: string; originalLine?: number; originalColumn?: number; name?: string }
        | undefined;
      if (entry?.originalSource) {
        const where = `${entry.originalSource.replace(/^.*?(?=(lambda|node_modules)\/)/, '')}:${entry.originalLine! + 1}:${entry.originalColumn! + 1}`;
        const name = entry.name ?? frame.getFunctionName();
        return `    at ${frame.isAsync() ? 'async ' : ''}${name ? `${name} (${where})` : where}`;
      }
    }
    return `    at ${String(frame)}`;
  };
  Error.prepareStackTrace = (error: Error, frames: NodeJS.CallSite[]) => {
    let head: string;
    try {
      head = String(error);
    } catch {
      head = '<error>';
    }
    return [head, ...frames.map(frameLine)].join('\n');
  };
};
