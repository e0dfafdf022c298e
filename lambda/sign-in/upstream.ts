import * as oidc from 'openid-client';
import type { SignInConfig } from '../platform/config.js';

/** What one sign-in needs to remember between sending the person away and their return. */
export interface PendingSignIn {
  /** The authorization's interaction; absent when the person is signing in to the account page. */
  readonly uid?: string;
  /**
   * An account-page sign-in is bound to the browser that started it (a token only that browser's
   * cookie matches): a provider's redirect opened in another browser signs nobody in there.
   */
  readonly binding?: string;
  readonly codeVerifier: string;
  readonly nonce: string;
}

export interface UpstreamIdentity {
  readonly email: string;
}

export class UpstreamSignInError extends Error {
  override name = 'UpstreamSignInError';
}

/**
 * Sign-in federated to the operator's OpenID provider (the stack's Cognito user pool by default)
 * with openid-client: authorization code, PKCE S256, state and nonce, ID token validated by the
 * library. doers only takes the verified e-mail address from it; the provider's tokens are dropped.
 */
export interface UpstreamSignIn {
  /** The provider's authorization URL for this interaction, and what to keep under its `state`. */
  start(uid: string | undefined): Promise<{ readonly url: URL; readonly state: string; readonly pending: PendingSignIn }>;
  /** Exchanges the code of the provider's redirect (`callbackUrl` with its query) for a verified identity. */
  finish(callbackUrl: URL, state: string, pending: PendingSignIn): Promise<UpstreamIdentity>;
}

export const createUpstreamSignIn = (signIn: SignInConfig & { readonly clientSecret?: string }, redirectUri: string): UpstreamSignIn => {
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = (): Promise<oidc.Configuration> => {
    discovered ??= oidc
      .discovery(
        new URL(signIn.issuer),
        signIn.clientId,
        undefined,
        signIn.clientSecret ? oidc.ClientSecretPost(signIn.clientSecret) : oidc.None(),
        // Plain http is only ever a provider on this machine (tests, a local identity provider).
        new URL(signIn.issuer).protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((err: unknown) => {
        discovered = undefined; // the next sign-in tries again
        throw err;
      });
    return discovered;
  };

  return {
    async start(uid) {
      const config = await configuration();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email',
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { url, state, pending: { ...(uid ? { uid } : {}), codeVerifier, nonce } };
    },

    async finish(callbackUrl, state, pending) {
      const config = await configuration();
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      const email = typeof claims?.email === 'string' ? claims.email.trim() : '';
      if (!email) throw new UpstreamSignInError('The identity provider did not say which e-mail address you signed in with.');
      // An address the provider has not verified could be anyone's: it must say so explicitly.
      if (claims?.email_verified !== true) throw new UpstreamSignInError(`The identity provider has not verified ${email}.`);
      return { email };
    },
  };
};
