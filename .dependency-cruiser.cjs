/**
 * The layering of docs/architecture.md ("Rooms and their direction"), checked in npm test. Each
 * room sits on a level and may import only rooms of lower levels (and itself); a room of the same
 * or a higher level is an upward import. Cycles between modules are refused outright.
 * Keep this table and the one in docs/architecture.md the same.
 */
const LEVELS = [
  ['ground', ['lambda/errors.ts', 'lambda/vocabulary.ts'], 'views', ['lambda/views/']],
  ['platform', ['lambda/platform/']],
  ['auth', ['lambda/auth/'], 'limits', ['lambda/limits/'], 'observability', ['lambda/observability/'], 'pages', ['lambda/pages/']],
  ['mcp', ['lambda/mcp/']],
  ['workspace', ['lambda/workspace/'], 'http', ['lambda/http/']],
  ['sign-in', ['lambda/sign-in/']],
  ['oauth', ['lambda/oauth/']],
  ['account', ['lambda/account/']],
  ['functions', ['lambda/app.ts', 'lambda/handler.ts', 'lambda/oauth-app.ts', 'lambda/oauth-handler.ts']],
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

module.exports = {
  forbidden: [
    ...upward,
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
