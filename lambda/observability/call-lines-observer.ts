import type { Observer } from './observer.js';

const clock = (): string => new Date().toTimeString().slice(0, 8);

/**
 * `npm start`'s default: one short line a person reads per tool call and resource read (time, what,
 * outcome, milliseconds), so the banner with the token stays on screen. The audit lines and metric
 * records Lambda writes are `DOERS_LOCAL_LOG=json` (lambda/local/main.ts).
 */
export const createCallLinesObserver = (write: (line: string) => void): Observer => ({
  toolCall(e) {
    write(`${clock()}  ${e.tool}  ${e.outcome}  ${Math.round(e.durationMs)} ms${e.items !== undefined ? `  ${e.items} items` : ''}\n`);
  },
  resourceRead(e) {
    write(`${clock()}  read ${e.provider}  ${e.outcome}  ${Math.round(e.durationMs)} ms\n`);
  },
  request() {},
  refusal() {},
});
