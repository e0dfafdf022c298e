import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { UserPool, UserPoolClient, UserPoolDomain } from 'aws-cdk-lib/aws-cognito';
import { OAuthScope, UserPoolClientIdentityProvider } from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';
import { addManagedLogin, inviteOnlyUserPool } from './cognito-auth.js';

/** Properties of {@link CognitoSignIn}. */
export interface CognitoSignInProps {
  /**
   * Where Cognito sends people back after they signed in: the built-in authorization server's
   * callback, `${publicUrl}/oauth/callback` (exact match). May be a token (the API's default endpoint).
   */
  readonly callbackUrl: string;
  /**
   * Prefix of the managed-login domain (`<prefix>.auth.<region>.amazoncognito.com`), unique per region.
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
 * The user pool people sign in with at doers' own authorization server (the default `doers:signin=cognito`).
 * It is an OpenID provider upstream of that server, not an authorization server of the MCP endpoint: its
 * tokens never reach the MCP function. The authorization server reads the ID token once, at its callback,
 * and then issues its own tokens.
 *
 * - The pool is the one `doers:cognito` uses too ({@link inviteOnlyUserPool}): no self sign-up (the admin
 *   CLI invites people, with their workspace e-mail address as username), TOTP required, strong passwords.
 * - One app client for the authorization server: authorization-code grant, scopes `openid`, `email`,
 *   `profile`, callback `${publicUrl}/oauth/callback`, and no client secret: a public client with PKCE,
 *   so there is no secret to store, pass around or rotate.
 * - Managed login on a Cognito domain.
 *
 * The authorization server gets {@link issuer} (`https://cognito-idp.<region>.amazonaws.com/<poolId>`,
 * discovery at `<issuer>/.well-known/openid-configuration`) and the client id.
 */
export class CognitoSignIn extends Construct {
  readonly userPool: UserPool;
  readonly client: UserPoolClient;
  readonly domain: UserPoolDomain;

  constructor(scope: Construct, id: string, props: CognitoSignInProps) {
    super(scope, id);

    this.userPool = inviteOnlyUserPool(this, props.removalPolicy);

    this.client = this.userPool.addClient('AuthorizationServerClient', {
      userPoolClientName: 'doers-authorization-server',
      // A public client (PKCE): nothing secret to keep in the function's configuration.
      generateSecret: false,
      oAuth: {
        flows: { authorizationCodeGrant: true },
        callbackUrls: [props.callbackUrl],
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL, OAuthScope.PROFILE],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      // The authorization server reads the ID token once, at its callback, and issues its own tokens;
      // Cognito's tokens need to live no longer than that exchange (these are Cognito's minimums).
      idTokenValidity: Duration.minutes(5),
      accessTokenValidity: Duration.minutes(5),
      refreshTokenValidity: Duration.minutes(60),
    });

    this.domain = addManagedLogin(this, this.userPool, this.client, props.domainPrefix);
  }

  /** The pool's OpenID issuer (`iss` of its ID tokens): `https://cognito-idp.<region>.amazonaws.com/<poolId>`. */
  get issuer(): string {
    return this.userPool.userPoolProviderUrl;
  }

  /** Base URL of the managed-login pages. */
  get loginBaseUrl(): string {
    return this.domain.baseUrl();
  }
}
