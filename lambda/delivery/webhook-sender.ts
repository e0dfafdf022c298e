import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { type AddressClass, type Resolve, type ResolvedAddress, type UrlRefusalCause, vetUrl } from './address-guard.js';

/**
 * One delivery of a webhook: a POST signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`: the `standardwebhooks` package's own signing), to the address the URL was
 * vetted to just now (address-guard.ts), connected to by that address and no other, cut after
 * `timeoutMs`, redirects never followed. What came of it is an outcome, never an exception: the
 * dispatcher (workspace/webhooks/webhook-dispatch.ts) decides from `retryable` and `cause` whether
 * to try again.
 */

/** Why a delivery failed: stable codes. */
export type SendCause =
  | UrlRefusalCause
  /** No answer (headers) within the timeout. */
  | 'timeout'
  /** The connection failed or broke (refused, reset, TLS). */
  | 'network'
  /** A 3xx: redirects are never followed. */
  | 'redirect'
  /** A 3xx whose Location is an address a delivery may not reach. */
  | 'redirect-to-forbidden-address'
  /** Any other status than 2xx. */
  | 'status';

export type SendOutcome =
  | { readonly ok: true; readonly status: number }
  | {
      readonly ok: false;
      readonly retryable: boolean;
      readonly cause: SendCause;
      readonly status?: number;
      /** With a forbidden address (the URL's or a redirect's): which class it is. */
      readonly addressClass?: AddressClass;
    };

export interface OutgoingDelivery {
  readonly url: string;
  /** `whsec_…`: the webhook's own secret. */
  readonly secret: string;
  /** `webhook-id`: the notice's id, what a receiver deduplicates on. */
  readonly messageId: string;
  /** The JSON body, exactly as signed. */
  readonly body: string;
}

export interface SendOptions {
  readonly allowLoopback: boolean;
  readonly resolve?: Resolve;
  /** How long the receiver has to answer (default DEFAULT_TIMEOUT_MS). */
  readonly timeoutMs?: number;
  /** The signature's timestamp: the moment it is sent (default now). */
  readonly signedAt?: Date;
}

export const DEFAULT_TIMEOUT_MS = 5_000;
/** What is read of a receiver's answer at most: nothing of it is kept, it is read only to end the exchange cleanly. */
export const MAX_RESPONSE_BYTES = 4_096;
const USER_AGENT = 'doers-webhooks/1';

/** Signs a body as Standard Webhooks says: the three headers a receiver verifies with its secret. */
export const signedHeaders = (secret: string, messageId: string, body: string, at: Date): Record<string, string> => ({
  'webhook-id': messageId,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': new Webhook(secret).sign(messageId, at, body),
});

/** The vetted address and nothing else, whatever name the connection asks for. */
const pinned =
  (address: ResolvedAddress): LookupFunction =>
  (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };

/** 408 and 429 say "later"; 5xx say the receiver could not now; every other status is an answer. */
const retryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

interface Answer {
  readonly status: number;
  readonly location: string | undefined;
}

class Timeout extends Error {}

/** One POST, answered or failed within the timeout; at most MAX_RESPONSE_BYTES of the answer read. */
const post = (
  url: URL,
  host: string,
  address: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request({
      protocol: url.protocol,
      host,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: {
        ...headers,
        // The name in the URL, whatever address the socket was pinned to.
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': USER_AGENT,
      },
      agent: false,
      lookup: pinned(address),
      // The certificate is checked for the name in the URL, while the socket goes to the pinned address.
      ...(isIP(host) ? {} : { servername: host }),
    });
    const timer = setTimeout(() => req.destroy(new Timeout()), timeoutMs);
    const done = (err: Error | undefined, answer?: Answer) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(answer!);
    };
    req.on('error', (err) => done(err));
    req.on('response', (res: IncomingMessage) => {
      const answer: Answer = { status: res.statusCode ?? 0, location: res.headers.location };
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) {
          res.destroy();
          done(undefined, answer);
        }
      });
      res.on('end', () => done(undefined, answer));
      res.on('error', () => done(undefined, answer));
    });
    req.end(body);
  });

/** A 3xx's Location, vetted as a URL would be: refused naming its address's class when it is forbidden. */
const redirectOutcome = async (status: number, location: string | undefined, base: URL, opts: SendOptions): Promise<SendOutcome> => {
  if (location) {
    let target: string | undefined;
    try {
      target = new URL(location, base).href;
    } catch {
      target = undefined;
    }
    const vetted = target === undefined ? undefined : await vetUrl(target, opts);
    if (vetted && !vetted.ok && vetted.cause === 'forbidden-address')
      return { ok: false, retryable: false, cause: 'redirect-to-forbidden-address', status, addressClass: vetted.addressClass! };
  }
  return { ok: false, retryable: false, cause: 'redirect', status };
};

/** Vets the URL (again: the delivery's own check), signs the body and posts it to the vetted address. */
export const sendSigned = async (delivery: OutgoingDelivery, opts: SendOptions): Promise<SendOutcome> => {
  const vetted = await vetUrl(delivery.url, opts);
  if (!vetted.ok) {
    return {
      ok: false,
      // A name that does not resolve now may tomorrow; a URL of the wrong kind stays wrong.
      retryable: vetted.cause === 'unresolvable',
      cause: vetted.cause,
      ...(vetted.addressClass ? { addressClass: vetted.addressClass } : {}),
    };
  }
  const headers = signedHeaders(delivery.secret, delivery.messageId, delivery.body, opts.signedAt ?? new Date());
  let answer: Answer;
  try {
    answer = await post(vetted.url, vetted.host, vetted.address, headers, delivery.body, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  } catch (err) {
    return { ok: false, retryable: true, cause: err instanceof Timeout ? 'timeout' : 'network' };
  }
  const { status, location } = answer;
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) return redirectOutcome(status, location, vetted.url, opts);
  return { ok: false, retryable: retryableStatus(status), cause: 'status', status };
};
