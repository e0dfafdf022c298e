import type { Role } from '../auth/principal.js';

export type { Role };
export const ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];
const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1, viewer: 0 };
export const roleAtLeast = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];

export type Status = 'active' | 'disabled';

export interface Workspace {
  readonly workspaceId: string;
  readonly name: string;
  readonly status: Status;
  readonly createdAt: string;
}

export interface Member {
  readonly workspaceId: string;
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly timeZone: string;
  readonly status: Status;
  readonly createdAt: string;
}
