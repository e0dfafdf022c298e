import { DependencyUnavailableError } from '../errors.js';

/**
 * Where attachments' bytes are: S3 in AWS, an embedded S3 API locally (lambda/local/embedded-s3.ts),
 * through the same code (lambda/files/s3-files.ts). The store knows keys only; which keys a caller
 * may touch is the attachment writer's to decide (lambda/workspace/attachments/attachment-writer.ts),
 * from the caller's workspace alone.
 *
 * The S3 client and the type sniffer are loaded on the first call that needs them: a call that
 * touches no attachment loads nothing of S3, and its cold start is what it was.
 */
export interface FileStore {
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** The object's bytes, or undefined when there is none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** A copy within the bucket (a delete keeps the bytes for its undo; an undo puts them back); false when `from` is not there. */
  copy(from: string, to: string): Promise<boolean>;
  /** Gone afterwards, whether it was there or not. */
  delete(key: string): Promise<void>;
  /** The objects under a prefix, with when each was written (the operator's sweep; the function has no right to list). */
  list(prefix: string): Promise<{ readonly key: string; readonly at: Date }[]>;
}

/** What a file's bytes are, from the bytes (never the name): a MIME type, or undefined when nothing is known. */
export type Sniffer = (bytes: Uint8Array) => Promise<string | undefined>;

export interface FileParts {
  readonly store: FileStore;
  readonly sniff: Sniffer;
}

/** S3 is throttling or out of reach: 503 with Retry-After, as for DynamoDB (errors.ts). */
export const filesUnavailable = (cause: unknown): DependencyUnavailableError => new DependencyUnavailableError('S3', 1, cause);

/** The store and sniffer behind a loader run once, on first use; a failed load is tried again next time. */
export const lazyFileParts = (load: () => Promise<FileParts>): FileParts => {
  let loading: Promise<FileParts> | undefined;
  const parts = (): Promise<FileParts> => {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  };
  return {
    store: {
      put: async (key, bytes, type) => (await parts()).store.put(key, bytes, type),
      get: async (key) => (await parts()).store.get(key),
      copy: async (from, to) => (await parts()).store.copy(from, to),
      delete: async (key) => (await parts()).store.delete(key),
      list: async (prefix) => (await parts()).store.list(prefix),
    },
    sniff: async (bytes) => (await parts()).sniff(bytes),
  };
};

/** The file the S3 module is bundled to beside the function's (lib/bundling.ts builds it, lambda/handler.ts loads it). */
export const S3_FILES_BUNDLE = './s3-files.mjs';
