/**
 * Jira's wiki markup (what its CSV export writes in Description and Comment) as Markdown, which is
 * what doers' notes and comments hold: `*bold*`, `_italic_`, `-strike-`, `{{mono}}`, `{code}`,
 * `{noformat}`, `{quote}`, `bq.`, `h1.`–`h6.`, `#` and `*` lists (nested), `[text|url]` links,
 * `[~mention]`, `!file.png|width=1440!` images and attachments, `||` tables, `----`, and
 * `{color}` dropped. Written here rather than taken from npm: jira2md pulls marked 4 in for the
 * other direction, j2m a CLI's dependencies, and neither keeps a code block's text untouched or
 * finds an embedded attachment's address in the export.
 */

/** Placeholders for what must not be converted again (code and the Markdown made for it). */
const HOLD = '\u0000';

const fence = (body: string, lang = ''): string => `\`\`\`${lang}\n${body.replace(/^\n+|\n+$/g, '')}\n\`\`\``;

/**
 * `text` as Markdown. `attachments` maps a file name the row's Attachment columns name to its
 * address, so `!shot.png!` becomes an image that shows; a name it does not know stays a link by name.
 */
export const jiraToMarkdown = (text: string, attachments: ReadonlyMap<string, string> = new Map()): string => {
  const held: string[] = [];
  const hold = (s: string): string => `${HOLD}${held.push(s) - 1}${HOLD}`;
  let t = text.replace(/\r\n?/g, '\n');
  // Blocks whose text is kept as it is: code (with its language) and noformat.
  t = t.replace(/\{code(?::([^}]*))?\}([\s\S]*?)\{code\}/g, (_m, opts: string | undefined, body: string) => {
    const lang = (opts ?? '').split('|').find((o) => /^[\w+#-]+$/.test(o)) ?? '';
    return hold(fence(body, lang.toLowerCase()));
  });
  t = t.replace(/\{noformat(?::[^}]*)?\}([\s\S]*?)\{noformat\}/g, (_m, body: string) => hold(fence(body)));
  t = t.replace(/\{\{([^\n]*?)\}\}/g, (_m, code: string) => hold(`\`${code}\``));
  t = t.replace(/\{quote\}([\s\S]*?)\{quote\}/g, (_m, body: string) =>
    body
      .replace(/^\n+|\n+$/g, '')
      .split('\n')
      .map((l) => `> ${l}`)
      .join('\n'),
  );
  t = t.replace(/\{color(?::[^}]*)?\}/g, '');
  // Images and attachments: `!name|options!` (a URL or a file of the issue).
  t = t.replace(/!([^!\s|][^!\n|]*?)(?:\|[^!\n]*)?!/g, (m, target: string) => {
    if (!/\.\w{2,5}$/.test(target) && !/^https?:\/\//.test(target)) return m;
    const url = /^https?:\/\//.test(target) ? target : (attachments.get(target) ?? encodeURI(target));
    return hold(`![${target.replace(/^.*\//, '')}](${url})`);
  });
  // Links: [text|url], [url], [~mention], [^attachment.pdf].
  t = t.replace(/\[([^\]|\n]*)\|([^\]\n]+)\]/g, (_m, label: string, url: string) => hold(`[${label.trim()}](${url.trim()})`));
  t = t.replace(/\[~(?:accountid:)?([^\]\n]+)\]/g, (_m, who: string) => `@${who}`);
  t = t.replace(/\[\^([^\]\n]+)\]/g, (_m, name: string) => hold(`[${name}](${attachments.get(name) ?? encodeURI(name)})`));
  t = t.replace(/\[((?:https?|mailto):[^\]\s]+)\]/g, (_m, url: string) => hold(`<${url}>`));

  const lines = t.split('\n').map((line) => {
    const heading = /^\s*h([1-6])\.\s+(.*)$/.exec(line);
    if (heading) return `${'#'.repeat(Number(heading[1]))} ${inline(heading[2]!)}`;
    const quote = /^\s*bq\.\s+(.*)$/.exec(line);
    if (quote) return `> ${inline(quote[1]!)}`;
    if (/^\s*-{4,}\s*$/.test(line)) return '---';
    const item = /^\s*([#*-]+)\s+(.*)$/.exec(line);
    // `-` alone is a bullet only once (`--` is a dash in prose).
    if (item && !(item[1]!.includes('-') && item[1] !== '-')) {
      const marks = item[1]!;
      const indent = [...marks.slice(0, -1)].map((m) => (m === '#' ? '   ' : '  ')).join('');
      return `${indent}${marks.endsWith('#') ? '1.' : '-'} ${inline(item[2]!)}`;
    }
    const header = /^\s*\|\|(.*)\|\|\s*$/.exec(line);
    if (header) {
      const cells = header[1]!.split('||').map((c) => inline(c.trim()));
      return `| ${cells.join(' | ')} |\n|${cells.map(() => ' --- ').join('|')}|`;
    }
    const row = /^\s*\|(.*)\|\s*$/.exec(line);
    if (row)
      return `| ${row[1]!
        .split('|')
        .map((c) => inline(c.trim()))
        .join(' | ')} |`;
    return inline(line);
  });
  return lines
    .join('\n')
    .replace(new RegExp(`${HOLD}(\\d+)${HOLD}`, 'g'), (_m, i: string) => held[Number(i)]!)
    .replace(new RegExp(`${HOLD}(\\d+)${HOLD}`, 'g'), (_m, i: string) => held[Number(i)]!);
};

/** The marks inside a line: bold, strike-through (italic `_x_` is Markdown already). */
const inline = (s: string): string =>
  s
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?=$|[^\w*])/g, '$1**$2**')
    .replace(/(^|\s)-(?=[^\s-])([^-\n]*?[^\s-])-(?=$|[\s.,;:!?])/g, '$1~~$2~~');
