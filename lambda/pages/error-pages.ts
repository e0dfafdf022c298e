import { messagePage, type Page } from './layout.js';

/**
 * The pages that say why something did not happen, one set for sign-in, consent and the account
 * page. Each says what to do next; none carries an internal message.
 */

/** What a caller is told to wait when DynamoDB is throttling or out of reach (as the MCP function says). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

export const ERROR_PAGES = {
  /** An interaction or pending sign-in that is gone, or was opened in another browser. */
  expired: (): Page =>
    messagePage(
      'This sign-in has expired',
      'The request is no longer valid or was opened in another browser. Go back and start again.',
      400,
    ),
  notAllowed: (who: string): Page =>
    messagePage(
      'No access to doers',
      `${who} is not an active member of a doers workspace. Ask a workspace owner or admin to invite this address, then try again.`,
      403,
    ),
  /** A form whose CSRF token does not verify; `retry` says where to start again. */
  formExpired: (retry: string): Page => messagePage('This form has expired', `The form could not be verified. ${retry}`, 403),
  notFound: (title = 'Not found', message = 'There is no such page.'): Page => messagePage(title, message, 404),
  signInUnavailable: (): Page =>
    messagePage('Sign-in is not available', 'This server has no identity provider configured for sign-in.', 503),
  /** DynamoDB throttling or out of reach: nothing was changed; the same step works again shortly. */
  unavailable: (): Page => {
    const p = messagePage(
      'doers is busy',
      'doers cannot answer this right now and nothing was changed. Try again in a moment (reload the page, or send the form again).',
      503,
    );
    return { ...p, headers: { ...p.headers, 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } };
  },
  failed: (): Page => messagePage('Something went wrong', 'The request could not be completed. Try again in a moment.', 500),
} as const;
