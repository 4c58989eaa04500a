import type { Kysely, Migration } from 'kysely';

// An account's ledger by time: the usage summary (src/credits/usage-summary.ts) reads one window of
// one account's entries, which the (account_id, id) index cannot bound.
export function ledgerTimeMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('ledger_entries_account_time_idx').on('ledger_entries').columns(['account_id', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('ledger_entries_account_time_idx').execute();
    },
  };
}
