import * as z from 'zod/mini';
import { type NotifySettings, ROLES, SCOPES } from '../../../vocabulary.js';
import { changeOwnSettings } from '../../membership/members.js';
import { digestHourNeeded, emailIsOff, memberNotFound, timeZoneUnknown } from '../../model/refusals.js';
import { dateInZone, isValidTimeZone } from '../../model/time.js';
import { defineTool } from '../define-tool.js';
import { dateOut } from '../schemas.js';
import { sourceOf } from '../sources.js';
import { READ, UPDATE } from './annotations.js';

const EMAIL_CHOICES = ['off', 'each', 'digest'] as const;

const notifyOutput = z.object({
  email: z.enum(EMAIL_CHOICES).check(z.describe('off, each event, or a daily digest')),
  digestHour: z.optional(z.number().check(z.int(), z.describe('Local hour of the digest'))),
  emailAvailable: z.boolean().check(z.describe('Whether this deployment sends e-mail')),
});

const meOutput = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  workspace: z.object({ workspaceId: z.string(), name: z.string(), key: z.string().check(z.describe('Task keys are KEY-<number>')) }),
  role: z.enum(ROLES),
  timeZone: z.string(),
  today: dateOut.check(z.describe("Today's date in the user's time zone")),
  now: z.iso.datetime({ offset: true }),
  scopes: z.array(z.enum(SCOPES)),
  unread: z.number().check(z.int()),
  notify: notifyOutput,
});

const notifyOf = (n: NotifySettings | undefined, emailAvailable: boolean): z.input<typeof notifyOutput> => ({
  email: emailAvailable ? (n?.email ?? 'off') : 'off',
  ...(n?.digestHour !== undefined && n.email === 'digest' ? { digestHour: n.digestHour } : {}),
  emailAvailable,
});

const notifyLine = (n: z.output<typeof notifyOutput>): string =>
  !n.emailAvailable
    ? 'E-mail: not sent by this deployment.'
    : n.email === 'off'
      ? 'E-mail: off (me_update email each or digest).'
      : n.email === 'each'
        ? 'E-mail: each event.'
        : `E-mail: a daily digest at ${String(n.digestHour ?? 0).padStart(2, '0')}:00.`;

export const meGet = defineTool({
  name: 'me_get',
  title: 'Who am I',
  description:
    "The calling user: name, e-mail, workspace and task key, role, time zone, today there, the token's scopes, unread inbox entries.",
  input: z.strictObject({}),
  output: meOutput,
  // The scopes as strings: which there are, the protected-resource metadata lists (scopes_supported).
  // How one is told, as its type: me_update's listing describes it.
  listedOutput: z.extend(meOutput, { scopes: z.array(z.string()), unread: z.number(), notify: z.object({}) }),
  annotations: READ,
  scope: null,
  run: async (_args, { principal, now, services }) => ({
    userId: principal.userId,
    name: principal.name,
    email: principal.email,
    workspace: { workspaceId: principal.workspaceId, name: principal.workspaceName, key: principal.workspaceKey },
    role: principal.role,
    timeZone: principal.timeZone,
    today: dateInZone(now, principal.timeZone),
    now: now.toISOString(),
    scopes: [...principal.scopes],
    unread: await services.inbox.unreadCount(principal.workspaceId, principal.userId),
    notify: notifyOf(principal.notify, !!services.emailOn),
  }),
  render: (me) =>
    `${me.name} <${me.email}> [${me.userId}] · ${me.role} of ${me.workspace.name} [${me.workspace.workspaceId}], task keys ${me.workspace.key}-<number>\n` +
    `Time zone ${me.timeZone}, today is ${me.today}.\nScopes: ${me.scopes.length ? me.scopes.join(', ') : 'none'}\n` +
    `Inbox: ${me.unread >= 100 ? '99+' : me.unread} unread (inbox_list). ${notifyLine(me.notify)}`,
});

export const meUpdate = defineTool({
  name: 'me_update',
  title: 'My settings',
  description: 'Your time zone (dates and reminders are read in it) and e-mail: off, each event, or a daily digest at digestHour (0-23).',
  input: z.strictObject({
    // An empty or unknown one is refused naming it (timeZoneUnknown).
    timeZone: z.optional(z.string().check(z.trim(), z.maxLength(64), z.describe('IANA, like Europe/Berlin'))),
    email: z.optional(z.enum(EMAIL_CHOICES)),
    digestHour: z.optional(z.number().check(z.int(), z.minimum(0), z.maximum(23))),
  }),
  output: z.object({ timeZone: z.string(), notify: notifyOutput, changed: z.boolean() }),
  annotations: UPDATE,
  // One's own settings, like one's inbox: any token that reads the workspace may set them.
  scope: 'tasks:read',
  run: async (args, ctx) => {
    const { principal, services } = ctx;
    if (args.timeZone !== undefined && !isValidTimeZone(args.timeZone)) throw timeZoneUnknown(args.timeZone);
    const emailOn = !!services.emailOn;
    if (args.email !== undefined && args.email !== 'off' && !emailOn) throw emailIsOff();
    const member = await services.directory.getMember(principal.workspaceId, principal.userId);
    if (!member) throw memberNotFound(principal.userId);
    const was = member.notify;
    const email = args.email ?? (args.digestHour !== undefined ? 'digest' : (was?.email ?? 'off'));
    const digestHour = args.digestHour ?? (email === 'digest' ? was?.digestHour : undefined);
    if (email === 'digest' && digestHour === undefined) throw digestHourNeeded();
    const notify: NotifySettings | undefined =
      email === 'off' ? undefined : { email, ...(email === 'digest' ? { digestHour: digestHour! } : {}) };
    const out = await changeOwnSettings(services, sourceOf(ctx), member, {
      timeZone: args.timeZone ?? member.timeZone,
      ...(notify ? { notify } : {}),
    });
    return { timeZone: out.member.timeZone, notify: notifyOf(out.member.notify, emailOn), changed: out.changed };
  },
  render: (out) => `${out.changed ? 'Saved' : 'Already so'}: time zone ${out.timeZone}. ${notifyLine(out.notify)}`,
});
