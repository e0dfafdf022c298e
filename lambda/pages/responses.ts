import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Page } from './layout.js';

/**
 * The one way the authorization server's function answers over node:http: a rendered page, a
 * redirect, or an OAuth-style JSON document. Every answer is `no-store`.
 */

/** A form post is a few hundred bytes; anything far larger is not one of ours. */
export const MAX_FORM_BYTES = 16 * 1024;

export const send = (res: ServerResponse, p: Page, extraHeaders: Record<string, string | string[]> = {}): void => {
  res.writeHead(p.status, { ...p.headers, ...extraHeaders });
  res.end(p.body);
};

export const redirect = (res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void => {
  res.writeHead(303, { location, 'cache-control': 'no-store', ...headers });
  res.end();
};

/** An OAuth error document (RFC 6749 §5.2 shape) or any JSON body. */
export const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
};

/** The urlencoded form of a POST, or undefined when it is larger than any form of ours. */
export const readForm = (req: IncomingMessage): Promise<URLSearchParams | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_FORM_BYTES) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_FORM_BYTES ? undefined : new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
