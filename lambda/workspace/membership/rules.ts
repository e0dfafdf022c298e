import { type Member, type Role, roleAtLeast, type Status } from '../../vocabulary.js';
import { lastOwner, memberNotFound, notTheirs, notYourself, onlyOwnItems, ownerOnly, roleTooLow } from '../model/refusals.js';

/**
 * The one home of who may do what in a workspace, applied alike by the tools, change_undo, the
 * account page and the admin CLI, always with the actor's role as it is now:
 * - viewers read; members write tasks and comments and delete what they created; admins also manage
 *   projects and members; owners also make, change, disable and remove owners;
 * - the workspace never loses its last active owner (demoting, removing or disabling them is refused);
 * - nobody disables or enables themselves (one click would lock them out of the very page they use);
 * - a person's credentials (tokens, connected apps) are theirs: only they, or an admin who may
 *   change that member (an owner, for an owner's), revoke them.
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
  if (!roleAtLeast(actor.role, needed)) throw roleTooLow(action, needed, actor.role);
};

/** Members delete their own tasks and comments; admins and owners delete anyone's. */
export const requireOwnOrAdmin = (actor: Pick<Actor, 'role' | 'userId'>, createdBy: string, action: string): void => {
  requireRole(actor, 'member', action);
  if (createdBy !== actor.userId && !roleAtLeast(actor.role, 'admin')) throw onlyOwnItems(action);
};

// ---- members -------------------------------------------------------------------------------------

const activeOwnersBesides = (members: readonly Member[], userId: string): Member[] =>
  members.filter((m) => m.role === 'owner' && m.status === 'active' && m.userId !== userId);

const refuseLastOwner = (target: Member, members: readonly Member[]): void => {
  if (target.role === 'owner' && target.status === 'active' && !activeOwnersBesides(members, target.userId).length) {
    throw lastOwner(target.name, target.userId);
  }
};

/** Whether `actor` may change `target` at all: admins change members, viewers and admins; only owners change owners. */
export const mayChangeMember = (actor: Pick<Actor, 'role' | 'userId'>, target: Pick<Member, 'role' | 'userId'>): boolean =>
  roleAtLeast(actor.role, 'admin') && (target.role !== 'owner' || actor.role === 'owner');

/** Adding someone: admins and owners; only owners add owners. */
export const checkInvite = (actor: Actor, role: Role): void => {
  requireRole(actor, 'admin', 'adding a member');
  if (role === 'owner' && actor.role !== 'owner') throw ownerOnly('add an owner');
};

/** Changing a role: admins and owners; only owners make or unmake owners; never the last active owner. */
export const checkRoleChange = (actor: Actor, target: Member, members: readonly Member[], role: Role): void => {
  requireRole(actor, 'admin', "changing a member's role");
  if ((target.role === 'owner' || role === 'owner') && actor.role !== 'owner') throw ownerOnly('make, change or remove an owner');
  if (role !== 'owner') refuseLastOwner(target, members);
};

/** Removing someone: admins and owners; only owners remove owners; never the last active owner. */
export const checkRemoval = (actor: Actor, target: Member, members: readonly Member[]): void => {
  requireRole(actor, 'admin', 'removing a member');
  if (target.role === 'owner' && actor.role !== 'owner') throw ownerOnly('make, change or remove an owner');
  refuseLastOwner(target, members);
};

/** Disabling or enabling someone: admins and owners; only owners touch owners; never oneself; never the last active owner. */
export const checkStatusChange = (actor: Actor, target: Member, members: readonly Member[], status: Status): void => {
  requireRole(actor, 'admin', 'disabling or enabling a member');
  if (target.userId === actor.userId) throw notYourself();
  if (target.role === 'owner' && actor.role !== 'owner') throw ownerOnly('disable or enable an owner');
  if (status === 'disabled') refuseLastOwner(target, members);
};

/** Revoking someone's credential (a token, a connected app): its owner, or an admin who may change that member. */
export const checkCredentialRevoke = (
  actor: Pick<Actor, 'role' | 'userId'>,
  owner: Pick<Member, 'role' | 'userId'> | undefined,
  what: string,
): void => {
  if (owner && owner.userId === actor.userId) return;
  // A credential of someone no longer a member: only an admin may clean it up.
  if (!owner ? roleAtLeast(actor.role, 'admin') : mayChangeMember(actor, owner)) return;
  throw notTheirs(what);
};

export const memberOrRefuse = (members: readonly Member[], userId: string): Member => {
  const member = members.find((m) => m.userId === userId);
  if (!member) throw memberNotFound(userId);
  return member;
};

/** Whether lowering `from` to `to` takes power away from an admin or owner: such a change is asked first where the client can. */
export const lowersPower = (from: Role, to: Role): boolean => (from === 'admin' || from === 'owner') && !roleAtLeast(to, from);
