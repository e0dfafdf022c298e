import type { InboxKind, Notice } from './notice.js';

/**
 * What an e-mail says: one notice, or a day's notices grouped by task. Built from the Notice's named
 * fields alone (lambda/delivery/notice.ts), never by walking the object, so whatever else an object
 * carries at run time (notes, a comment's text, a token) cannot reach a mail.
 */

export interface MailContent {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

export interface NoticeMailOptions {
  readonly recipientName: string;
  /** The server's public URL (config.publicUrl); the assistant reaches it at `<publicUrl>/mcp`. */
  readonly publicUrl: string;
}

export interface DigestMailOptions extends NoticeMailOptions {
  /** The recipient's local day the digest covers, YYYY-MM-DD. */
  readonly date: string;
  readonly workspaceKey: string;
}

// lambda/pages/html.ts has the same escape, but the pages room sits above this one
// (.dependency-cruiser.cjs), and neither Node nor a dependency of ours offers one.
const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Control characters and line separators as one space: a title can never add a header line to the subject. */
const oneLine = (text: string): string => text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ').trim();

const SUBJECT_TITLE_MAX = 80;
const shortTitle = (title: string): string => {
  const chars = [...oneLine(title)];
  return chars.length > SUBJECT_TITLE_MAX ? `${chars.slice(0, SUBJECT_TITLE_MAX - 1).join('')}…` : chars.join('');
};

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');

/** An instant as a person reads it in UTC and as ISO 8601; a value that is no date is shown as it came. */
const when = (at: string): { readonly utc: string; readonly day: string; readonly iso: string } => {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return { utc: oneLine(at), day: oneLine(at), iso: oneLine(at) };
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
  return {
    utc: `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${time}`,
    day: `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${time}`,
    iso: d.toISOString(),
  };
};

const taskRef = (n: Notice): string => `${oneLine(n.taskKey)} "${shortTitle(n.taskTitle)}"`;

/** The subject's words, to the recipient. */
const HEADLINES: Readonly<Record<InboxKind, (n: Notice) => string>> = {
  assigned: (n) => `${oneLine(n.actorName)} assigned you ${taskRef(n)}`,
  mentioned: (n) => `${oneLine(n.actorName)} mentioned you on ${taskRef(n)}`,
  status: (n) => `${oneLine(n.actorName)} changed the status of ${taskRef(n)}`,
  completed: (n) => `${oneLine(n.actorName)} completed ${taskRef(n)}`,
  comment: (n) => `${oneLine(n.actorName)} commented on ${taskRef(n)}`,
  due: (n) => `${taskRef(n)} is due`,
  unblocked: (n) => `${taskRef(n)} is no longer blocked`,
  reminder: (n) => `Reminder: ${taskRef(n)}`,
};

const base = (publicUrl: string): string => publicUrl.replace(/\/+$/, '');

const footerText = (workspaceKey: string, publicUrl: string): string =>
  `You get this e-mail for your inbox in ${workspaceKey} on doers (${base(publicUrl)}); your assistant can change which e-mail you get.`;

const footerHtml = (workspaceKey: string, publicUrl: string): string =>
  `<p style="color:#666;font-size:0.9em">You get this e-mail for your inbox in ${esc(workspaceKey)} on doers ` +
  `(<a href="${esc(base(publicUrl))}">${esc(base(publicUrl))}</a>); your assistant can change which e-mail you get.</p>`;

const page = (subject: string, body: string): string =>
  '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
  `<title>${esc(subject)}</title></head>` +
  `<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#111">${body}</body></html>`;

/** A mail's plain text: the greeting, the body's lines, and the footer every mail ends with. */
const letter = (opts: NoticeMailOptions, workspace: string, body: readonly string[]): string =>
  [`Hello ${oneLine(opts.recipientName)},`, '', ...body, '-- ', footerText(workspace, opts.publicUrl), ''].join('\n');

/** One notice as a mail to one member. */
export const noticeMail = (notice: Notice, opts: NoticeMailOptions): MailContent => {
  const workspace = oneLine(notice.workspaceKey);
  const subject = `[${workspace}] ${HEADLINES[notice.kind](notice)}`;
  const at = when(notice.at);
  const key = oneLine(notice.taskKey);
  const summary = oneLine(notice.summary);
  const rows: readonly (readonly [string, string])[] = [
    ['Who', oneLine(notice.actorName)],
    ['Through', oneLine(notice.client)],
    ['When', `${at.utc} (${at.iso})`],
    ['Task', `${key} "${oneLine(notice.taskTitle)}" in ${workspace}`],
  ];
  const text = letter(opts, workspace, [
    summary,
    '',
    ...rows.map(([label, value]) => `${`${label}:`.padEnd(9)}${value}`),
    '',
    `To see it, ask your assistant for your inbox, or for ${key}.`,
    '',
  ]);
  const html = page(
    subject,
    `<p>Hello ${esc(oneLine(opts.recipientName))},</p>` +
      `<p><strong>${esc(summary)}</strong></p>` +
      '<table role="presentation" style="border-collapse:collapse">' +
      rows
        .map(
          ([label, value]) =>
            `<tr><th align="left" style="padding-right:1em;vertical-align:top">${esc(label)}</th><td>${
              label === 'When' ? `<time datetime="${esc(at.iso)}">${esc(at.utc)}</time> (${esc(at.iso)})` : esc(value)
            }</td></tr>`,
        )
        .join('') +
      '</table>' +
      `<p>To see it, ask your assistant for your inbox, or for <strong>${esc(key)}</strong>.</p>` +
      footerHtml(workspace, opts.publicUrl),
  );
  return { subject, text, html };
};

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** The notices by task: tasks in the order of their first notice, each task's notices oldest first. */
const byTask = (notices: readonly Notice[]): Notice[][] => {
  const time = (n: Notice): number => Date.parse(n.at) || 0;
  const sorted = [...notices].sort((a, b) => time(a) - time(b));
  const groups = new Map<string, Notice[]>();
  for (const n of sorted) {
    const group = groups.get(n.taskId);
    if (group) group.push(n);
    else groups.set(n.taskId, [n]);
  }
  return [...groups.values()];
};

/** A day's notices in one mail to one member, grouped by task. */
export const digestMail = (notices: readonly Notice[], opts: DigestMailOptions): MailContent => {
  const workspace = oneLine(opts.workspaceKey);
  const date = oneLine(opts.date);
  const groups = byTask(notices);
  const count =
    notices.length === 0 ? 'nothing new' : `${plural(notices.length, 'update', 'updates')} on ${plural(groups.length, 'task', 'tasks')}`;
  const subject = `[${workspace}] Your digest for ${date}: ${count}`;
  const line = (n: Notice): string => `${when(n.at).day}  ${oneLine(n.summary)} (through ${oneLine(n.client)})`;
  const text = letter(opts, workspace, [
    notices.length === 0 ? `Nothing new in ${workspace} on ${date}.` : `What happened in ${workspace} on ${date}: ${count}.`,
    '',
    ...groups.flatMap((group) => [taskRef(group[0]!), ...group.map((n) => `  ${line(n)}`), '']),
    ...(notices.length === 0 ? [] : ['To see them, ask your assistant for your inbox, or for a task by its key.', '']),
  ]);
  const html = page(
    subject,
    `<p>Hello ${esc(oneLine(opts.recipientName))},</p>` +
      `<p>${esc(notices.length === 0 ? `Nothing new in ${workspace} on ${date}.` : `What happened in ${workspace} on ${date}: ${count}.`)}</p>` +
      groups
        .map(
          (group) =>
            `<h3 style="margin-bottom:0.25em">${esc(taskRef(group[0]!))}</h3><ul style="margin-top:0">` +
            group
              .map(
                (n) =>
                  `<li><time datetime="${esc(when(n.at).iso)}">${esc(when(n.at).day)}</time> ${esc(oneLine(n.summary))} ` +
                  `(through ${esc(oneLine(n.client))})</li>`,
              )
              .join('') +
            '</ul>',
        )
        .join('') +
      (notices.length === 0 ? '' : '<p>To see them, ask your assistant for your inbox, or for a task by its key.</p>') +
      footerHtml(workspace, opts.publicUrl),
  );
  return { subject, text, html };
};
