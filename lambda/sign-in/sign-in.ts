import type { Logger } from '@aws-lambda-powertools/logger';
import type { Adapter, AdapterFactory } from 'oidc-provider';
import { ERROR_PAGES } from '../pages/error-pages.js';
import { messagePage, type Page } from '../pages/layout.js';
import type { Member, Workspace } from '../vocabulary.js';
import { accountIdOf, memberRefOfAccountId } from '../vocabulary.js';
import type { DirectoryStore } from '../workspace/store/directory-store.js';
import { type PendingSignIn, type UpstreamSignIn, UpstreamSignInError } from './upstream.js';

/** A member the development sign-in offers. */
export interface DevMember {
  readonly member: Member;
  readonly workspace: Workspace;
}

export interface ActiveMember {
  readonly member: Member;
  readonly workspace: Workspace;
}

/** Seconds a person has to come back from the identity provider. */
const SIGN_IN_SECONDS = 10 * 60;
export const UPSTREAM_CALLBACK_PATH = '/oauth/callback';

export interface SignInDeps {
  readonly publicUrl: string;
  readonly directory: DirectoryStore;
  readonly adapter: AdapterFactory;
  readonly logger: Logger;
  readonly upstream?: UpstreamSignIn;
  readonly devMembers?: () => Promise<readonly DevMember[]>;
}

/**
 * Who a person is, shared by the authorization's sign-in and the account page's: the operator's
 * OpenID provider (its verified e-mail mapped to an active member), or locally the development
 * sign-in. Both end at a member of an active workspace, or at a page saying why not.
 */
export const createSignIn = (deps: SignInDeps) => {
  const pending: Adapter = deps.adapter('UpstreamSignIn');

  const activeMember = async (accountId: string): Promise<ActiveMember | undefined> => {
    const ref = memberRefOfAccountId(accountId);
    if (!ref) return undefined;
    const [member, workspace] = await Promise.all([
      deps.directory.getMember(ref.workspaceId, ref.userId),
      deps.directory.getWorkspace(ref.workspaceId),
    ]);
    return member?.status === 'active' && workspace?.status === 'active' ? { member, workspace } : undefined;
  };

  return {
    upstream: deps.upstream,
    devMembers: deps.devMembers,
    activeMember,

    /** The identity provider's authorization URL for this sign-in; what it needs later is kept under its state. */
    async begin(uid: string | undefined, binding?: string): Promise<string> {
      const started = await deps.upstream!.start(uid);
      await pending.upsert(started.state, { ...started.pending, ...(binding ? { binding } : {}) }, SIGN_IN_SECONDS);
      return started.url.href;
    },

    /** The sign-in a `state` belongs to, if it is still waiting. */
    async pendingOf(state: string): Promise<PendingSignIn | undefined> {
      return state ? ((await pending.find(state)) as PendingSignIn | undefined) : undefined;
    },

    /**
     * Redeems the identity provider's answer (once: the pending sign-in is gone afterwards) and
     * finds the active member behind its verified e-mail address, or the page to show instead.
     */
    async finish(url: URL, state: string, waiting: PendingSignIn): Promise<ActiveMember | Page> {
      await pending.destroy(state);
      // The provider's error text is not shown: anyone holding a pending state could put words on
      // doers' page with it. The operator finds it in the log.
      const error = url.searchParams.get('error');
      if (error) {
        deps.logger.info('Upstream sign-in ended with an error', {
          error,
          description: url.searchParams.get('error_description') ?? undefined,
        });
        return messagePage('Sign-in did not complete', 'The identity provider did not sign you in. Go back and try again.', 400);
      }
      let email: string;
      try {
        ({ email } = await deps.upstream!.finish(new URL(`${deps.publicUrl}${UPSTREAM_CALLBACK_PATH}${url.search}`), state, waiting));
      } catch (err) {
        deps.logger.warn('Upstream sign-in failed', { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
        const message = err instanceof UpstreamSignInError ? err.message : "The identity provider's answer could not be verified.";
        return messagePage('Sign-in did not complete', `${message} Go back and try again.`, 400);
      }
      const member = await deps.directory.findMemberByEmail(email);
      const who = member ? await activeMember(accountIdOf(member)) : undefined;
      if (who) return who;
      // The operator's record of who tried: the address the identity provider vouched for.
      deps.logger.info('Sign-in refused: not an active member', { email, member: member ? accountIdOf(member) : undefined });
      return ERROR_PAGES.notAllowed(email);
    },

    /** The development sign-in's choice, if it is one it offers. */
    async devChoice(accountId: string): Promise<ActiveMember | undefined> {
      const offered = deps.devMembers ? await deps.devMembers() : [];
      return offered.find(({ member }) => accountIdOf(member) === accountId);
    },
  };
};

export type SignIn = ReturnType<typeof createSignIn>;
