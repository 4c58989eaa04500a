// The dashboard's built files (dist/dashboard, made by `npm run build` from web/dashboard), read once
// into memory: a handful of small files, served with a strong ETag.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** dist/dashboard, from this file compiled (dist/src/dashboard) or run from source (src/dashboard). */
export function defaultDashboardDir(): string {
  const up = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
  return basename(up) === 'dist' ? join(up, 'dashboard') : join(up, 'dist', 'dashboard');
}

/** Every file of `dir` by its path under it ('index.html', 'assets/dashboard.js'); undefined if not built. */
export function loadAssets(dir: string): Map<string, Asset> | undefined {
  if (!existsSync(join(dir, 'index.html'))) return undefined;
  const assets = new Map<string, Asset>();
  const walk = (sub: string) => {
    for (const name of readdirSync(join(dir, sub))) {
      const rel = sub ? `${sub}/${name}` : name;
      if (statSync(join(dir, rel)).isDirectory()) walk(rel);
      else {
        const body = readFileSync(join(dir, rel));
        const ext = name.slice(name.lastIndexOf('.'));
        assets.set(rel, { body, contentType: TYPES[ext] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
      }
    }
  };
  walk('');
  return assets;
}
