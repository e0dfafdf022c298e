import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy in front of an S3 API (the embedded s3rver) that counts what reaches it by
 * method, and can answer 503 SlowDown instead (S3 throttling) to test what a caller does then.
 *
 * It hands s3rver one request at a time. Each S3 request is atomic: a CopyObject whose source is
 * deleted meanwhile either copies all of it or answers 404 and leaves its destination as it was.
 * s3rver's are not: its copy unlinks the destination's files one by one before copying each
 * (fs-extra's overwrite), so a copy racing a DELETE of its source left a destination with its bytes
 * but without its metadata, and every later copy of it answered 500 InternalError. Two deletes of
 * one attachment at once do exactly that (both copy it to the same trash key while the winner
 * deletes it), and the undo of the winner then got a 503 under load.
 */
export interface S3Proxy {
  readonly endpoint: string;
  /** Requests seen since the last reset, as `PUT`, `GET`, `DELETE`, `PUT(copy)`. */
  readonly seen: string[];
  mode: 'pass' | 'slowdown';
  stop(): Promise<void>;
}

export const startS3Proxy = async (target: string): Promise<S3Proxy> => {
  const to = new URL(target);
  const proxy: S3Proxy = {
    endpoint: '',
    seen: [],
    mode: 'pass',
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (proxy.mode === 'slowdown') {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
      );
      return;
    }
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  };
  // The request in flight: the next one reaches s3rver when its answer is over (or its connection gone).
  let inFlight: Promise<void> = Promise.resolve();
  const server = createServer((req, res) => {
    proxy.seen.push(req.headers['x-amz-copy-source'] ? `${req.method}(copy)` : String(req.method));
    inFlight = inFlight.then(
      () =>
        new Promise<void>((done) => {
          res.on('close', done);
          forward(req, res);
        }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return Object.assign(proxy, { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
};
