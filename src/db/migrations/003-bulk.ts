import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

// Bulk export: watchlists, watchlist batches, exports and the crawl. Batches, exports and crawl
// targets are jobs: each row carries its state (status), attempts and a lease (owner + expiry) so
// that any number of worker processes can claim them with one conditional UPDATE and a restart resumes.
export function bulkMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('watchlist_entries')
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('social_user_id', 'text', (c) => c.notNull())
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('added_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('watchlist_entries_pk', ['account_id', 'social_user_id'])
        .execute();
      await db.schema.createIndex('watchlist_entries_list_idx').on('watchlist_entries').columns(['account_id', 'added_at', 'social_user_id']).execute();
      await db.schema.createIndex('watchlist_entries_user_idx').on('watchlist_entries').column('social_user_id').execute();
      // One row per account: the entry count, changed only by a conditional increment, so the plan's
      // limit holds under concurrent batches.
      await db.schema
        .createTable('watchlist_counts')
        .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
        .addColumn('entries', 'integer', (c) => c.notNull().defaultTo(0).check(sql`entries >= 0`))
        .execute();

      await db.schema
        .createTable('watchlist_batches')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('processed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('error', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'text')
        .execute();
      await db.schema.createIndex('watchlist_batches_account_idx').on('watchlist_batches').columns(['account_id', 'created_at']).execute();
      await db.schema.createIndex('watchlist_batches_status_idx').on('watchlist_batches').columns(['status', 'created_at']).execute();
      await db.schema
        .createTable('watchlist_batch_items')
        .addColumn('batch_id', 'text', (c) => c.notNull().references('watchlist_batches.id'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('social_user_id', 'text')
        .addColumn('username', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addPrimaryKeyConstraint('watchlist_batch_items_pk', ['batch_id', 'position'])
        .execute();

      await db.schema
        .createTable('exports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('start_date', 'text', (c) => c.notNull())
        .addColumn('end_date', 'text', (c) => c.notNull())
        .addColumn('format', 'text', (c) => c.notNull())
        .addColumn('tweet_count', 'bigint')
        .addColumn('size_bytes', 'bigint')
        .addColumn('sha256', 'text')
        .addColumn('object_key', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('completed_at', 'text')
        .addColumn('error', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'text')
        .execute();
      await db.schema.createIndex('exports_account_idx').on('exports').columns(['account_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('exports_completed_idx').on('exports').columns(['account_id', 'status', 'completed_at']).execute();
      await db.schema.createIndex('exports_status_idx').on('exports').columns(['status', 'created_at']).execute();
      // The caller's watchlist at generation time: the authors an export may contain.
      await db.schema
        .createTable('export_authors')
        .addColumn('export_id', 'text', (c) => c.notNull().references('exports.id'))
        .addColumn('author_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('export_authors_pk', ['export_id', 'author_id'])
        .execute();

      await db.schema
        .createTable('crawl_cycles')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('trigger', 'text', (c) => c.notNull())
        // Scheduled cycles: floor(start / interval); null for cycles started for newly added accounts.
        .addColumn('slot', 'bigint', (c) => c.unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('accounts_targeted', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('accounts_completed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('accounts_failed', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tweets_ingested', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tweets_updated', 'integer', (c) => c.notNull().defaultTo(0))
        // Bumped to take the row's write lock before reading or adding its targets.
        .addColumn('lock_version', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // At most one running cycle, whatever the number of schedulers.
      await db.schema.createIndex('crawl_cycles_one_running_idx').on('crawl_cycles').column('status').unique().where(sql.ref('status'), '=', sql.lit('running')).execute();
      await db.schema.createIndex('crawl_cycles_started_idx').on('crawl_cycles').column('started_at').execute();
      await db.schema
        .createTable('crawl_targets')
        // `${cycle_id}:${social_user_id}`
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('cycle_id', 'text', (c) => c.notNull().references('crawl_cycles.id'))
        .addColumn('social_user_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('tweets_ingested', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('tweets_updated', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('completed_at', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'text')
        .execute();
      await db.schema.createIndex('crawl_targets_cycle_idx').on('crawl_targets').columns(['cycle_id', 'status']).execute();
      await db.schema.createIndex('crawl_targets_status_idx').on('crawl_targets').columns(['status', 'created_at']).execute();
      // Per crawled account: where the last crawl stopped.
      await db.schema
        .createTable('crawl_accounts')
        .addColumn('social_user_id', 'text', (c) => c.primaryKey())
        .addColumn('last_tweet_id', 'text')
        .addColumn('last_tweet_at', 'text')
        .addColumn('first_targeted_at', 'text', (c) => c.notNull())
        .addColumn('last_crawled_at', 'text')
        .execute();
    },
  };
}
