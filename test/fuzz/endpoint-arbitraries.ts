import fc from 'fast-check';
import { bulky, bulkyValue, writeJson } from './bulky-values.js';
import type { CredentialClass, FuzzFixture } from './endpoint-target.js';
import { type KnownValues, toolArguments } from './schema-arbitrary.js';

/**
 * What the endpoint fuzzer sends: random and mutated JSON-RPC bodies, batches, bodies that are not
 * JSON or not UTF-8, deep and huge ones, and every header the transport reads, each drawn from
 * pools tagged with how the server must treat them (so the checker needs no second implementation
 * of the Host, Origin and credential rules).
 */

export const MODERN = '2026-07-28';
export const SUPPORTED_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const METADATA_PATHS = ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'] as const;

export type CaseFamily = 'rpc' | 'batch' | 'raw' | 'http';

export interface EndpointCase {
  readonly family: CaseFamily;
  readonly verb: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** As the event carries it: base64 text when `isBase64Encoded`. */
  readonly body: string | undefined;
  readonly isBase64Encoded: boolean;
  readonly credential: CredentialClass;
  readonly hostAllowed: boolean;
  /** undefined: no Origin header. */
  readonly originAllowed: boolean | undefined;
}

type Tagged<T> = { readonly value: string | undefined; readonly tag: T };

const tagged = <T>(tag: T, ...values: (string | undefined)[]): fc.Arbitrary<Tagged<T>> =>
  fc.constantFrom(...values).map((value) => ({ value, tag }));

const weighted = <T>(...arbs: [number, fc.Arbitrary<T>][]): fc.Arbitrary<T> =>
  fc.oneof(...arbs.map(([weight, arbitrary]) => ({ weight, arbitrary })));

// ---- headers ------------------------------------------------------------------------------------

/** Loopback Hosts pass (local server), anything else is 403 (DNS-rebinding protection). */
const hostHeader = (port: number, foreignWeight: number) =>
  weighted<Tagged<boolean>>(
    [60, tagged(true, `127.0.0.1:${port}`)],
    [2, tagged(true, 'localhost', `localhost:${port}`, `[::1]:${port}`, 'LOCALHOST:1', '127.0.0.1', '127.1.2.3:99')],
    [
      foreignWeight,
      tagged(
        false,
        undefined,
        '',
        'evil.example',
        'evil.example:80',
        '127.0.0.1.nip.io',
        'localhost.evil.example',
        '0.0.0.0:8787',
        '[::2]:1',
        `127.0.0.1:${port} `,
        ' 127.0.0.1',
        'localhost:',
        '127.0.0.1:abc',
        `127.0.0.1:${port},evil.example`,
      ),
    ],
  );

/** docs/deploy-and-operations.md, "Configuration reference" default allow-list plus loopback pass; everything else is 403, also on OPTIONS. */
const originHeader = (presentWeight: number) =>
  weighted<Tagged<boolean | undefined>>(
    [40, tagged(undefined, undefined)],
    // An empty header is no header (API Gateway passes it through; the transport reads it as absent).
    [1, tagged(undefined, '')],
    [
      presentWeight,
      tagged(
        true,
        'https://claude.ai',
        'https://claude.com',
        'https://chatgpt.com',
        'https://chat.openai.com',
        'https://platform.openai.com',
        'https://doers.sh',
        'HTTPS://CLAUDE.AI',
        'http://localhost:6274',
        'http://127.0.0.1:3000',
        'http://[::1]:8080',
        'http://localhost',
      ),
    ],
    [
      presentWeight,
      tagged(
        false,
        'https://evil.example',
        'null',
        'https://claude.ai.evil.example',
        'http://claude.ai',
        'https://claude.ai:8443',
        'https://claude.ai/',
        'file://',
        'garbage',
        'https://localhost.evil.example',
        'http://127.0.0.1.nip.io',
        'https://claude.ai, https://evil.example',
        'https://evil.example/http://localhost',
      ),
    ],
  );

const base64url = (s: string) => Buffer.from(s).toString('base64url');
/** Protected headers jose has to read before it can refuse: odd algs, kids, crit, b64. */
const joseHeader = fc.oneof(
  fc.jsonValue({ maxDepth: 1 }),
  fc.record(
    {
      alg: fc.constantFrom<unknown>('ES256', 'RS256', 'EdDSA', 'none', 'HS256', 'ES512', 'dir', 'A128KW', '', 7, null),
      kid: fc.oneof(fc.constantFrom<unknown>('fuzz-es256', 'fuzz-stranger', 3, null, ['fuzz-es256']), fc.string({ maxLength: 10 })),
      typ: fc.constantFrom<unknown>('JWT', 'at+jwt', 5),
      crit: fc.constantFrom<unknown>(['b64'], ['exp'], [], 'b64'),
      b64: fc.constantFrom<unknown>(false, true, 'no'),
      jku: fc.constantFrom<unknown>('http://127.0.0.1:1/jwks', 'https://evil.example/jwks'),
    },
    { requiredKeys: ['alg'] },
  ),
);

