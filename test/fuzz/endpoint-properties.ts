import fc from 'fast-check';
import type { HttpEvent, HttpResult } from '../../lambda/http/request-context.js';
import { httpEvent } from '../helpers/events.js';
import { type EndpointCase, endpointCase, limitedCases, METADATA_PATHS, MODERN, SUPPORTED_VERSIONS } from './endpoint-arbitraries.js';
import { type FuzzTarget, harvestIds } from './endpoint-target.js';

/**
 * The endpoint's promises, checked on every fuzz case: the handler resolves; no 5xx at all (a 503
 * only means DynamoDB is unwell, and the embedded one is healthy); the answer is an empty 202/204,
 * the metadata document, or JSON-RPC with an (HTTP status, JSON-RPC code) pair from the table below;
 * nothing internal leaks. Requests refused before the dispatcher (Host, Origin, verb, route, size,
 * credential, JSON, version header, batch rules, envelope) must get exactly the row's answer.
 */

type Era = 'modern' | 'handshake';

interface Situation {
  readonly era: Era;
  readonly limits: boolean;
  readonly credential: EndpointCase['credential'];
  readonly method: string;
  /** `_meta["io.modelcontextprotocol/protocolVersion"]` present but not a string: 400 -32602 in any era. */
  readonly metaVersionNotString: boolean;
}

export interface AllowedError {
  readonly status: number;
  readonly code: number;
  /** The docs/protocol.md, docs/auth.md, docs/limits.md row or lambda/errors.ts class that answers so. */
  readonly row: string;
  /** For answers of the dispatcher: when the pair may occur at all. */
  readonly when?: (s: Situation) => boolean;
}

/**
 * Every (HTTP status, JSON-RPC code) an error answer may have, from docs/protocol.md and lambda/errors.ts
 * (default status per class, overrides where the dispatcher passes one). Not here on purpose:
 * 500 -32603 (an unexpected failure: always a bug) and 503 -32000 (a dependency down: the embedded
 * DynamoDB is not, so a 503 in a fuzz run is a bug too, e.g. an error misread as transient).
 */
export const ALLOWED_ERRORS: readonly AllowedError[] = [
  { status: 400, code: -32700, row: 'body not strict JSON, or empty (ParseError)' },
  { status: 400, code: -32600, row: 'not JSON-RPC 2.0; a batch on a revision after 2025-03-26; an empty batch (InvalidRequestError)' },
  {
    status: 400,
    code: -32022,
    row: 'MCP-Protocol-Version header unknown or older than 2025-03-26 (UnsupportedVersionError), data {supported, requested}',
  },
  {
    status: 400,
    code: -32020,
    row: 'header/body version mismatch; Mcp-Method / Mcp-Name missing (2026-07-28) or not matching the body (HeaderMismatchError)',
  },
  {
    status: 400,
    code: -32602,
    row: '2026-07-28 without _meta protocolVersion/clientCapabilities, or _meta protocolVersion not a string (InvalidParamsError, status 400)',
    when: (s) => s.era === 'modern' || s.metaVersionNotString,
  },
  {
    status: 400,
    code: -32021,
    row: '2026-07-28 input request for a capability the client lacks (MissingCapabilityError, status 400)',
    when: (s) => s.era === 'modern',
  },
  { status: 401, code: -32001, row: 'no credential, refused credential; WWW-Authenticate (UnauthenticatedError)' },
  {
    status: 403,
    code: -32600,
    row: 'Origin not allowed; Host not loopback (local server); user or workspace not allowed (OriginNotAllowedError, UserNotAllowedError)',
  },
  {
    status: 403,
    code: -32003,
    row: 'token lacks the scope; WWW-Authenticate insufficient_scope (InsufficientScopeError)',
    when: (s) => s.credential === 'scoped',
  },
  { status: 404, code: -32600, row: 'a path other than /mcp, /mcp/ and the metadata document (NotFoundRouteError)' },
  {
    status: 404,
    code: -32601,
    row: '2026-07-28 unknown or removed method (MethodNotFoundError, status 404)',
    when: (s) => s.era === 'modern',
  },
  {
    status: 405,
    code: -32600,
    row: 'a verb other than POST/OPTIONS on /mcp, GET/HEAD/OPTIONS on the metadata document; Allow (MethodNotAllowedError)',
  },
  { status: 413, code: -32600, row: 'body over 1 MiB (PayloadTooLargeError)' },
  { status: 200, code: -32601, row: 'handshake era unknown method, in-band (MethodNotFoundError)', when: (s) => s.era === 'handshake' },
  {
    status: 200,
    code: -32602,
    row: 'unknown tool/prompt, unknown resource (2026-07-28), bad params, invalid tool arguments (2025-03-26, 2025-06-18) (InvalidParamsError)',
  },
  {
    status: 200,
    code: -32002,
    row: 'unknown resource before 2026-07-28 (ResourceNotFoundError)',
    when: (s) => s.era === 'handshake' && s.method === 'resources/read',
  },
  {
    status: 429,
    code: -32000,
    row: 'resource read beyond the rate or concurrency limit; Retry-After (LimitExceededError)',
    when: (s) => s.limits && s.method === 'resources/read',
  },
];

