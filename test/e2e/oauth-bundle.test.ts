import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import { type LocalServer, startLocalServer } from '../../lambda/local/server.js';
import { loadConfig } from '../../lambda/platform/config.js';
import { OAUTH_BUNDLING } from '../../lib/bundling.js';
import { type BundleAnswer, bundleLambda, type LambdaBundle, lambdaEnv, startInstance, toolCallEvent } from '../helpers/lambda-bundle.js';
import { formValue, pkcePair, UserAgent } from '../helpers/oauth.js';
import { RecordingObserver } from '../helpers/recording-observer.js';
import { type SecretsManagerStandIn, startSecretsManager } from '../helpers/secrets-manager.js';
import { passUpstream, startUpstream } from '../helpers/upstream.js';
import { lambdaFunction, synth } from '../infra/synth.js';

/**
 * The two deployed artifacts together, as API Gateway drives them: lambda/oauth-handler.ts and
 * lambda/handler.ts bundled as the stack bundles them, each imported by its own Node process with
 * Lambda's environment, fed payload v2 events — cookies arrive in `cookies` and leave in `cookies`,
 * as API Gateway does it. Sign-in goes to a real OpenID provider on loopback (oidc-provider), the
 * way the stack's function goes to Cognito. A whole connection: register, authorize, sign in
 * upstream, consent, code, token, and a tools/call the MCP function accepts.
 */
const PUBLIC_URL = 'https://doers.example';
const REDIRECT = 'http://127.0.0.1:8090/callback';

type Instance = Awaited<ReturnType<typeof startInstance>>;

/** A browser's cookie jar for the API's domain, over Lambda events instead of HTTP. */
class EventAgent {
  private readonly jar = new Map<string, string>();
  constructor(private readonly fn: Instance) {}

