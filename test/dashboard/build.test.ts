// `npm run build` bundles the dashboard into dist/dashboard, self-contained, and still skips the whole
// build when no source changed (the fingerprint now covers web/dashboard too).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildDashboard } from './world.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DIST = join(ROOT, 'dist', 'dashboard');
const stampOf = () => readFileSync(join(ROOT, 'dist', '.build-stamp'), 'utf8');
const builtAt = () => statSync(join(DIST, 'assets', 'dashboard.js')).mtimeMs;

test('the build writes the dashboard as local files that load nothing from elsewhere', () => {
  buildDashboard();
  assert.deepEqual(readdirSync(DIST).sort(), ['assets', 'index.html']);
  assert.deepEqual(readdirSync(join(DIST, 'assets')).sort(), ['dashboard-style.css', 'dashboard.js']);
  const html = readFileSync(join(DIST, 'index.html'), 'utf8');
  const css = readFileSync(join(DIST, 'assets', 'dashboard-style.css'), 'utf8');
  const js = readFileSync(join(DIST, 'assets', 'dashboard.js'), 'utf8');
  // Every reference is to this origin; the only absolute URLs are XML namespaces in Preact.
  for (const m of (html + css + js).matchAll(/https?:\/\/[^"'`\s)]+/g)) assert.match(m[0], /^http:\/\/www\.w3\.org\//, m[0]);
  assert.match(html, /<script type="module" src="\/dashboard\/assets\/dashboard\.js"><\/script>/);
  assert.match(css, /\.uplot/, "uPlot's stylesheet is bundled in");
  assert.doesNotMatch(js, /sourceMappingURL/);
});

test('an unchanged tree is not rebuilt; a changed dashboard source is', () => {
  buildDashboard();
  const stamp = stampOf();
  const at = builtAt();
  buildDashboard();
  assert.equal(stampOf(), stamp);
  assert.equal(builtAt(), at, 'skipped: nothing changed');

  // Touch a browser source (same bytes, a new modification time): the fingerprint changes.
  const src = join(ROOT, 'web', 'dashboard', 'format.ts');
  const later = new Date(Math.max(Date.now(), statSync(src).mtimeMs + 1_000));
  utimesSync(src, later, later);
  buildDashboard();
  assert.notEqual(stampOf(), stamp);
  assert.notEqual(builtAt(), at, 'rebuilt');
});
