// Run as a child process (node --import tsx): builds the app on the embedded default, as `sdg serve`
// does, and prints the npm packages that were loaded, one per line. Packages are recorded by an
// import hook (ES modules) and read from the CommonJS cache (require()).
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'sdg-loaded-'));
const log = join(dir, 'resolved.txt');
appendFileSync(log, '');
const hook = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);

const { loadConfig } = await import('../../src/config/config.js');
const { buildDeps, closeDeps } = await import('../../src/wiring/deps.js');
const { buildApp } = await import('../../src/http/app.js');
const deps = await buildDeps(loadConfig({ DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'silent' }));
const app = await buildApp(deps, { logger: false });
await app.ready();

const paths = [...readFileSync(log, 'utf8').split('\n'), ...Object.keys(createRequire(import.meta.url).cache)];
const packages = new Set<string>();
for (const p of paths) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(decodeURIComponent(p));
  if (m) packages.add(m[1]!);
}
console.log([...packages].sort().join('\n'));
await app.close();
await closeDeps(deps);
rmSync(dir, { recursive: true, force: true });
