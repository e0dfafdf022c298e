import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

export interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly jwk: JWK;
}

export const signingKey = async (kid: string, alg: 'RS256' | 'ES256' | 'PS256' | 'EdDSA'): Promise<SigningKey> => {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
};

/**
 * An authorization server's key set on a loopback port: what `DOERS_JWKS_URI` points at. The test
 * decides what it publishes, whether it answers garbage, and whether it is reachable at all.
 */
export interface JwksServer {
  readonly url: string;
  /** How many times the key set was fetched. */
  readonly fetches: number;
  publish(keys: readonly SigningKey[]): void;
  /** 'ok' serves the key set; 'garbage' answers 200 with a body that is not JSON; 'error' answers 500. */
  mode: 'ok' | 'garbage' | 'error';
  /** Stops listening: the port refuses connections until `resume`. */
  stop(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

export const startJwksServer = async (keys: readonly SigningKey[]): Promise<JwksServer> => {
  let published = keys.map((k) => k.jwk);
  let fetches = 0;
  let port = 0;
  let server: Server;
  const state: { mode: JwksServer['mode'] } = { mode: 'ok' };
  const listen = async () => {
    server = createServer((_req, res) => {
      fetches++;
      if (state.mode === 'error') return void res.writeHead(500).end('oops');
      if (state.mode === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not a key set');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await listen();
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    get fetches() {
      return fetches;
    },
    publish(next) {
      published = next.map((k) => k.jwk);
    },
    get mode() {
      return state.mode;
    },
    set mode(m) {
      state.mode = m;
    },
    stop,
    resume: listen,
    close: stop,
  };
};

export interface TokenOptions {
  readonly issuer?: string;
  readonly audience?: string | string[] | null;
  /** jose time span or epoch seconds; default 5 minutes from now. */
  readonly expiresAt?: string | number;
  readonly notBefore?: string | number;
  readonly kid?: string;
}

/** A token signed with `key`, with issuer, audience and expiry unless told otherwise. */
export const signToken = (
  key: SigningKey,
  claims: JWTPayload,
  defaults: { issuer: string; audience: string },
  opts: TokenOptions = {},
): Promise<string> => {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: opts.kid ?? key.kid, typ: 'at+jwt' })
    .setIssuer(opts.issuer ?? defaults.issuer)
    .setIssuedAt()
    .setExpirationTime(opts.expiresAt ?? '5m');
  const audience = opts.audience === undefined ? defaults.audience : opts.audience;
  if (audience !== null) jwt.setAudience(audience);
  if (opts.notBefore !== undefined) jwt.setNotBefore(opts.notBefore);
  return jwt.sign(key.privateKey);
};

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An unsecured JWT (`alg: none`): header and payload, empty signature. */
export const unsecuredToken = (claims: JWTPayload): string => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;

/** Replaces a token's payload and keeps its header and signature: what a forger would try. */
export const withPayload = (token: string, claims: JWTPayload): string => {
  const [header, , signature] = token.split('.');
  return `${header}.${b64(claims)}.${signature}`;
};
