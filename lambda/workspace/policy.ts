import type { Principal } from '../auth/principal.js';
import { RoleTooLowRefusal } from '../errors.js';
import { type Role, roleAtLeast } from './model.js';

/**
 * Who may do what: viewers read; members write tasks and comments and delete what they created;
 * admins also manage projects and members; owners also make and unmake owners.
 */
export const requireRole = (principal: Principal, needed: Role, action: string): void => {
  if (!roleAtLeast(principal.role, needed)) {
    throw new RoleTooLowRefusal(
      `Refused, role too low: ${action} needs the role ${needed} or higher, and you are ${principal.role} in this workspace.`,
    );
  }
};

/** Members delete their own tasks and comments; admins and owners delete anyone's. */
export const requireOwnOrAdmin = (principal: Principal, createdBy: string, action: string): void => {
  requireRole(principal, 'member', action);
  if (createdBy !== principal.userId && !roleAtLeast(principal.role, 'admin')) {
    throw new RoleTooLowRefusal(`Refused, role too low: as a member you may only ${action} what you created yourself; ask an admin.`);
  }
};
