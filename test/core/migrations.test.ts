import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Store } from '../../src/db/connect.js';
import { MigrationOneWayError, migrateTo, migrateToLatest, migratorFor, SchemaNewerError } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { backends, createTestStore } from '../helpers/backends.js';

async function describeSchema(store: Store): Promise<unknown> {
  const tables = (await store.db.introspection.getTables())
    .map((t) => ({ name: t.name, columns: t.columns.map((c) => `${c.name}:${c.dataType}:${c.isNullable}:${c.hasDefaultValue}:${c.isAutoIncrementing}`).sort() }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const indexes =
    store.dialect === 'sqlite'
      ? (await sql<{ name: string; sql: string | null }>`select name, sql from sqlite_master where type = 'index' order by name`.execute(store.db)).rows
      : (await sql<{ name: string; sql: string }>`select indexname as name, indexdef as sql from pg_indexes where schemaname = current_schema() order by indexname`.execute(store.db)).rows;
  // Postgres index definitions name the schema; each test store has its own.
  return { tables, indexes: indexes.map((i) => ({ name: i.name, sql: i.sql?.replace(/\bt_[0-9a-f]{12}\./g, '') ?? null })) };
}

/** The ledger's indexes other than its primary key, by name. */
async function ledgerIndexes(store: Store): Promise<string[]> {
  const rows =
    store.dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'ledger_entries' and sql is not null order by name`.execute(store.db)).rows
      : (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'ledger_entries' and indexname <> 'ledger_entries_pkey' order by indexname`.execute(store.db)).rows;
  return rows.map((r) => r.name);
}

async function ledgerForeignKeys(store: Store): Promise<number> {
  return store.dialect === 'postgres'
    ? (await sql<{ n: number }>`select count(*)::int as n from pg_constraint where conrelid = 'ledger_entries'::regclass and contype = 'f'`.execute(store.db)).rows[0]!.n
    : (await sql<{ n: number }>`select count(*) as n from pragma_foreign_key_list('ledger_entries')`.execute(store.db)).rows[0]!.n;
}

for (const backend of backends()) {
  describe(`migrations (${backend})`, () => {
    test('migrating an empty store one step at a time gives the same schema as a fresh install', async () => {
      const stepwise = await createTestStore(backend);
      const fresh = await createTestStore(backend);
      try {
        const migrator = await migratorFor(stepwise.store);
        const names = Object.keys(migrations(backend)).sort();
        for (const name of names) {
          const { error, results } = await migrator.migrateUp();
          assert.equal(error, undefined);
          assert.deepEqual(results?.map((r) => r.migrationName), [name]);
        }
        assert.deepEqual((await migrator.migrateUp()).results, []);
        await migrateToLatest(fresh.store);
        const a = await describeSchema(stepwise.store);
        const b = await describeSchema(fresh.store);
        assert.deepEqual(a, b);
        const tableNames = (a as { tables: Array<{ name: string }> }).tables.map((t) => t.name);
        for (const t of ['accounts', 'api_keys', 'ledger_entries', 'idempotency_keys', 'settings']) assert.ok(tableNames.includes(t), t);
        // Running again is a no-op.
        assert.deepEqual(await migrateToLatest(fresh.store), []);
      } finally {
        await stepwise.dispose();
        await fresh.dispose();
      }
    });

    // Postgres only (SQLite has no leases): defined for it alone, so that no run reports it skipped.
    if (backend === 'postgres') test('014 down folds what each lease spent since its last sync into its row; up again starts it synced', async () => {
      const s = await createTestStore(backend);
      try {
        await migrateToLatest(s.store);
        const db = s.store.db;
        const now = new Date().toISOString();
        await db.insertInto('accounts').values({ id: 'acc_l', name: 'l', plan_id: 'free', balance: 83, reserved: 23, rate_limit_per_minute: null, created_at: now }).execute();
        await db.insertInto('credit_lease_owners').values({ owner: 'p_a', expires_at: new Date(Date.now() + 60_000) }).execute();
        await db.insertInto('credit_leases').values({ account_id: 'acc_l', owner: 'p_a', amount: 40, wanted: false }).execute();
        // p_a spent 15 from its lease (unsynced), another process 2, and 0 came from no lease.
        for (const [amount, owner] of [[-5, 'p_a'], [-5, 'p_a'], [-5, 'p_a'], [-2, 'p_b'], [0, null]] as const)
          await sql`insert into ledger_entries (account_id, kind, amount, balance_after, created_at, lease_owner) values ('acc_l', 'charge', ${amount}, 0, ${now}, ${owner})`.execute(db);
        const migrator = await migratorFor(s.store);
        assert.equal((await migrator.migrateTo('013-active-keys-index')).error, undefined);
        assert.equal(Number((await sql<{ amount: string }>`select amount from credit_leases`.execute(db)).rows[0]!.amount), 25);
        assert.equal((await migrator.migrateToLatest()).error, undefined);
        const row = (await sql<{ amount: string; synced_id: string; last: string }>`select amount, synced_id, (select max(id) from ledger_entries) as last from credit_leases`.execute(db)).rows[0]!;
        assert.deepEqual([Number(row.amount), Number(row.synced_id)], [25, Number(row.last)]);
      } finally {
        await s.dispose();
      }
    });

    test('the ledger has no foreign key (Postgres since 010, SQLite since 012); down to 009 puts it back', async () => {
      const s = await createTestStore(backend);
      try {
        await migrateToLatest(s.store);
        assert.equal(await ledgerForeignKeys(s.store), 0);
        const { error } = await (await migratorFor(s.store)).migrateTo('009-hardening');
        assert.equal(error, undefined);
        assert.equal(await ledgerForeignKeys(s.store), 1);
      } finally {
        await s.dispose();
      }
    });

    test('012 keeps every ledger entry and id, leaves one index by account (by time), and new ids follow the old; down restores both indexes', async () => {
      const s = await createTestStore(backend);
      try {
        const migrator = await migratorFor(s.store);
        assert.equal((await migrator.migrateTo('011-crawl-cycle-counters')).error, undefined);
        const db = s.store.db;
        const now = new Date().toISOString();
        for (const id of ['acc_a', 'acc_b']) await db.insertInto('accounts').values({ id, name: id, plan_id: 'free', balance: 0, reserved: 0, rate_limit_per_minute: null, created_at: now }).execute();
        // 300 entries over two accounts, some in one millisecond, with every column used.
        const rows = Array.from({ length: 300 }, (_, i) => ({
          account_id: i % 3 === 0 ? 'acc_b' : 'acc_a',
          kind: i % 10 === 0 ? ('grant' as const) : ('charge' as const),
          amount: i % 10 === 0 ? 1000 : -7,
          balance_after: i,
          request_id: i % 10 === 0 ? null : `req_${i}`,
          key_id: i % 10 === 0 ? null : 'key_x',
          endpoint: i % 10 === 0 ? null : 'getTweet',
          note: i % 10 === 0 ? `grant ${i}` : null,
          created_at: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 4)).toISOString(),
        }));
        await db.insertInto('ledger_entries').values(rows).execute();
        const all = () => db.selectFrom('ledger_entries').selectAll().orderBy('id').execute();
        const before = await all();
        const maxId = Math.max(...before.map((r) => Number(r.id)));

        // To 013, not the latest: 014 adds a column on Postgres, which would show in every row read.
        assert.equal((await migrator.migrateTo('013-active-keys-index')).error, undefined);
        assert.deepEqual(await all(), before);
        assert.deepEqual(await ledgerIndexes(s.store), ['ledger_entries_account_time_idx']);
        if (backend === 'sqlite') {
          const ddl = (await sql<{ sql: string }>`select sql from sqlite_master where name = 'ledger_entries'`.execute(db)).rows[0]!.sql;
          assert.doesNotMatch(ddl, /autoincrement/i);
        }
        const added = await db
          .insertInto('ledger_entries')
          .values({ ...rows[1]!, created_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        assert.ok(Number(added.id) > maxId, `${added.id} > ${maxId}`);

        assert.equal((await migrator.migrateTo('011-crawl-cycle-counters')).error, undefined);
        const restored = await all();
        assert.deepEqual(restored.slice(0, before.length), before);
        assert.deepEqual(await ledgerIndexes(s.store), ['ledger_entries_account_idx', 'ledger_entries_account_time_idx']);
        assert.equal(await ledgerForeignKeys(s.store), backend === 'sqlite' ? 1 : 0);
        const again = await db.insertInto('ledger_entries').values({ ...rows[1]!, created_at: now }).returning('id').executeTakeFirstOrThrow();
        assert.ok(Number(again.id) > Number(added.id));
      } finally {
        await s.dispose();
      }
    });

    test('a cycle running across the upgrade gets its running counters from its targets', async () => {
      const s = await createTestStore(backend);
      try {
        const migrator = await migratorFor(s.store);
        assert.equal((await migrator.migrateTo('010-ledger-no-fk-pg')).error, undefined);
        const db = s.store.db;
        const now = new Date().toISOString();
        const cycle = (id: string, status: 'running' | 'completed') =>
          ({ id, trigger: 'schedule', slot: null, status, started_at: now, completed_at: status === 'completed' ? now : null, accounts_targeted: status === 'running' ? 3 : 1, accounts_completed: 0, accounts_failed: 0, tweets_ingested: status === 'running' ? 0 : 7, tweets_updated: 0, lock_version: 0 }) as const;
        await db.insertInto('crawl_cycles').values([cycle('cyc_old', 'completed'), cycle('cyc_run', 'running')]).execute();
        const target = (user: string, status: 'completed' | 'failed' | 'running', ingested: number, updated: number) => ({
          id: `cyc_run:${user}`, cycle_id: 'cyc_run', social_user_id: user, status, tweets_ingested: ingested, tweets_updated: updated, error: null, created_at: now, started_at: null, completed_at: null, attempts: 1, lease_owner: null, lease_expires_at: null,
        });
        await db.insertInto('crawl_targets').values([target('u1', 'completed', 40, 2), target('u2', 'failed', 5, 0), target('u3', 'running', 11, 1)]).execute();
        assert.equal((await migrator.migrateToLatest()).error, undefined);
        const rows = await db.selectFrom('crawl_cycles').select(['id', 'accounts_targeted', 'accounts_completed', 'accounts_failed', 'tweets_ingested', 'tweets_updated']).orderBy('id').execute();
        assert.deepEqual(
          rows.map((r) => [r.id, r.accounts_targeted, r.accounts_completed, r.accounts_failed, r.tweets_ingested, r.tweets_updated]),
          [
            ['cyc_old', 1, 0, 0, 7, 0],
            ['cyc_run', 3, 1, 1, 56, 3],
          ],
        );
      } finally {
        await s.dispose();
      }
    });

    test('a store migrated by a newer release: this one refuses to migrate it, up or down, naming what it lacks, and changes nothing', async () => {
      const s = await createTestStore(backend);
      try {
        await migrateToLatest(s.store);
        await sql`insert into kysely_migration (name, timestamp) values ('999-from-the-future', ${new Date().toISOString()})`.execute(s.store.db);
        const before = await describeSchema(s.store);
        const latest = Object.keys(migrations(backend)).sort().at(-1)!;
        const refused = (e: unknown) => e instanceof SchemaNewerError && e.unknown.join() === '999-from-the-future' && e.latest === latest;
        await assert.rejects(migrateToLatest(s.store), refused);
        await assert.rejects(migrateTo(s.store, '009-hardening'), refused);
        assert.deepEqual(await describeSchema(s.store), before);
      } finally {
        await s.dispose();
      }
    });

    test('migrateTo takes the schema down to a named migration and back up', async () => {
      const s = await createTestStore(backend);
      try {
        await migrateToLatest(s.store);
        const latest = await describeSchema(s.store);
        const names = Object.keys(migrations(backend)).sort();
        const down = await migrateTo(s.store, '010-ledger-no-fk-pg');
        assert.deepEqual(down.map((r) => [r.migrationName, r.direction, r.status]), [
          ['015-batch-account-status-index', 'Down', 'Success'],
          ['014-lease-spending-in-ledger', 'Down', 'Success'],
          ['013-active-keys-index', 'Down', 'Success'],
          ['012-ledger-one-index', 'Down', 'Success'],
          ['011-crawl-cycle-counters', 'Down', 'Success'],
        ]);
        assert.deepEqual(await ledgerIndexes(s.store), ['ledger_entries_account_idx', 'ledger_entries_account_time_idx']);
        const up = await migrateTo(s.store, names.at(-1)!);
        assert.deepEqual(up.map((r) => [r.migrationName, r.direction]), [
          ['011-crawl-cycle-counters', 'Up'],
          ['012-ledger-one-index', 'Up'],
          ['013-active-keys-index', 'Up'],
          ['014-lease-spending-in-ledger', 'Up'],
          ['015-batch-account-status-index', 'Up'],
        ]);
        assert.deepEqual(await describeSchema(s.store), latest);
        // 009 has no down step: going below it is refused, and nothing is reverted.
        await assert.rejects(migrateTo(s.store, '008-ledger-time'), (e) => e instanceof MigrationOneWayError && e.oneWay.join() === '009-hardening');
        assert.deepEqual(await describeSchema(s.store), latest);
        assert.deepEqual(await migrateToLatest(s.store), []);
      } finally {
        await s.dispose();
      }
    });

    test('the balance can never go negative, even by a direct write', async () => {
      const s = await createTestStore(backend);
      try {
        await migrateToLatest(s.store);
        await s.store.db.insertInto('accounts').values({ id: 'acc_x', name: 'x', plan_id: 'free', balance: 5, reserved: 0, rate_limit_per_minute: null, created_at: new Date().toISOString() }).execute();
        await assert.rejects(s.store.db.updateTable('accounts').set({ balance: -1 }).where('id', '=', 'acc_x').execute());
      } finally {
        await s.dispose();
      }
    });
  });
}

describe('migrations from several connections at once', () => {
  test('stores opened together on a fresh SQLite file all end up on the latest schema, each migration applied once', async () => {
    const { openStore } = await import('../../src/db/connect.js');
    const s = await createTestStore('sqlite');
    // Separate connections race just as separate processes do: Kysely's lock is per connection.
    const others = [1, 2, 3].map(() => openStore({ dataDir: s.dataDir }));
    try {
      const results = await Promise.all([s.store, ...others].map((st) => migrateToLatest(st)));
      const applied = results.flatMap((r) => r.filter((x) => x.status === 'Success').map((x) => x.migrationName));
      assert.deepEqual(applied.sort(), Object.keys(migrations('sqlite')).sort());
    } finally {
      for (const o of others) await o.close();
      await s.dispose();
    }
  });
});
