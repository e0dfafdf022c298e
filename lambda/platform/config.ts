import * as z from 'zod/mini';
import './zod-locale.js';

/**
 * The configuration contract (docs/deploy-and-operations.md, "Configuration reference"), parsed and validated once per cold start.
 * This module is the only reader of `process.env`; everything else receives a `Config`.
 */

export const PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type ProtocolVersion = (typeof PROTOCOL_VERSIONS)[number];

export const DEFAULT_ALLOWED_ORIGINS = [
  'https://doers.sh',
  'https://claude.ai',
  'https://claude.com',
  'https://chatgpt.com',
  'https://chat.openai.com',
  'https://platform.openai.com',
] as const;

const intFromEnv = (fallback: number) =>
  z.pipe(
    z.optional(z.pipe(z.string().check(z.trim(), z.regex(/^\d+$/, 'must be a whole number')), z.transform(Number))),
    z.transform((v) => v ?? fallback),
  );

const optionalString = z.pipe(
  z.optional(z.string().check(z.trim())),
  z.transform((v) => (v === '' ? undefined : v)),
);

const urlWithoutTrailingSlash = z.pipe(
  z.url(),
  z.transform((v) => v.replace(/\/+$/, '')),
);

const envSchema = z.object({
  // 0 picks a free port (tests, several local servers side by side).
  PORT: z.pipe(intFromEnv(8787), z.number().check(z.int(), z.minimum(0), z.maximum(65535))),
  DOERS_DATA_DIR: z.pipe(
    optionalString,
    z.transform((v) => v ?? '.data'),
  ),
  DOERS_DYNAMODB_ENDPOINT: z.pipe(optionalString, z.optional(z.url())),
  // npm start: a short line per call, or the audit lines and metric records Lambda writes.
  DOERS_LOCAL_LOG: z.pipe(
    z.pipe(
      optionalString,
      z.transform((v) => v ?? 'calls'),
    ),
    z.enum(['calls', 'json'], { error: 'must be calls or json' }),
  ),
  // npm start: the demo workspace seeded at start-up (on), or a store that holds only what is put there (off).
  DOERS_DEMO_SEED: z.pipe(
    z.pipe(
      optionalString,
      z.transform((v) => v ?? 'on'),
    ),
    z.enum(['on', 'off'], { error: 'must be on or off' }),
  ),
  // Sent as a bearer token, so it must fit RFC 6750's token syntax, be hard to guess, and not look
  // like a JWT (those go to the JWT verifier).
  DOERS_DEV_TOKEN: z.pipe(
    optionalString,
    z.optional(
      z.string().check(
        z.minLength(16, 'must be at least 16 characters'),
        z.regex(/^[A-Za-z0-9\-._~+/]+=*$/, 'may only contain letters, digits and - . _ ~ + / (then = padding)'),
        z.refine(
          (v) => !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(v),
          'must not look like a JWT (three dot-separated parts)',
        ),
      ),
    ),
  ),
  DOERS_PUBLIC_URL: z.pipe(optionalString, z.optional(urlWithoutTrailingSlash)),
  DOERS_ALLOWED_ORIGINS: optionalString,
  DOERS_JWT_ISSUER: optionalString,
  DOERS_JWKS_URI: z.pipe(optionalString, z.optional(z.url())),
  DOERS_JWT_AUDIENCE: optionalString,
  DOERS_JWT_USER_CLAIM: z.pipe(
    optionalString,
    z.transform((v) => v ?? 'email'),
  ),
  DOERS_JWT_SCOPE_PREFIX: optionalString,
  DOERS_RATE_LIMIT_CALLS: intFromEnv(120),
  DOERS_RATE_LIMIT_WINDOW_SECONDS: z.pipe(intFromEnv(60), z.number().check(z.int(), z.minimum(1))),
  DOERS_MAX_CONCURRENT_CALLS: intFromEnv(4),
  // Bounds how long a disable, revocation, scope or role change takes to reach every instance.
  DOERS_AUTH_CACHE_SECONDS: z.pipe(
    intFromEnv(5),
    z.number().check(z.int(), z.maximum(300, 'must be at most 300 (it bounds how long a revocation takes)')),
  ),
  // Activity records, and the deleted items their undo needs, are kept this many days (TTL).
  DOERS_ACTIVITY_DAYS: z.pipe(intFromEnv(90), z.number().check(z.int(), z.minimum(1), z.maximum(3650))),
  // Set by the CDK stack; the local server fills them with its own defaults.
  DOERS_WORKSPACE_TABLE: z.pipe(
    optionalString,
    z.transform((v) => v ?? 'doers-workspace'),
  ),
  DOERS_LIMITS_TABLE: z.pipe(
    optionalString,
    z.transform((v) => v ?? 'doers-limits'),
  ),
  DOERS_SECRET_ARN: optionalString,
  // The built-in authorization server's upstream sign-in (unset: the development sign-in, local only).
  DOERS_SIGNIN_ISSUER: z.pipe(optionalString, z.optional(z.url())),
  DOERS_SIGNIN_CLIENT_ID: optionalString,
  DOERS_SIGNIN_CLIENT_SECRET: optionalString,
  DOERS_SIGNIN_CLIENT_SECRET_ARN: optionalString,
  // Attachments: the stack sets the bucket; locally the embedded S3 API's (or DOERS_S3_ENDPOINT's).
  DOERS_S3_ENDPOINT: z.pipe(optionalString, z.optional(z.url())),
  DOERS_ATTACHMENT_BUCKET: z.pipe(
    optionalString,
    z.transform((v) => v ?? 'doers-attachments'),
  ),
  // A tools/call carries the file as base64 in its body, and Lambda takes 6 MB a request: 4 MB is the most.
  DOERS_ATTACHMENT_MAX_MB: z.pipe(
    intFromEnv(4),
    z.number().check(z.int(), z.minimum(1), z.maximum(4, 'must be at most 4 (a Lambda request carries 6 MB, the file as base64)')),
  ),
  DOERS_ATTACHMENT_QUOTA_MB: z.pipe(intFromEnv(1024), z.number().check(z.int(), z.minimum(1))),
  // Notifications by e-mail: the verified SES sender (the stack's context doers:emailFrom); unset, e-mail is off.
  DOERS_EMAIL_FROM: z.pipe(optionalString, z.optional(z.email('must be an e-mail address'))),
  // Local: the SES v2 API to send through (npm start starts one and sets this).
  DOERS_SES_ENDPOINT: z.pipe(optionalString, z.optional(z.url())),
  // Long work (workspace_import, workspace_export): the SQS queue its worker reads (the stack sets it; locally work runs beside the server).
  DOERS_WORK_QUEUE_URL: z.pipe(optionalString, z.optional(z.url())),
  // Lambda's own: the function timeout bounds how long a dead holder's lease can count.
  DOERS_FUNCTION_TIMEOUT_SECONDS: z.pipe(intFromEnv(30), z.number().check(z.int(), z.minimum(1))),
  AWS_REGION: optionalString,
});

