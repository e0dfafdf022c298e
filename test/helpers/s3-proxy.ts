import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy in front of an S3 API (the embedded s3rver) that counts what reaches it by
 * method, and can answer 503 SlowDown instead (S3 throttling) to test what a caller does then.
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
  const server = createServer((req, res) => {
    proxy.seen.push(req.headers['x-amz-copy-source'] ? `${req.method}(copy)` : String(req.method));
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
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return Object.assign(proxy, { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
};
