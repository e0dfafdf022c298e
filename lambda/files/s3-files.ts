import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  paginateListObjectsV2,
  S3Client,
} from '@aws-sdk/client-s3';
import { fileTypeFromBuffer } from 'file-type';
import { NETWORK_FAILURES } from '../errors.js';
import { type FileParts, filesUnavailable } from './file-store.js';

/**
 * The file store on S3 (lambda/files/file-store.ts), with the sniffer: the one module of attachments
 * that loads the S3 client and `file-type`, imported on the first call that needs either. In Lambda
 * it is a bundle of its own beside the function's (lib/bundling.ts), so the function's bundle and
 * cold start do not carry it.
 */

export interface S3FilesOptions {
  readonly bucket: string;
  /** Local: the embedded S3 API (path-style addressing, fixed local credentials). */
  readonly endpoint?: string | undefined;
  readonly region?: string | undefined;
}

/** S3 throttling, its server-side answers, and the network failing: each a 503, never a 500. */
const UNAVAILABLE = new Set(['SlowDown', 'ServiceUnavailable', 'InternalError', 'AbortError', ...NETWORK_FAILURES]);

const unavailable = (err: unknown): boolean => {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; code?: string; $retryable?: unknown; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  return (
    (e.name !== undefined && UNAVAILABLE.has(e.name)) ||
    (e.code !== undefined && UNAVAILABLE.has(e.code)) ||
    !!e.$retryable ||
    (status !== undefined && (status >= 500 || status === 429))
  );
};

/**
 * An object that is not there. Without s3:ListBucket (the function has none: it lists nothing) S3
 * answers a missing key with 403 AccessDenied rather than 404 NoSuchKey; both mean the same here,
 * since the function's grant covers every key it asks for.
 */
const missing = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return err instanceof NoSuchKey || e.name === 'NoSuchKey' || e.name === 'AccessDenied' || e.$metadata?.httpStatusCode === 404;
};

const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
  try {
    return await run();
  } catch (err) {
    throw unavailable(err) ? filesUnavailable(err) : err;
  }
};

export const createS3Files = (opts: S3FilesOptions): FileParts => {
  const local = opts.endpoint !== undefined;
  const s3 = new S3Client({
    ...(local
      ? {
          endpoint: opts.endpoint,
          region: opts.region ?? 'us-east-1',
          forcePathStyle: true,
          credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
        }
      : { region: opts.region }),
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 1_000, requestTimeout: 10_000, throwOnRequestTimeout: true },
  });
  const Bucket = opts.bucket;
  return {
    store: {
      put: (key, bytes, type) =>
        guarded(async () => {
          // Served with the type sniffed from its bytes, as a download: never rendered by a browser.
          await s3.send(new PutObjectCommand({ Bucket, Key: key, Body: bytes, ContentType: type, ContentDisposition: 'attachment' }));
        }),
      get: (key) =>
        guarded(async () => {
          try {
            const out = await s3.send(new GetObjectCommand({ Bucket, Key: key }));
            return out.Body ? new Uint8Array(await out.Body.transformToByteArray()) : new Uint8Array();
          } catch (err) {
            if (missing(err)) return undefined;
            throw err;
          }
        }),
      copy: (from, to) =>
        guarded(async () => {
          try {
            await s3.send(
              new CopyObjectCommand({ Bucket, Key: to, CopySource: `${Bucket}/${encodeURIComponent(from).replaceAll('%2F', '/')}` }),
            );
            return true;
          } catch (err) {
            if (missing(err)) return false;
            throw err;
          }
        }),
      delete: (key) =>
        guarded(async () => {
          await s3.send(new DeleteObjectCommand({ Bucket, Key: key }));
        }),
      list: (prefix) =>
        guarded(async () => {
          const found: { key: string; at: Date }[] = [];
          for await (const page of paginateListObjectsV2({ client: s3 }, { Bucket, Prefix: prefix }))
            for (const o of page.Contents ?? []) if (o.Key) found.push({ key: o.Key, at: o.LastModified ?? new Date(0) });
          return found;
        }),
    },
    sniff: async (bytes) => (await fileTypeFromBuffer(bytes))?.mime,
  };
};
