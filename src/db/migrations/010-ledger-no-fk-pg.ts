import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../connect.js';

// Postgres checks a foreign key with a trigger per inserted row (a query of its own that locks the
// parent row): on the ledger that was a fifth of Postgres's CPU per charge (3.4 µs of a group
// statement's 13.5 µs a charge, measured). The key protected nothing the writers do not already
// guarantee: every ledger entry is written in the statement or transaction that updates its
// account's row (an entry for an account that does not exist is never written, see
// credits-repo.ts grant and lease-statements.ts), and accounts are never deleted. SQLite keeps the
// key: its check is an index probe inside the insert, and dropping it would mean copying the table.
export function ledgerNoForeignKeyMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      await sql`
        do $$
        declare c text;
        begin
          for c in select conname from pg_constraint
                    where conrelid = 'ledger_entries'::regclass and contype = 'f' and confrelid = 'accounts'::regclass
          loop
            execute format('alter table ledger_entries drop constraint %I', c);
          end loop;
        end $$`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      await sql`alter table ledger_entries add constraint ledger_entries_account_id_fkey foreign key (account_id) references accounts (id)`.execute(db);
    },
  };
}
