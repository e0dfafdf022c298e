import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetSecretValueCommand, ResourceNotFoundException, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DependencyUnavailableError } from '../errors.js';

/**
 * The server's symmetric keys, all derived from one secret seed with HKDF so that one generated
 * secret serves every purpose and a key for one purpose never verifies another's data.
 * `current` signs; every key in the ring verifies, so a rotation leaves the previous seed valid
 * for one more rotation (cursors, request states and token hashes made before it keep working).
 */
export type KeyPurpose = 'token-hash' | 'cursor' | 'request-state' | 'oauth-signing' | 'oauth-cookies' | 'csrf' | 'account-session';

export interface KeyRing {
  readonly current: Readonly<Record<KeyPurpose, Uint8Array>>;
  /** Current first, then the previous seed's keys where one exists. */
  readonly all: ReadonlyArray<Readonly<Record<KeyPurpose, Uint8Array>>>;
}

const PURPOSES: readonly KeyPurpose[] = [
  'token-hash',
  'cursor',
  'request-state',
  'oauth-signing',
  'oauth-cookies',
  'csrf',
  'account-session',
];

const derive = (seed: string): Record<KeyPurpose, Uint8Array> =>
  Object.fromEntries(PURPOSES.map((p) => [p, new Uint8Array(hkdfSync('sha256', seed, 'doers', `doers ${p} v1`, 32))])) as Record<
    KeyPurpose,
    Uint8Array
  >;

export const keyRingFromSeeds = (current: string, previous?: string): KeyRing => {
  const cur = derive(current);
  return { current: cur, all: previous && previous !== current ? [cur, derive(previous)] : [cur] };
};

export type KeySource = () => Promise<KeyRing>;

/**
 * Memoises a load. Only the first load is waited for (and retried on the next call if it fails);
 * after `maxAgeMs` the ring is refreshed in the background while requests keep using the one they
 * have, and a failed refresh keeps it, so a passing Secrets Manager fault never reaches a request.
 */
export const cachedKeySource = (load: KeySource, maxAgeMs = Number.POSITIVE_INFINITY): KeySource => {
  let ring: Promise<KeyRing> | undefined;
  let loadedAt = 0;
  let refreshing = false;
  return () => {
    const now = Date.now();
    if (!ring) {
      loadedAt = now;
      ring = load().catch((err: unknown) => {
        ring = undefined;
        throw err;
      });
      return ring;
    }
    if (now - loadedAt >= maxAgeMs && !refreshing) {
      refreshing = true;
      loadedAt = now;
      load()
        .then((fresh) => {
          ring = Promise.resolve(fresh);
        })
        .catch(() => undefined)
        .finally(() => {
          refreshing = false;
        });
    }
    return ring;
  };
};

/**
 * How long an instance keeps the secret before reading it again: after a rotation, warm instances
 * hash new tokens and verify new cursors with the new seed within this time.
 */
export const SECRET_MAX_AGE_MS = 5 * 60 * 1000;

const seedOf = (secretString: string | undefined, stage: string): string => {
  const seed = secretString ? (JSON.parse(secretString) as { seed?: unknown }).seed : undefined;
  if (typeof seed !== 'string' || seed.length < 32) throw new Error(`secret ${stage} has no usable "seed"`);
  return seed;
};

/** Lambda: the stack's generated secret, AWSCURRENT and (when present) AWSPREVIOUS. */
export const secretsManagerKeySource = (client: SecretsManagerClient, secretArn: string): KeySource =>
  cachedKeySource(async () => {
    try {
      const [current, previous] = await Promise.all([
        client.send(new GetSecretValueCommand({ SecretId: secretArn, VersionStage: 'AWSCURRENT' })),
        client.send(new GetSecretValueCommand({ SecretId: secretArn, VersionStage: 'AWSPREVIOUS' })).catch((err: unknown) => {
          if (err instanceof ResourceNotFoundException) return undefined;
          throw err;
        }),
      ]);
      return keyRingFromSeeds(
        seedOf(current.SecretString, 'AWSCURRENT'),
        previous ? seedOf(previous.SecretString, 'AWSPREVIOUS') : undefined,
      );
    } catch (err) {
      throw new DependencyUnavailableError('secretsmanager', 2, err);
    }
  }, SECRET_MAX_AGE_MS);

/**
 * Local: a seed kept in the data dir, created once. Several local servers may share a data dir, so
 * creation is exclusive (`wx`) and a loser reads the winner's file.
 */
export const dataDirKeySource = (dataDir: string): KeySource =>
  cachedKeySource(async () => {
    if (dataDir === ':memory:') return keyRingFromSeeds(randomBytes(32).toString('hex'));
    const file = join(dataDir, 'keys.json');
    await mkdir(dataDir, { recursive: true });
    try {
      await writeFile(file, JSON.stringify({ seed: randomBytes(32).toString('hex') }), { flag: 'wx', mode: 0o600 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const { seed, previousSeed } = JSON.parse(await readFile(file, 'utf8')) as { seed: string; previousSeed?: string };
    return keyRingFromSeeds(seed, previousSeed);
  });
