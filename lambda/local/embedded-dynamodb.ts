import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

export interface EmbeddedDynamo {
  readonly endpoint: string;
  close(): Promise<void>;
}

/**
 * dynalite in this process, answering the real DynamoDB wire protocol on a loopback port, so the
 * store code talks to it through the AWS SDK exactly as it talks to DynamoDB. `:memory:` keeps
 * nothing; otherwise the LevelDB files live under `<dataDir>/dynamodb`.
 */
export const startEmbeddedDynamo = async (dataDir: string): Promise<EmbeddedDynamo> => {
  const dynalite = require('dynalite') as (opts: Record<string, unknown>) => Server;
  const path = dataDir === ':memory:' ? undefined : join(dataDir, 'dynamodb');
  if (path) await mkdir(path, { recursive: true });
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(path ? { path } : {}) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
