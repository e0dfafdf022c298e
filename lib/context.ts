import { z } from 'zod';

/**
 * The deployment settings of the stack, read from CDK context (`cdk.json` or `-c key=value`) exactly
 * once, in `bin/doers.ts`, and validated here. Values given on the command line arrive as strings and
 * values in `cdk.json` as JSON, so every number and boolean accepts both. An empty string means "unset".
 * A bad value fails synth with an error naming the context key.
 */

/** Every context key the app reads. A `doers:*` key not listed here is refused (it is a typo). */
export const CONTEXT_KEYS = {
  stackName: 'doers:stackName',
  publicUrl: 'doers:publicUrl',
  domainName: 'doers:domainName',
  certificateArn: 'doers:certificateArn',
  allowedOrigins: 'doers:allowedOrigins',
  jwtIssuer: 'doers:jwtIssuer',
  jwksUri: 'doers:jwksUri',
  jwtAudience: 'doers:jwtAudience',
  jwtUserClaim: 'doers:jwtUserClaim',
  rateLimitCalls: 'doers:rateLimitCalls',
  rateLimitWindowSeconds: 'doers:rateLimitWindowSeconds',
  maxConcurrentCalls: 'doers:maxConcurrentCalls',
  authCacheSeconds: 'doers:authCacheSeconds',
  activityDays: 'doers:activityDays',
  attachmentMaxMb: 'doers:attachmentMaxMb',
  attachmentQuotaMb: 'doers:attachmentQuotaMb',
  cognito: 'doers:cognito',
  cognitoDomainPrefix: 'doers:cognitoDomainPrefix',
  cognitoCallbackUrls: 'doers:cognitoCallbackUrls',
  signIn: 'doers:signin',
  signInIssuer: 'doers:signinIssuer',
  signInClientId: 'doers:signinClientId',
  signInClientSecretArn: 'doers:signinClientSecretArn',
  alarmEmail: 'doers:alarmEmail',
  emailFrom: 'doers:emailFrom',
  throttleRateLimit: 'doers:throttleRateLimit',
  throttleBurstLimit: 'doers:throttleBurstLimit',
  logRetentionDays: 'doers:logRetentionDays',
  workspaceTableName: 'doers:workspaceTableName',
} as const;

/** The callback claude.ai uses for remote MCP connectors (and its claude.com twin). */
export const CLAUDE_CALLBACK_URLS = ['https://claude.ai/api/mcp/auth_callback', 'https://claude.com/api/mcp/auth_callback'] as const;

/** Retention periods CloudWatch Logs accepts (days). */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

const blankToUndefined = (value: unknown): unknown =>
  value === null || (typeof value === 'string' && value.trim() === '') ? undefined : value;

const text = z.preprocess(blankToUndefined, z.string().trim().min(1).optional());

const httpsUrl = z.preprocess(
  blankToUndefined,
  z
    .url({ protocol: /^https$/, error: 'must be an https:// URL' })
    .transform((v) => v.replace(/\/+$/, ''))
    .optional(),
);

/** An https URL taken exactly as given: an OpenID issuer must match its `iss` character for character. */
const exactHttpsUrl = z.preprocess(
  blankToUndefined,
  z
    .string()
    .trim()
    .pipe(z.url({ protocol: /^https$/, error: 'must be an https:// URL' }))
    .optional(),
);

/** Where people sign in to the built-in authorization server. */
export const SIGN_IN_PROVIDERS = ['cognito', 'oidc'] as const;

const wholeNumber = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (value) => {
      const v = blankToUndefined(value);
      return typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v;
    },
    z
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(min, `must be at least ${min}`)
      .max(max, `must be at most ${max}`)
      .default(fallback),
  );

const flag = (fallback: boolean) =>
  z.preprocess(
    (value) => {
      const v = blankToUndefined(value);
      if (v === 'true') return true;
      if (v === 'false') return false;
      return v;
    },
    z.boolean({ error: 'must be true or false' }).default(fallback),
  );

/** A list given as a JSON array (cdk.json) or a comma-separated string (`-c key=a,b`). */
const list = <T extends z.ZodType<string>>(item: T) =>
  z.preprocess((value) => {
    const v = blankToUndefined(value);
    if (typeof v !== 'string') return v;
    return v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
  }, z.array(item).min(1, 'must name at least one entry').optional());

