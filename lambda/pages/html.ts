/** Markup that is already safe to send: only `html` and `raw` make one. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

type Part = Html | string | number | undefined | false | null | readonly Part[];

const render = (part: Part): string => {
  if (part === undefined || part === null || part === false) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
};

/**
 * Templates escape every interpolated value unless it is itself a template's output, so a client
 * name, an e-mail address or an error description can never become markup.
 */
export const html = (strings: TemplateStringsArray, ...values: Part[]): Html =>
  new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? render(values[i]!) : ''), ''));
