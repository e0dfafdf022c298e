/**
 * The layering of docs/architecture.md ("Rooms and their direction"), checked in npm test. Each
 * room sits on a level and may import only rooms of lower levels (and itself); a room of the same
 * or a higher level is an upward import. Cycles between modules are refused outright.
 * Keep this table and the one in docs/architecture.md the same.
 */
const LEVELS = [
  ['ground', ['lambda/errors.ts', 'lambda/vocabulary.ts'], 'views', ['lambda/views/']],
  ['platform', ['lambda/platform/'], 'files', ['lambda/files/'], 'delivery', ['lambda/delivery/']],
  ['auth', ['lambda/auth/'], 'limits', ['lambda/limits/'], 'observability', ['lambda/observability/'], 'pages', ['lambda/pages/']],
  ['mcp', ['lambda/mcp/']],
  ['workspace', ['lambda/workspace/'], 'http', ['lambda/http/']],
  ['sign-in', ['lambda/sign-in/']],
  ['oauth', ['lambda/oauth/']],
  ['account', ['lambda/account/']],
  [
    'functions',
    [
      'lambda/app.ts',
      'lambda/handler.ts',
      'lambda/oauth-app.ts',
      'lambda/oauth-handler.ts',
      'lambda/worker-app.ts',
      'lambda/worker-handler.ts',
    ],
  ],
  ['local', ['lambda/local/']],
  ['cli', ['cli/']],
];

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pattern = (paths) => `^(${paths.map((p) => escapeRegExp(p) + (p.endsWith('/') ? '' : '$')).join('|')})`;

/** [{ name, level, paths }] from the table above. */
const rooms = LEVELS.flatMap((row, level) => {
  const out = [];
  for (let i = 0; i < row.length; i += 2) out.push({ name: row[i], level, paths: row[i + 1] });
  return out;
});

const upward = rooms.flatMap((room) => {
  const notBelow = rooms.filter((other) => other !== room && other.level >= room.level).flatMap((other) => other.paths);
  if (notBelow.length === 0) return [];
  return [
    {
      name: `upward-from-${room.name}`,
      comment: `${room.name} may import only rooms below it (docs/architecture.md)`,
      severity: 'error',
      from: { path: pattern(room.paths) },
      to: { path: pattern(notBelow) },
    },
  ];
});

/**
 * The sub-rooms of lambda/workspace/ and their inner direction (docs/architecture.md, "The
 * workspace's sub-rooms"): a sub-room imports only sub-rooms below it. The writers (tasks, projects,
 * comments, attachments) share a level and import none of each other; `surface/` is the only one that imports
 * `mcp/`, and nothing outside the workspace but the composition roots imports `surface/`.
 */
const WORKSPACE_LEVELS = [
  ['model'],
  ['store'],
  ['activity'],
  ['membership'],
  ['tasks', 'projects', 'comments', 'attachments', 'saved-views', 'inbox', 'webhooks'],
  ['undo', 'admin', 'notify', 'transfer'],
  ['surface'],
];
const subRoom = (name) => `lambda/workspace/${name}/`;
const inner = WORKSPACE_LEVELS.flatMap((row, level) =>
  row.flatMap((name) => {
    const notBelow = WORKSPACE_LEVELS.flatMap((other, l) => (l >= level ? other : [])).filter((o) => o !== name);
    if (notBelow.length === 0) return [];
    return {
      name: `workspace-upward-from-${name}`,
      comment: `workspace/${name} may import only the workspace's sub-rooms below it (docs/architecture.md)`,
      severity: 'error',
      from: { path: `^${escapeRegExp(subRoom(name))}` },
      to: { path: pattern(notBelow.map(subRoom)) },
    };
  }),
);

module.exports = {
  forbidden: [
    ...upward,
    ...inner,
    {
      name: 'workspace-loose-files',
      comment: 'Every module of the workspace lives in one of its sub-rooms',
      severity: 'error',
      from: { path: '^lambda/workspace/[^/]+$' },
      to: {},
    },
    {
      name: 'only-the-surface-speaks-mcp',
      comment: "The domain (every sub-room but surface/) knows nothing of MCP: tools, schemas and results are the surface's",
      severity: 'error',
      from: { path: '^lambda/workspace/(?!surface/)' },
      to: { path: '^lambda/mcp/' },
    },
    {
      name: 'doors-use-the-domain',
      comment: 'The account page, sign-in, the authorization server, the local server and the CLI use the domain, never the MCP surface',
      severity: 'error',
      from: { path: '^(lambda/(account|sign-in|oauth|local)/|cli/)' },
      to: { path: '^lambda/workspace/surface/', pathNot: '^lambda/workspace/surface/app-views\\.ts$' },
    },
    {
      name: 'writers-only-write',
      comment:
        "Only the writers import the item-writing modules (the transaction module, the batch writes, the stores' write side), " +
        'besides the stores themselves, the operator-only room, and the rooms that keep records of their own (tokens and grants, ' +
        'the limits, the authorization server). Every other door changes things by calling a writer (docs/architecture.md)',
      severity: 'error',
      from: {
        pathNot:
          '^lambda/(platform|auth|limits|oauth|workspace/(store|tasks|projects|comments|attachments|membership|saved-views|inbox|webhooks|admin))/',
      },
      to: { path: '^lambda/(platform/(transact|batch-writes)|workspace/store/writes)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'admin-only-for-the-cli',
      comment: 'What only the operator runs (numbering, key change, migrations, import) is not reached by the functions',
      severity: 'error',
      from: { path: '^lambda/(?!workspace/admin/)' },
      to: { path: '^lambda/workspace/admin/' },
    },
    {
      name: 'cli-not-local-server',
      comment: "The operator's tool finds the local server's data (local-data.ts) without loading the local server",
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^lambda/local/', pathNot: '^lambda/local/local-data\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'No module may depend on itself through others',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'functions-not-infrastructure',
      comment: 'Nothing that runs in a function imports the CDK app, nor a test',
      severity: 'error',
      from: { path: '^lambda/' },
      to: { path: '^(lib|bin|test)/' },
    },
    {
      name: 'views-stand-alone',
      comment: 'The MCP Apps views run in a browser: they import nothing of the server',
      severity: 'error',
      from: { path: '^lambda/views/' },
      to: { path: '^(lambda/(?!views/)|cli/|lib/)' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|cdk\\.out|lambda/views/dist)/' },
  },
};