const origin = z
  .string()
  .trim()
  .transform((o) => o.replace(/\/+$/, '').toLowerCase())
  .refine((o) => /^https?:\/\/[^/\s]+$/.test(o), { message: 'each entry must be an origin (scheme://host[:port])' });

const K = CONTEXT_KEYS;

const contextSchema = z.object({
  [K.stackName]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'must start with a letter and hold only letters, digits and hyphens (max 128)')
      .default('Doers'),
  ),
  [K.publicUrl]: httpsUrl,
  [K.domainName]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a DNS name such as mcp.example.com')
      .optional(),
  ),
  [K.certificateArn]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/, 'must be an ACM certificate ARN')
      .optional(),
  ),
  [K.allowedOrigins]: list(origin),
  [K.jwtIssuer]: text,
  [K.jwksUri]: httpsUrl,
  [K.jwtAudience]: text,
  [K.jwtUserClaim]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_:.\-/]+$/, 'must be a claim name')
      .optional(),
  ),
  [K.rateLimitCalls]: wholeNumber(120, 0),
  [K.rateLimitWindowSeconds]: wholeNumber(60, 1, 86_400),
  [K.maxConcurrentCalls]: wholeNumber(4, 0),
  [K.authCacheSeconds]: wholeNumber(5, 0, 300),
  [K.activityDays]: wholeNumber(90, 1, 3650),
  [K.attachmentMaxMb]: wholeNumber(4, 1, 4),
  [K.attachmentQuotaMb]: wholeNumber(1024, 1),
  [K.cognito]: flag(false),
  [K.cognitoDomainPrefix]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'must be lowercase letters, digits and hyphens (max 63)')
      .refine((p) => !/aws|amazon|cognito/.test(p), { message: 'must not contain aws, amazon or cognito' })
      .optional(),
  ),
  [K.cognitoCallbackUrls]: list(z.url({ protocol: /^https?$/, error: 'each entry must be a URL' })),
  [K.signIn]: z.preprocess(
    (value) => {
      const v = blankToUndefined(value);
      return typeof v === 'string' ? v.trim().toLowerCase() : v;
    },
    z.enum(SIGN_IN_PROVIDERS, { error: `must be ${SIGN_IN_PROVIDERS.join(' or ')}` }).default('cognito'),
  ),
  [K.signInIssuer]: exactHttpsUrl,
  [K.signInClientId]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(/^[\x21-\x7e]+$/, 'must be a client id (printable characters, no spaces)')
      .optional(),
  ),
  [K.signInClientSecretArn]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      // The complete ARN (with the 6-character suffix Secrets Manager appends), so the grant names
      // exactly this secret instead of a `<name>-??????` pattern.
      .regex(
        /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/,
        'must be the complete ARN of a Secrets Manager secret (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>)',
      )
      .optional(),
  ),
  [K.alarmEmail]: z.preprocess(blankToUndefined, z.email({ error: 'must be an e-mail address' }).optional()),
  // The sender of notification mail: an address whose own identity or whose domain's is verified in SES
  // (synth cannot look; the notifier's grant names both identities, lib/notifier.ts).
  [K.emailFrom]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .pipe(z.email({ error: 'must be an e-mail address (a verified SES identity, or one at a verified domain)' }))
      .optional(),
  ),
  // DynamoDB's table name rules; the table itself is looked at by the deploy, not by synth.
  [K.workspaceTableName]: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a DynamoDB table name (3 to 255 letters, digits, _ . -)')
      .optional(),
  ),
  [K.throttleRateLimit]: wholeNumber(50, 1, 10_000),
  [K.throttleBurstLimit]: wholeNumber(100, 1, 5_000),
  [K.logRetentionDays]: z.preprocess(
    (value) => {
      const v = blankToUndefined(value);
      return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
    },
    z
      .number({ error: 'must be a number of days' })
      .refine((d) => (LOG_RETENTION_DAYS as readonly number[]).includes(d), {
        message: `must be one of ${LOG_RETENTION_DAYS.join(', ')}`,
      })
      .default(90),
  ),
});

