// `npm start`: builds dist/ only when a source changed since the last build (scripts/build.mjs, in a
// child process), then serves from this process: one Node start instead of two, and esbuild is
// not loaded at all on a built tree. The Node flags of the served process are those of the `start`
// script in package.json (the benchmarks read them from there).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildIsCurrent, root } from './build-stamp.mjs';

if (!buildIsCurrent()) {
  const build = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// As if run as `node dist/src/cli/main.js serve …`: the command line reads process.argv.
process.argv.splice(1, 1, join(root, 'dist', 'src', 'cli', 'main.js'), 'serve');
await import('../dist/src/cli/main.js');
