// Compiles src/ (and bench/, whose export child measures the compiled program) to dist/, file by
// file, for `npm start`: the server then runs plain JavaScript, without tsx's loader thread (about
// 30 MB) or its per-closure naming. Type checking stays with `npm run typecheck`; this only strips types.
// Then bundles the browser dashboard (web/dashboard: Preact, htm, uPlot) into dist/dashboard, the
// local files that the gateway serves at /dashboard.
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
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
buildDashboard(join(root, 'dist', 'dashboard'));
writeFileSync(stampFile, stamp);

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
