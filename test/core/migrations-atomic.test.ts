// A start whose migrations fail partway (the disk fills, the process is killed) must leave a store
// the next start can migrate. SQLite's DDL is transactional, but Kysely's SQLite adapter says it is
// not, so its migrator ran every statement on its own: a migration cut short left its first tables
// behind without its record, and every later start failed with "table … already exists".
// max_page_count stands in for the disk (a write beyond it fails with SQLITE_FULL, as on a full disk).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { createTestStore } from '../helpers/backends.js';

async function objects(s: Awaited<ReturnType<typeof createTestStore>>): Promise<string[]> {
  return (await sql<{ name: string }>`select type || ' ' || name as name from sqlite_master where name not like 'sqlite_%' order by name`.execute(s.store.db)).rows.map((r) => r.name);
}

test('migrations cut short by a full disk leave no half-made schema: the next start migrates the store whole', async () => {
  const fresh = await createTestStore('sqlite');
  const full = await createTestStore('sqlite');
  try {
    await migrateToLatest(fresh.store);
    const want = await objects(fresh);
    const sqlite = full.store.sqlite!;
    // Every room size between an empty file and the whole schema: each cuts the migrations at another statement.
    const pagesNeeded = Number(fresh.store.sqlite!.pragma('page_count', { simple: true }));
    let cutShort = 0;
    for (let pages = Number(sqlite.pragma('page_count', { simple: true })) + 1; pages < pagesNeeded; pages += 3) {
      sqlite.pragma(`max_page_count = ${pages}`);
      await assert.rejects(migrateToLatest(full.store), /SQLITE_FULL|database or disk is full/);
      cutShort++;
      // Nothing of the failed run is kept but Kysely's own bookkeeping tables (made before its transaction).
      const left = (await objects(full)).filter((o) => !/kysely_migration/.test(o));
      assert.deepEqual(left, [], `${pages} pages: left behind ${left.join(', ')}`);
    }
    assert.ok(cutShort >= 5, `cut short ${cutShort} times`);
    sqlite.pragma('max_page_count = 1073741823');
    const results = await migrateToLatest(full.store);
    assert.deepEqual(results.map((r) => [r.migrationName, r.status]), Object.keys(migrations('sqlite')).sort().map((n) => [n, 'Success']));
    assert.deepEqual(await objects(full), want);
  } finally {
    await fresh.dispose();
    await full.dispose();
  }
});
