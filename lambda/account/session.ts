import { randomBytes } from 'node:crypto';
import type { KeyRing } from '../platform/key-ring.js';
import { mac, macValid } from '../platform/mac.js';

/**
 * The account page's own session: a signed cookie naming the member, nothing stored. It is short
 * (every page re-reads the member, so disabling someone ends their session at once; the bound only
 * limits how long a stolen cookie lasts), HttpOnly, SameSite=Lax, and Secure with the `__Host-`
 * prefix wherever the public URL is https — only on a loopback http URL is it sent in the clear.
 */
export const SESSION_SECONDS = 30 * 60;
/** How long the development sign-in's form is good for. */
export const SIGN_IN_FORM_SECONDS = 10 * 60;

export interface AccountSession {
  readonly accountId: string;
  /** Random per sign-in: what the forms' CSRF tokens are bound to. */
  readonly sid: string;
  /** Epoch seconds. */
  readonly exp: number;
}

const parseCookies = (header: string | undefined): Map<string, string> =>
  new Map(
    (header ?? '')
      .split(/;\s*/)
      .filter((c) => c.includes('='))
      .map((c) => [c.slice(0, c.indexOf('=')), c.slice(c.indexOf('=') + 1)] as const),
  );

export const createSessionStore = (ring: KeyRing, secure: boolean) => {
  const name = secure ? '__Host-doers-account' : 'doers-account';
  const formName = secure ? '__Host-doers-sign-in' : 'doers-sign-in';
  const attributes = (maxAge: number) => `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
  const signed = (value: string) => `${value}.${mac(ring.current['account-session'], value)}`;
  const verified = (raw: string | undefined): string | undefined => {
    if (!raw) return undefined;
    const dot = raw.lastIndexOf('.');
    const value = raw.slice(0, dot);
    return dot > 0 && macValid(ring, 'account-session', value, raw.slice(dot + 1)) ? value : undefined;
  };
  const csrfOf = (purpose: string, bound: string) => mac(ring.current.csrf, `account ${purpose} ${bound}`);
  const csrfValid = (purpose: string, bound: string, token: string | null | undefined) =>
    macValid(ring, 'csrf', `account ${purpose} ${bound}`, token);

  return {
    /** Set-Cookie for a fresh session of this member. */
    start(accountId: string, now: Date): string {
      const session: AccountSession = {
        accountId,
        sid: randomBytes(16).toString('base64url'),
        exp: Math.floor(now.getTime() / 1000) + SESSION_SECONDS,
      };
      return `${name}=${signed(Buffer.from(JSON.stringify(session)).toString('base64url'))}; ${attributes(SESSION_SECONDS)}`;
    },
    read(cookieHeader: string | undefined, now: Date): AccountSession | undefined {
      const value = verified(parseCookies(cookieHeader).get(name));
      if (!value) return undefined;
      try {
        const session = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as AccountSession;
        return typeof session.accountId === 'string' && typeof session.sid === 'string' && session.exp > now.getTime() / 1000
          ? session
          : undefined;
      } catch {
        return undefined;
      }
    },
    end(): string {
      return `${name}=; ${attributes(0)}`;
    },
    /** CSRF token of the signed-in forms, bound to the session. */
    csrf: (session: AccountSession) => csrfOf('session', session.sid),
    csrfValid: (session: AccountSession, token: string | null | undefined) => csrfValid('session', session.sid, token),
    /**
     * The development sign-in's form is posted before any session exists, so its token is bound to a
     * random value in a short cookie of its own (a page elsewhere can neither read nor set it).
     */
    signInForm(): { cookie: string; csrf: string } {
      const nonce = randomBytes(16).toString('base64url');
      return { cookie: `${formName}=${signed(nonce)}; ${attributes(SIGN_IN_FORM_SECONDS)}`, csrf: csrfOf('sign-in', nonce) };
    },
    signInFormValid(cookieHeader: string | undefined, token: string | null | undefined): boolean {
      const nonce = verified(parseCookies(cookieHeader).get(formName));
      return nonce !== undefined && csrfValid('sign-in', nonce, token);
    },
  };
};

export type SessionStore = ReturnType<typeof createSessionStore>;
