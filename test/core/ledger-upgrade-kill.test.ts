// Migration 012 copies an embedded store's ledger into a new table, in one transaction. A process
// killed (-9) in the middle of that copy must leave the ledger exactly as it was, with the
// migration not recorded, and the next start must complete it (README, "Credits").
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/db/connect.js';
import { migrateToLatest, migratorFor } from '../../src/db/migrate.js';
import { createTestStore } from '../helpers/backends.js';
import { repoRoot } from '../helpers/processes.js';

const ROWS = 1_000_000;

async function ledgerState(store: Store) {
  const db = store.db;
  const totals = (
    await sql<{ n: number; total: number; maxId: number; mix: number }>`
      select count(*) as n, sum(amount) as total, max(id) as maxId, sum((id % 1000) * amount) as mix from ledger_entries`.execute(db)
  ).rows[0]!;
  const ddl = (await sql<{ sql: string }>`select sql from sqlite_master where name = 'ledger_entries'`.execute(db)).rows[0]!.sql;
  const indexes = (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'ledger_entries' and sql is not null order by name`.execute(db)).rows.map((r) => r.name);
  const leftovers = (await sql<{ name: string }>`select name from sqlite_master where name like 'ledger_entries_rebuilt%'`.execute(db)).rows.length;
  const applied = (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((r) => r.name);
  return { totals, autoIncrement: /autoincrement/i.test(ddl), indexes, leftovers, applied };
}

test('a process killed during the ledger copy of migration 012 leaves the ledger as it was; the next start completes it', { timeout: 180_000 }, async () => {
  const s = await createTestStore('sqlite');
  try {
    assert.equal((await (await migratorFor(s.store)).migrateTo('011-crawl-cycle-counters')).error, undefined);
    await sql`insert into accounts (id, name, plan_id, balance, reserved, created_at) values ('acc_a', 'a', 'free', 0, 0, '2026-01-01T00:00:00.000Z'), ('acc_b', 'b', 'free', 0, 0, '2026-01-01T00:00:00.000Z')`.execute(s.store.db);
    await sql
      .raw(
        `with recursive c(i) as (select 1 union all select i + 1 from c where i < ${ROWS})
         insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at)
         select case when i % 3 = 0 then 'acc_b' else 'acc_a' end, 'charge', -(i % 7) - 1, i, 'req_' || i, 'key_x', 'getTweet', null,
                strftime('%Y-%m-%dT%H:%M:%fZ', 1767225600 + i / 1000.0, 'unixepoch') from c`,
      )
      .execute(s.store.db);
    const before = await ledgerState(s.store);
    assert.equal(before.totals.n, ROWS);
    assert.equal(before.autoIncrement, true);
    assert.deepEqual(before.indexes, ['ledger_entries_account_idx', 'ledger_entries_account_time_idx']);
    await s.store.close();

    // `sdg migrate`, killed once its copy has written a good part of the new table to the WAL.
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'migrate'], { cwd: repoRoot, env: { ...process.env, ...s.env, LOG_LEVEL: 'silent' }, stdio: 'ignore' });
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    const wal = join(s.dataDir, 'gateway.sqlite-wal');
    let killedMidCopy = false;
    while (child.exitCode === null) {
      if (existsSync(wal) && statSync(wal).size > 16 * 1024 * 1024) {
        child.kill('SIGKILL');
        killedMidCopy = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await exited;
    assert.ok(killedMidCopy, 'the migration finished before it could be killed: raise ROWS');

    const reopened = openStore({ dataDir: s.dataDir });
    try {
      assert.deepEqual(await ledgerState(reopened), before);
      const results = await migrateToLatest(reopened);
      assert.deepEqual(results.map((r) => [r.migrationName, r.status]), [
        ['012-ledger-one-index', 'Success'],
        ['013-active-keys-index', 'Success'],
        ['014-lease-spending-in-ledger', 'Success'],
        ['015-batch-account-status-index', 'Success'],
      ]);
      const after = await ledgerState(reopened);
      assert.deepEqual(after.totals, before.totals);
      assert.equal(after.autoIncrement, false);
      assert.deepEqual(after.indexes, ['ledger_entries_account_time_idx']);
      assert.equal(after.leftovers, 0);
    } finally {
      await reopened.close();
    }
  } finally {
    await s.dispose();
  }
});
