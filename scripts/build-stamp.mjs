// The build's fingerprint: paths, sizes and modification times of every input (sources, dashboard,
// build script, lockfile). Kept apart from build.mjs so that `npm start` can check it without
// loading esbuild.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const stampFile = join(root, 'dist', '.build-stamp');

export function fingerprint() {
  const inputs = ['src', 'bench', join('web', 'dashboard'), join('scripts', 'build.mjs'), join('scripts', 'build-stamp.mjs'), 'package-lock.json'];
  const h = createHash('sha256');
  const add = (p) => {
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) for (const name of readdirSync(p).sort()) add(join(p, name));
    else h.update(`${p}\0${st.size}\0${st.mtimeMs}\n`);
  };
  for (const p of inputs) add(join(root, p));
  return h.digest('hex');
}

/** True when dist/ was built from exactly the sources there now. */
export function buildIsCurrent() {
  return existsSync(stampFile) && readFileSync(stampFile, 'utf8') === fingerprint();
}
