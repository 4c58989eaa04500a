// npm run openapi: writes the OpenAPI document the gateway serves at /openapi.json to docs/openapi.json.
// The app is built in-process on a throwaway store, with the default configuration (no env), and
// never listens. test/openapi fails when the committed file differs from what this renders.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/config.js';
import { buildApp } from '../src/http/app.js';
import { buildDeps, closeDeps } from '../src/wiring/deps.js';

export const DOCUMENT_PATH = resolve(fileURLToPath(new URL('..', import.meta.url)), 'docs/openapi.json');

/** The served document as committed: two-space JSON and a final newline (its key order is fixed by the app). */
export async function renderOpenapi(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sdg-openapi-'));
  const deps = await buildDeps(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir }));
  try {
    const app = await buildApp(deps, { logger: false });
    try {
      const res = await app.inject({ method: 'GET', url: '/openapi.json' });
      if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}: ${res.body}`);
      return `${JSON.stringify(JSON.parse(res.body), null, 2)}\n`;
    } finally {
      await app.close();
    }
  } finally {
    await closeDeps(deps);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(DOCUMENT_PATH, await renderOpenapi());
  console.log(`wrote ${DOCUMENT_PATH}`);
}
