import type { Kysely, Migration } from 'kysely';

// Fair export scheduling, open-job quotas and retention:
// - export_turns: per account, the turn at which a worker last took one of its exports; the export
//   claim serves the account whose turn is oldest (src/exports/export-claim.ts);
// - indexes for the claim (queued exports by account), the quotas (open jobs of an account) and the
//   retention job (finished batches and cycles by completion time).
export function hardeningMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('export_turns')
        .addColumn('account_id', 'text', (c) => c.primaryKey())
        .addColumn('turn', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('exports_queue_idx').on('exports').columns(['status', 'account_id', 'created_at']).execute();
      await db.schema.createIndex('watchlist_batches_open_idx').on('watchlist_batches').columns(['account_id', 'status']).execute();
      await db.schema.createIndex('watchlist_batches_finished_idx').on('watchlist_batches').columns(['completed_at']).execute();
      await db.schema.createIndex('crawl_cycles_completed_idx').on('crawl_cycles').columns(['completed_at']).execute();
    },
  };
}