const jwtShaped = fc
  .tuple(joseHeader, fc.jsonValue({ maxDepth: 1 }), fc.base64String({ maxLength: 40 }))
  .map(([h, p, sig]) => `${base64url(JSON.stringify(h))}.${base64url(JSON.stringify(p))}.${sig.replace(/[+/=]/g, '')}`);

/** Authorization header values with how the gate must classify them (docs/auth.md). */
const authorizationHeader = (fixture: FuzzFixture, refusedWeight: number) => {
  const t = fixture.tokens;
  return weighted<Tagged<CredentialClass>>(
    [40, tagged('full', `Bearer ${t.full}`)],
    [2, tagged('full', `bearer ${t.full}`, `BEARER ${t.full}`)],
    [3, tagged('scoped', `Bearer ${t.scoped}`)],
    ...(t.jwts.length === 0
      ? []
      : ([[5, fc.constantFrom(...t.jwts).map((j) => ({ value: `Bearer ${j.token}`, tag: j.credential }))]] as [
          number,
          fc.Arbitrary<Tagged<CredentialClass>>,
        ][])),
    [1, tagged('ghost', `Bearer ${t.ghost}`)],
    [Math.ceil(refusedWeight / 2), tagged('none', undefined, '')],
    [
      refusedWeight,
      fc.oneof(
        tagged(
          'refused' as const,
          `Bearer ${t.expired}`,
          `Bearer ${t.revoked}`,
          `Bearer ${t.full}x`,
          `Bearer ${t.full.slice(0, -1)}`,
          `Token ${t.full}`,
          `Bearer ${t.full} extra`,
          `Bearer "${t.full}"`,
          `Basic ${Buffer.from('ada:secret').toString('base64')}`,
          'Bearer',
          'Bearer ',
          'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
          'Bearer doers_pat_',
        ),
        fc.base64String({ minLength: 4, maxLength: 60 }).map((s) => ({ value: `Bearer doers_pat_${s}`, tag: 'refused' as const })),
        jwtShaped.map((jwt) => ({ value: `Bearer ${jwt}`, tag: 'refused' as const })),
        fc.string({ minLength: 1, maxLength: 40 }).map((s) => ({ value: s, tag: 'refused' as const })),
      ),
    ],
  );
};

/** Read by nobody: the server answers JSON whatever the client says it sends or takes. */
const contentTypeHeader = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '',
  undefined,
  'application/json; charset=latin1',
);
const acceptHeader = fc.constantFrom('application/json, text/event-stream', 'text/event-stream', '*/*', undefined, 'application/json');