/** Codes a batch element's error may carry (the batch itself answers 200; the element's own status is dropped). */
const BATCH_CODES = new Set([-32600, -32601, -32602, -32002, -32020, -32003, -32000]);

/** Internals that must never reach a client: stack frames, source positions, table names, exception names. */
const LEAK = /at \w+ \(|\.ts:\d+|doers-workspace|doers-limits|Exception/;

const MIB = 1024 * 1024;

/** 2026-07-28 results that carry `ttlMs` and `cacheScope: "private"` (docs/protocol.md). */
const CACHED_METHODS = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);

export const toEvent = (c: EndpointCase): HttpEvent => ({
  ...httpEvent({ method: c.verb, path: c.path, ...(c.body === undefined ? {} : { body: c.body }), isBase64Encoded: c.isBase64Encoded }),
  // Exactly the case's headers: httpEvent would add a loopback Host the case may mean to leave out.
  headers: { ...c.headers },
});

const decodedBytes = (c: EndpointCase): Buffer =>
  c.body === undefined ? Buffer.alloc(0) : Buffer.from(c.body, c.isBase64Encoded ? 'base64' : 'utf8');
const decodedText = (c: EndpointCase): string =>
  c.body === undefined ? '' : c.isBase64Encoded ? Buffer.from(c.body, 'base64').toString('utf8') : c.body;

const parseJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRpcId = (v: unknown): v is string | number => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/** JSON-RPC 2.0 §4/§5, as MCP narrows it (params, when present, an object). */
export const classify = (v: unknown): 'request' | 'response' | 'invalid' => {
  if (!isObject(v) || v.jsonrpc !== '2.0') return 'invalid';
  if (
    typeof v.method === 'string' &&
    v.method !== '' &&
    (v.id === undefined || isRpcId(v.id)) &&
    (v.params === undefined || isObject(v.params))
  )
    return 'request';
  if ((v.id === null || isRpcId(v.id)) && ('result' in v || 'error' in v)) return 'response';
  return 'invalid';
};

const header = (h: Readonly<Record<string, string>>, name: string): string | undefined =>
  h[name] === undefined || h[name] === '' ? undefined : h[name];

type Expected =
  | { readonly kind: 'exact'; readonly status: number; readonly code?: number; readonly row: string }
  | { readonly kind: 'metadata' }
  | { readonly kind: 'batch'; readonly elements: unknown[] }
  | { readonly kind: 'dispatch'; readonly request: Record<string, unknown> };

