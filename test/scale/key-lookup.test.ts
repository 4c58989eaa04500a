// The key lookup counts the account's active keys (a 429 names the key when it is the only one). It
// reads them through the index of active keys (migration 013): an account that made and revoked
// thousands of keys does not make every lookup of its key read them all.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { createAccount, createKey } from '../../src/accounts/accounts-repo.js';
import { hashApiKey } from '../../src/accounts/api-keys.js';
import { PostgresMeterStore } from '../../src/credits/postgres-meter-store.js';
import { SqliteMeterStore } from '../../src/credits/sqlite-meter-store.js';
import { openStore } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { backends, createTestStore } from '../helpers/backends.js';

const REVOKED = 3_000;

for (const dialect of backends()) {
  test(`the key lookup counts active keys through their index, whatever was revoked (${dialect})`, async () => {
    const ts = await createTestStore(dialect);
    try {
      await migrateToLatest(ts.store);
      const db = ts.store.db;
      const { accountId } = await createAccount(db, { name: 'k', planId: 'free' });
      const kept = await createKey(db, accountId, 'kept');
      await createKey(db, accountId, 'second');
      const at = new Date().toISOString();
      for (let i = 0; i < REVOKED; i += 500) {
        const rows = Array.from({ length: 500 }, (_, j) => ({ id: `key_r${i + j}`, account_id: accountId, name: null, prefix: 'sdg_live_x', key_hash: randomBytes(32).toString('hex'), created_at: at, revoked_at: at }));
        await db.insertInto('api_keys').values(rows).execute();
      }
      const hash = hashApiKey(kept.key);
      if (dialect === 'sqlite') {
        const meter = new SqliteMeterStore(ts.store.sqlite!, ts.store.grouped!);
        assert.equal(meter.findKeySync(hash)?.activeKeys, 2);
        const source = (meter as unknown as { findKeyStmt: { source: string } }).findKeyStmt.source;
        const plan = ts.store.sqlite!.prepare(`explain query plan ${source}`).all(hash) as Array<{ detail: string }>;
        const details = plan.map((p) => p.detail).join(' | ');
        assert.match(details, /api_keys_active_idx/, details);
        return;
      }
      await sql`analyze api_keys`.execute(db);
      // One connection: the lookup's statement is prepared on it (connect.ts), and explained there.
      const one = openStore({ databaseUrl: ts.env.DATABASE_URL!, dataDir: ts.dataDir, poolSize: 1 });
      try {
        const meter = new PostgresMeterStore(one.db);
        assert.equal((await meter.findKey(hash))?.activeKeys, 2);
        const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements where statement like '%"activeKeys"%'`.execute(one.db);
        assert.equal(rows.length, 1);
        const explained = await sql<{ 'QUERY PLAN': string }>`explain execute ${sql.raw(rows[0]!.name)}(${sql.lit(hash)})`.execute(one.db);
        const text = explained.rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.match(text, /api_keys_active_idx/, text);
      } finally {
        await one.close();
      }
    } finally {
      await ts.dispose();
    }
  });
}