/** Headers nobody should read: a session id must not be echoed, a forwarded host must not leak into metadata. */
const junkHeaders = weighted<Record<string, string>>(
  [10, fc.constant({})],
  [1, fc.record({ 'mcp-session-id': fc.string({ maxLength: 20 }) })],
  [1, fc.constant({ 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', forwarded: 'host=evil.example' })],
  [1, fc.dictionary(fc.stringMatching(/^x-[a-z-]{1,10}$/), fc.string({ maxLength: 20 }), { maxKeys: 3 })],
);

interface CommonHeaders {
  readonly host: Tagged<boolean>;
  readonly origin: Tagged<boolean | undefined>;
  readonly authorization: Tagged<CredentialClass>;
  readonly contentType: string | undefined;
  readonly accept: string | undefined;
  readonly junk: Record<string, string>;
}

/** Mostly a well-behaved client, so most cases reach the dispatcher; `hostile` raises the odds of a refusal. */
const commonHeaders = (fixture: FuzzFixture, hostile: boolean): fc.Arbitrary<CommonHeaders> =>
  fc.record({
    host: hostHeader(fixture.port, hostile ? 10 : 1),
    origin: originHeader(hostile ? 8 : 1),
    authorization: authorizationHeader(fixture, hostile ? 10 : 2),
    contentType: contentTypeHeader,
    accept: acceptHeader,
    junk: junkHeaders,
  });

const headerRecord = (common: CommonHeaders, mcp: Record<string, string | undefined>): Record<string, string> => {
  const all: Record<string, string | undefined> = {
    ...common.junk,
    host: common.host.value,
    origin: common.origin.value,
    authorization: common.authorization.value,
    'content-type': common.contentType,
    accept: common.accept,
    ...mcp,
  };
  return Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
};

// ---- JSON-RPC messages --------------------------------------------------------------------------

const NOTIFICATIONS = [
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
];
const REMOVED_OR_UNKNOWN = [
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
  'tasks/get',
];
/** Names every plain object inherits: a method table must not answer them. */
const PROTOTYPE_NAMES = [
  'constructor',
  'toString',
  '__proto__',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
];
const NEAR_MISSES = [
  'tools/CALL',
  'tools/call ',
  '/tools/call',
  'tools//call',
  'Tools/List',
  'notifications',
  'notifications/',
  'server/discover/',
];

const idArb = weighted<unknown>(
  [10, fc.integer({ min: 0, max: 1_000_000 })],
  [4, fc.string({ maxLength: 20 })],
  [
    1,
    fc.constantFrom(
      -1,
      0,
      1.5,
      -0,
      2 ** 53 + 2,
      1e300,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
      '',
      ' ',
      '\ud800',
      '😀',
      bulky('long-string', 100_000),
    ),
  ],
  [1, fc.string({ unit: 'binary', maxLength: 50 })],
);

/** Ids that are not JSON-RPC ids: the message is invalid, and no error may echo them. */
const badIdArb = fc.constantFrom<unknown>(null, true, false, {}, [], [1], { a: 1 }, bulky('deep-array', 10_000));

interface Method {
  readonly method: string;
  readonly params: Record<string, unknown>;
  /** The params member the Mcp-Name header carries (SEP-2243), if any. */
  readonly nameParam?: 'name' | 'uri';
}

/** Dates as people type them, the ambiguous and the unreadable among them, and ISO: what every date argument takes. */
const DATE_WORDS = [
  'today',
  'tomorrow',
  'friday',
  'next friday 3pm',
  'in 2 weeks',
  'end of month',
  'dec 24',
  '24/12',
  '5/6',
  'yesterday 25:00',
  'someday',
  'friday and monday',
  '2026-02-30',
  '2026-12-24',
  '2026-12-24T10:00',
];

/** Rules as people type them and as RRULEs, with the ones refused (never, too often, parts a task cannot have). */
const REPEAT_RULES = [
  'every monday',
  'every weekday at 9:00',
  'every 2 weeks on friday',
  'monthly on the 1st',
  'every last friday',
  'yearly on 5 march',
  'every 3 days after completion',
  'FREQ=WEEKLY;BYDAY=MO',
  'every day for 2 times',
  'yearly on 30 feb',
  'every hour',
  'FREQ=MINUTELY',
  'FREQ=WEEKLY;BYWEEKNO=2',
  'FREQ=WEEKLY;BYDAY=XX',
  'every blue moon',
];

const knownValues = (fixture: FuzzFixture): KnownValues => {
  const { ids } = fixture;
  const dates = () => DATE_WORDS;
  return {
    dueDate: dates,
    dueBefore: dates,
    dueAfter: dates,
    date: dates,
    since: dates,
    until: dates,
    repeat: () => REPEAT_RULES,
    taskId: () => ids.tasks,
    projectId: () => ids.projects,
    project: () => [...ids.projects, 'none'],
    userId: () => ids.members,
    assignee: () => ['me', 'none', 'anyone', ...ids.members],
    commentId: () => ids.comments.map((c) => c.commentId),
    cursor: () => ids.cursors,
  };
};

const toolCall = (fixture: FuzzFixture): fc.Arbitrary<Record<string, unknown>> => {
  const known = knownValues(fixture);
  const perTool = fixture.tools.map((tool) =>
    toolArguments(tool.inputSchema, known).map((args) => ({ name: tool.name, ...(args === undefined ? {} : { arguments: args }) })),
  );
  const unknownTool = fc
    .tuple(
      fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('constructor', '__proto__', 'ME_GET', 'me_get ', 'tools/call')),
      fc.jsonValue({ maxDepth: 2 }),
    )
    .map(([name, args]) => ({ name, arguments: args }));
  // A real comment pair now and then: comment tools otherwise mostly meet mismatched ids.
  const commentPair = fc.nat().map((i) => {
    const pair = fixture.ids.comments[i % Math.max(1, fixture.ids.comments.length)];
    return pair
      ? { name: i % 2 ? 'comment_delete' : 'comments_list', arguments: i % 2 ? { ...pair } : { taskId: pair.taskId } }
      : { name: 'me_get' };
  });
  return weighted<Record<string, unknown>>(
    [20, fc.oneof(...perTool)],
    [1, unknownTool],
    [1, commentPair],
    [1, fc.record({ name: fc.constantFrom<unknown>(7, null, '', ['me_get'], { a: 1 }) }, { requiredKeys: [] })],
  );
};

const promptGet = (fixture: FuzzFixture): fc.Arbitrary<Record<string, unknown>> => {
  const value = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom('2025-01-31', 'me', 'none', ...fixture.ids.projects.slice(0, 3), ...fixture.ids.tasks.slice(0, 3)),
  );
  const perPrompt = fixture.prompts.map((p) => {
    const model = Object.fromEntries(p.arguments.map((a) => [a.name, value]));
    const required = p.arguments.filter((a) => a.required).map((a) => a.name);
    const valid = fc.record(model, { requiredKeys: required });
    const args = weighted<unknown>(
      [4, valid],
      [
        1,
        fc.tuple(valid, fc.string({ minLength: 1, maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })).map(([a, k, v]) => ({ ...a, [k]: v })),
      ],
      [
        1,
        fc
          .tuple(valid, fc.constantFrom<unknown>(1, null, true, [], {}, bulky('deep-array', 10_000)))
          .map(([a, v]) => Object.fromEntries(Object.keys(a).map((k) => [k, v]))),
      ],
      [1, fc.constantFrom<unknown>(undefined, null, [], 'x', 3, bulky('deep-object', 10_000))],
    );
    return args.map((a) => ({ name: p.name, ...(a === undefined ? {} : { arguments: a }) }));
  });
  return weighted<Record<string, unknown>>(
    [8, fc.oneof(...perPrompt)],
    [1, fc.record({ name: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom<unknown>('constructor', 5, null)) })],
  );
};

