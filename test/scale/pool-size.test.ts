// DATABASE_POOL_SIZE caps the Postgres connections a process's pool opens, so an operator can fit
// every process (and each of WORKERS=N) inside the server's max_connections. Needs TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config/config.js';
import { buildDeps, closeDeps } from '../../src/wiring/deps.js';
import { createPostgresSchema } from '../helpers/backends.js';

const pgUrl = process.env.TEST_DATABASE_URL;

/** The most connections that ran one marked query at once while `queries` of them were sent together. */
async function mostAtOnce(env: Record<string, string>, queries: number): Promise<number> {
  const schema = await createPostgresSchema(pgUrl!);
  const dataDir = mkdtempSync(join(tmpdir(), 'sdg-pool-'));
  const deps = await buildDeps(loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, DATABASE_URL: schema.url, ...env }), { migrate: true });
  const watcher = new pg.Client({ connectionString: pgUrl });
  await watcher.connect();
  try {
    const marker = `pool_probe_${randomBytes(4).toString('hex')}`;
    let most = 0;
    let running = true;
    const watch = (async () => {
      while (running) {
        // The marker is a parameter here, so this query's own text does not match it.
        const r = await watcher.query<{ n: string }>(`select count(*) as n from pg_stat_activity where state = 'active' and query like '%' || $1 || '%'`, [marker]);
        most = Math.max(most, Number(r.rows[0]!.n));
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    await Promise.all(Array.from({ length: queries }, () => sql`select pg_sleep(0.4) as ${sql.ref(marker)}`.execute(deps.store.db)));
    running = false;
    await watch;
    return most;
  } finally {
    await watcher.end();
    await closeDeps(deps);
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('DATABASE_POOL_SIZE (postgres)', { skip: !pgUrl && 'needs TEST_DATABASE_URL' }, () => {
  test('a pool of 2 runs at most 2 statements at once; the default of 10 runs all 6', async () => {
    assert.equal(await mostAtOnce({ DATABASE_POOL_SIZE: '2' }, 6), 2);
    assert.equal(await mostAtOnce({}, 6), 6);
  });
});
