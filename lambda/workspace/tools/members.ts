import * as z from 'zod/mini';
import { ConflictRefusal, InvalidArgumentRefusal } from '../../errors.js';
import { type Member, newUserId } from '../../vocabulary.js';
import { defineTool } from '../define-tool.js';
import { changeRole, checkInvite, removeMember } from '../membership.js';
import { cursorFor, isString, pageAfter, positionFrom } from '../paging.js';
import { memberLine, moreLine } from '../render.js';
import { idArg, listFields, memberOutput, pagingArgs, roleArg } from '../schemas.js';
import { isValidTimeZone } from '../time.js';
import { toMemberOutput } from '../views.js';
import { CREATE, READ, REMOVE, UPDATE } from './annotations.js';

const userIdArg = idArg('member user');
const byName = (m: Member): string => `${m.name.toLowerCase()}\u0000${m.userId}`;

// ---- members_list -------------------------------------------------------------------------------

const listInput = z.strictObject({ ...pagingArgs });
const listOutput = z.object({ ...listFields, members: z.array(memberOutput) });

export const membersList = defineTool({
  name: 'members_list',
  title: 'List the team',
  description:
    'Lists the members of the workspace by name, with user id, e-mail, role and time zone. Use it to find the userId to assign a ' +
    'task to (task_create, task_update) or to manage someone (member_role_set, member_remove); me_get covers the caller alone.',
  input: listInput,
  output: listOutput,
  annotations: READ,
  scope: 'team:read',
  run: async (args, ctx) => {
    const after = await positionFrom(ctx, args, isString);
    const members = (await ctx.services.directory.listMembers(ctx.principal.workspaceId)).sort((a, b) => (byName(a) < byName(b) ? -1 : 1));
    const { page, last } = pageAfter(members, byName, args.limit, after);
    return {
      returned: page.length,
      truncated: last !== undefined,
      ...(last !== undefined ? { nextCursor: await cursorFor(ctx, args, last) } : {}),
      members: page.map(toMemberOutput),
    };
  },
  render: (r) => `${r.returned} member(s):\n${r.members.map(memberLine).join('\n')}${moreLine(r.truncated, r.returned)}`,
});

// ---- member_invite ------------------------------------------------------------------------------

const inviteInput = z.strictObject({
  email: z.email().check(z.maxLength(254)),
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(120)),
  role: z._default(roleArg, 'member').check(z.describe('viewer, member (default), admin, or owner (owners only)')),
  timeZone: z
    .optional(z.string().check(z.minLength(1), z.maxLength(64)))
    .check(z.describe("IANA time zone, e.g. Europe/Berlin; default: the inviter's")),
});

export const memberInvite = defineTool({
  name: 'member_invite',
  title: 'Add someone to the team',
  description:
    'Adds a person to the workspace by e-mail with a role (admins and owners; only owners add owners). They can sign in through the ' +
    "organisation's identity provider with that e-mail, or get a personal access token from an operator. To change an existing " +
    "member's role use member_role_set.",
  input: inviteInput,
  output: memberOutput,
  annotations: CREATE,
  scope: 'team:admin',
  run: async (args, { services, principal, now }) => {
    checkInvite(principal, args.role);
    const timeZone = args.timeZone ?? principal.timeZone;
    if (!isValidTimeZone(timeZone))
      throw new InvalidArgumentRefusal(`timeZone: ${timeZone} is not an IANA time zone (e.g. Europe/Berlin).`);
    const member: Member = {
      workspaceId: principal.workspaceId,
      userId: newUserId(),
      email: args.email.toLowerCase(),
      name: args.name,
      role: args.role,
      timeZone,
      status: 'active',
      createdAt: now.toISOString(),
    };
    const outcome = await services.directory.inviteMember(member);
    if (outcome === 'email_taken') throw new ConflictRefusal(`Conflict: ${member.email} cannot be invited; the address is already in use.`);
    return toMemberOutput(member);
  },
  render: (m) => `Added:\n${memberLine(m)}`,
});

// ---- member_role_set ----------------------------------------------------------------------------

const roleInput = z.strictObject({ userId: userIdArg, role: roleArg });

export const memberRoleSet = defineTool({
  name: 'member_role_set',
  title: "Change a member's role",
  description:
    "Sets a member's role: viewer (reads only), member (writes tasks and comments), admin (also projects and team), owner " +
    '(admins and owners; only owners make or unmake owners, and the last owner cannot be demoted). Setting the current role changes nothing.',
  input: roleInput,
  output: memberOutput,
  annotations: UPDATE,
  scope: 'team:admin',
  run: async (args, { services, principal }) =>
    toMemberOutput(await changeRole(services.directory, principal, principal.workspaceId, args.userId, args.role)),
  render: (m) => `Role set:\n${memberLine(m)}`,
});

// ---- member_remove ------------------------------------------------------------------------------

const removeInput = z.strictObject({ userId: userIdArg });
const removeOutput = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  removed: z.literal(true),
  tokensRevoked: z.number().check(z.int()),
});

export const memberRemove = defineTool({
  name: 'member_remove',
  title: 'Remove someone from the team',
  description:
    'Removes a member from the workspace and revokes their personal access tokens (admins and owners; only owners remove owners, ' +
    'and never the last one). Their tasks and comments stay. To only reduce what they may do, use member_role_set with viewer.',
  input: removeInput,
  output: removeOutput,
  annotations: REMOVE,
  scope: 'team:admin',
  run: async (args, { services, principal, now }) => {
    const target = await removeMember(services.directory, principal, principal.workspaceId, args.userId);
    const tokens = (await services.tokens.list(principal.workspaceId)).filter((t) => t.userId === target.userId && !t.revokedAt);
    await Promise.all(tokens.map((t) => services.tokens.revoke(principal.workspaceId, t.tokenId, now.toISOString())));
    return { userId: target.userId, name: target.name, email: target.email, removed: true as const, tokensRevoked: tokens.length };
  },
  render: (r) => `Removed [${r.userId}] ${r.name} <${r.email}>; ${r.tokensRevoked} token(s) revoked.`,
});

export const MEMBER_TOOLS = [membersList, memberInvite, memberRoleSet, memberRemove];
