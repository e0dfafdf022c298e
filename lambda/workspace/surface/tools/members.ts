import * as z from 'zod/mini';
import { type Member, newUserId } from '../../../vocabulary.js';
import { changeRole, inviteMember, removeMember } from '../../membership/members.js';
import { lowersPower, memberOrRefuse } from '../../membership/rules.js';
import { notATimeZone } from '../../model/refusals.js';
import { isValidTimeZone } from '../../model/time.js';
import { ASKS_FIRST, canAskForm, confirmation, NOT_CONFIRMED, notConfirmedText } from '../confirm.js';
import { defineTool } from '../define-tool.js';
import { toMemberOutput } from '../outputs.js';
import { cursorFor, isString, pageAfter, positionFrom } from '../paging.js';
import { memberLine, moreLine, undoLine } from '../render.js';
import { activityIdOutput, idArg, listFields, memberOutput, pagingArgs, roleArg } from '../schemas.js';
import { sourceOf } from '../sources.js';
import { CREATE, READ, REMOVE, UPDATE } from './annotations.js';

const userIdArg = idArg;
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
  render: (r) => `${r.returned} member(s):\n${r.members.map(memberLine).join('\n')}${moreLine(r)}`,
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
  declined: z.optional(z.enum(NOT_CONFIRMED).check(z.describe('The person did not confirm: nothing changed'))),
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
    if (!isValidTimeZone(timeZone)) throw notATimeZone(timeZone);
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
    const added = await inviteMember(services, principal, sourceOf(ctx), member, ctx.claim ? { claim: ctx.claim } : {});
    return { ...toMemberOutput(added.member), activityId: added.record?.activityId };
  },
  render: (m) => `Added:\n${memberLine(m)}${undoLine(m.activityId)}`,
});

// ---- member_role_set ----------------------------------------------------------------------------

const roleInput = z.strictObject({ userId: userIdArg, role: roleArg });

export const memberRoleSet = defineTool({
  name: 'member_role_set',
  title: "Change a member's role",
  description:
    "Sets a member's role: viewer reads, member writes tasks, admin also projects and team, owner all (owners by owners only; " +
    `never the last). Lowering an admin or owner ${ASKS_FIRST.charAt(0).toLowerCase()}${ASKS_FIRST.slice(1)}`,
  input: roleInput,
  output: changedMemberOutput,
  annotations: UPDATE,
  scope: 'team:admin',
  run: async (args, ctx) => {
    const { services, principal } = ctx;
    // Taking power away from an admin or owner is asked first (where the client can ask).
    if (canAskForm(ctx.meta)) {
      const target = memberOrRefuse(await services.directory.listMembers(principal.workspaceId), args.userId);
      if (lowersPower(target.role, args.role)) {
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
    const changed = await changeRole(services, principal, sourceOf(ctx), principal.workspaceId, args.userId, args.role);
    return { ...toMemberOutput(changed.member), ...(changed.record ? { activityId: changed.record.activityId } : {}) };
  },
  render: (m) =>
    m.declined
      ? notConfirmedText(m.declined, `the role change of [${m.userId}] ${m.name}`)
      : m.activityId
        ? `Role set:\n${memberLine(m)}${undoLine(m.activityId)}`
        : `Unchanged (the role was so already):\n${memberLine(m)}`,
});

// ---- member_remove ------------------------------------------------------------------------------

const removeInput = z.strictObject({ userId: userIdArg });
const removeOutput = z.object({
  userId: z.string(),
  name: z.string(),
  email: z.string(),
  removed: z.boolean().check(z.describe('false when the person declined or cancelled: nothing changed')),
  tokensRevoked: z.number().check(z.int()),
  appsDisconnected: z.number().check(z.int(), z.describe('Connected apps (OAuth grants) revoked with them')),
  declined: z.optional(z.enum(NOT_CONFIRMED)),
  ...activityIdOutput,
});

export const memberRemove = defineTool({
  name: 'member_remove',
  title: 'Remove someone from the team',
  description: `Removes a member, revoking their tokens and apps (admins; owners only by owners; never the last). Tasks stay. ${ASKS_FIRST}`,
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
        `Remove ${target.name} <${target.email}> (${target.role}) from the workspace and revoke their tokens and connected apps? Their tasks and comments stay. You can undo the removal for ${services.activity.retentionDays} days; revoked tokens and apps stay revoked.`,
        `Remove ${target.name}`,
      );
      if (asked.kind === 'ask') return asked.request;
      if (asked.kind !== 'proceed') {
        return {
          userId: target.userId,
          name: target.name,
          email: target.email,
          removed: false,
          tokensRevoked: 0,
          appsDisconnected: 0,
          declined: asked.kind,
        };
      }
    }
    const removed = await removeMember(services, principal, sourceOf(ctx), principal.workspaceId, args.userId);
    const target = removed.member;
    return {
      userId: target.userId,
      name: target.name,
      email: target.email,
      removed: true,
      tokensRevoked: removed.revoked?.tokens ?? 0,
      appsDisconnected: removed.revoked?.apps ?? 0,
      activityId: removed.record?.activityId,
    };
  },
  render: (r) =>
    r.removed
      ? `Removed [${r.userId}] ${r.name} <${r.email}>; ${r.tokensRevoked} token(s) revoked, ${r.appsDisconnected} app(s) disconnected.${undoLine(r.activityId)}`
      : notConfirmedText(r.declined ?? 'declined', `removing [${r.userId}] ${r.name}`),
});

export const MEMBER_TOOLS = [membersList, memberInvite, memberRoleSet, memberRemove];
