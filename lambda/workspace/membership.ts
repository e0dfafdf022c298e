import { ConflictRefusal, NotFoundRefusal, RoleTooLowRefusal } from '../errors.js';
import type { WriteOp } from '../platform/transact.js';
import { type Member, type Role, roleAtLeast, type Status } from '../vocabulary.js';
import type { DirectoryStore } from './directory-store.js';

/**
 * The one home of who may do what in a workspace, applied alike by the tools, the account page and
 * the admin CLI:
 * - viewers read; members write tasks and comments and delete what they created; admins also manage
 *   projects and members; owners also make, change, disable and remove owners;
 * - the workspace never loses its last active owner (demoting, removing or disabling them is refused);
 * - nobody disables or enables themselves (one click would lock them out of the very page they use).
 * Changes that could take an active owner away are checked and written under the workspace's owners
 * lock, so two of them cannot both pass the check against the same owners.
 */

/**
 * Who acts. A member acts with their role; the operator (admin CLI, with AWS credentials) acts with
 * an owner's powers but under the same last-owner rule, and is no member (so never "oneself").
 */
export interface Actor {
  readonly userId: string;
  readonly name: string;
  readonly role: Role;
}

export const OPERATOR: Actor = { userId: 'operator', name: 'Operator (admin CLI)', role: 'owner' };

// ---- content: tasks, comments, projects -----------------------------------------------------------

export const requireRole = (actor: Pick<Actor, 'role'>, needed: Role, action: string): void => {
  if (!roleAtLeast(actor.role, needed)) {
    throw new RoleTooLowRefusal(
      `Refused, role too low: ${action} needs the role ${needed} or higher, and you are ${actor.role} in this workspace.`,
    );
  }
};

/** Members delete their own tasks and comments; admins and owners delete anyone's. */
export const requireOwnOrAdmin = (actor: Pick<Actor, 'role' | 'userId'>, createdBy: string, action: string): void => {
  requireRole(actor, 'member', action);
  if (createdBy !== actor.userId && !roleAtLeast(actor.role, 'admin')) {
    throw new RoleTooLowRefusal(`Refused, role too low: as a member you may only ${action} what you created yourself; ask an admin.`);
  }
};

// ---- members -------------------------------------------------------------------------------------

const ownerOnly = (actor: Actor, what: string): void => {
  if (actor.role !== 'owner') throw new RoleTooLowRefusal(`Refused, role too low: only an owner can ${what}.`);
};

const activeOwnersBesides = (members: readonly Member[], userId: string): Member[] =>
  members.filter((m) => m.role === 'owner' && m.status === 'active' && m.userId !== userId);

const lastOwnerRefusal = (target: Member): ConflictRefusal =>
  new ConflictRefusal(
    `Conflict: ${target.name} [${target.userId}] is the last owner of this workspace who is active; make someone else owner first.`,
  );

/** Adding someone: admins and owners; only owners add owners. */
export const checkInvite = (actor: Actor, role: Role): void => {
  requireRole(actor, 'admin', 'adding a member');
  if (role === 'owner') ownerOnly(actor, 'add an owner');
};

/** Changing a role: admins and owners; only owners make or unmake owners; never the last active owner. */
export const checkRoleChange = (actor: Actor, target: Member, members: readonly Member[], role: Role): void => {
  requireRole(actor, 'admin', "changing a member's role");
  if (target.role === 'owner' || role === 'owner') ownerOnly(actor, 'make, change or remove an owner');
  if (target.role === 'owner' && role !== 'owner' && target.status === 'active' && !activeOwnersBesides(members, target.userId).length) {
    throw lastOwnerRefusal(target);
  }
};

/** Removing someone: admins and owners; only owners remove owners; never the last active owner. */
export const checkRemoval = (actor: Actor, target: Member, members: readonly Member[]): void => {
  requireRole(actor, 'admin', 'removing a member');
  if (target.role === 'owner') ownerOnly(actor, 'make, change or remove an owner');
  if (target.role === 'owner' && target.status === 'active' && !activeOwnersBesides(members, target.userId).length) {
    throw lastOwnerRefusal(target);
  }
};

/** Disabling or enabling someone: admins and owners; only owners touch owners; never oneself; never the last active owner. */
export const checkStatusChange = (actor: Actor, target: Member, members: readonly Member[], status: Status): void => {
  requireRole(actor, 'admin', 'disabling or enabling a member');
  if (target.userId === actor.userId) {
    throw new ConflictRefusal('Conflict: you cannot disable or enable yourself; ask another admin or owner.');
  }
  if (target.role === 'owner') ownerOnly(actor, 'disable or enable an owner');
  if (
    status === 'disabled' &&
    target.role === 'owner' &&
    target.status === 'active' &&
    !activeOwnersBesides(members, target.userId).length
  ) {
    throw lastOwnerRefusal(target);
  }
};

