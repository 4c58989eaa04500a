import type { Kysely, Migration } from 'kysely';

// `sdg jobs list --account ID --status S` reads an account's batches of one status, newest first.
// The (account_id, status) index that counts an account's open batches had no order within a status,
// so the embedded store read the status's batches of every account and filtered them (about 0.2 s
// over a million). The wider index serves both: the count reads its prefix.
export function batchAccountStatusIndexMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('watchlist_batches_account_status_idx').on('watchlist_batches').columns(['account_id', 'status', 'created_at']).execute();
      await db.schema.dropIndex('watchlist_batches_open_idx').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.createIndex('watchlist_batches_open_idx').on('watchlist_batches').columns(['account_id', 'status']).execute();
      await db.schema.dropIndex('watchlist_batches_account_status_idx').execute();
    },
  };
}
