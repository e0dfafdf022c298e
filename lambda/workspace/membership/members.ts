import type { WriteOp } from '../../platform/transact.js';
import type { Member, Role, Status } from '../../vocabulary.js';
import { memberRecord } from '../activity/records.js';
import { type ActivityRecord, activityIdBound, type ChangeSource } from '../model/activity.js';
import { emailTaken, memberNotFound } from '../model/refusals.js';
import { stableJson } from '../model/stable-json.js';
import type { CallClaim } from '../store/call-claims.js';
import { confirmedOr, writeClaimed } from '../store/confirmed.js';
import type { WorkspaceStores } from '../store/stores.js';
import { writesOf } from '../store/writes.js';
import { revokeAllOf } from './credentials.js';
import { type Actor, checkInvite, checkRemoval, checkRoleChange, checkStatusChange, memberOrRefuse, requireRole } from './rules.js';

/**
 * The one writer of members, for every door (the tools, change_undo, the account page, the admin
 * CLI): each change is checked by the rules of rules.ts with the actor's role now, written in one
 * all-or-nothing write with its record, and, where it could take an active owner away, checked and
 * written under the workspace's owners lock. A person's credentials follow them: removing a member
 * revokes their tokens and connected apps, disabling one stops them (the member's status is checked
 * with every credential), and adding them back or enabling them again starts their credentials afresh
 * (`credentialsFrom`), so no undo and no re-enabling brings an old way in back.
 */

type Stores = Pick<WorkspaceStores, 'directory' | 'activity' | 'tokens' | 'grants'>;

export interface MemberChangeOptions {
  /** The change this one undoes: marked undone in the same write. */
  readonly undoes?: ActivityRecord;
  /** The call's claim (an invitation must not be made twice): its write carries it (store/call-claims.ts). */
  readonly claim?: CallClaim;
}

export interface MemberChange {
  readonly member: Member;
  /** False when it was as asked already (nothing written). */
  readonly changed: boolean;
  readonly record?: ActivityRecord;
  /** Credentials revoked with it (a removal or a disabling). */
  readonly revoked?: { readonly tokens: number; readonly apps: number };
}

/** The record of the change, and the mark on the one it undoes, to ride in the member's write. */
const recorder = (stores: Stores, source: ChangeSource, opts: MemberChangeOptions) => {
  let record: ActivityRecord | undefined;
  const ops = (before: Member | undefined, after: Member | undefined): WriteOp[] => {
    record = memberRecord(stores.activity, source, before, after, opts.undoes ? { undoOf: opts.undoes.activityId } : {});
    return [
      writesOf(stores).activity.recordOp(record),
      ...(opts.undoes ? [writesOf(stores).activity.markUndoneOp(opts.undoes, record.activityId, record.at)] : []),
    ];
  };
  return { ops, record: () => record };
};

/**
 * Adds a member (admins and owners; only owners add owners). A member brought back by an undo keeps
 * their id, so their credentials start now: those from before the removal stay dead. A new member
 * has a new id that no credential names yet; a mark would only refuse an app connected within the
 * invitation's own second (a grant's time is known to the second).
 */
export const inviteMember = async (
  stores: Stores,
  actor: Actor,
  source: ChangeSource,
  member: Member,
  opts: MemberChangeOptions = {},
): Promise<MemberChange> => {
  checkInvite(actor, member.role);
  const fresh: Member = opts.undoes ? { ...member, credentialsFrom: source.now.toISOString() } : member;
  const r = recorder(stores, source, opts);
  const ops = r.ops(undefined, fresh);
  const outcome = await writeClaimed(opts, r.record()!.activityId, `members_list shows whether ${member.email} was added.`, (claim) =>
    writesOf(stores).directory.inviteMember(fresh, ops, claim),
  );
  if (outcome === 'email_taken') throw emailTaken(member.email);
  return { member: fresh, changed: true, record: r.record()! };
};

/**
 * Sets a member's role. Setting the current role changes nothing. A change that touches an owner is
 * checked against a fresh read under the owners lock: two owners demoting each other at once are
 * serialized, and the second sees the first's change. `expected`: the role the member must still
 * have (an undo puts a role back only over the one its change left).
 */
export const changeRole = async (
  stores: Stores,
  actor: Actor,
  source: ChangeSource,
  workspaceId: string,
  userId: string,
  role: Role,
  opts: MemberChangeOptions & { readonly expected?: Role } = {},
): Promise<MemberChange> => {
  requireRole(actor, 'admin', "changing a member's role");
  const members = await stores.directory.listMembers(workspaceId);
  const target = memberOrRefuse(members, userId);
  if (opts.expected !== undefined && target.role !== opts.expected) return { member: target, changed: false };
  if (target.role === role) return { member: target, changed: false };
  checkRoleChange(actor, target, members, role);
  const write = async (current: Member): Promise<MemberChange> => {
    const next: Member = { ...current, role };
    const r = recorder(stores, source, opts);
    await confirmedOr(`members_list shows ${current.name}'s role now.`, () =>
      writesOf(stores).directory.setMemberRole(workspaceId, userId, current.role, role, r.ops(current, next)),
    );
    return { member: next, changed: true, record: r.record()! };
  };
  if (target.role !== 'owner' && role !== 'owner') return write(target);
  return writesOf(stores).directory.withOwnersLock(workspaceId, async () => {
    const fresh = await stores.directory.listMembers(workspaceId);
    const now = memberOrRefuse(fresh, userId);
    checkRoleChange(actor, now, fresh, role);
    return write(now);
  });
};

