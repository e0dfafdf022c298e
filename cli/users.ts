import { ToolRefusal } from '../lambda/errors.js';
import { newUserId, type Status } from '../lambda/vocabulary.js';
import { doorSource } from '../lambda/workspace/activity/records.js';
import { changeRole, changeStatus, inviteMember, removeMember } from '../lambda/workspace/membership/members.js';
import { checkInvite, OPERATOR } from '../lambda/workspace/membership/rules.js';
import { createWorkspace } from '../lambda/workspace/membership/workspaces.js';
import { type Command, emailOf, memberByEmail, required, roleOf, timeZoneOf, workspaceOf } from './args.js';
import { CliError } from './errors.js';
import { describeError, inviteToSignInPool, setSignInPoolStatus } from './sign-in-pool.js';

/**
 * People: add, role, disable, enable, remove. The operator acts with an owner's powers under the
 * workspace's rules (lambda/workspace/membership.ts): the last active owner can be neither
 * disabled, demoted nor removed here either. There is no override: make someone else owner first
 * (`user add --role owner` or `user role`), then change the last one.
 */

const userAdd: Command = {
  options: ['email', 'name', 'role', 'time-zone', 'workspace'],
  async run(o, target, out, now) {
    const email = emailOf(o.email);
    const name = required(o.name, 'name');
    const role = roleOf(o.role);
    const timeZone = timeZoneOf(o['time-zone']);
    const workspaceId = workspaceOf(o.workspace, target);
    checkInvite(OPERATOR, role);
    const pool = target.signInPool;
    const alreadyExists = (where?: string) =>
      new CliError(`--email: a user with the e-mail ${email} already exists${where ? ` (in workspace ${where})` : ''}`);
    // Re-running user add for a member whose Cognito invitation failed does the Cognito part only.
    const existing = await target.directory.findMemberByEmail(email);
    let userId: string;
    if (existing) {
      if (!pool) throw alreadyExists();
      if (existing.workspaceId !== workspaceId) throw alreadyExists(existing.workspaceId);
      userId = existing.userId;
      out.stdout(
        `${email} [${userId}] is already ${existing.status === 'disabled' ? 'a disabled' : 'an active'} ${existing.role} of ${workspaceId}; left as it is in doers.`,
      );
    } else {
      const createdAt = now.toISOString();
      if (await createWorkspace(target, doorSource('admin CLI', OPERATOR, 'user add', now), { workspaceId, name: workspaceId })) {
        out.stderr(`Created workspace ${workspaceId}.`);
      }
      userId = newUserId();
      const member = { workspaceId, userId, email, name, role, timeZone, status: 'active', createdAt } as const;
      try {
        await inviteMember(target, OPERATOR, doorSource('admin CLI', OPERATOR, 'user add', now), member);
      } catch (err) {
        if (err instanceof ToolRefusal && err.reason === 'taken') throw alreadyExists();
        throw err;
      }
      out.stdout(`Added ${name} <${email}> [${userId}] as ${role} of ${workspaceId}.`);
    }
    if (!pool) return;
    try {
      out.stdout(await inviteToSignInPool(pool, email));
    } catch (err) {
      throw new CliError(
        `${email} [${userId}] ${existing ? 'is' : 'was added as'} a member of ${workspaceId} in doers, but was not added to Cognito user pool ` +
          `${pool.userPoolId} (${describeError(err)}). Run the same user add command again to retry: for an existing member it does only the Cognito part.`,
      );
    }
  },
};

const userStatus = (status: Status): Command => ({
  options: ['email'],
  async run(o, target, out, now) {
    const member = await memberByEmail(target, emailOf(o.email));
    const source = doorSource('admin CLI', OPERATOR, `user ${status === 'disabled' ? 'disable' : 'enable'}`, now);
    const changed = await changeStatus(target, OPERATOR, source, member.workspaceId, member.userId, status);
    out.stdout(
      `${member.email} [${member.userId}] is ${status}` +
        (status === 'disabled' ? '; their tokens are refused from the next request on' : '') +
        (status === 'active' && changed.changed ? '; tokens from before stay dead (they make new ones)' : '') +
        '.',
    );
    const pool = target.signInPool;
    if (!pool) return;
    try {
      out.stdout(await setSignInPoolStatus(pool, member.email, status));
    } catch (err) {
      throw new CliError(
        `${member.email} is ${status} in doers${status === 'disabled' ? ' (their tokens are refused)' : ''}, but not in Cognito user pool ` +
          `${pool.userPoolId} (${describeError(err)}). Run the same user ${status === 'disabled' ? 'disable' : 'enable'} command again to retry.`,
      );
    }
  },
});

const userRole: Command = {
  options: ['email', 'role'],
  async run(o, target, out, now) {
    const role = roleOf(required(o.role, 'role'));
    const member = await memberByEmail(target, emailOf(o.email));
    const { member: changed } = await changeRole(
      target,
      OPERATOR,
      doorSource('admin CLI', OPERATOR, 'user role', now),
      member.workspaceId,
      member.userId,
      role,
    );
    out.stdout(`${changed.email} [${changed.userId}] is ${changed.role} of ${changed.workspaceId}.`);
  },
};

const userRemove: Command = {
  options: ['email'],
  async run(o, target, out, now) {
    const member = await memberByEmail(target, emailOf(o.email));
    const source = doorSource('admin CLI', OPERATOR, 'user remove', now);
    const removed = await removeMember(target, OPERATOR, source, member.workspaceId, member.userId);
    out.stdout(
      `Removed ${member.email} [${member.userId}] from ${member.workspaceId}; ${removed.revoked?.tokens ?? 0} token(s) and ` +
        `${removed.revoked?.apps ?? 0} connected app(s) revoked. Their tasks and comments stay.`,
    );
  },
};

export const USER_COMMANDS: Readonly<Record<string, Command>> = {
  'user add': userAdd,
  'user role': userRole,
  'user disable': userStatus('disabled'),
  'user enable': userStatus('active'),
  'user remove': userRemove,
};
