import type { SESv2Client, SendEmailCommand as SendEmailCommandType } from '@aws-sdk/client-sesv2';
import { NETWORK_FAILURES } from '../errors.js';

/**
 * E-mail out through the SES v2 API: SES in AWS, the local SES API locally
 * (lambda/local/embedded-ses.ts). The SES client is imported on the first send, as the S3 client
 * is on the first attachment (lambda/files/file-store.ts): a process that sends no mail never
 * loads it, so the MCP function's cold start does not pay for it.
 */

export interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

export interface EmailSender {
  /** Resolves once SES has accepted the mail; throws an EmailUnavailableError or an EmailRejectedError. */
  send(mail: Mail): Promise<void>;
}

export interface EmailSenderOptions {
  /** The verified SES identity mail is sent from (config.notifications.emailFrom). */
  readonly from: string;
  /** Local: the SES v2 API to send through (fixed local credentials). */
  readonly endpoint?: string | undefined;
  readonly region?: string | undefined;
}

/** SES throttling, its server failing or out of reach: the same mail may go later. */
export class EmailUnavailableError extends Error {
  readonly code = 'ERR_EMAIL_UNAVAILABLE';
  readonly retryable = true;
  constructor(cause: unknown) {
    super('SES cannot take the mail right now; retry later', { cause });
    this.name = 'EmailUnavailableError';
  }
}

/** SES refused this mail (an address, the sender identity, the account): sending it again fails the same way. */
export class EmailRejectedError extends Error {
  readonly code = 'ERR_EMAIL_REJECTED';
  readonly retryable = false;
  /** SES's error name, e.g. `MessageRejected`, `MailFromDomainNotVerifiedException`. */
  readonly reason: string;
  constructor(reason: string, cause: unknown) {
    super(`SES refused the mail: ${reason}`, { cause });
    this.name = 'EmailRejectedError';
    this.reason = reason;
  }
}

/**
 * SES v2's throttling and server faults (SendEmailCommand's documented errors); the quota's
 * LimitExceededException passes with time, so it is retried too.
 */
const UNAVAILABLE = new Set([
  'TooManyRequestsException',
  'LimitExceededException',
  'Throttling',
  'ThrottlingException',
  'InternalServiceErrorException',
  'ServiceUnavailable',
  'AbortError',
  ...NETWORK_FAILURES,
]);

type AwsError = { name?: string; code?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };

/** The typed error a send's failure is, or the failure itself when it is neither SES's nor the network's (a bug). */
const typed = (err: unknown): unknown => {
  if (typeof err !== 'object' || err === null) return err;
  const e = err as AwsError;
  const status = e.$metadata?.httpStatusCode;
  if (
    (e.name !== undefined && UNAVAILABLE.has(e.name)) ||
    (e.code !== undefined && UNAVAILABLE.has(e.code)) ||
    e.$retryable ||
    (status !== undefined && (status >= 500 || status === 429))
  )
    return new EmailUnavailableError(err);
  if (status !== undefined && status >= 400) return new EmailRejectedError(e.name ?? `HTTP ${status}`, err);
  return err;
};

export const createEmailSender = (opts: EmailSenderOptions): EmailSender => {
  let loading: Promise<{ client: SESv2Client; SendEmailCommand: typeof SendEmailCommandType }> | undefined;
  const client = () => {
    loading ??= import('@aws-sdk/client-sesv2')
      .then(({ SESv2Client, SendEmailCommand }) => ({
        client: new SESv2Client({
          ...(opts.endpoint !== undefined
            ? {
                endpoint: opts.endpoint,
                region: opts.region ?? 'us-east-1',
                credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
              }
            : { region: opts.region }),
          maxAttempts: 3,
          requestHandler: { connectionTimeout: 1_000, requestTimeout: 10_000, throwOnRequestTimeout: true },
        }),
        SendEmailCommand,
      }))
      .catch((err: unknown) => {
        // A failed load is tried again on the next send.
        loading = undefined;
        throw err;
      });
    return loading;
  };
  return {
    send: async (mail) => {
      const { client: ses, SendEmailCommand } = await client();
      try {
        await ses.send(
          new SendEmailCommand({
            FromEmailAddress: opts.from,
            Destination: { ToAddresses: [mail.to] },
            Content: {
              Simple: {
                Subject: { Data: mail.subject, Charset: 'UTF-8' },
                Body: { Text: { Data: mail.text, Charset: 'UTF-8' }, Html: { Data: mail.html, Charset: 'UTF-8' } },
              },
            },
          }),
        );
      } catch (err) {
        throw typed(err);
      }
    },
  };
};