  async request(
    method: string,
    target: string,
    body?: { type: string; text: string },
  ): Promise<BundleAnswer['res'] & { cookies?: string[] }> {
    const url = new URL(target, PUBLIC_URL);
    const { res } = await this.fn.invoke({
      version: '2.0',
      rawPath: url.pathname,
      rawQueryString: url.search.slice(1),
      cookies: [...this.jar].map(([k, v]) => `${k}=${v}`),
      headers: { host: 'doers.example', 'x-forwarded-proto': 'https', ...(body ? { 'content-type': body.type } : {}) },
      requestContext: { http: { method, path: url.pathname, sourceIp: '203.0.113.9' }, requestId: 'bundle' },
      ...(body ? { body: body.text } : {}),
      isBase64Encoded: false,
    });
    const answer = res as BundleAnswer['res'] & { cookies?: string[] };
    for (const set of answer.cookies ?? []) {
      const [pair = ''] = set.split(';');
      const at = pair.indexOf('=');
      this.jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return answer;
  }

  /** Follows redirects within the API; returns the first answer that is not one, or leaves it. */
  async follow(method: string, target: string, body?: { type: string; text: string }) {
    let res = await this.request(method, target, body);
    let at = new URL(target, PUBLIC_URL);
    while (res.statusCode >= 300 && res.statusCode < 400) {
      const next = new URL(res.headers.location!, at);
      if (next.origin !== PUBLIC_URL) return { res, url: next };
      at = next;
      res = await this.request('GET', `${next.pathname}${next.search}`);
    }
    return { res, url: at };
  }
}

describe("the authorization server's Lambda bundle with the MCP function's", () => {
  let work: string;
  let seeded: LocalServer;
  let secrets: SecretsManagerStandIn;
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let upstreamUrl: string;
  let oauthBundle: LambdaBundle;
  let oauth: Instance;
  let mcp: Instance;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'doers-oauth-bundle-'));
    const dataDir = join(work, 'data');
    seeded = await startLocalServer(loadConfig({ PORT: '0', DOERS_DATA_DIR: dataDir }), {
      timeZone: 'UTC',
      observer: new RecordingObserver(),
      notifierPolls: false,
    });
    const { seed } = JSON.parse(await readFile(join(dataDir, 'keys.json'), 'utf8')) as { seed: string };
    secrets = await startSecretsManager(seed);
    upstream = await startUpstream();
    upstreamUrl = upstream.url;
    upstream.serve(`${PUBLIC_URL}/oauth/callback`);
    const [ob, mb] = await Promise.all([
      bundleLambda('lambda/oauth-handler.ts', join(work, 'oauth'), { keepNames: OAUTH_BUNDLING.keepNames }),
      bundleLambda('lambda/handler.ts', join(work, 'mcp')),
    ]);
    oauthBundle = ob;
    const env = lambdaEnv({
      dynamodbEndpoint: seeded.dynamodbEndpoint,
      secretsManagerUrl: secrets.url,
      env: { DOERS_PUBLIC_URL: PUBLIC_URL, DOERS_AUTH_CACHE_SECONDS: '0' },
    });
    oauth = await startInstance(ob, { ...env, DOERS_SIGNIN_ISSUER: upstreamUrl, DOERS_SIGNIN_CLIENT_ID: 'doers' });
    mcp = await startInstance(mb, env);
  });

  after(async () => {
    oauth.close();
    mcp.close();
    upstream.close();
    await seeded.close();
    await secrets.close();
    await rm(work, { recursive: true, force: true });
  });

  test('is the very file the stack deploys: the same bytes as the asset NodejsFunction bundles for the authorization server', async () => {
    // Arrange: the default deployment has the built-in authorization server. NodejsFunction bundles it
    // with its own esbuild command, which lib/build-mcp-bundle.ts esbuildOptionsOf mirrors (the MCP
    // function's asset is a split build of its own since, so this is the check of that mirror).
    const s = synth({}, { bundle: true });
    const code = lambdaFunction(s.template, 'oauth').resource.Properties.Code as { S3Key: string };
    const asset = join(s.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);

    // Act
    const [staged, built] = await Promise.all([readFile(join(asset, 'index.mjs')), readFile(oauthBundle.file)]);

    // Assert
    assert.ok(staged.equals(built), `the helper's bundle (${built.length} B) differs from the stack's (${staged.length} B)`);
  });

  test('serves its metadata naming the public URL as issuer, from the bundle', async () => {
    const res = await new EventAgent(oauth).request('GET', '/.well-known/oauth-authorization-server');
    const meta = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(res.statusCode, 200);
    assert.equal(meta.issuer, PUBLIC_URL);
    assert.equal(meta.token_endpoint, `${PUBLIC_URL}/oauth/token`);
    assert.equal(meta.client_id_metadata_document_supported, true);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    assert.ok(oauthBundle.inputs.some((f) => f.includes('oidc-provider')));
  });

  test('a whole connection: register, authorize, sign in upstream, consent, token, and the MCP function accepts it', async () => {
    // Arrange
    const agent = new EventAgent(oauth);
    const registered = await agent.request('POST', '/oauth/register', {
      type: 'application/json',
      text: JSON.stringify({ client_name: 'Bundle test client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    assert.equal(registered.statusCode, 201, registered.body);
    const clientId = (JSON.parse(registered.body) as { client_id: string }).client_id;
    const pkce = pkcePair();
    const authorize = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'tasks:read',
      resource: `${PUBLIC_URL}/mcp`,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
      state: 'b',
    });

    // Act: to the identity provider, through its pages (real HTTP), back to the function, consent.
    const toUpstream = await agent.follow('GET', `/oauth/authorize?${authorize}`);
    const returned = await passUpstream(new UserAgent(), upstreamUrl, toUpstream.url, DEMO_OWNER.email);
    const consent = await agent.follow('GET', `${returned.pathname}${returned.search}`);
    const page = consent.res.body;
    const back = await agent.follow('POST', `${consent.url.pathname}/consent`, {
      type: 'application/x-www-form-urlencoded',
      text: new URLSearchParams({ csrf: formValue(page, 'csrf')!, scope: 'tasks:read' }).toString(),
    });
    const token = await agent.request('POST', '/oauth/token', {
      type: 'application/x-www-form-urlencoded',
      text: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.url.searchParams.get('code') ?? '',
        redirect_uri: REDIRECT,
        client_id: clientId,
        code_verifier: pkce.verifier,
      }).toString(),
    });
    const accessToken = (JSON.parse(token.body) as { access_token: string }).access_token;
    const me = await mcp.invoke(toolCallEvent(accessToken, 'me_get'));

    // Assert
    assert.equal(toUpstream.url.origin, upstreamUrl);
    assert.match(page, /id="approve"/);
    assert.match(consent.res.headers['content-security-policy'] ?? '', /frame-ancestors 'none'/);
    assert.equal(`${back.url.origin}${back.url.pathname}`, REDIRECT);
    assert.equal(token.statusCode, 200, token.body);
    assert.equal(me.res.statusCode, 200, me.res.body);
    assert.equal(
      (JSON.parse(me.res.body) as { result: { structuredContent: { email: string } } }).result.structuredContent.email,
      DEMO_OWNER.email,
    );
  });
});
