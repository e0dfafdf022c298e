import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLAUDE_CALLBACK_URLS, CONTEXT_KEYS, ContextError, parseContext } from '../../lib/context.js';
import { cdkJsonContext, scratchDir } from './synth.js';

const refusal = (raw: Record<string, unknown>): string => {
  try {
    parseContext(raw);
  } catch (error) {
    assert.ok(error instanceof ContextError);
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(raw)}`);
};

describe('deployment settings (doers:* context)', () => {
  test('cdk.json lists every key the app reads, and its values are the documented defaults', () => {
    // Arrange
    const context = cdkJsonContext();

    // Act
    const settings = parseContext(context);

    // Assert
    for (const key of Object.values(CONTEXT_KEYS)) assert.ok(key in context, `cdk.json has ${key}`);
    assert.deepEqual(settings, {
      stackName: 'Doers',
      publicUrl: undefined,
      customDomain: undefined,
      allowedOrigins: undefined,
      jwt: undefined,
      jwtUserClaim: undefined,
      rateLimit: { calls: 120, windowSeconds: 60 },
      maxConcurrentCalls: 4,
      authCacheSeconds: 5,
      activityDays: 90,
      attachments: { maxMb: 4, quotaMb: 1024 },
      cognito: undefined,
      builtinAuthorizationServer: { signIn: { provider: 'cognito' } },
      alarmEmail: undefined,
      emailFrom: undefined,
      throttle: { rateLimit: 50, burstLimit: 100 },
      logRetentionDays: 90,
      workspaceTableName: undefined,
    });
  });

  test('cdk.json runs the app with tsx', async () => {
    const { readFile } = await import('node:fs/promises');
    const cdkJson = JSON.parse(await readFile(new URL('../../cdk.json', import.meta.url), 'utf8')) as { app: string };
    assert.equal(cdkJson.app, 'npx tsx bin/doers.ts');
  });

  test('accepts command-line strings for numbers, booleans and lists', () => {
    const settings = parseContext({
      'doers:rateLimitCalls': '0',
      'doers:maxConcurrentCalls': ' 8 ',
      'doers:cognito': 'true',
      'doers:allowedOrigins': 'https://Claude.ai/, http://localhost:6274',
      'doers:cognitoCallbackUrls': 'https://claude.ai/api/mcp/auth_callback,http://localhost:8080/callback',
    });

    assert.deepEqual(settings.rateLimit, { calls: 0, windowSeconds: 60 });
    assert.equal(settings.maxConcurrentCalls, 8);
    assert.deepEqual(settings.allowedOrigins, ['https://claude.ai', 'http://localhost:6274']);
    assert.deepEqual(settings.cognito, {
      domainPrefix: undefined,
      callbackUrls: ['https://claude.ai/api/mcp/auth_callback', 'http://localhost:8080/callback'],
    });
  });

  test('defaults the Cognito callback to claude.ai (and claude.com)', () => {
    assert.deepEqual(parseContext({ 'doers:cognito': true }).cognito?.callbackUrls, [...CLAUDE_CALLBACK_URLS]);
  });

  test('treats an empty string as unset', () => {
    const settings = parseContext({ 'doers:jwtIssuer': '', 'doers:jwksUri': '  ', 'doers:rateLimitCalls': '' });

    assert.equal(settings.jwt, undefined);
    assert.equal(settings.rateLimit.calls, 120);
  });

  test('refuses a bad value and names the key', () => {
    for (const [raw, key, why] of [
      [{ 'doers:rateLimitCalls': 'many' }, 'doers:rateLimitCalls', /whole number/],
      [{ 'doers:rateLimitCalls': -1 }, 'doers:rateLimitCalls', /at least 0/],
      [{ 'doers:rateLimitWindowSeconds': 0 }, 'doers:rateLimitWindowSeconds', /at least 1/],
      [{ 'doers:maxConcurrentCalls': 1.5 }, 'doers:maxConcurrentCalls', /whole number/],
      [{ 'doers:cognito': 'yes' }, 'doers:cognito', /true or false/],
      [{ 'doers:publicUrl': 'http://mcp.example.com' }, 'doers:publicUrl', /https/],
      [{ 'doers:alarmEmail': 'ops' }, 'doers:alarmEmail', /e-mail/],
      [{ 'doers:emailFrom': 'example.com' }, 'doers:emailFrom', /must be an e-mail address \(a verified SES identity/],
      [{ 'doers:emailFrom': 'doers <doers@example.com>' }, 'doers:emailFrom', /e-mail address/],
      [{ 'doers:allowedOrigins': 'https://claude.ai/path' }, 'doers:allowedOrigins', /origin/],
      [{ 'doers:certificateArn': 'arn:aws:iam::123:role/x', 'doers:domainName': 'a.example.com' }, 'doers:certificateArn', /ACM/],
      [{ 'doers:stackName': '1doers' }, 'doers:stackName', /letter/],
      [{ 'doers:logRetentionDays': 10 }, 'doers:logRetentionDays', /one of/],
      [{ 'doers:workspaceTableName': 'my table' }, 'doers:workspaceTableName', /DynamoDB table name/],
      [{ 'doers:cognitoDomainPrefix': 'my-cognito-login', 'doers:cognito': true }, 'doers:cognitoDomainPrefix', /cognito/],
      [{ 'doers:signin': 'github' }, 'doers:signin', /must be cognito or oidc/],
      [{ 'doers:signin': true }, 'doers:signin', /must be cognito or oidc/],
      [
        { 'doers:signin': 'oidc', 'doers:signinIssuer': 'http://login.example.com', 'doers:signinClientId': 'x' },
        'doers:signinIssuer',
        /https/,
      ],
      [{ 'doers:signin': 'oidc', 'doers:signinIssuer': 'login.example.com', 'doers:signinClientId': 'x' }, 'doers:signinIssuer', /https/],
      [
        { 'doers:signin': 'oidc', 'doers:signinIssuer': 'https://login.example.com', 'doers:signinClientId': 'doers as' },
        'doers:signinClientId',
        /client id/,
      ],
      [
        {
          'doers:signin': 'oidc',
          'doers:signinIssuer': 'https://login.example.com',
          'doers:signinClientId': 'x',
          'doers:signinClientSecretArn': 'arn:aws:ssm:eu-west-1:123456789012:parameter/x',
        },
        'doers:signinClientSecretArn',
        /complete ARN of a Secrets Manager secret/,
      ],
      [
        // A partial ARN (no 6-character suffix) would need a wildcard grant.
        {
          'doers:signin': 'oidc',
          'doers:signinIssuer': 'https://login.example.com',
          'doers:signinClientId': 'x',
          'doers:signinClientSecretArn': 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:doers',
        },
        'doers:signinClientSecretArn',
        /complete ARN/,
      ],
    ] as const) {
      const message = refusal(raw);
      assert.ok(message.startsWith(`Invalid context: ${key}`), `${message} names ${key}`);
      assert.match(message, why);
    }
  });

  test('takes the sender of notification mail (doers:emailFrom) trimmed, and leaves e-mail off when it is empty', () => {
    assert.equal(parseContext({ 'doers:emailFrom': ' doers@example.com ' }).emailFrom, 'doers@example.com');
    assert.equal(parseContext({ 'doers:emailFrom': '' }).emailFrom, undefined);
    assert.equal(parseContext({}).emailFrom, undefined);
  });

  test('refuses an unknown doers:* key (a typo would otherwise be ignored silently)', () => {
    assert.match(refusal({ 'doers:ratelimitCalls': 10 }), /unknown key doers:ratelimitCalls/);
  });

  test('refuses half a pair: domain without certificate, issuer without JWKS URI', () => {
    assert.match(refusal({ 'doers:domainName': 'mcp.example.com' }), /doers:domainName and doers:certificateArn go together/);
    assert.match(refusal({ 'doers:jwtIssuer': 'https://login.example.com' }), /doers:jwtIssuer and doers:jwksUri go together/);
    assert.match(refusal({ 'doers:jwtAudience': 'x' }), /doers:jwtAudience needs doers:jwtIssuer/);
  });

  test('refuses an issuer without an audience: a token the issuer made for another client would pass', () => {
    // Arrange: a complete issuer and key set, no audience
    const raw = { 'doers:jwtIssuer': 'https://login.example.com', 'doers:jwksUri': 'https://login.example.com/jwks.json' };

    // Act
    const message = refusal(raw);

    // Assert
    assert.match(message, /doers:jwtAudience is required with doers:jwtIssuer/);
    assert.doesNotThrow(() => parseContext({ ...raw, 'doers:jwtAudience': 'doers-mcp' }));
  });

  test('refuses an external issuer together with the stack-made Cognito pool', () => {
    const message = refusal({
      'doers:cognito': true,
      'doers:jwtIssuer': 'https://login.example.com',
      'doers:jwksUri': 'https://login.example.com/jwks',
    });

    assert.match(message, /doers:jwtIssuer must be unset when doers:cognito is true/);
    assert.match(message, /doers:jwksUri must be unset/);
  });

  test('refuses Cognito settings without Cognito, and a burst below the rate', () => {
    assert.match(refusal({ 'doers:cognitoDomainPrefix': 'doers-team' }), /doers:cognitoDomainPrefix needs doers:cognito=true/);
    assert.match(
      refusal({ 'doers:throttleRateLimit': 200, 'doers:throttleBurstLimit': 100 }),
      /doers:throttleBurstLimit must be at least doers:throttleRateLimit/,
    );
  });

  describe('built-in authorization server and its sign-in', () => {
    test('is on by default and signs people in with a Cognito user pool the stack makes', () => {
      assert.deepEqual(parseContext({}).builtinAuthorizationServer, { signIn: { provider: 'cognito' } });
    });

    test("takes the operator's OpenID provider with doers:signin=oidc, the issuer exactly as given", () => {
      // Arrange
      const raw = {
        'doers:signin': ' OIDC ',
        'doers:signinIssuer': 'https://tenant.example-idp.com/',
        'doers:signinClientId': ' doers-as ',
        'doers:signinClientSecretArn': 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:doers/signin-AbC123',
      };

      // Act
      const settings = parseContext(raw);

      // Assert: the trailing slash stays (an issuer must match `iss` character for character).
      assert.deepEqual(settings.builtinAuthorizationServer, {
        signIn: {
          provider: 'oidc',
          issuer: 'https://tenant.example-idp.com/',
          clientId: 'doers-as',
          clientSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:doers/signin-AbC123',
        },
      });
    });

    test('takes no client secret: a public client', () => {
      const settings = parseContext({
        'doers:signin': 'oidc',
        'doers:signinIssuer': 'https://login.example.com',
        'doers:signinClientId': 'x',
      });

      assert.deepEqual(settings.builtinAuthorizationServer, {
        signIn: { provider: 'oidc', issuer: 'https://login.example.com', clientId: 'x', clientSecretArn: undefined },
      });
    });

    test('is off with an external issuer (doers:jwtIssuer) or the Cognito authorization server (doers:cognito)', () => {
      const external = parseContext({
        'doers:jwtIssuer': 'https://login.example.com',
        'doers:jwksUri': 'https://login.example.com/jwks',
        'doers:jwtAudience': 'doers-mcp',
      });
      // cdk.json's doers:signin=cognito is the default and does not get in the way.
      const cognito = parseContext({ ...cdkJsonContext(), 'doers:cognito': true });

      assert.equal(external.builtinAuthorizationServer, undefined);
      assert.equal(cognito.builtinAuthorizationServer, undefined);
    });

    test('refuses doers:signin=oidc without its issuer and client id', () => {
      const message = refusal({ 'doers:signin': 'oidc' });

      assert.match(message, /doers:signinIssuer is required with doers:signin=oidc/);
      assert.match(message, /doers:signinClientId is required with doers:signin=oidc/);
    });

    test('refuses sign-in provider settings without doers:signin=oidc', () => {
      assert.match(refusal({ 'doers:signinIssuer': 'https://login.example.com' }), /doers:signinIssuer needs doers:signin=oidc/);
      assert.match(refusal({ 'doers:signin': 'cognito', 'doers:signinClientId': 'x' }), /doers:signinClientId needs doers:signin=oidc/);
    });

    test('refuses sign-in settings when an external issuer turns the built-in server off', () => {
      // Arrange
      const oidc = { 'doers:signin': 'oidc', 'doers:signinIssuer': 'https://login.example.com', 'doers:signinClientId': 'x' };

      // Act
      const withIssuer = refusal({
        ...oidc,
        'doers:jwtIssuer': 'https://login.example.com',
        'doers:jwksUri': 'https://login.example.com/jwks',
        'doers:jwtAudience': 'doers-mcp',
      });
      const withCognito = refusal({ ...oidc, 'doers:cognito': true });

      // Assert
      for (const message of [withIssuer, withCognito]) {
        assert.match(
          message,
          /doers:signin=oidc has no effect: the built-in authorization server is off when doers:jwtIssuer is set or doers:cognito is true/,
        );
        assert.match(message, /doers:signinIssuer has no effect/);
        assert.match(message, /doers:signinClientId has no effect/);
      }
    });
  });

  test('bin/doers.ts stops synth with the offending key on stderr', () => {
    // Arrange: the CDK CLI hands context to the app through CDK_CONTEXT_JSON.
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const outdir = scratchDir('doers-bin-');

    // Act
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bin/doers.ts'], {
      cwd: root,
      env: { ...process.env, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify({ 'doers:maxConcurrentCalls': 'four' }) },
      encoding: 'utf8',
      timeout: 60_000,
    });

    // Assert
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /Invalid context: doers:maxConcurrentCalls: must be a whole number/);
  });
});
