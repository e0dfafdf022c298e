import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lazyLoopback } from './lazy-loopback.js';

const require = createRequire(import.meta.url);

export interface EmbeddedS3 {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** The bucket the local server keeps attachments in (the stack names its own). */
export const LOCAL_ATTACHMENT_BUCKET = 'doers-attachments';

interface S3rverInstance {
  run(): Promise<{ port: number; address: string }>;
  close(): Promise<void>;
}

/**
 * s3rver in this process, answering the S3 REST API on a loopback port, so the attachment code talks
 * to it through the AWS SDK's S3 client exactly as it talks to S3. Objects live under
 * `<dataDir>/s3`; `:memory:` keeps them in a directory of its own that goes when the server closes.
 * Loading and starting s3rver (koa and its routers) is about 150 ms of CPU, and most local servers
 * (each test file's) keep no file: the port opens at once and s3rver starts on its first connection
 * (lazy-loopback.ts).
 */
export const startEmbeddedS3 = async (dataDir: string): Promise<EmbeddedS3> => {
  const directory = dataDir === ':memory:' ? await mkdtemp(join(tmpdir(), 'doers-s3-')) : join(dataDir, 's3');
  await mkdir(directory, { recursive: true });
  const start = async () => {
    const S3rver = require('s3rver') as new (opts: Record<string, unknown>) => S3rverInstance;
    const server = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory,
      vhostBuckets: false,
      configureBuckets: [{ name: LOCAL_ATTACHMENT_BUCKET }],
    });
    try {
      const { port } = await server.run();
      return { port, server };
    } catch (err) {
      await server.close().catch(() => undefined);
      throw err;
    }
  };
  const front = await lazyLoopback('The local S3 API', start, ({ server }) => server.close());
  return {
    endpoint: `http://127.0.0.1:${front.port}`,
    close: async () => {
      await front.close();
      if (dataDir === ':memory:') await rm(directory, { recursive: true, force: true });
    },
  };
};
