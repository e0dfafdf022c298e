import type { DirectoryStore } from '../workspace/directory-store.js';
import { type Member, roleAtLeast, type Status } from '../workspace/model.js';

/** Why a status change is refused, with the HTTP status the page answers. */
export class MemberStatusRefusal extends Error {
  override name = 'MemberStatusRefusal';
  constructor(
    message: string,
    readonly status: 403 | 404 | 409,
  ) {
    super(message);
  }
}

/**
 * Disables or enables a member from the account page, under the rules the member tools follow:
 * admins and owners only, only an owner touches an owner, and the workspace never loses its last
 * active owner.
 * Nobody disables themselves here (one click would lock them out of this very page).
 */
export const changeMemberStatus = async (directory: DirectoryStore, actor: Member, userId: string, status: Status): Promise<Member> => {
  if (!roleAtLeast(actor.role, 'admin')) throw new MemberStatusRefusal('Only admins and owners can disable or enable members.', 403);
  if (userId === actor.userId) throw new MemberStatusRefusal('You cannot disable or enable yourself; ask another admin or owner.', 409);
  // Read and written under the workspace's owners lock (as the tools' demotions and promotions are):
  // a member promoted to owner in between cannot be disabled as the admin they were a moment ago.
  return directory.withOwnersLock(actor.workspaceId, async () => {
    const members = await directory.listMembers(actor.workspaceId);
    const target = members.find((m) => m.userId === userId);
    if (!target) throw new MemberStatusRefusal('That member is not in your workspace.', 404);
    if (target.role === 'owner' && actor.role !== 'owner')
      throw new MemberStatusRefusal('Only an owner can disable or enable an owner.', 403);
    if (target.status === status) return target;
    if (
      status === 'disabled' &&
      target.role === 'owner' &&
      !members.some((m) => m.role === 'owner' && m.status === 'active' && m.userId !== userId)
    ) {
      throw new MemberStatusRefusal(`${target.name} is the last active owner of this workspace; make someone else owner first.`, 409);
    }
    await directory.setMemberStatus(actor.workspaceId, userId, status);
    return { ...target, status };
  });
};
