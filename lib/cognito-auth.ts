import { Aws, Duration, Fn, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AccountRecovery,
  CfnManagedLoginBranding,
  FeaturePlan,
  ManagedLoginVersion,
  Mfa,
  OAuthScope,
  ResourceServerScope,
  UserPool,
  type UserPoolClient,
  UserPoolClientIdentityProvider,
  type UserPoolDomain,
  type UserPoolResourceServer,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

/** The endpoint's scopes (docs/auth.md), as the function names them. */
export const DOERS_SCOPES = {
  'tasks:read': 'Read tasks, projects and comments',
  'tasks:write': 'Create, change and delete tasks, projects and comments',
  'team:read': 'See the workspace members',
  'team:admin': 'Invite, re-role and remove workspace members',
} as const;
export type DoersScope = keyof typeof DOERS_SCOPES;

/**
 * The claim the function reads the workspace user from in a Cognito access token. Cognito access tokens
 * carry no `email` (only the ID token does, which clients do not send to resource servers); they do
 * carry `username`. Users are therefore created with their workspace e-mail address as username.
 */
export const COGNITO_USER_CLAIM = 'username';

/**
 * The user pool both Cognito variants use (the external authorization server of `doers:cognito`, and
 * the sign-in pool of the built-in authorization server): invite-only (no self sign-up; the operator
 * creates the users), usernames are case-insensitive, TOTP second factor required, a strong password
 * policy, recovery by e-mail, the Essentials feature plan. Created as `UserPool` under `scope`.
 *
 * @param removalPolicy - @default RemovalPolicy.RETAIN (the pool holds the users), with deletion protection
 */
export const inviteOnlyUserPool = (scope: Construct, removalPolicy: RemovalPolicy = RemovalPolicy.RETAIN): UserPool => {
  const userPool = new UserPool(scope, 'UserPool', {
    featurePlan: FeaturePlan.ESSENTIALS,
    selfSignUpEnabled: false,
    signInAliases: { username: true },
    signInCaseSensitive: false,
    standardAttributes: { email: { required: true, mutable: true } },
    autoVerify: { email: true },
    accountRecovery: AccountRecovery.EMAIL_ONLY,
    mfa: Mfa.REQUIRED,
    mfaSecondFactor: { otp: true, sms: false },
    passwordPolicy: {
      minLength: 12,
      requireLowercase: true,
      requireUppercase: true,
      requireDigits: true,
      requireSymbols: true,
      tempPasswordValidity: Duration.days(7),
    },
    deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    removalPolicy,
  });
  Validations.of(userPool).acknowledge({
    id: 'AwsSolutions-COG8',
    reason:
      'The Essentials plan covers what the endpoint needs (managed login, MFA, resource binding); the Plus ' +
      'plan adds paid threat protection. Operators who want it can switch the feature plan; sign-in is ' +
      'invite-only with a strong password policy and required TOTP.',
  });
  return userPool;
};

/**
 * Managed login (not the classic hosted UI) on a Cognito domain, `<prefix>.auth.<region>.amazoncognito.com`
 * (created as `Domain` under the pool), plus Cognito's default branding style for `client` (`Branding`
 * under `scope`): managed login shows an error page for an app client without a style.
 *
 * @param domainPrefix - unique per region; @default `doers-<UUID of the CloudFormation stack>`
 */
export const addManagedLogin = (scope: Construct, userPool: UserPool, client: UserPoolClient, domainPrefix?: string): UserPoolDomain => {
  const domain = userPool.addDomain('Domain', {
    cognitoDomain: {
      domainPrefix: domainPrefix ?? Fn.join('-', ['doers', Fn.select(2, Fn.split('/', Aws.STACK_ID))]),
    },
    // Managed login (not the classic hosted UI): needed for resource binding (`resource` → `aud`).
    managedLoginVersion: ManagedLoginVersion.NEWER_MANAGED_LOGIN,
  });
  new CfnManagedLoginBranding(scope, 'Branding', {
    userPoolId: userPool.userPoolId,
    clientId: client.userPoolClientId,
    useCognitoProvidedValues: true,
  });
  return domain;
};

/** Properties of {@link CognitoAuth}. */
export interface CognitoAuthProps {
  /**
   * The protected resource, `${publicUrl}/mcp`: exactly the `resource` of the function's metadata
   * document. It becomes the resource server identifier, so Cognito names the scopes
   * `${resourceUrl}/tasks:read` and so on, and a client's RFC 8707 `resource` parameter names a
   * resource server Cognito knows.
   */
  readonly resourceUrl: string;
  /** OAuth redirect URIs of the app client (exact match), e.g. claude.ai's connector callback. */
  readonly callbackUrls: readonly string[];
  /**
   * Prefix of the hosted sign-in domain (`<prefix>.auth.<region>.amazoncognito.com`), unique per region.
   *
   * @default - `doers-<UUID of the CloudFormation stack>`
   */
  readonly domainPrefix?: string;
  /**
   * What happens to the user pool (and its users) when it leaves the stack.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * An optional Cognito user pool acting as the OAuth 2.1 authorization server of the endpoint
 * (`doers:cognito=true`; it is then the external issuer and doers' built-in authorization server is off):
 * a resource server with the four scopes, one public app client (authorization code + PKCE, no secret,
 * redirect to claude.ai) and a managed-login domain. Users are invited by the operator (no self sign-up)
 * and need a TOTP second factor.
 *
 * What the function gets (see {@link jwtSettings}):
 * - issuer `https://cognito-idp.<region>.amazonaws.com/<poolId>`, JWKS `<issuer>/.well-known/jwks.json`;
 * - audience = the app client id. Cognito access tokens carry it in `client_id`, not in `aud` (they have
 *   no `aud` unless the client asked for a `resource`, in which case `aud` is the resource URL), so the
 *   function must compare `client_id` when checking the audience of a Cognito token;
 * - user claim `username`;
 * - scopes in the token's `scope` claim as `${resourceUrl}/<scope>` (e.g.
 *   `https://mcp.example.com/mcp/tasks:read`); the function strips the `${publicUrl}/mcp/` prefix, and
 *   advertises the prefixed names in `scopes_supported` (Cognito refuses an authorization request for a
 *   scope it does not know with `invalid_scope`).
 */
export class CognitoAuth extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly resourceServer: UserPoolResourceServer;
  readonly domain: UserPoolDomain;
  /** The resource server identifier: Cognito names each scope `<resourceUrl>/<scope>`. */
  readonly resourceUrl: string;
  /** The scope strings as they appear in Cognito access tokens, by doers scope. */
  readonly qualifiedScopes: Readonly<Record<DoersScope, string>>;

  constructor(scope: Construct, id: string, props: CognitoAuthProps) {
    super(scope, id);
    this.resourceUrl = props.resourceUrl;

    this.userPool = inviteOnlyUserPool(this, props.removalPolicy);

    const scopes = Object.entries(DOERS_SCOPES).map(
      ([scopeName, scopeDescription]) => new ResourceServerScope({ scopeName, scopeDescription }),
    );
    this.resourceServer = this.userPool.addResourceServer('ResourceServer', {
      identifier: props.resourceUrl,
      userPoolResourceServerName: 'doers MCP endpoint',
      scopes,
    });
    this.qualifiedScopes = Object.fromEntries(
      scopes.map((s) => [s.scopeName, OAuthScope.resourceServer(this.resourceServer, s).scopeName]),
    ) as Record<DoersScope, string>;

    this.client = this.userPool.addClient('McpClient', {
      userPoolClientName: 'doers-mcp',
      // A public client: claude.ai (and MCP clients in general) run the code flow with PKCE; a client
      // secret would make every public client's token exchange fail.
      generateSecret: false,
      oAuth: {
        flows: { authorizationCodeGrant: true },
        callbackUrls: [...props.callbackUrls],
        scopes: [
          ...scopes.map((s) => OAuthScope.resourceServer(this.resourceServer, s)),
          // Harmless to allow; some clients ask for them and Cognito refuses unknown scopes.
          OAuthScope.OPENID,
          OAuthScope.EMAIL,
          OAuthScope.PROFILE,
        ],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      accessTokenValidity: Duration.hours(1),
      idTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
    });

    this.domain = addManagedLogin(this, this.userPool, this.client, props.domainPrefix);
  }

  /** Issuer of the pool's tokens (`iss`). */
  get issuer(): string {
    return this.userPool.userPoolProviderUrl;
  }

  /** Where the pool publishes its signing keys. */
  get jwksUri(): string {
    return `${this.userPool.userPoolProviderUrl}/.well-known/jwks.json`;
  }

  /** Base URL of the managed-login pages (`/oauth2/authorize`, `/oauth2/token`, `/login`). */
  get loginBaseUrl(): string {
    return this.domain.baseUrl();
  }

  /** The settings for the function's JWT verification. */
  get jwtSettings(): { readonly issuer: string; readonly jwksUri: string; readonly audience: string; readonly scopePrefix: string } {
    return { issuer: this.issuer, jwksUri: this.jwksUri, audience: this.client.userPoolClientId, scopePrefix: `${this.resourceUrl}/` };
  }
}
