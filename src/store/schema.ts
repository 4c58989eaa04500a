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
  /** Credits held by calls in flight; available = balance - reserved. */
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

export interface CreditReservationsTable {
  id: string;
  account_id: string;
  amount: number;
  created_at: string;
}

export interface LedgerEntriesTable {
  id: Generated<number>;
  account_id: string;
  kind: 'grant' | 'charge';
  amount: number;
  balance_after: number;
  request_id: string | null;
  key_id: string | null;
  endpoint: string | null;
  note: string | null;
  created_at: string;
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

export interface Database {
  settings: SettingsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  credit_reservations: CreditReservationsTable;
  ledger_entries: LedgerEntriesTable;
  idempotency_keys: IdempotencyKeysTable;
  profiles: ProfilesTable;
  tweets: TweetsTable;
  retweets: RetweetsTable;
  communities: CommunitiesTable;
  list_cache: ListCacheTable;
}
