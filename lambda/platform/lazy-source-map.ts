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
 * V8 calls `Error.prepareStackTrace` when an error's `stack` is first read; frames of `bundle` are
 * written as `name (lambda/…/file.ts:line:column)` from its `<bundle>.map`, the others as V8 would.
 * Without a readable map the stack stays the bundle's own.
 */
export const mapStacksLazily = (bundle: URL): void => {
  if (process.sourceMapsEnabled) return;
  const file = fileURLToPath(bundle);
  let map: SourceMap | null | undefined;
  const sourceMap = (): SourceMap | null => {
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
      } catch {
        map = null;
      }
    }
    return map;
  };
  const frameLine = (frame: NodeJS.CallSite): string => {
    const at = frame.getFileName();
    const line = frame.getLineNumber();
    const column = frame.getColumnNumber();
    if ((at === bundle.href || at === file) && line !== null && column !== null) {
      const entry = sourceMap()?.findEntry(line - 1, column - 1) as
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
