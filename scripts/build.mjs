// Compiles src/ (and bench/, whose children measure the compiled program) to dist/, file by file,
// then bundles the command line the server runs, dist/src/cli/main.js, for `npm start`: the server
// runs plain JavaScript, without tsx's loader thread (about 30 MB) or its per-closure naming. Type
// checking stays with `npm run typecheck`; this only strips types. Then bundles the browser
// dashboard (web/dashboard: Preact, htm, uPlot) into dist/dashboard, the local files that the
// gateway serves at /dashboard.
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, buildSync } from 'esbuild';
import { buildIsCurrent, fingerprint, root, stampFile } from './build-stamp.mjs';

const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts')) files.push(p);
  }
};
walk(join(root, 'src'));
walk(join(root, 'bench'));

// `npm start` on a built tree starts at once: when no source changed since the last build (same
// paths, sizes and modification times, same build scripts and lockfile), the build is skipped.
const web = join(root, 'web', 'dashboard');
if (!process.argv.includes('--force') && buildIsCurrent()) process.exit(0);
const stamp = fingerprint();
rmSync(join(root, 'dist'), { recursive: true, force: true });
buildSync({ entryPoints: files, outdir: join(root, 'dist'), outbase: root, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
await bundleCommandLine(join(root, 'dist', 'src', 'cli'));
buildDashboard(join(root, 'dist', 'dashboard'));
writeFileSync(stampFile, stamp);

// The server's start-up was three quarters module loading: Node 20 resolves, compiles and links
// each ES module on its own, and the server loaded about 680 (our 167, Kysely's 262, TypeBox's
// 248); with those bundled, about 390 CommonJS files (Ajv, Fastify, prom-client, OpenTelemetry's
// API, semver...) were still resolved and read one by one: 1.05-1.14 s to /healthz against
// 0.72-0.81 s with them inside too (2026-11-26, alternating starts on one host). So the command
// line is one bundle of our code and every package except two kinds, left in node_modules: those
// that load native code or read files beside themselves (better-sqlite3, pino's transports,
// swagger-ui's static files), and the optional integrations, which are large and imported only
// when configured. Code splitting keeps each `import()` a chunk of its own, loaded on first use.
// CommonJS code inside an ES module bundle calls `require` for Node's built-ins: the banner gives
// it one. Not minified: stack traces keep our function names. Replaces the file-by-file
// dist/src/cli/main.js; the rest of dist/src stays for the benchmarks' children.
async function bundleCommandLine(outdir) {
  const outside = /^(better-sqlite3|@fastify\/swagger-ui|pino|thread-stream|pg|pg-.*|ioredis|@aws-sdk\/.*|@smithy\/.*|@atproto\/.*|viem|undici|esbuild|tsx)(\/|$)/;
  await build({
    entryPoints: { main: join(root, 'src', 'cli', 'main.ts') },
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    allowOverwrite: true,
    logLevel: 'warning',
    banner: { js: "import { createRequire as __sdgCreateRequire } from 'node:module'; const require = __sdgCreateRequire(import.meta.url);" },
    plugins: [{ name: 'packages-outside', setup: (b) => b.onResolve({ filter: /^[^./]/ }, (a) => (outside.test(a.path) || a.path.startsWith('node:') ? { path: a.path, external: true } : undefined)) }],
  });
}

// One script and one stylesheet, minified, no source maps: the page loads nothing from elsewhere.
function buildDashboard(out) {
  mkdirSync(join(out, 'assets'), { recursive: true });
  buildSync({
    entryPoints: { dashboard: join(web, 'main.ts'), 'dashboard-style': join(web, 'dashboard.css') },
    outdir: join(out, 'assets'),
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(join(web, 'index.html'), join(out, 'index.html'));
}