/** The validated deployment settings, in the shape the stack takes them. */
export interface DoersSettings {
  /** CloudFormation stack name; the admin CLI finds the stack by it (`--stack`). */
  readonly stackName: string;
  /** Explicit public base URL (e.g. behind your own proxy); wins over the custom domain. */
  readonly publicUrl: string | undefined;
  /** Custom domain for the HTTP API; its `https://` URL becomes the public URL. */
  readonly customDomain: { readonly domainName: string; readonly certificateArn: string } | undefined;
  /** Origins the function accepts; unset keeps the function's built-in list. */
  readonly allowedOrigins: readonly string[] | undefined;
  /** External authorization server (not Cognito). */
  readonly jwt: { readonly issuer: string; readonly jwksUri: string; readonly audience: string | undefined } | undefined;
  /** Claim naming the workspace user in a JWT; unset: the function's default (`email`), Cognito: `username`. */
  readonly jwtUserClaim: string | undefined;
  readonly rateLimit: { readonly calls: number; readonly windowSeconds: number };
  readonly maxConcurrentCalls: number;
  /** How long an instance reuses a verified principal (DOERS_AUTH_CACHE_SECONDS). */
  readonly authCacheSeconds: number;
  /** Days activity records and what undo needs are kept (DOERS_ACTIVITY_DAYS). */
  readonly activityDays: number;
  /** The largest attachment and a workspace's total, in MB (DOERS_ATTACHMENT_MAX_MB, DOERS_ATTACHMENT_QUOTA_MB). */
  readonly attachments: { readonly maxMb: number; readonly quotaMb: number };
  /** Cognito user pool as (external) authorization server; undefined when off. */
  readonly cognito: { readonly domainPrefix: string | undefined; readonly callbackUrls: readonly string[] } | undefined;
  /**
   * doers' own authorization server (docs/auth.md): on unless an external issuer is configured
   * (`doers:jwtIssuer`, or `doers:cognito=true`, whose pool is then the issuer); undefined when off.
   */
  readonly builtinAuthorizationServer: { readonly signIn: SignInSettings } | undefined;
  readonly alarmEmail: string | undefined;
  /**
   * The address notification mail is sent from (DOERS_EMAIL_FROM): a verified SES identity, or an address
   * at a verified domain. Undefined: e-mail is off (people are still told in their inbox) and synth warns.
   */
  readonly emailFrom: string | undefined;
  /** API Gateway default-stage throttling (requests per second, burst). */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly logRetentionDays: number;
  /**
   * An existing workspace table the stack adopts instead of its own (a point-in-time restore:
   * docs/deploy-and-operations.md, "Restoring the table"); undefined: the stack's own table.
   */
  readonly workspaceTableName: string | undefined;
}

/** The OpenID provider people sign in with at the built-in authorization server. */
export type SignInSettings =
  /** A user pool the stack creates (invite-only; the admin CLI invites people). */
  | { readonly provider: 'cognito' }
  /** The operator's own OpenID provider. */
  | {
      readonly provider: 'oidc';
      /** Exact `iss` of the provider (discovery at `<issuer>/.well-known/openid-configuration`). */
      readonly issuer: string;
      readonly clientId: string;
      /** Complete ARN of a Secrets Manager secret holding the client secret; unset: a public client (PKCE). */
      readonly clientSecretArn: string | undefined;
    };

export class ContextError extends Error {
  override name = 'ContextError';
}

/**
 * Validates raw context values (as `node.getAllContext()` returns them) into settings.
 * Throws a ContextError naming every offending key.
 */
