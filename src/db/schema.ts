// Row types of the store, shared by both backends. Timestamps are ISO 8601 text (UTC, millisecond
// precision) on both, so they compare and sort the same way everywhere.
import type { Generated } from 'kysely';

export interface SettingsTable {
  key: string;
  value: string;
}

export interface AccountsTable {
  id: string;
  name: string;
  plan_id: string;
  balance: number;
  /** Postgres: credits leased by API processes (the sum of credit_leases); available = balance - reserved. SQLite: 0. */
  reserved: number;
  rate_limit_per_minute: number | null;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  prefix: string;
  key_hash: string;
  created_at: string;
  revoked_at: string | null;
}

/** Postgres only: a process's slice of an account's available balance (see credits/postgres-meter-store.ts). */
export interface CreditLeasesTable {
  account_id: string;
  owner: string;
  /** Granted, less what was spent up to synced_id; the entries after it are spent too (migration 014). */
  amount: number;
  wanted: boolean;
  synced_id: Generated<number>;
}

/** Postgres only: the processes holding credit leases, alive while they renew expires_at. */
export interface CreditLeaseOwnersTable {
  owner: string;
  expires_at: Date;
  /** Changed by every sweep of this process's leases (migration 014). */
  epoch: Generated<number>;
}

export interface LedgerEntriesTable {
  id: Generated<number>;
  account_id: string;
  kind: 'grant' | 'charge' | 'refund';
  amount: number;
  balance_after: number;
  request_id: string | null;
  key_id: string | null;
  endpoint: string | null;
  note: string | null;
  created_at: string;
  // Postgres also has lease_owner (migration 014): the process whose lease a charge was spent from,
  // written and read only by the SQL of lease-statements.ts.
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  request_hash: string;
  status_code: number | null;
  response_body: string | null;
  created_at: string;
}

export interface ProfilesTable {
  id: string;
  username: string;
  data: string;
  fetched_at: string;
}

export interface TweetsTable {
  id: string;
  seq: string;
  author_id: string;
  created_at: string;
  data: string;
  metrics: string;
  fetched_at: string;
}

export interface RetweetsTable {
  tweet_id: string;
  user_id: string;
  retweeted_at: string | null;
}

export interface CommunitiesTable {
  id: string;
  data: string;
  fetched_at: string;
}

export interface ListCacheTable {
  key: string;
  payload: string;
  fetched_at: string;
}

// Bulk export (migration 003-bulk).

export interface WatchlistEntriesTable {
  account_id: string;
  social_user_id: string;
  username: string;
  added_at: string;
}

export interface WatchlistCountsTable {
  account_id: string;
  entries: number;
}

export interface WatchlistBatchesTable {
  id: string;
  account_id: string;
  operation: 'add' | 'remove';
  status: 'queued' | 'processing' | 'completed' | 'failed';
  total: number;
  processed: number;
  succeeded: number;
  failed: number;
  created_at: string;
  completed_at: string | null;
  error: string | null;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
}

export interface WatchlistBatchItemsTable {
  batch_id: string;
  position: number;
  social_user_id: string | null;
  username: string | null;
  status: 'pending' | 'added' | 'already_present' | 'removed' | 'not_present' | 'not_found' | 'limit_exceeded' | 'failed';
  error: string | null;
}

export interface ExportsTable {
  id: string;
  account_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  start_date: string;
  end_date: string;
  format: string;
  tweet_count: number | null;
  size_bytes: number | null;
  sha256: string | null;
  object_key: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  error: string | null;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
  /** Passed EXPORT_RETENTION_DAYS: the download answers export_expired. */
  expired_at: string | null;
  /** The file was deleted from the object store (after expired_at). */
  object_removed_at: string | null;
}

export interface ExportAuthorsTable {
  export_id: string;
  author_id: string;
}

export interface CrawlCyclesTable {
  id: string;
  /** `operator`: started by `sdg crawl start`. */
  trigger: 'schedule' | 'new_accounts' | 'operator';
  slot: number | null;
  status: 'running' | 'completed';
  started_at: string;
  completed_at: string | null;
  accounts_targeted: number;
  accounts_completed: number;
  accounts_failed: number;
  tweets_ingested: number;
  tweets_updated: number;
  lock_version: number;
}

export interface CrawlTargetsTable {
  id: string;
  cycle_id: string;
  social_user_id: string;
  status: 'pending' | 'running' | 'completed' | 'failed';
  tweets_ingested: number;
  tweets_updated: number;
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at: string | null;
}

export interface CrawlAccountsTable {
  social_user_id: string;
  last_tweet_id: string | null;
  last_tweet_at: string | null;
  first_targeted_at: string;
  last_crawled_at: string | null;
}

// Bluesky source ids (migration 004-bluesky).

export interface BlueskyPostIdsTable {
  id: string;
  uri: string;
}

export interface BlueskyUserIdsTable {
  id: string;
  did: string;
}

// Fair export scheduling (migration 009-hardening).

export interface ExportTurnsTable {
  account_id: string;
  turn: number;
}

export interface Database {
  settings: SettingsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  credit_leases: CreditLeasesTable;
  credit_lease_owners: CreditLeaseOwnersTable;
  ledger_entries: LedgerEntriesTable;
  idempotency_keys: IdempotencyKeysTable;
  profiles: ProfilesTable;
  tweets: TweetsTable;
  retweets: RetweetsTable;
  communities: CommunitiesTable;
  list_cache: ListCacheTable;
  watchlist_entries: WatchlistEntriesTable;
  watchlist_counts: WatchlistCountsTable;
  watchlist_batches: WatchlistBatchesTable;
  watchlist_batch_items: WatchlistBatchItemsTable;
  exports: ExportsTable;
  export_authors: ExportAuthorsTable;
  crawl_cycles: CrawlCyclesTable;
  crawl_targets: CrawlTargetsTable;
  crawl_accounts: CrawlAccountsTable;
  bluesky_post_ids: BlueskyPostIdsTable;
  bluesky_user_ids: BlueskyUserIdsTable;
  export_turns: ExportTurnsTable;
}