/** The answer docs/protocol.md and docs/auth.md fixes before any method runs, in the order the rows apply. */
export const expectedAnswer = (c: EndpointCase): Expected => {
  const exact = (status: number, row: string, code?: number): Expected => ({
    kind: 'exact',
    status,
    row,
    ...(code === undefined ? {} : { code }),
  });
  if (!c.hostAllowed) return exact(403, 'Host not loopback', -32600);
  if (c.originAllowed === false) return exact(403, 'Origin not allowed', -32600);
  const mcp = c.path === '/mcp' || c.path === '/mcp/';
  if (!mcp && !(METADATA_PATHS as readonly string[]).includes(c.path)) return exact(404, 'unknown route', -32600);
  // A served path answers its preflight with its own verbs (checked with the headers below).
  if (c.verb === 'OPTIONS') return exact(204, 'preflight');
  if (!mcp) return c.verb === 'GET' || c.verb === 'HEAD' ? { kind: 'metadata' } : exact(405, 'verb on metadata', -32600);
  if (c.verb !== 'POST') return exact(405, 'verb on /mcp', -32600);
  if (decodedBytes(c).length > MIB) return exact(413, 'body over 1 MiB', -32600);
  if (c.credential === 'none' || c.credential === 'refused') return exact(401, 'credential', -32001);
  if (c.credential === 'ghost') return exact(403, 'user not a member', -32600);
  const text = decodedText(c);
  const parsed = parseJson(text);
  if (text.trim() === '' || !parsed.ok) return exact(400, 'not strict JSON', -32700);
  const version = header(c.headers, 'mcp-protocol-version');
  if (version !== undefined && !(SUPPORTED_VERSIONS as readonly string[]).includes(version))
    return exact(400, 'unknown version header', -32022);
  if (Array.isArray(parsed.value)) {
    if (version !== undefined && version !== '2025-03-26') return exact(400, 'batch after 2025-03-26', -32600);
    if (parsed.value.length === 0) return exact(400, 'empty batch', -32600);
    return { kind: 'batch', elements: parsed.value };
  }
  const kind = classify(parsed.value);
  if (kind === 'invalid') return exact(400, 'not JSON-RPC 2.0', -32600);
  if (kind === 'response') return exact(202, 'a response from the client');
  return { kind: 'dispatch', request: parsed.value as Record<string, unknown> };
};

/** The id an answer must carry: the body's own, where the body is a readable object with one (docs/protocol.md, JSON-RPC §5). */
const expectedId = (c: EndpointCase): string | number | null => {
  if ((c.path !== '/mcp' && c.path !== '/mcp/') || decodedBytes(c).length > MIB) return null;
  const parsed = parseJson(decodedText(c));
  if (!parsed.ok || !isObject(parsed.value)) return null;
  return isRpcId(parsed.value.id) ? parsed.value.id : null;
};

const isAllowedPair = (status: number, code: number, s?: Situation): boolean =>
  ALLOWED_ERRORS.some((a) => a.status === status && a.code === code && (s === undefined || a.when === undefined || a.when(s)));