export const parseContext = (raw: Readonly<Record<string, unknown>>): DoersSettings => {
  const known = new Set<string>(Object.values(CONTEXT_KEYS));
  const unknown = Object.keys(raw).filter((k) => k.startsWith('doers:') && !known.has(k));
  if (unknown.length > 0) {
    throw new ContextError(
      `Invalid context: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (known: ${[...known].join(', ')})`,
    );
  }
  const picked: Record<string, unknown> = {};
  for (const key of known) picked[key] = raw[key];

  const parsed = contextSchema.safeParse(picked);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((i) => {
        const [key, index] = i.path;
        const entry = typeof index === 'number' ? ` (entry ${index + 1})` : '';
        return `${String(key)}${entry}: ${i.message}`;
      })
      .join('; ');
    throw new ContextError(`Invalid context: ${detail}`);
  }
  const c = parsed.data;

  const problems: string[] = [];
  const domainName = c[K.domainName];
  const certificateArn = c[K.certificateArn];
  if (Boolean(domainName) !== Boolean(certificateArn)) {
    problems.push(`${K.domainName} and ${K.certificateArn} go together`);
  }
  const issuer = c[K.jwtIssuer];
  const jwksUri = c[K.jwksUri];
  if (Boolean(issuer) !== Boolean(jwksUri)) {
    problems.push(`${K.jwtIssuer} and ${K.jwksUri} go together`);
  }
  if (issuer && !c[K.jwtAudience]) {
    problems.push(
      `${K.jwtAudience} is required with ${K.jwtIssuer}: without it a token the issuer made for another client would be accepted`,
    );
  }
  if (c[K.cognito]) {
    for (const key of [K.jwtIssuer, K.jwksUri, K.jwtAudience] as const) {
      if (c[key] !== undefined) problems.push(`${key} must be unset when ${K.cognito} is true (the stack wires Cognito in)`);
    }
  } else {
    for (const key of [K.cognitoDomainPrefix, K.cognitoCallbackUrls] as const) {
      if (c[key] !== undefined) problems.push(`${key} needs ${K.cognito}=true`);
    }
  }
  const signInDetails = [K.signInIssuer, K.signInClientId, K.signInClientSecretArn] as const;
  const externalIssuer = Boolean(issuer) || c[K.cognito];
  if (externalIssuer) {
    // The built-in authorization server is off, so there is nobody to sign in to.
    const why = `the built-in authorization server is off when ${K.jwtIssuer} is set or ${K.cognito} is true`;
    if (c[K.signIn] === 'oidc') problems.push(`${K.signIn}=oidc has no effect: ${why}`);
    for (const key of signInDetails) {
      if (c[key] !== undefined) problems.push(`${key} has no effect: ${why}`);
    }
  } else if (c[K.signIn] === 'oidc') {
    for (const key of [K.signInIssuer, K.signInClientId] as const) {
      if (c[key] === undefined) problems.push(`${key} is required with ${K.signIn}=oidc`);
    }
  } else {
    for (const key of signInDetails) {
      if (c[key] !== undefined)
        problems.push(`${key} needs ${K.signIn}=oidc (with ${K.signIn}=cognito the stack makes the user pool and its client)`);
    }
  }
  if (!issuer && !c[K.cognito] && c[K.jwtAudience] !== undefined) {
    problems.push(`${K.jwtAudience} needs ${K.jwtIssuer} and ${K.jwksUri}`);
  }
  if (c[K.throttleBurstLimit] < c[K.throttleRateLimit]) {
    problems.push(`${K.throttleBurstLimit} must be at least ${K.throttleRateLimit}`);
  }
  if (problems.length > 0) throw new ContextError(`Invalid context: ${problems.join('; ')}`);

  return {
    stackName: c[K.stackName],
    publicUrl: c[K.publicUrl],
    customDomain: domainName && certificateArn ? { domainName, certificateArn } : undefined,
    allowedOrigins: c[K.allowedOrigins],
    jwt: issuer && jwksUri ? { issuer, jwksUri, audience: c[K.jwtAudience] } : undefined,
    jwtUserClaim: c[K.jwtUserClaim],
    rateLimit: { calls: c[K.rateLimitCalls], windowSeconds: c[K.rateLimitWindowSeconds] },
    maxConcurrentCalls: c[K.maxConcurrentCalls],
    authCacheSeconds: c[K.authCacheSeconds],
    activityDays: c[K.activityDays],
    attachments: { maxMb: c[K.attachmentMaxMb], quotaMb: c[K.attachmentQuotaMb] },
    cognito: c[K.cognito]
      ? { domainPrefix: c[K.cognitoDomainPrefix], callbackUrls: c[K.cognitoCallbackUrls] ?? [...CLAUDE_CALLBACK_URLS] }
      : undefined,
    builtinAuthorizationServer: externalIssuer ? undefined : { signIn: signInSettings(c) },
    alarmEmail: c[K.alarmEmail],
    emailFrom: c[K.emailFrom],
    throttle: { rateLimit: c[K.throttleRateLimit], burstLimit: c[K.throttleBurstLimit] },
    logRetentionDays: c[K.logRetentionDays],
    workspaceTableName: c[K.workspaceTableName],
  };
};

const signInSettings = (c: z.infer<typeof contextSchema>): SignInSettings => {
  const issuer = c[K.signInIssuer];
  const clientId = c[K.signInClientId];
  // parseContext has refused oidc without an issuer and a client id.
  return c[K.signIn] === 'oidc' && issuer && clientId
    ? { provider: 'oidc', issuer, clientId, clientSecretArn: c[K.signInClientSecretArn] }
    : { provider: 'cognito' };
};
