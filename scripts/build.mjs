// Compiles src/ (and bench/, whose export child measures the compiled program) to dist/, file by
// file, for `npm start`: the server then runs plain JavaScript, without tsx's loader thread (about
// 30 MB) or its per-closure naming. Type checking stays with `npm run typecheck`; this only strips types.
import { readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
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
rmSync(join(root, 'dist'), { recursive: true, force: true });
buildSync({ entryPoints: files, outdir: join(root, 'dist'), outbase: root, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