const resourceRead = (fixture: FuzzFixture): fc.Arbitrary<Record<string, unknown>> => {
  const segment = weighted<string>(
    [
      4,
      fc
        .nat()
        .map((i) => [...fixture.ids.tasks, ...fixture.ids.projects][i % (fixture.ids.tasks.length + fixture.ids.projects.length)] ?? 'x'),
    ],
    [2, fc.string({ minLength: 1, maxLength: 30 })],
    [1, fc.constantFrom('%41', '%E0%A4%A', '%', '%00', '%2F', 'a%20b', '..', '😀', '\ud800')],
    // Ids far longer than any tool accepts: a key DynamoDB itself would refuse.
    [1, fc.constantFrom(1_025, 2_049, 5_000, 60_000).map((n) => 'x'.repeat(n))],
  );
  const templated = fc
    .tuple(fc.constantFrom(...fixture.resourceTemplates), segment)
    .map(([template, id]) => template.replace(/\{[^}]+\}/, id));
  const other = fc.oneof(
    fc.constantFrom<unknown>(
      '',
      'doers://tasks/',
      'doers://tasks/a/b',
      'doers://unknown/x',
      'doers://projects/?x',
      'file:///etc/passwd',
      'constructor',
      7,
      null,
      ['doers://tasks/x'],
    ),
    fc.webUrl(),
    fc.string({ maxLength: 40 }),
  );
  return weighted<Record<string, unknown>>([6, templated.map((uri) => ({ uri }))], [1, other.map((uri) => ({ uri }))]);
};

const initializeParams = fc.record(
  {
    protocolVersion: fc.constantFrom<unknown>(
      ...SUPPORTED_VERSIONS,
      '2024-11-05',
      '2030-01-01',
      'garbage',
      5,
      null,
      bulky('deep-array', 10_000),
    ),
    capabilities: fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 2 })),
    clientInfo: fc.oneof(
      fc.record({ name: fc.string({ maxLength: 10 }), version: fc.string({ maxLength: 5 }) }),
      fc.jsonValue({ maxDepth: 1 }),
    ),
  },
  { requiredKeys: [] },
);

const anyParams: fc.Arbitrary<Record<string, unknown>> = weighted(
  [3, fc.constant({})],
  [1, fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })],
);

