import type { Context } from 'aws-lambda';
import type { DoersContext, HttpEvent } from '../../lambda/http/request-context.js';
import type { Principal } from '../../lambda/vocabulary.js';

/** An API Gateway HTTP API (payload v2) event, as Lambda receives it. */
export const httpEvent = (
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean } = {},
): HttpEvent =>
  ({
    version: '2.0',
    routeKey: '$default',
    rawPath: opts.path ?? '/mcp',
    rawQueryString: '',
    headers: { host: '127.0.0.1:8787', ...opts.headers },
    requestContext: {
      accountId: 'test',
      apiId: 'test',
      domainName: 'test',
      domainPrefix: 'test',
      http: { method: opts.method ?? 'POST', path: opts.path ?? '/mcp', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'req',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    body: opts.body,
    isBase64Encoded: opts.isBase64Encoded ?? false,
  }) as HttpEvent;

export const lambdaContext = (): DoersContext =>
  ({
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test',
    functionVersion: '1',
    invokedFunctionArn: 'arn',
    memoryLimitInMB: '512',
    awsRequestId: 'req',
    logGroupName: 'g',
    logStreamName: 's',
    getRemainingTimeInMillis: () => 30_000,
    done: () => {},
    fail: () => {},
    succeed: () => {},
  }) as Context as DoersContext;

export const principal = (overrides: Partial<Principal> = {}): Principal => {
  const scopes = overrides.scopes ?? ['tasks:read', 'tasks:write', 'team:read', 'team:admin'];
  return {
    userId: 'usr_1',
    workspaceId: 'ws_1',
    workspaceName: 'Test workspace',
    email: 'u@example.com',
    name: 'User One',
    role: 'owner',
    timeZone: 'UTC',
    credential: 'personal_access_token',
    directoryVersion: 0,
    workspaceKey: 'TEST',
    pastKeys: [],
    taskCounter: 0,
    layout: 2,
    ...overrides,
    scopes,
    scopeKey: scopes.join(' '),
  };
};
