// Checked in CI (npm run depcheck): layers point one way and nothing imports in a circle.
const core = '^src/(domain|errors|config|db|objects|jobs|credits|accounts|watchlist|crawl|exports|social|sources|ratelimit|pagination|connectors)/';
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle (type-only imports count: they are how a shared Deps type starts one).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-not-on-http',
      severity: 'error',
      comment: 'The domain, jobs, credits and the rest never import the web layer, the routes or the wiring.',
      from: { path: core },
      to: { path: '^src/(http|routes|wiring|cli)/' },
    },
    {
      name: 'core-not-on-fastify',
      severity: 'error',
      comment: 'Only http/ and routes/ know the web framework.',
      from: { path: core },
      to: { path: 'node_modules/(fastify|@fastify)/' },
    },
    {
      name: 'routes-not-on-routes-of-others',
      severity: 'error',
      comment: 'http/ is framework glue: it never reaches up into routes/ except app.ts, which registers them.',
      from: { path: '^src/http/', pathNot: '^src/http/app\\.ts$' },
      to: { path: '^src/routes/' },
    },
    {
      name: 'src-not-on-dev-deps',
      severity: 'error',
      comment: 'The image installs runtime dependencies only (npm ci --omit=dev, deploy/Dockerfile): what src/ runs must be one.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'src-not-on-undeclared',
      severity: 'error',
      comment: 'A package src/ imports is in package.json: one that is only some dependency\'s dependency can vanish or change with it.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown', 'unknown', 'undetermined'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