const methods = (fixture: FuzzFixture): fc.Arbitrary<Method> =>
  weighted<Method>(
    [40, toolCall(fixture).map((params) => ({ method: 'tools/call', params, nameParam: 'name' as const }))],
    [10, resourceRead(fixture).map((params) => ({ method: 'resources/read', params, nameParam: 'uri' as const }))],
    [8, promptGet(fixture).map((params) => ({ method: 'prompts/get', params, nameParam: 'name' as const }))],
    [
      9,
      fc
        .constantFrom('tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'ping', 'server/discover')
        .chain((method) => anyParams.map((params) => ({ method, params }))),
    ],
    [3, initializeParams.map((params) => ({ method: 'initialize', params }))],
    [4, fc.constantFrom(...NOTIFICATIONS).chain((method) => anyParams.map((params) => ({ method, params })))],
    [3, fc.constantFrom(...REMOVED_OR_UNKNOWN, ...NEAR_MISSES).chain((method) => anyParams.map((params) => ({ method, params })))],
    [3, fc.constantFrom(...PROTOTYPE_NAMES).chain((method) => anyParams.map((params) => ({ method, params })))],
    [2, fc.string({ minLength: 1, maxLength: 20 }).chain((method) => anyParams.map((params) => ({ method, params })))],
  );

const versionHeader = weighted<string | undefined>(
  [8, fc.constant(MODERN)],
  [5, fc.constantFrom('2025-11-25', '2025-06-18', '2025-03-26')],
  [3, fc.constant(undefined)],
  [
    1,
    fc.constantFrom(
      '2024-11-05',
      '2099-01-01',
      'garbage',
      '',
      '2025-11-25,2025-11-25',
      ' 2026-07-28',
      '2026-07-28 ',
      '2026-7-28',
      'latest',
      '\u0000',
    ),
  ],
);

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const META_INFO = 'io.modelcontextprotocol/clientInfo';

/** `_meta` as 2026-07-28 wants it, or broken in one of the ways the transport page names. */
const metaFor = (version: string | undefined, modern: boolean): fc.Arbitrary<Record<string, unknown> | undefined> => {
  const proper = { [META_VERSION]: version, [META_CAPS]: {}, [META_INFO]: { name: 'fuzz', version: '1.0.0' } };
  const broken = fc.oneof(
    fc.constant({ [META_CAPS]: {} }),
    fc.constant({ [META_VERSION]: version }),
    fc.constantFrom<unknown>(7, null, {}, 'x', [MODERN]).map((v) => ({ ...proper, [META_VERSION]: v })),
    fc.constantFrom<unknown>(null, [], 'all', 1, bulky('deep-object', 10_000)).map((v) => ({ ...proper, [META_CAPS]: v })),
    fc.constantFrom(...SUPPORTED_VERSIONS, '2024-11-05', 'garbage').map((v) => ({ ...proper, [META_VERSION]: v })),
    fc
      .constantFrom<unknown>(null, 'x', bulky('deep-array', 10_000), { name: bulky('wide-object', 5_000) })
      .map((v) => ({ ...proper, [META_INFO]: v })),
    fc.constant({ ...proper, [META_CAPS]: { elicitation: {}, sampling: {}, roots: {} } }),
  );
  return modern
    ? weighted<Record<string, unknown> | undefined>([20, fc.constant(proper)], [2, broken], [1, fc.constant(undefined)])
    : weighted<Record<string, unknown> | undefined>([12, fc.constant(undefined)], [1, fc.constant(proper)], [1, broken]);
};

const encodedName = (value: string) => `=?base64?${Buffer.from(value).toString('base64')}?=`;

/** `Mcp-Method` / `Mcp-Name`: required and matching on 2026-07-28, optional but checked before. */
const mcpHeaders = (m: Method, params: Record<string, unknown>, modern: boolean): fc.Arbitrary<Record<string, string | undefined>> => {
  const nameValue = m.nameParam ? params[m.nameParam] : undefined;
  const exactName = typeof nameValue === 'string' ? nameValue : undefined;
  const methodHeader = weighted<string | undefined>(
    [modern ? 30 : 3, fc.constant(m.method)],
    [modern ? 1 : 8, fc.constant(undefined)],
    [1, fc.constantFrom('tools/call', 'tools/list', m.method.toUpperCase(), ` ${m.method}`, '')],
  );
  const nameHeader = weighted<string | undefined>(
    [m.nameParam ? (modern ? 24 : 2) : 0, fc.constant(exactName)],
    [m.nameParam ? 6 : 0, fc.constant(exactName === undefined ? undefined : encodedName(exactName))],
    [modern ? 1 : 8, fc.constant(undefined)],
    [1, fc.constantFrom('me_get', 'doers://tasks/x', '=?base64?!!!?=', '=?base64?bWVfZ2V0?=', '=?BASE64?bWVfZ2V0?=', '')],
  );
  return fc.record({ 'mcp-method': methodHeader, 'mcp-name': nameHeader });
};

type Message = Record<string, unknown>;

/** One change that makes a request invalid, or a response, or something JSON-RPC has no word for. */
const mutateMessage = (msg: Message): fc.Arbitrary<Message> =>
  fc.oneof(
    fc.constantFrom('jsonrpc', 'method', 'id', 'params').map((k) => {
      const { [k]: _dropped, ...rest } = msg;
      return rest;
    }),
    fc.constantFrom<unknown>('1.0', 2, 2.0, '2.0 ', null, '2', '').map((v) => ({ ...msg, jsonrpc: v })),
    fc.constantFrom<unknown>(7, null, '', [], {}, true).map((v) => ({ ...msg, method: v })),
    badIdArb.map((v) => ({ ...msg, id: v })),
    fc
      .constantFrom<unknown>([], null, 'x', 1, true, bulky('deep-array', 10_000), bulky('wide-object', 5_000))
      .map((v) => ({ ...msg, params: v })),
    fc.constant(withProto(msg)),
    fc.tuple(fc.constantFrom('result', 'error', 'extra'), fc.jsonValue({ maxDepth: 2 })).map(([k, v]) => ({ ...msg, [k]: v })),
    fc.constantFrom<Message>(
      { jsonrpc: '2.0', id: msg.id ?? 1, result: {} },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'x' } },
      { jsonrpc: '2.0', id: msg.id ?? 1, error: 'not an error object' },
    ),
  );

