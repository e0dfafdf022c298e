import { AdminCreateUserCommand, AdminDisableUserCommand, AdminEnableUserCommand } from '@aws-sdk/client-cognito-identity-provider';
import type { SignInPool } from './target.js';

/**
 * The stack's Cognito user pool (output SignInUserPoolId): adding, disabling and enabling a user in
 * doers is mirrored there, so the person can (or can no longer) sign in.
 */

const errorName = (err: unknown): string | undefined => (err as { name?: unknown } | null)?.name as string | undefined;
export const describeError = (err: unknown): string => {
  const name = errorName(err);
  const message = (err as Error).message;
  return name && name !== 'Error' && !message.startsWith(name) ? `${name}: ${message}` : message;
};

/**
 * AdminCreateUser with the e-mail address as username: Cognito e-mails the person an invitation with
 * a temporary password. A user already there is left as it is. Answers what was done.
 */
export const inviteToSignInPool = async (pool: SignInPool, email: string): Promise<string> => {
  try {
    await pool.cognito.send(
      new AdminCreateUserCommand({
        UserPoolId: pool.userPoolId,
        Username: email,
        UserAttributes: [
          { Name: 'email', Value: email },
          { Name: 'email_verified', Value: 'true' },
        ],
        DesiredDeliveryMediums: ['EMAIL'],
      }),
    );
    return `Cognito user pool ${pool.userPoolId}: created ${email}; Cognito e-mails them an invitation with a temporary password.`;
  } catch (err) {
    if (errorName(err) !== 'UsernameExistsException') throw err;
    return `Cognito user pool ${pool.userPoolId}: ${email} already exists there; left as it is (no new invitation).`;
  }
};

/** AdminDisableUser / AdminEnableUser. A user not in the pool is reported, not an error. */
export const setSignInPoolStatus = async (pool: SignInPool, email: string, status: 'active' | 'disabled'): Promise<string> => {
  const input = { UserPoolId: pool.userPoolId, Username: email };
  try {
    await pool.cognito.send(status === 'disabled' ? new AdminDisableUserCommand(input) : new AdminEnableUserCommand(input));
    return `Cognito user pool ${pool.userPoolId}: ${email} is ${status === 'disabled' ? 'disabled; they cannot sign in' : 'enabled; they can sign in again'}.`;
  } catch (err) {
    if (errorName(err) !== 'UserNotFoundException') throw err;
    return status === 'disabled'
      ? `Cognito user pool ${pool.userPoolId}: no user ${email} there; nothing to disable.`
      : `Cognito user pool ${pool.userPoolId}: no user ${email} there; "user add --email ${email} --name …" invites them.`;
  }
};
