import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  UnauthorizedError as ModernUnauthorized,
} from '@modelcontextprotocol/client';
import { UnauthorizedError as LegacyUnauthorized } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEMO_OWNER } from '../../lambda/local/demo-seed.js';
import type { LocalServer } from '../../lambda/local/server.js';
import { startTestServer } from '../helpers/local.js';
import { approve, startHttpsServer, trustingFetch } from '../helpers/oauth.js';

/**
 * The official SDK clients complete OAuth against the local server by themselves: they read the
 * challenge, discover the protected-resource and authorization-server metadata, identify themselves
 * (a Client ID Metadata Document, or Dynamic Client Registration), send the person to the
 * authorization URL, redeem the code with PKCE, and call tools with the token. Only the person's
 * part — sign-in and consent — is played by `approve`.
 */
const REDIRECT = 'http://127.0.0.1:8090/callback';
const CLIENT_DOC_PATH = '/oauth/client-metadata.json';

/** Everything an SDK client keeps between the steps of an authorization, in memory. */
class TestOAuthProvider {
  clientInfo: Record<string, unknown> | undefined;
  savedTokens: Record<string, unknown> | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  constructor(readonly clientMetadataUrl?: string) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'doers e2e client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.clientInfo as never;
  }
  saveClientInformation(info: Record<string, unknown>) {
    this.clientInfo = info;
  }
  tokens() {
    return this.savedTokens as never;
  }
  saveTokens(tokens: Record<string, unknown>) {
    this.savedTokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let server: LocalServer;
let documents: Awaited<ReturnType<typeof startHttpsServer>>;

before(async () => {
  documents = await startHttpsServer((path) =>
    path === CLIENT_DOC_PATH
      ? {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            client_id: `${documents.origin}${CLIENT_DOC_PATH}`,
            client_name: 'doers e2e (metadata document)',
            redirect_uris: [REDIRECT],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
          }),
        }
      : { status: 404, body: '' },
  );
  server = await startTestServer({}, { oauthFetch: trustingFetch(documents.ca) });
});
after(async () => {
  await server.close();
  await documents.close();
});

const meText = (result: { content: unknown }) => (result.content as { text: string }[])[0]!.text;

describe('official v1 SDK client (@modelcontextprotocol/sdk) with its OAuth provider', () => {
  for (const kind of ['Dynamic Client Registration', 'a Client ID Metadata Document'] as const) {
    test(`completes the authorization with ${kind}, then lists tools and calls me_get`, async () => {
      // Arrange
      const provider = new TestOAuthProvider(kind === 'Dynamic Client Registration' ? undefined : `${documents.origin}${CLIENT_DOC_PATH}`);

      // Act: the first connect meets the 401 and starts the authorization by itself.
      await assert.rejects(
        new LegacyClient({ name: 'e2e', version: '1' }).connect(
          new LegacyTransport(new URL(server.mcpUrl), { authProvider: provider as never }),
        ),
        LegacyUnauthorized,
      );
      const back = await approve(provider.authorizationUrl!, { email: DEMO_OWNER.email });
      await new LegacyTransport(new URL(server.mcpUrl), { authProvider: provider as never }).finishAuth(back.searchParams.get('code')!);
      const client = new LegacyClient({ name: 'e2e', version: '1' });
      await client.connect(new LegacyTransport(new URL(server.mcpUrl), { authProvider: provider as never }));
      const { tools } = await client.listTools();
      const me = await client.callTool({ name: 'me_get', arguments: {} });
      await client.close();

      // Assert
      const authorization = provider.authorizationUrl!;
      assert.equal(authorization.searchParams.get('resource'), server.mcpUrl);
      assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
      if (kind === 'Dynamic Client Registration') assert.equal(typeof provider.clientInfo?.client_id, 'string');
      else assert.equal(authorization.searchParams.get('client_id'), `${documents.origin}${CLIENT_DOC_PATH}`);
      assert.ok(tools.some((t) => t.name === 'tasks_search'));
      assert.match(meText(me as { content: unknown }), new RegExp(`${DEMO_OWNER.name}.*owner`));
      assert.equal(typeof provider.savedTokens?.refresh_token, 'string');
    });
  }
});

describe('official 2026-07-28 client (@modelcontextprotocol/client 2.x) with its OAuth provider', () => {
  test('completes the authorization (metadata document, issuer checked), then lists tools and calls me_get', async () => {
    // Arrange
    const provider = new TestOAuthProvider(`${documents.origin}${CLIENT_DOC_PATH}`);
    const modern = () => new ModernClient({ name: 'e2e-v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });

    // Act
    await assert.rejects(
      modern().connect(new ModernTransport(new URL(server.mcpUrl), { authProvider: provider as never })),
      ModernUnauthorized,
    );
    const back = await approve(provider.authorizationUrl!, { email: DEMO_OWNER.email });
    await new ModernTransport(new URL(server.mcpUrl), { authProvider: provider as never }).finishAuth(back.searchParams);
    const client = modern();
    await client.connect(new ModernTransport(new URL(server.mcpUrl), { authProvider: provider as never }));
    const { tools } = await client.listTools();
    const me = await client.callTool({ name: 'me_get', arguments: {} });
    await client.close();

    // Assert
    assert.equal(back.searchParams.get('iss'), server.url);
    assert.ok(tools.some((t) => t.name === 'tasks_search'));
    assert.match(meText(me as { content: unknown }), new RegExp(`${DEMO_OWNER.name}.*owner`));
  });
});