/** A JSON-RPC 2.0 response object: exactly one of result/error, a proper error, an id of the right type. */
const responseShapeProblem = (v: unknown): string | undefined => {
  if (!isObject(v)) return 'not an object';
  if (v.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"';
  if (!(v.id === null || isRpcId(v.id))) return `id ${JSON.stringify(v.id)} is not string|number|null`;
  if ('result' in v === 'error' in v) return 'not exactly one of result/error';
  if ('error' in v) {
    const e = v.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string') return 'error is not {code: integer, message: string}';
  } else if (!isObject(v.result)) return 'result is not an object';
  return undefined;
};

export interface CheckContext {
  readonly target: FuzzTarget;
}

/** Everything wrong with one answer (empty: the case passes). */
export const checkAnswer = (c: EndpointCase, res: HttpResult, ctx: CheckContext): string[] => {
  const problems: string[] = [];
  const { fixture, limits } = ctx.target;
  const status = res.statusCode ?? 200;
  const h = Object.fromEntries(Object.entries(res.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  const body = typeof res.body === 'string' ? res.body : '';

  if (status >= 500) problems.push(`status ${status}: no 5xx may happen (503 only with DynamoDB unwell, 500 never)`);
  if (!Number.isInteger(status) || status < 200 || status > 599) problems.push(`status ${status} is not an HTTP status`);
  if ('mcp-session-id' in h) problems.push('Mcp-Session-Id header in the answer');
  if (/event-stream/i.test(h['content-type'] ?? '')) problems.push('text/event-stream answer');
  if (
    h['access-control-allow-origin'] !== undefined &&
    (c.originAllowed !== true || h['access-control-allow-origin'] !== c.headers.origin)
  ) {
    problems.push(`Access-Control-Allow-Origin ${h['access-control-allow-origin']} for Origin ${String(c.headers.origin)}`);
  }
  if (!LEAK.test(decodedText(c)) && !Object.values(c.headers).some((v) => LEAK.test(v)) && LEAK.test(body)) {
    problems.push(`internal detail in the body: ${LEAK.exec(body)![0]}`);
  }

  const empty = body === '';
  if (empty !== (status === 202 || status === 204)) problems.push(`status ${status} with ${empty ? 'an empty' : 'a non-empty'} body`);
  let json: unknown;
  if (!empty) {
    if (!/^application\/json/.test(h['content-type'] ?? '')) problems.push(`content-type ${h['content-type']} for a JSON body`);
    const parsed = parseJson(body);
    if (!parsed.ok) return [...problems, 'body is not JSON'];
    json = parsed.value;
  }

  const expected = expectedAnswer(c);
  if (expected.kind === 'metadata') {
    if (status !== 200 || !isObject(json)) return [...problems, `metadata: ${status} ${body.slice(0, 200)}`];
    if (json.resource !== `${fixture.publicUrl}/mcp`)
      problems.push(`metadata resource ${String(json.resource)} is not ${fixture.publicUrl}/mcp`);
    if (h['cache-control'] !== 'no-store') problems.push('metadata without Cache-Control: no-store');
    return problems;
  }

  if (expected.kind === 'batch') return [...problems, ...checkBatch(expected.elements, status, json)];

  if (json !== undefined) {
    const shape = responseShapeProblem(json);
    if (shape) return [...problems, `not a JSON-RPC response: ${shape}`];
    const r = json as { id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
    const id = expectedId(c);
    if (r.id !== id) problems.push(`id ${JSON.stringify(r.id)}, expected ${JSON.stringify(id)}`);
    if (r.error && !isAllowedPair(status, r.error.code)) problems.push(`(${status}, ${r.error.code}) is no row of the protocol table`);
  }

  if (expected.kind === 'exact') {
    const code = (json as { error?: { code?: number } } | undefined)?.error?.code;
    if (status !== expected.status || code !== expected.code) {
      problems.push(
        `${expected.row}: expected ${expected.status}${expected.code === undefined ? '' : ` ${expected.code}`}, got ${status}${code === undefined ? '' : ` ${code}`}`,
      );
    }
    problems.push(...checkHeadersOf(c, status, code, h, json, fixture.publicUrl));
    return problems;
  }

  // Reached the dispatcher: a request object.
  const req = expected.request;
  const method = req.method as string;
  const meta = isObject(req.params) ? req.params._meta : undefined;
  const situation: Situation = {
    era: header(c.headers, 'mcp-protocol-version') === MODERN ? 'modern' : 'handshake',
    limits,
    credential: c.credential,
    method,
    metaVersionNotString:
      isObject(meta) &&
      meta['io.modelcontextprotocol/protocolVersion'] !== undefined &&
      typeof meta['io.modelcontextprotocol/protocolVersion'] !== 'string',
  };
  const isNotification = req.id === undefined;
  if (isNotification) {
    if (
      !(
        status === 202 ||
        (status === 400 && [-32020, -32602, -32022].includes((json as { error: { code: number } } | undefined)?.error?.code ?? 0))
      )
    ) {
      problems.push(`a notification answered ${status} ${body.slice(0, 200)}`);
    }
    return problems;
  }
  if (status === 202 || json === undefined) return [...problems, `a request with an id answered ${status} without a body`];
  const r = json as { result?: Record<string, unknown>; error?: { code: number } };
  if (r.error) {
    if (!isAllowedPair(status, r.error.code, situation))
      problems.push(
        `(${status}, ${r.error.code}) is not allowed for ${method} (${situation.era}${limits ? ', limits on' : ''}, credential ${c.credential})`,
      );
    if (r.error.code === -32602 && status === 200 && argumentsAreToolErrors(c) && callsKnownTool(req, fixture.tools)) {
      problems.push('invalid arguments of a known tool answered -32602; on 2025-11-25 and 2026-07-28 they are an isError result');
    }
    problems.push(...checkHeadersOf(c, status, r.error.code, h, json, fixture.publicUrl));
    return problems;
  }
  if (status !== 200) problems.push(`a result with status ${status}`);
  problems.push(...checkResult(c, method, req, situation, r.result!, h, limits));
  return problems;
};

/** Invalid tool arguments: an isError result naming the parameter on these, -32602 before (docs/protocol.md). */
const argumentsAreToolErrors = (c: EndpointCase): boolean =>
  ['2025-11-25', MODERN].includes(header(c.headers, 'mcp-protocol-version') ?? '');

/** A tools/call of a listed tool whose arguments are an object (or absent) and nothing else in params can be refused. */
const callsKnownTool = (req: Record<string, unknown>, tools: readonly { name: string }[]): boolean => {
  const params = req.params as Record<string, unknown> | undefined;
  return (
    req.method === 'tools/call' &&
    isObject(params) &&
    tools.some((t) => t.name === params.name) &&
    (params.arguments === undefined || isObject(params.arguments)) &&
    params.requestState === undefined &&
    params.inputResponses === undefined
  );
};

/** The headers a row promises: challenges, Allow, Retry-After, CORS on preflights, -32022's data. */
const checkHeadersOf = (
  c: EndpointCase,
  status: number,
  code: number | undefined,
  h: Record<string, string>,
  json: unknown,
  publicUrl: string,
): string[] => {
  const problems: string[] = [];
  const challenge = h['www-authenticate'];
  if (status === 401) {
    if (!challenge?.startsWith('Bearer ')) problems.push('401 without a Bearer challenge');
    else if (!challenge.includes(`resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/mcp"`))
      problems.push(`challenge without the configured resource_metadata: ${challenge}`);
    if (c.credential === 'none' && challenge?.includes('error='))
      problems.push('a request without a credential got error= in its challenge');
    if (c.credential === 'refused' && !challenge?.includes('error="invalid_token"'))
      problems.push('a refused token got no error="invalid_token"');
  }
  if (status === 403 && code === -32003 && !challenge?.includes('error="insufficient_scope"'))
    problems.push('403 -32003 without an insufficient_scope challenge');
  if (status === 405) {
    const allow = (METADATA_PATHS as readonly string[]).includes(c.path) ? 'GET, OPTIONS' : 'POST, OPTIONS';
    if (h.allow !== allow) problems.push(`405 with Allow ${String(h.allow)}, expected ${allow}`);
  }
  if ((status === 429 || status === 503) && !h['retry-after']) problems.push(`${status} without Retry-After`);
  if (status === 204) {
    const allow = (METADATA_PATHS as readonly string[]).includes(c.path) ? 'GET, OPTIONS' : 'POST, OPTIONS';
    if (h.allow !== allow) problems.push(`preflight with Allow ${String(h.allow)}, expected ${allow}`);
    if (c.originAllowed === true && h['access-control-allow-origin'] !== c.headers.origin)
      problems.push('preflight from an allowed Origin without it echoed');
  }
  if (code === -32022) {
    const data = (json as { error: { data?: { supported?: unknown; requested?: unknown } } }).error.data;
    if (JSON.stringify(data?.supported) !== JSON.stringify(SUPPORTED_VERSIONS))
      problems.push(`-32022 data.supported ${JSON.stringify(data?.supported)}`);
    if (typeof data?.requested !== 'string') problems.push('-32022 without data.requested');
  }
  return problems;
};

/** What a result of each era and method must look like (docs/protocol.md). */
const checkResult = (
  c: EndpointCase,
  method: string,
  req: Record<string, unknown>,
  s: Situation,
  result: Record<string, unknown>,
  h: Record<string, string>,
  limits: boolean,
): string[] => {
  const problems: string[] = [];
  if (s.era === 'modern') {
    if (result.resultType !== 'complete' && result.resultType !== 'input_required')
      problems.push(`2026-07-28 result with resultType ${String(result.resultType)}`);
    const info = (result._meta as Record<string, { name?: unknown }> | undefined)?.['io.modelcontextprotocol/serverInfo'];
    if (info?.name !== 'doers') problems.push('2026-07-28 result without _meta serverInfo');
    const cached = CACHED_METHODS.has(method);
    if (cached && (!Number.isInteger(result.ttlMs) || (result.ttlMs as number) < 0 || result.cacheScope !== 'private'))
      problems.push(`2026-07-28 ${method} without ttlMs/cacheScope private`);
    if (!cached && ('ttlMs' in result || 'cacheScope' in result)) problems.push(`2026-07-28 ${method} with cache hints`);
  } else {
    for (const key of ['resultType', 'ttlMs', 'cacheScope']) if (key in result) problems.push(`handshake-era result with ${key}`);
    // The one _meta of the handshake era: a refused tool call's reason, as on every revision.
    const meta = result._meta as Record<string, unknown> | undefined;
    if (meta !== undefined && (result.isError !== true || Object.keys(meta).join() !== 'sh.doers/refusal'))
      problems.push(`handshake-era result with _meta ${JSON.stringify(meta)}`);
  }
  if (method === 'tools/call' && result.isError === true) {
    const refusal = (result._meta as Record<string, { reason?: unknown; code?: unknown; data?: unknown }> | undefined)?.[
      'sh.doers/refusal'
    ];
    if (typeof refusal?.reason !== 'string' || typeof refusal.code !== 'string' || !isObject(refusal.data))
      problems.push('a refused tool call without _meta["sh.doers/refusal"] {reason, code, data}');
  }
  const params = isObject(req.params) ? req.params : {};
  switch (method) {
    case 'tools/call': {
      if (result.resultType === 'input_required') break;
      const content = result.content as { type?: unknown; text?: unknown }[] | undefined;
      if (!Array.isArray(content) || content.length === 0 || typeof content[0]?.text !== 'string')
        problems.push('tool result without text content');
      if (typeof result.isError !== 'boolean') problems.push('tool result without isError');
      if (result.isError === false && !isObject(result.structuredContent)) problems.push('tool result without structuredContent');
      if (h['retry-after'] !== undefined && (!limits || result.isError !== true))
        problems.push('Retry-After on a tool result that is no limit refusal');
      const text = String(content?.[0]?.text ?? '');
      if (result.isError === true && text.startsWith('Invalid arguments for') && !argumentsAreToolErrors(c)) {
        problems.push('invalid tool arguments answered as an isError result; on 2025-03-26 and 2025-06-18 they are -32602');
      }
      break;
    }
    case 'initialize': {
      const requested = params.protocolVersion;
      const legacy = SUPPORTED_VERSIONS.filter((v) => v !== MODERN) as readonly unknown[];
      const want = legacy.includes(requested) ? requested : '2025-11-25';
      if (result.protocolVersion !== want)
        problems.push(`initialize answered ${String(result.protocolVersion)} to ${JSON.stringify(requested)?.slice(0, 40)}`);
      break;
    }
    case 'server/discover':
      if (JSON.stringify(result.supportedVersions) !== JSON.stringify(SUPPORTED_VERSIONS))
        problems.push('server/discover supportedVersions');
      break;
    case 'tools/list':
    case 'prompts/list':
    case 'resources/list':
    case 'resources/templates/list': {
      const key = {
        'tools/list': 'tools',
        'prompts/list': 'prompts',
        'resources/list': 'resources',
        'resources/templates/list': 'resourceTemplates',
      }[method];
      if (!Array.isArray(result[key])) problems.push(`${method} without ${key}`);
      break;
    }
    case 'ping':
      if (Object.keys(result).length !== 0) problems.push('ping result not {}');
      break;
    case 'resources/read':
      if (!Array.isArray(result.contents)) problems.push('resources/read without contents');
      break;
    case 'prompts/get':
      if (result.resultType !== 'input_required' && !Array.isArray(result.messages)) problems.push('prompts/get without messages');
      break;
    default:
      problems.push(`a result for ${method}, which is no method of this server`);
  }
  return problems;
};

const idOf = (v: unknown): string | number | undefined => (isObject(v) && isRpcId(v.id) ? v.id : undefined);

/** 2025-03-26 batches: an array of responses (one per element with a readable id, answered or refused), or 202. */
const checkBatch = (elements: unknown[], status: number, json: unknown): string[] => {
  const expectedIds = elements
    .filter((e) => classify(e) !== 'response')
    .map(idOf)
    .filter((id) => id !== undefined);
  if (status === 202) return expectedIds.length === 0 ? [] : [`batch with ${expectedIds.length} request(s) answered 202`];
  if (status !== 200 || !Array.isArray(json)) return [`batch answered ${status}, not an array`];
  const problems: string[] = [];
  if (json.length === 0) problems.push('batch answered with an empty array');
  if (json.length > elements.length) problems.push('more answers than batch elements');
  for (const answer of json) {
    const shape = responseShapeProblem(answer);
    if (shape) {
      problems.push(`batch answer: ${shape}`);
      continue;
    }
    const code = (answer as { error?: { code: number } }).error?.code;
    if (code !== undefined && !BATCH_CODES.has(code)) problems.push(`batch answer with code ${code}`);
  }
  const key = (ids: unknown[]) =>
    ids
      .map((id) => JSON.stringify(id))
      .sort()
      .join('|');
  const answeredIds = json.map((a: { id?: unknown }) => a.id).filter((id) => id !== null);
  if (key(answeredIds) !== key(expectedIds))
    problems.push(`batch answer ids ${key(answeredIds).slice(0, 200)} vs request ids ${key(expectedIds).slice(0, 200)}`);
  return problems;
};

// ---- running ------------------------------------------------------------------------------------

/** What a run saw: for the fuzz report and for sanity checks on coverage. */
export class FuzzStats {
  readonly statuses = new Map<number, number>();
  readonly pairs = new Map<string, number>();
  readonly families = new Map<string, number>();
  /** The first 50 failing cases; `failed` counts them all. */
  readonly failures: { readonly case: EndpointCase; readonly problems: string[] }[] = [];
  cases = 0;
  failed = 0;

  constructor(private readonly onCase?: (cases: number) => void) {}

  record(c: EndpointCase, res: HttpResult | undefined, problems: string[]): void {
    this.cases += 1;
    const status = res?.statusCode ?? 0;
    bump(this.statuses, status);
    bump(this.families, c.family);
    const code = res?.body ? errorCodeOf(res.body) : undefined;
    bump(this.pairs, code === undefined ? String(status) : `${status} ${code}`);
    if (problems.length > 0) {
      this.failed += 1;
      if (this.failures.length < 50) this.failures.push({ case: c, problems });
    }
    this.onCase?.(this.cases);
  }
}

const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);

const errorCodeOf = (body: string): number | undefined => {
  try {
    const v = JSON.parse(body) as { error?: { code?: number } };
    return v?.error?.code;
  } catch {
    return undefined;
  }
};

/**
 * One case end to end: invoke, check, and feed the id pools from a good tool result. A throwing
 * handler (or checker) is a failure like any other.
 */
export const runCase = async (target: FuzzTarget, c: EndpointCase, stats?: FuzzStats): Promise<string[]> => {
  let res: HttpResult | undefined;
  let problems: string[];
  try {
    res = await target.invoke(toEvent(c));
    problems = checkAnswer(c, res, { target });
    if (problems.length === 0 && res.body?.includes('"structuredContent"')) {
      const { fixture } = target;
      harvestIds(
        fixture.ids,
        fixture.protectedUsers,
        (JSON.parse(res.body) as { result?: { structuredContent?: unknown } }).result?.structuredContent,
      );
    }
  } catch (err) {
    problems = [`the handler threw: ${(err as Error)?.stack ?? String(err)}`];
  }
  stats?.record(c, res, problems);
  return problems;
};

/** `count`: record failures in the stats and go on (a long run reports them all); otherwise the first one throws and shrinks. */
export interface PropertyOptions {
  readonly stats?: FuzzStats;
  readonly mode?: 'throw' | 'count';
}

const settle = (problems: string[], mode: PropertyOptions['mode']): void => {
  if (problems.length > 0 && mode !== 'count') throw new Error(problems.join('\n'));
};

/** Every kind of request against the limits-off target. */
export const endpointProperty = (target: FuzzTarget, opts: PropertyOptions = {}) =>
  fc.asyncProperty(endpointCase(target.fixture), async (c) => settle(await runCase(target, c, opts.stats), opts.mode));

/** Groups of authorized calls at once against the limits-on target: 429 and isError refusals are intended there. */
export const limitsProperty = (target: FuzzTarget, opts: PropertyOptions = {}) =>
  fc.asyncProperty(limitedCases(target.fixture), async (cases) => {
    const results = await Promise.all(cases.map((c) => runCase(target, c, opts.stats)));
    settle(results.flat(), opts.mode);
  });

/** Records unhandled rejections and uncaught exceptions while a run lasts (none may happen). */
export const watchProcess = () => {
  const rejections: unknown[] = [];
  const exceptions: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  const onException = (err: unknown) => exceptions.push(err);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return {
    rejections,
    exceptions,
    dispose: () => {
      process.off('unhandledRejection', onRejection);
      process.off('uncaughtException', onException);
    },
  };
};