/**
 * Removes a member (their tasks and comments stay), frees their e-mail, and revokes their tokens and
 * connected apps. An owner's removal is checked and written under the owners lock, so two removals
 * cannot race past the last owner.
 */
export const removeMember = async (
  stores: Stores,
  actor: Actor,
  source: ChangeSource,
  workspaceId: string,
  userId: string,
  opts: MemberChangeOptions & { readonly expected?: Pick<Member, 'role' | 'status'> } = {},
): Promise<MemberChange> => {
  requireRole(actor, 'admin', 'removing a member');
  const members = await stores.directory.listMembers(workspaceId);
  const target = memberOrRefuse(members, userId);
  const write = async (current: Member, all: readonly Member[]): Promise<MemberChange> => {
    checkRemoval(actor, current, all);
    const r = recorder(stores, source, opts);
    await confirmedOr(`members_list shows whether ${current.name} is still a member.`, () =>
      writesOf(stores).directory.removeMember(current, current.role, r.ops(current, undefined)),
    );
    return { member: current, changed: true, record: r.record()! };
  };
  const removed =
    target.role !== 'owner'
      ? await write(target, members)
      : await writesOf(stores).directory.withOwnersLock(workspaceId, async () => {
          const fresh = await stores.directory.listMembers(workspaceId);
          return write(memberOrRefuse(fresh, userId), fresh);
        });
  return { ...removed, revoked: await revokeAllOf(stores, actor, source, removed.member) };
};

/**
 * Disables or enables a member. Read and written under the owners lock (as owner demotions and
 * promotions are): a member promoted to owner in between cannot be disabled as the admin they were a
 * moment ago, and the last active owner stays. A disabled member's credentials are refused with 403
 * (the person may not use the endpoint: no challenge, so no client loops back to sign-in); enabling
 * them starts their credentials afresh, so the old ones stay dead (401) and they make new ones.
 */
export const changeStatus = async (
  stores: Stores,
  actor: Actor,
  source: ChangeSource,
  workspaceId: string,
  userId: string,
  status: Status,
  opts: MemberChangeOptions = {},
): Promise<MemberChange> => {
  requireRole(actor, 'admin', 'disabling or enabling a member');
  const changed = await writesOf(stores).directory.withOwnersLock(workspaceId, async (): Promise<MemberChange> => {
    const members = await stores.directory.listMembers(workspaceId);
    const target = memberOrRefuse(members, userId);
    checkStatusChange(actor, target, members, status);
    if (target.status === status) return { member: target, changed: false };
    const from = status === 'active' ? source.now.toISOString() : undefined;
    const next: Member = { ...target, status, ...(from ? { credentialsFrom: from } : {}) };
    const r = recorder(stores, source, opts);
    const written = await confirmedOr(`members_list shows whether ${target.name} is ${status}.`, () =>
      writesOf(stores).directory.setMemberStatus(workspaceId, userId, status, r.ops(target, next), from),
    );
    if (!written) throw memberNotFound(userId);
    return { member: next, changed: true, record: r.record()! };
  });
  return changed;
};

/** The hour of the day (UTC, `00`-`23`) a member's local digest hour falls on now. */
export const digestUtcHour = (settings: Pick<Member, 'timeZone' | 'notify'>, now: Date): string | undefined => {
  if (settings.notify?.email !== 'digest' || settings.notify.digestHour === undefined) return undefined;
  const local = new Intl.DateTimeFormat('en-GB', { timeZone: settings.timeZone, hour: '2-digit', hourCycle: 'h23' }).format(now);
  const offset = (Number(local) - now.getUTCHours() + 24) % 24;
  return String((settings.notify.digestHour - offset + 24) % 24).padStart(2, '0');
};

/**
 * A member's own settings (me_update): their time zone and how they are told. Anyone may change
 * their own, a viewer too; the change is recorded like any other of a member. A digest is filed under
 * the UTC hour its local hour falls on now (the minute job files it again after a clock change).
 */
export const changeOwnSettings = async (
  stores: Stores & Pick<WorkspaceStores, 'inbox'>,
  source: ChangeSource,
  member: Member,
  settings: Pick<Member, 'timeZone' | 'notify'>,
): Promise<MemberChange> => {
  const next: Member = { ...member, timeZone: settings.timeZone, ...(settings.notify ? { notify: settings.notify } : {}) };
  if (!settings.notify) delete (next as { notify?: unknown }).notify;
  if (stableJson(next) === stableJson(member)) return { member, changed: false };
  const r = recorder(stores, source, {});
  // A digest filed anew starts from now: the entries before it were the inbox's (or mailed one by one).
  const digest = writesOf(stores).inbox.digestOps(
    member.workspaceId,
    member.userId,
    digestUtcHour(next, source.now),
    digestUtcHour(member, source.now),
    activityIdBound(source.now.getTime(), 'high'),
  );
  await confirmedOr('me_get shows your settings now.', () =>
    writesOf(stores).directory.setMemberSettings(member.workspaceId, member.userId, settings, [...r.ops(member, next), ...digest]),
  );
  return { member: next, changed: true, record: r.record()! };
};
