import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import type { Principal } from '../../auth/principal.js';
import { ConflictRefusal, InvalidArgumentRefusal, NotFoundRefusal, RoleTooLowRefusal } from '../../errors.js';
import { defineTool } from '../../mcp/tool-registry.js';
import type { Member, Role } from '../model.js';
import { cursorFor, isString, pageAfter, positionFrom } from '../paging.js';
import { requireRole } from '../policy.js';
import { memberLine, moreLine } from '../render.js';
import { idArg, listFields, memberOutput, pagingArgs, roleArg } from '../schemas.js';
import type { WorkspaceServices } from '../services.js';
import { isValidTimeZone } from '../time.js';
import { toMemberOutput } from '../views.js';
import { CREATE, READ, REMOVE, UPDATE } from './annotations.js';

const userIdArg = idArg('member user');
const byName = (m: Member): string => `${m.name.toLowerCase()}\u0000${m.userId}`;

/**
 * Owners are made and unmade by owners only, and the last active owner stays: without one, nobody
 * could manage the workspace any more.
 */
const checkOwnerRules = (principal: Principal, target: Member, members: readonly Member[], nextRole: Role | 'removed'): void => {
  if ((target.role === 'owner' || nextRole === 'owner') && principal.role !== 'owner') {
    throw new RoleTooLowRefusal('Refused, role too low: only an owner can make, change or remove an owner.');
  }
  if (target.role === 'owner' && nextRole !== 'owner') {
    const others = members.filter((m) => m.role === 'owner' && m.status === 'active' && m.userId !== target.userId);
    if (!others.length) throw lastOwnerRefusal(target);
  }
};

const lastOwnerRefusal = (target: Member): ConflictRefusal =>
  new ConflictRefusal(`Conflict: ${target.name} [${target.userId}] is the last owner of this workspace; make someone else owner first.`);

/**
 * An owner's demotion (also the first step of removing one) checks that another active owner
 * remains and writes, both under the workspace's owners lock: two owners demoting each other at
 * once are serialized, and the second sees the first's change. (A check after the write with an undo
 * on failure was not enough: the undo itself can fail when the demoted member's role moved on in
 * between, which the concurrency test caught.)
 */
const demoteOwner = (services: WorkspaceServices, principal: Principal, target: Member, role: Role): Promise<Member> =>
  services.directory.withOwnersLock(principal.workspaceId, async () => {
    const others = (await services.directory.listMembers(principal.workspaceId)).filter(
      (m) => m.role === 'owner' && m.status === 'active' && m.userId !== target.userId,
    );
    if (others.length === 0) throw lastOwnerRefusal(target);
    return services.directory.setMemberRole(principal.workspaceId, target.userId, 'owner', role);
  });

const memberOrRefuse = (members: readonly Member[], userId: string): Member => {
  const member = members.find((m) => m.userId === userId);
  if (!member) throw new NotFoundRefusal(`Member ${userId} was not found in this workspace; members_list lists members and their ids.`);
  return member;
};

// ---- members_list -------------------------------------------------------------------------------

const listInput = z.strictObject({ ...pagingArgs });
const listOutput = z.object({ ...listFields, members: z.array(memberOutput) });

export const membersList = defineTool<WorkspaceServices, typeof listInput, typeof listOutput>({
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

export const memberInvite = defineTool<WorkspaceServices, typeof inviteInput, typeof memberOutput>({
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
    requireRole(principal, 'admin', 'adding a member');
    if (args.role === 'owner' && principal.role !== 'owner')
      throw new RoleTooLowRefusal('Refused, role too low: only an owner can add an owner.');
    const timeZone = args.timeZone ?? principal.timeZone;
    if (!isValidTimeZone(timeZone))
      throw new InvalidArgumentRefusal(`timeZone: ${timeZone} is not an IANA time zone (e.g. Europe/Berlin).`);
    const member: Member = {
      workspaceId: principal.workspaceId,
      userId: `usr_${randomUUID().replaceAll('-', '').slice(0, 16)}`,
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

export const memberRoleSet = defineTool<WorkspaceServices, typeof roleInput, typeof memberOutput>({
  name: 'member_role_set',
  title: "Change a member's role",
  description:
    "Sets a member's role: viewer (reads only), member (writes tasks and comments), admin (also projects and team), owner " +
    '(admins and owners; only owners make or unmake owners, and the last owner cannot be demoted). Setting the current role changes nothing.',
  input: roleInput,
  output: memberOutput,
  annotations: UPDATE,
  scope: 'team:admin',
  run: async (args, { services, principal }) => {
    requireRole(principal, 'admin', "changing a member's role");
    const members = await services.directory.listMembers(principal.workspaceId);
    const target = memberOrRefuse(members, args.userId);
    if (target.role === args.role) return toMemberOutput(target);
    checkOwnerRules(principal, target, members, args.role);
    if (target.role === 'owner') return toMemberOutput(await demoteOwner(services, principal, target, args.role));
    // A promotion takes the owners lock too, so a disable on the account page (which reads the role
    // under it) never acts on who someone was a moment ago.
    const write = () => services.directory.setMemberRole(principal.workspaceId, target.userId, target.role, args.role);
    return toMemberOutput(await (args.role === 'owner' ? services.directory.withOwnersLock(principal.workspaceId, write) : write()));
  },
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

export const memberRemove = defineTool<WorkspaceServices, typeof removeInput, typeof removeOutput>({
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
    requireRole(principal, 'admin', 'removing a member');
    const members = await services.directory.listMembers(principal.workspaceId);
    const target = memberOrRefuse(members, args.userId);
    checkOwnerRules(principal, target, members, 'removed');
    // An owner is demoted (checked, see demoteOwner) before removal, so two removals cannot race past the last owner.
    const role = target.role === 'owner' ? (await demoteOwner(services, principal, target, 'admin')).role : target.role;
    await services.directory.removeMember(principal.workspaceId, target.userId, role);
    const tokens = (await services.tokens.list(principal.workspaceId)).filter((t) => t.userId === target.userId && !t.revokedAt);
    await Promise.all(tokens.map((t) => services.tokens.revoke(principal.workspaceId, t.tokenId, now.toISOString())));
    return { userId: target.userId, name: target.name, email: target.email, removed: true as const, tokensRevoked: tokens.length };
  },
  render: (r) => `Removed [${r.userId}] ${r.name} <${r.email}>; ${r.tokensRevoked} token(s) revoked.`,
});

export const MEMBER_TOOLS = [membersList, memberInvite, memberRoleSet, memberRemove];
