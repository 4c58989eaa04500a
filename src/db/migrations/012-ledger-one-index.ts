import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../connect.js';

// Every charge writes a ledger row, so each index and check on the table is paid per charged call.
// The usage list now pages an account's entries by time, then id (src/credits/credits-repo.ts), so
// the (account_id, created_at) index serves it as it serves the usage summary, and the
// (account_id, id) index goes. On SQLite the table is also rebuilt:
// - without AUTOINCREMENT: a commit no longer rewrites sqlite_sequence. Ledger rows are never
//   deleted, so a new id is still above every id ever used (public ids stay valid, the rows keep theirs);
// - without the foreign key to accounts, as migration 010 did on Postgres: every entry is written in
//   the transaction that updates its account's row, and accounts are never deleted.
// SQLite can change neither without copying the table: one transaction copies it in id order, so a
// process killed meanwhile leaves the old table whole and the next start does it again. Measured in
// a loop of transactions of 27 charges: 4.7 µs of SQLite's CPU a ledger row before, 3.3 after.
export function ledgerOneIndexMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect === 'postgres') {
        await sql`drop index if exists ledger_entries_account_idx`.execute(db);
        return;
      }
      await inTransaction(db, async (trx) => {
        await rebuildSqliteLedger(trx, { autoIncrement: false, foreignKey: false });
        await sql`create index ledger_entries_account_time_idx on ledger_entries (account_id, created_at)`.execute(trx);
      });
    },
    async down(db: Kysely<unknown>) {
      if (dialect === 'postgres') {
        await sql`create index if not exists ledger_entries_account_idx on ledger_entries (account_id, id)`.execute(db);
        return;
      }
      await inTransaction(db, async (trx) => {
        await rebuildSqliteLedger(trx, { autoIncrement: true, foreignKey: true });
        await sql`create index ledger_entries_account_idx on ledger_entries (account_id, id)`.execute(trx);
        await sql`create index ledger_entries_account_time_idx on ledger_entries (account_id, created_at)`.execute(trx);
      });
    },
  };
}

// The migrator runs migrations inside its transaction (src/db/sqlite-dialect.ts); this one was
// written when it did not, and keeps its own where it is called outside one (Kysely has no nesting).
async function inTransaction(db: Kysely<unknown>, fn: (trx: Kysely<unknown>) => Promise<void>): Promise<void> {
  if (db.isTransaction) return fn(db);
  await db.transaction().execute(fn);
}

/** Copies the ledger into a table of the given shape, rows and ids as they were; no indexes yet. */
async function rebuildSqliteLedger(trx: Kysely<unknown>, shape: { autoIncrement: boolean; foreignKey: boolean }): Promise<void> {
  const columns = 'id, account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at';
  await sql`drop table if exists ledger_entries_rebuilt`.execute(trx);
  await sql
    .raw(
      `create table ledger_entries_rebuilt (
        id integer primary key${shape.autoIncrement ? ' autoincrement' : ''},
        account_id text not null${shape.foreignKey ? ' references accounts (id)' : ''},
        kind text not null,
        amount bigint not null,
        balance_after bigint not null,
        request_id text,
        key_id text,
        endpoint text,
        note text,
        created_at text not null
      )`,
    )
    .execute(trx);
  await sql.raw(`insert into ledger_entries_rebuilt (${columns}) select ${columns} from ledger_entries order by id`).execute(trx);
  await sql`drop table ledger_entries`.execute(trx);
  await sql`alter table ledger_entries_rebuilt rename to ledger_entries`.execute(trx);
}