/** `params.__proto__` as JSON.parse makes it: an own member, which must not become a prototype. */
const withProto = (msg: Message): Message => {
  const params = { ...((msg.params as Message | undefined) ?? {}) };
  Object.defineProperty(params, '__proto__', {
    value: { name: 'me_get', uri: 'doers://tasks/x', _meta: {} },
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return { ...msg, params };
};

interface RpcDraft {
  readonly version: string | undefined;
  readonly message: Message;
  readonly mcp: Record<string, string | undefined>;
}

/** A request as a client of some revision would send it, then (sometimes) broken. */
const rpcDraft = (fixture: FuzzFixture, versionArb: fc.Arbitrary<string | undefined> = versionHeader): fc.Arbitrary<RpcDraft> =>
  fc.tuple(versionArb, methods(fixture)).chain(([version, m]) => {
    const modern = version === MODERN;
    const isNotification = m.method.startsWith('notifications/');
    const id = isNotification
      ? weighted<unknown>([8, fc.constant(undefined)], [1, idArb])
      : weighted<unknown>([12, idArb], [1, fc.constant(undefined)]);
    const { params } = m;
    return fc.tuple(metaFor(version, modern), id).chain(([meta, idValue]) => {
      const fullParams = meta === undefined ? params : { ...params, _meta: meta };
      const message: Message = { jsonrpc: '2.0', ...(idValue === undefined ? {} : { id: idValue }), method: m.method, params: fullParams };
      return fc
        .tuple(
          mcpHeaders(m, params, modern),
          weighted<Message>(
            [12, fc.constant(message)],
            [1, fc.constant({ jsonrpc: '2.0', ...(idValue === undefined ? {} : { id: idValue }), method: m.method })],
            [2, mutateMessage(message)],
          ),
        )
        .map(([mcp, msg]) => ({ version, message: msg, mcp }));
    });
  });

/** JSON text of a message, now and then not quite strict JSON (or strict JSON of an odd shape). */
const serialize = (value: unknown): fc.Arbitrary<string> => {
  const json = writeJson(value);
  return weighted<string>(
    [20, fc.constant(json)],
    [1, fc.constant(`\n ${json}\t\r\n`)],
    [1, fc.constant(writeJsonPretty(value))],
    [1, fc.constantFrom(`\ufeff${json}`, `${json} x`, `${json}${json}`, `${json},`, json.slice(0, -1), `${json}\u0000`)],
    // A duplicated member: JSON.parse keeps the last; both readers of the body must agree on it.
    [1, fc.constant(json.startsWith('{') && json.length > 2 ? `{"id":"dup-first",${json.slice(1)}` : json)],
  );
};

const writeJsonPretty = (value: unknown): string => {
  const compact = writeJson(value);
  try {
    return JSON.stringify(JSON.parse(compact), null, 2);
  } catch {
    return compact; // too deep to pretty-print: the compact form is just as good a case
  }
};

// ---- cases --------------------------------------------------------------------------------------

const makeCase = (
  family: CaseFamily,
  verb: string,
  path: string,
  common: CommonHeaders,
  mcp: Record<string, string | undefined>,
  body: string | undefined,
  isBase64Encoded = false,
): EndpointCase => {
  const c: EndpointCase = {
    family,
    verb,
    path,
    headers: headerRecord(common, mcp),
    body,
    isBase64Encoded,
    credential: common.authorization.value === undefined || common.authorization.value === '' ? 'none' : common.authorization.tag,
    hostAllowed: common.host.tag,
    originAllowed: common.origin.tag,
  };
  Object.defineProperty(c, fc.toStringMethod, { value: () => describeCase(c), enumerable: false });
  return c;
};

/** A failing case as a reader wants it: headers in full, a long body cut. */
export const describeCase = (c: EndpointCase): string => {
  const body =
    c.body === undefined
      ? '(none)'
      : c.body.length > 600
        ? `${JSON.stringify(c.body.slice(0, 600))}… (${c.body.length} chars)`
        : JSON.stringify(c.body);
  return `${c.family}: ${c.verb} ${JSON.stringify(c.path)} headers=${JSON.stringify(c.headers)} base64=${c.isBase64Encoded} body=${body} [credential=${c.credential} host=${c.hostAllowed} origin=${String(c.originAllowed)}]`;
};

const rpcCase = (fixture: FuzzFixture): fc.Arbitrary<EndpointCase> =>
  fc
    .tuple(commonHeaders(fixture, false), rpcDraft(fixture), fc.constantFrom('/mcp', '/mcp', '/mcp', '/mcp/'))
    .chain(([common, draft, path]) =>
      serialize(draft.message).map((body) =>
        makeCase('rpc', 'POST', path, common, { 'mcp-protocol-version': draft.version, ...draft.mcp }, body),
      ),
    );

/** Batches: 2025-03-26 only (also without a header); mixed, empty, nested, all notifications. */
const batchCase = (fixture: FuzzFixture): fc.Arbitrary<EndpointCase> => {
  const element = weighted<unknown>(
    [6, rpcDraft(fixture, fc.constant(undefined)).map((d) => d.message)],
    [1, fc.jsonValue({ maxDepth: 2 })],
    [
      1,
      fc.array(
        rpcDraft(fixture, fc.constant(undefined)).map((d) => d.message),
        { maxLength: 2 },
      ),
    ],
    [1, fc.constantFrom<unknown>({ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 1, result: {} }, [])],
  );
  return fc
    .tuple(
      commonHeaders(fixture, false),
      weighted<string | undefined>(
        [6, fc.constant(undefined)],
        [4, fc.constant('2025-03-26')],
        [2, fc.constantFrom('2025-06-18', '2025-11-25', MODERN)],
        [1, fc.constantFrom('garbage', '')],
      ),
      weighted<unknown[]>(
        [1, fc.constant([])],
        [10, fc.array(element, { minLength: 1, maxLength: 6 })],
        [1, fc.array(fc.constant({ jsonrpc: '2.0', method: 'notifications/initialized' }), { minLength: 1, maxLength: 3 })],
      ),
      fc.record({ 'mcp-method': fc.constantFrom(undefined, undefined, undefined, 'ping') }),
    )
    .chain(([common, version, batch, mcp]) =>
      serialize(batch).map((body) => makeCase('batch', 'POST', '/mcp', common, { 'mcp-protocol-version': version, ...mcp }, body)),
    );
};

const utf8 = (s: string) => Buffer.from(s, 'utf8');
const MIB = 1024 * 1024;

/** A ping padded to exactly `bytes` bytes of UTF-8, with the padding made of `unit`. */
const paddedPing = (bytes: number, unit: string): string => {
  const head = '{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"';
  const tail = '"}}';
  const room = bytes - Buffer.byteLength(head + tail);
  const unitBytes = Buffer.byteLength(unit);
  return head + unit.repeat(Math.floor(room / unitBytes)) + 'x'.repeat(room % unitBytes) + tail;
};

/** Bodies that are not JSON, not UTF-8, deep, huge, or right at the size limit. */
type RawBody = { readonly body: string | undefined; readonly base64: boolean };

const rawBody: fc.Arbitrary<RawBody> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue().map((v) => ({ body: writeJson(v), base64: false })) },
  {
    weight: 4,
    arbitrary: fc
      .string({ unit: fc.constantFrom('{', '}', '[', ']', '"', ':', ',', '1', 'a', ' ', '\\', 'n', 'u', 'e'), maxLength: 40 })
      .map((s) => ({ body: s, base64: false })),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((s) => ({ body: s, base64: false })) },
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 80 }).map((b) => ({ body: Buffer.from(b).toString('base64'), base64: true })) },
  {
    weight: 3,
    // Invalid UTF-8 inside an otherwise valid request (overlong, lone continuation, encoded surrogate, truncated).
    arbitrary: fc
      .tuple(
        fc.constantFrom('method', 'id', 'params'),
        fc.constantFrom([0xff, 0xfe], [0xc0, 0x80], [0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]),
      )
      .map(([where, bytes]) => {
        const bad = Buffer.from(bytes);
        const parts =
          where === 'method'
            ? [utf8('{"jsonrpc":"2.0","id":1,"method":"ping'), bad, utf8('"}')]
            : where === 'id'
              ? [utf8('{"jsonrpc":"2.0","id":"'), bad, utf8('","method":"ping"}')]
              : [utf8('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"me_get","arguments":{"x":"'), bad, utf8('"}}}')];
        return { body: Buffer.concat(parts).toString('base64'), base64: true };
      }),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      // Lone surrogates as raw characters, and escaped.
      <RawBody>{ body: '{"jsonrpc":"2.0","id":"\ud800","method":"ping"}', base64: false },
      { body: '{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', base64: false },
      { body: '{"jsonrpc":"2.0","id":1,"method":"\\udfff"}', base64: false },
      {
        body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tasks_search","arguments":{"text":"\\ud800"}}}',
        base64: false,
      },
      { body: Buffer.from('{"jsonrpc":"2.0","id":"b64","method":"ping"}').toString('base64'), base64: true },
      { body: '!!!not base64', base64: true },
      { body: undefined, base64: false },
      { body: '', base64: false },
      { body: '   \n\t', base64: false },
      { body: '{"jsonrpc":"2.0","id":1e400,"method":"ping"}', base64: false },
      { body: '{"jsonrpc":"2.0","id":-1e-400,"method":"ping"}', base64: false },
      { body: '{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}', base64: false },
      { body: '{"__proto__":{"jsonrpc":"2.0","method":"ping"},"id":1}', base64: false },
    ),
  },
  { weight: 2, arbitrary: bulkyValue.map((v) => ({ body: writeJson(v), base64: false })) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom('params', 'id', 'arguments', 'meta'), bulkyValue).map(([where, v]) => {
      const msg =
        where === 'params'
          ? { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { deep: v } }
          : where === 'id'
            ? { jsonrpc: '2.0', id: v, method: 'ping' }
            : where === 'arguments'
              ? { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'task_create', arguments: { title: 't', labels: v } } }
              : { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { [META_VERSION]: MODERN, [META_CAPS]: v } } };
      return { body: writeJson(msg), base64: false };
    }),
  },
  {
    // Size limit (1 MiB, in bytes): exactly at it, one over, over in bytes but not in characters, base64.
    weight: 1,
    arbitrary: fc.constantFrom(
      { body: paddedPing(MIB, 'x'), base64: false },
      { body: paddedPing(MIB + 1, 'x'), base64: false },
      { body: paddedPing(MIB - 2, 'é'), base64: false },
      { body: paddedPing(MIB + 1, '😀'), base64: false },
      { body: Buffer.from(paddedPing(MIB, 'x')).toString('base64'), base64: true },
      { body: Buffer.from(paddedPing(MIB + 3, 'x')).toString('base64'), base64: true },
      {
        body: `[${Array.from({ length: 20_000 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"ping"}`).join(',')}]`.slice(0, MIB + 10),
        base64: false,
      },
    ),
  },
);

const rawCase = (fixture: FuzzFixture): fc.Arbitrary<EndpointCase> =>
  fc
    .tuple(commonHeaders(fixture, false), versionHeader, rawBody)
    .map(([common, version, { body, base64 }]) =>
      makeCase('raw', 'POST', '/mcp', common, { 'mcp-protocol-version': version }, body, base64),
    );

const PATHS = [
  '/mcp',
  '/mcp/',
  ...METADATA_PATHS,
  '/',
  '',
  '/MCP',
  '/mcp//',
  '/mcp/x',
  '/mcp?x=1',
  '/.well-known/oauth-authorization-server',
  '/oauth/token',
  '/%2e%2e/mcp',
  '/.well-known/oauth-protected-resource/',
  '/.well-known/oauth-protected-resource/mcp/',
];
const VERBS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'CONNECT', 'get', 'PROPFIND', ''];

/** Transport shape: every verb on every route, with hostile Host, Origin and credentials more often. */
const httpCase = (fixture: FuzzFixture): fc.Arbitrary<EndpointCase> =>
  fc
    .tuple(
      commonHeaders(fixture, true),
      fc.constantFrom(...VERBS),
      fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...PATHS) }, { weight: 1, arbitrary: fc.webPath() }),
      fc.constantFrom<string | undefined>(
        undefined,
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        '{"jsonrpc":"2.0","id":"s","method":"tools/list"}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"me_get"}}',
        'not json',
      ),
      fc.constantFrom(undefined, '2025-11-25', '2025-03-26'),
    )
    .map(([common, verb, path, body, version]) => makeCase('http', verb, path, common, { 'mcp-protocol-version': version }, body));

/** Everything, weighted toward requests that reach the dispatcher. */
export const endpointCase = (fixture: FuzzFixture): fc.Arbitrary<EndpointCase> =>
  weighted<EndpointCase>([74, rpcCase(fixture)], [8, batchCase(fixture)], [10, rawCase(fixture)], [8, httpCase(fixture)]);

/**
 * For the limits-on target: authorized tool calls and resource reads of every era, in small
 * concurrent groups, so both refusals (rate, concurrency) come up.
 */
export const limitedCases = (fixture: FuzzFixture): fc.Arbitrary<EndpointCase[]> => {
  const common = fc.record({
    host: fc.constant({ value: `127.0.0.1:${fixture.port}`, tag: true }),
    origin: fc.constant({ value: undefined, tag: undefined }),
    authorization: fc.constantFrom<Tagged<CredentialClass>>(
      { value: `Bearer ${fixture.tokens.full}`, tag: 'full' },
      { value: `Bearer ${fixture.tokens.scoped}`, tag: 'scoped' },
    ),
    contentType: fc.constant('application/json'),
    accept: fc.constant(undefined),
    junk: fc.constant({}),
  });
  const draft = rpcDraft(fixture).filter((d) => d.message.method === 'tools/call' || d.message.method === 'resources/read');
  const one = fc
    .tuple(common, draft)
    .map(([c, d]) => makeCase('rpc', 'POST', '/mcp', c, { 'mcp-protocol-version': d.version, ...d.mcp }, writeJson(d.message)));
  return fc.array(one, { minLength: 1, maxLength: 4 });
};
