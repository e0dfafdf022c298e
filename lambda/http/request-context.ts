import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { JsonRpcId } from '../errors.js';
import type { Principal } from '../vocabulary.js';

export type Route = 'mcp' | 'metadata';

/** What the middlewares learn about one request, on the Lambda context object. */
export interface RequestState {
  route?: Route;
  principal?: Principal;
  /** The JSON-RPC id once the body is parsed, so an error can echo it. */
  rpcId?: JsonRpcId;
  /** A known method name for the Requests meter, `other` otherwise. */
  meterMethod: string;
  /** CORS headers for an allowed Origin, applied to every response including errors. */
  corsHeaders: Record<string, string>;
}

export type DoersContext = Context & { doers: RequestState };
export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
export type DoersRequest = Request<HttpEvent, HttpResult, Error, DoersContext>;
export type DoersMiddleware = MiddlewareObj<HttpEvent, HttpResult, Error, DoersContext>;

export const stateOf = (request: { context: Context }): RequestState => {
  const ctx = request.context as DoersContext;
  ctx.doers ??= { meterMethod: 'other', corsHeaders: {} };
  return ctx.doers;
};

export const header = (event: HttpEvent, name: string): string | undefined => {
  const v = event.headers?.[name];
  return v === undefined || v === '' ? undefined : v;
};

export const jsonResponse = (statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  body: JSON.stringify(body),
});

export const emptyResponse = (statusCode: number, headers: Record<string, string> = {}): HttpResult => ({ statusCode, headers, body: '' });
