import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../connect.js';

// Postgres: a group charge no longer updates each account's lease row (a third of what a group over
// 24 accounts cost Postgres, measured). What a lease has spent is recorded by the ledger instead:
// each leased charge's entry names its process (`ledger_entries.lease_owner`), and a lease row's
// `amount` is what it was granted less what was spent up to its `synced_id` (the process folds its
// later entries in every second). A dead process's sweep gives back `amount` less the entries after
// `synced_id`. Each process's row has an `epoch`, changed by every sweep of its leases: a group
// names the epoch its process knows and locks the row (FOR SHARE), so a sweep waits for the group
// in flight and every later group of the swept process fails instead of spending swept credits.
// Existing lease rows were exact (their groups updated them): they start synced at the ledger's
// last entry. SQLite keeps holds in the process and has none of these.
export function leaseSpendingInLedgerMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      await sql`create sequence credit_lease_epochs`.execute(db);
      await sql`alter table credit_lease_owners add column epoch bigint not null default nextval('credit_lease_epochs')`.execute(db);
      await sql`alter table credit_leases add column synced_id bigint not null default 0`.execute(db);
      await sql`update credit_leases set synced_id = (select coalesce(max(id), 0) from ledger_entries)`.execute(db);
      // Nullable, no default: added without rewriting the ledger.
      await sql`alter table ledger_entries add column lease_owner text`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      if (dialect !== 'postgres') return;
      // Back to rows that hold what is left: what each lease spent since its last sync folded in first.
      await sql`
        update credit_leases c set amount = c.amount - coalesce(
          (select sum(-e.amount) from ledger_entries e where e.id > c.synced_id and e.lease_owner = c.owner and e.account_id = c.account_id), 0)`.execute(db);
      await sql`alter table ledger_entries drop column lease_owner`.execute(db);
      await sql`alter table credit_leases drop column synced_id`.execute(db);
      await sql`alter table credit_lease_owners drop column epoch`.execute(db);
      await sql`drop sequence credit_lease_epochs`.execute(db);
    },
  };
}
