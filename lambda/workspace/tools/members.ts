import * as z from 'zod/mini';
import { ConflictRefusal, InvalidArgumentRefusal } from '../../errors.js';
import { type Member, newUserId } from '../../vocabulary.js';
import { activityIdOutput, memberAudit, revokeTokensOf, sourceOf, undoLine } from '../changes.js';
import { canAskForm, confirmation, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { changeRole, inviteMember, memberOrRefuse, removeMember } from '../membership.js';
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
  description: 'Lists the members by name with userId, e-mail, role and time zone: the userIds other tools take.',
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
  role: z._default(roleArg, 'member').check(z.describe('Default member')),
  timeZone: z.optional(z.string().check(z.minLength(1), z.maxLength(64))).check(z.describe('IANA zone; default: yours')),
});

const changedMemberOutput = z.extend(memberOutput, {
  ...activityIdOutput,
  declined: z.optional(z.enum(['declined', 'cancelled']).check(z.describe('The person said no: nothing changed'))),
});

export const memberInvite = defineTool({
  name: 'member_invite',
  title: 'Add someone to the team',
  description: 'Adds a person by e-mail with a role (admins; only owners add owners); they sign in with that e-mail.',
  input: inviteInput,
  output: changedMemberOutput,
  annotations: CREATE,
  scope: 'team:admin',
  run: async (args, ctx) => {
    const { services, principal, now } = ctx;
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
    const { audit, records } = memberAudit(services.activity, sourceOf(ctx));
    const outcome = await inviteMember(services.directory, principal, member, audit);
    if (outcome === 'email_taken') throw new ConflictRefusal(`Conflict: ${member.email} cannot be invited; the address is already in use.`);
    return { ...toMemberOutput(member), activityId: records.at(-1)?.activityId };
  },
  render: (m) => `Added:\n${memberLine(m)}${undoLine(m.activityId)}`,
});

// ---- member_role_set ----------------------------------------------------------------------------

const roleInput = z.strictObject({ userId: userIdArg, role: roleArg });

const RANK = { viewer: 0, member: 1, admin: 2, owner: 3 } as const;

export const memberRoleSet = defineTool({
  name: 'member_role_set',
  title: "Change a member's role",
  description:
    "Sets a member's role: viewer reads, member writes tasks, admin also projects and team, owner all (only owners touch owners; " +
    'never the last). Lowering an admin or owner asks the person first where the client can.',
  input: roleInput,
  output: changedMemberOutput,
  annotations: UPDATE,
  scope: 'team:admin',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    // Taking power away from an admin or owner is asked first (where the client can ask).
    if (canAskForm(ctx.meta)) {
      const target = memberOrRefuse(await services.directory.listMembers(principal.workspaceId), args.userId);
      if ((target.role === 'admin' || target.role === 'owner') && RANK[args.role] < RANK[target.role]) {
        const asked = confirmation(
          ctx,
          { id: target.userId, state: target.role },
          `Change ${target.name}'s role from ${target.role} to ${args.role}? They lose what only ${target.role}s may do. You can undo this for ${services.activity.retentionDays} days.`,
          `Make ${target.name} ${args.role}`,
        );
        if (asked.kind === 'ask') return asked.request;
        if (asked.kind !== 'proceed') return { ...toMemberOutput(target), declined: asked.kind };
      }
    }
    const { audit, records } = memberAudit(services.activity, sourceOf(ctx));
    const { member } = await changeRole(services.directory, principal, principal.workspaceId, args.userId, args.role, audit);
    return { ...toMemberOutput(member), activityId: records.at(-1)?.activityId };
  },
  render: (m) =>
    m.declined
      ? notConfirmedText(m.declined, `the role change of [${m.userId}] ${m.name}`)
      : `Role set:\n${memberLine(m)}${undoLine(m.activityId)}`,
});

// ---- member_remove ------------------------------------------------------------------------------

const removeInput = z.strictObject({ userId: userIdArg });
const removeOutput = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  removed: z.boolean().check(z.describe('false when the person declined or cancelled: nothing changed')),
  tokensRevoked: z.number().check(z.int()),
  declined: z.optional(z.enum(['declined', 'cancelled'])),
  ...activityIdOutput,
});

export const memberRemove = defineTool({
  name: 'member_remove',
  title: 'Remove someone from the team',
  description:
    'Removes a member and revokes their tokens (admins; only owners remove owners, never the last). Their tasks stay. Asks the ' +
    'person first where the client can.',
  input: removeInput,
  output: removeOutput,
  annotations: REMOVE,
  scope: 'team:admin',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    if (canAskForm(ctx.meta)) {
      const target = memberOrRefuse(await services.directory.listMembers(principal.workspaceId), args.userId);
      const asked = confirmation(
        ctx,
        { id: target.userId, state: target.role },
        `Remove ${target.name} <${target.email}> (${target.role}) from the workspace and revoke their personal access tokens? Their tasks and comments stay. You can undo the removal for ${services.activity.retentionDays} days; revoked tokens stay revoked.`,
        `Remove ${target.name}`,
      );
      if (asked.kind === 'ask') return asked.request;
      if (asked.kind !== 'proceed') {
        return { userId: target.userId, name: target.name, email: target.email, removed: false, tokensRevoked: 0, declined: asked.kind };
      }
    }
    const { audit, records } = memberAudit(services.activity, sourceOf(ctx));
    const target = await removeMember(services.directory, principal, principal.workspaceId, args.userId, audit);
    const revoked = await revokeTokensOf(services, sourceOf(ctx), principal.workspaceId, target.userId);
    return {
      userId: target.userId,
      name: target.name,
      email: target.email,
      removed: true,
      tokensRevoked: revoked,
      activityId: records.at(-1)?.activityId,
    };
  },
  render: (r) =>
    r.removed
      ? `Removed [${r.userId}] ${r.name} <${r.email}>; ${r.tokensRevoked} token(s) revoked.${undoLine(r.activityId)}`
      : notConfirmedText(r.declined ?? 'declined', `removing [${r.userId}] ${r.name}`),
});

export const MEMBER_TOOLS = [membersList, memberInvite, memberRoleSet, memberRemove];