export interface JwtConfig {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly audience: string;
  readonly userClaim: string;
  /**
   * What the authorization server puts before each scope name (Cognito: `<resource server id>/`).
   * Scopes are advertised with it, so a client asks the server for names it knows.
   */
  readonly scopePrefix?: string;
}

/** The upstream OpenID provider people sign in with at the built-in authorization server. */
export interface SignInConfig {
  readonly issuer: string;
  readonly clientId: string;
  /** Absent: a public client (PKCE only), as the stack's Cognito app client is. */
  readonly clientSecret?: string;
  /** Lambda: the client secret is read from Secrets Manager at cold start. */
  readonly clientSecretArn?: string;
}

export interface Config {
  readonly port: number;
  readonly dataDir: string;
  readonly dynamodbEndpoint: string | undefined;
  /** What `npm start` prints per call: a short line, or the JSON records Lambda writes. */
  readonly localLog: 'calls' | 'json';
  /** Local: whether `npm start` seeds the demo workspace and its dev token. */
  readonly demoSeed: 'on' | 'off';
  readonly devToken: string | undefined;
  readonly publicUrl: string;
  readonly allowedOrigins: ReadonlySet<string>;
  readonly jwt: JwtConfig | undefined;
  /**
   * doers' own authorization server (docs/auth.md): on unless an external issuer is configured,
   * whose tokens then are the only JWTs accepted.
   */
  readonly builtinAuthorizationServer: boolean;
  /** Unset: the development sign-in (loopback only). */
  readonly signIn: SignInConfig | undefined;
  readonly rateLimit: { readonly calls: number; readonly windowSeconds: number };
  readonly maxConcurrentCalls: number;
  /** How long one instance may reuse a verified principal; 0: never. */
  readonly authCacheSeconds: number;
  /** Days an activity record, and what its undo needs, are kept. */
  readonly activityDays: number;
  readonly tables: { readonly workspace: string; readonly limits: string };
  /** Where attachments go and how large they may be (bytes). */
  readonly attachments: {
    readonly bucket: string;
    /** Local: an S3 API to use instead of the embedded one. */
    readonly endpoint: string | undefined;
    readonly maxBytes: number;
    readonly quotaBytes: number;
  };
  /** Telling people (docs/notifications.md): e-mail goes out only with a sender. */
  readonly notifications: {
    /** The SES identity mail is sent from; absent: e-mail is off. */
    readonly emailFrom: string | undefined;
    /** Local: the SES v2 API to use instead of the region's. */
    readonly sesEndpoint: string | undefined;
  };
  /** Long work: the queue its worker reads (lib/worker.ts); absent locally, where it runs beside the server. */
  readonly workQueueUrl: string | undefined;
  readonly secretArn: string | undefined;
  readonly functionTimeoutSeconds: number;
  readonly region: string | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const isLoopbackOrigin = (origin: string): boolean => {
  try {
    const { hostname } = new URL(origin);
    return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
  } catch {
    return false;
  }
};

export { isLoopbackOrigin };

/** Parses the contract's names; a bad value fails start-up naming the variable. */
export const loadConfig = (env: Record<string, string | undefined> = process.env): Config => {
  const parsed = z.safeParse(envSchema, env);
  if (!parsed.success) {
    const detail = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${detail}`);
  }
  const e = parsed.data;
  const origins = (e.DOERS_ALLOWED_ORIGINS?.split(',') ?? [...DEFAULT_ALLOWED_ORIGINS])
    .map((o) => o.trim().replace(/\/+$/, '').toLowerCase())
    .filter((o) => o.length > 0);
  for (const origin of origins) {
    if (!/^https?:\/\/[^/]+$/.test(origin)) {
      throw new ConfigError(`Invalid configuration: DOERS_ALLOWED_ORIGINS: "${origin}" is not an origin (scheme://host[:port])`);
    }
  }
  const jwtParts = [e.DOERS_JWT_ISSUER, e.DOERS_JWKS_URI];
  if (jwtParts.some(Boolean) && !jwtParts.every(Boolean)) {
    throw new ConfigError('Invalid configuration: DOERS_JWT_ISSUER and DOERS_JWKS_URI go together');
  }
  if (e.DOERS_SIGNIN_ISSUER && !e.DOERS_SIGNIN_CLIENT_ID) {
    throw new ConfigError('Invalid configuration: DOERS_SIGNIN_CLIENT_ID is required with DOERS_SIGNIN_ISSUER');
  }
  if (e.DOERS_ATTACHMENT_QUOTA_MB < e.DOERS_ATTACHMENT_MAX_MB) {
    throw new ConfigError('Invalid configuration: DOERS_ATTACHMENT_QUOTA_MB must be at least DOERS_ATTACHMENT_MAX_MB');
  }
  if (e.DOERS_JWT_ISSUER && !e.DOERS_JWT_AUDIENCE) {
    // Without an audience any token of the issuer passes, also one it made for another client or API.
    throw new ConfigError('Invalid configuration: DOERS_JWT_AUDIENCE is required with DOERS_JWT_ISSUER');
  }
  return {
    port: e.PORT,
    dataDir: e.DOERS_DATA_DIR,
    dynamodbEndpoint: e.DOERS_DYNAMODB_ENDPOINT,
    localLog: e.DOERS_LOCAL_LOG,
    demoSeed: e.DOERS_DEMO_SEED,
    devToken: e.DOERS_DEV_TOKEN,
    publicUrl: e.DOERS_PUBLIC_URL ?? `http://127.0.0.1:${e.PORT}`,
    allowedOrigins: new Set(origins),
    jwt:
      e.DOERS_JWT_ISSUER && e.DOERS_JWKS_URI && e.DOERS_JWT_AUDIENCE
        ? {
            issuer: e.DOERS_JWT_ISSUER,
            jwksUri: e.DOERS_JWKS_URI,
            audience: e.DOERS_JWT_AUDIENCE,
            userClaim: e.DOERS_JWT_USER_CLAIM,
            ...(e.DOERS_JWT_SCOPE_PREFIX ? { scopePrefix: e.DOERS_JWT_SCOPE_PREFIX } : {}),
          }
        : undefined,
    builtinAuthorizationServer: !e.DOERS_JWT_ISSUER,
    signIn:
      e.DOERS_SIGNIN_ISSUER && e.DOERS_SIGNIN_CLIENT_ID
        ? {
            issuer: e.DOERS_SIGNIN_ISSUER,
            clientId: e.DOERS_SIGNIN_CLIENT_ID,
            ...(e.DOERS_SIGNIN_CLIENT_SECRET ? { clientSecret: e.DOERS_SIGNIN_CLIENT_SECRET } : {}),
            ...(e.DOERS_SIGNIN_CLIENT_SECRET_ARN ? { clientSecretArn: e.DOERS_SIGNIN_CLIENT_SECRET_ARN } : {}),
          }
        : undefined,
    rateLimit: { calls: e.DOERS_RATE_LIMIT_CALLS, windowSeconds: e.DOERS_RATE_LIMIT_WINDOW_SECONDS },
    maxConcurrentCalls: e.DOERS_MAX_CONCURRENT_CALLS,
    authCacheSeconds: e.DOERS_AUTH_CACHE_SECONDS,
    activityDays: e.DOERS_ACTIVITY_DAYS,
    tables: { workspace: e.DOERS_WORKSPACE_TABLE, limits: e.DOERS_LIMITS_TABLE },
    attachments: {
      bucket: e.DOERS_ATTACHMENT_BUCKET,
      endpoint: e.DOERS_S3_ENDPOINT,
      maxBytes: e.DOERS_ATTACHMENT_MAX_MB * 1024 * 1024,
      quotaBytes: e.DOERS_ATTACHMENT_QUOTA_MB * 1024 * 1024,
    },
    notifications: { emailFrom: e.DOERS_EMAIL_FROM, sesEndpoint: e.DOERS_SES_ENDPOINT },
    workQueueUrl: e.DOERS_WORK_QUEUE_URL,
    secretArn: e.DOERS_SECRET_ARN,
    functionTimeoutSeconds: e.DOERS_FUNCTION_TIMEOUT_SECONDS,
    region: e.AWS_REGION,
  };
};

/** Names the CDK stack sets on the function; infra tests assert the stack uses exactly these. */
export const FUNCTION_ENV_NAMES = [
  'DOERS_PUBLIC_URL',
  'DOERS_ALLOWED_ORIGINS',
  'DOERS_JWT_ISSUER',
  'DOERS_JWKS_URI',
  'DOERS_JWT_AUDIENCE',
  'DOERS_JWT_USER_CLAIM',
  'DOERS_JWT_SCOPE_PREFIX',
  'DOERS_RATE_LIMIT_CALLS',
  'DOERS_RATE_LIMIT_WINDOW_SECONDS',
  'DOERS_MAX_CONCURRENT_CALLS',
  'DOERS_AUTH_CACHE_SECONDS',
  'DOERS_ACTIVITY_DAYS',
  'DOERS_WORKSPACE_TABLE',
  'DOERS_LIMITS_TABLE',
  'DOERS_SECRET_ARN',
  'DOERS_FUNCTION_TIMEOUT_SECONDS',
  'DOERS_ATTACHMENT_BUCKET',
  'DOERS_ATTACHMENT_MAX_MB',
  'DOERS_ATTACHMENT_QUOTA_MB',
  'DOERS_EMAIL_FROM',
  'DOERS_WORK_QUEUE_URL',
] as const;

/** Names the CDK stack sets on the worker of long work (lib/worker.ts). */
export const WORKER_FUNCTION_ENV_NAMES = [
  'DOERS_PUBLIC_URL',
  'DOERS_ACTIVITY_DAYS',
  'DOERS_WORKSPACE_TABLE',
  'DOERS_FUNCTION_TIMEOUT_SECONDS',
  'DOERS_ATTACHMENT_BUCKET',
  'DOERS_ATTACHMENT_MAX_MB',
  'DOERS_ATTACHMENT_QUOTA_MB',
] as const;

/** Names the CDK stack sets on the notifier and the minute function (lib/notifier.ts). */
export const NOTIFIER_FUNCTION_ENV_NAMES = [
  'DOERS_PUBLIC_URL',
  'DOERS_ACTIVITY_DAYS',
  'DOERS_WORKSPACE_TABLE',
  'DOERS_EMAIL_FROM',
] as const;

/** Names the CDK stack sets on the authorization server's function. */
export const OAUTH_FUNCTION_ENV_NAMES = [
  'DOERS_PUBLIC_URL',
  'DOERS_ACTIVITY_DAYS',
  'DOERS_WORKSPACE_TABLE',
  'DOERS_SECRET_ARN',
  'DOERS_SIGNIN_ISSUER',
  'DOERS_SIGNIN_CLIENT_ID',
  'DOERS_SIGNIN_CLIENT_SECRET_ARN',
] as const;