export const memberOrRefuse = (members: readonly Member[], userId: string): Member => {
  const member = members.find((m) => m.userId === userId);
  if (!member) throw new NotFoundRefusal(`Member ${userId} was not found in this workspace; members_list lists members and their ids.`);
  return member;
};

// ---- the changes, checked and written --------------------------------------------------------------

/**
 * What a member change writes besides the member: its activity record, built from the member as the
 * change found it and as it leaves it (undefined: not a member before, or not after).
 */
export type MemberAudit = (before: Member | undefined, after: Member | undefined) => readonly WriteOp[];

/** Whether a change could take an active owner away (or make one): it is then serialized on the owners lock. */
const touchesOwners = (target: Member, role?: Role): boolean => target.role === 'owner' || role === 'owner';

/** Adds a member (admins and owners; only owners add owners). */
export const inviteMember = async (
  directory: DirectoryStore,
  actor: Actor,
  member: Member,
  audit: MemberAudit,
): Promise<'created' | 'email_taken'> => {
  checkInvite(actor, member.role);
  return directory.inviteMember(member, audit(undefined, member));
};

/**
 * Sets a member's role. Setting the current role changes nothing. A change that touches an owner is
 * checked against a fresh read under the owners lock: two owners demoting each other at once are
 * serialized, and the second sees the first's change.
 */
export const changeRole = async (
  directory: DirectoryStore,
  actor: Actor,
  workspaceId: string,
  userId: string,
  role: Role,
  audit: MemberAudit,
): Promise<{ readonly member: Member; readonly changed: boolean }> => {
  requireRole(actor, 'admin', "changing a member's role");
  const members = await directory.listMembers(workspaceId);
  const target = memberOrRefuse(members, userId);
  if (target.role === role) return { member: target, changed: false };
  checkRoleChange(actor, target, members, role);
  const write = async (current: Member) => {
    const next: Member = { ...current, role };
    await directory.setMemberRole(workspaceId, userId, current.role, role, audit(current, next));
    return { member: next, changed: true };
  };
  if (!touchesOwners(target, role)) return write(target);
  return directory.withOwnersLock(workspaceId, async () => {
    const fresh = await directory.listMembers(workspaceId);
    const now = memberOrRefuse(fresh, userId);
    checkRoleChange(actor, now, fresh, role);
    return write(now);
  });
};

/**
 * Removes a member (their tasks and comments stay) and frees their e-mail, in one write with its
 * record. An owner's removal is checked and written under the owners lock, so two removals cannot
 * race past the last owner.
 */
export const removeMember = async (
  directory: DirectoryStore,
  actor: Actor,
  workspaceId: string,
  userId: string,
  audit: MemberAudit,
): Promise<Member> => {
  requireRole(actor, 'admin', 'removing a member');
  const members = await directory.listMembers(workspaceId);
  const target = memberOrRefuse(members, userId);
  checkRemoval(actor, target, members);
  if (target.role !== 'owner') {
    await directory.removeMember(target, target.role, audit(target, undefined));
    return target;
  }
  return directory.withOwnersLock(workspaceId, async () => {
    const fresh = await directory.listMembers(workspaceId);
    const now = memberOrRefuse(fresh, userId);
    checkRemoval(actor, now, fresh);
    await directory.removeMember(now, now.role, audit(now, undefined));
    return now;
  });
};

/**
 * Disables or enables a member. Read and written under the owners lock (as owner demotions and
 * promotions are): a member promoted to owner in between cannot be disabled as the admin they were a
 * moment ago, and the last active owner stays.
 */
export const changeStatus = async (
  directory: DirectoryStore,
  actor: Actor,
  workspaceId: string,
  userId: string,
  status: Status,
  audit: MemberAudit,
): Promise<{ readonly member: Member; readonly changed: boolean }> => {
  requireRole(actor, 'admin', 'disabling or enabling a member');
  if (userId === actor.userId) throw new ConflictRefusal('Conflict: you cannot disable or enable yourself; ask another admin or owner.');
  return directory.withOwnersLock(workspaceId, async () => {
    const members = await directory.listMembers(workspaceId);
    const target = memberOrRefuse(members, userId);
    checkStatusChange(actor, target, members, status);
    if (target.status === status) return { member: target, changed: false };
    const next: Member = { ...target, status };
    if (!(await directory.setMemberStatus(workspaceId, userId, status, audit(target, next)))) {
      throw new NotFoundRefusal(`Member ${userId} was not found in this workspace`);
    }
    return { member: next, changed: true };
  });
};
