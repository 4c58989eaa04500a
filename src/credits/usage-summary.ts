// Calls and credits per endpoint per time bucket, summed from the ledger by the store itself (one
// GROUP BY), so a month of a busy account's charges never travels to the process row by row.
import { sql } from 'kysely';
import type { Store } from '../db/connect.js';

export interface UsageWindow {
  /** Epoch milliseconds; the first bucket starts here (inclusive). */
  fromMs: number;
  /** Epoch milliseconds; the last bucket ends here (exclusive). */
  toMs: number;
  /** Bucket width in milliseconds. */
  bucketMs: number;
}

export interface UsageCell {
  /** Bucket number: 0 is the bucket starting at fromMs. */
  bucket: number;
  endpoint: string;
  calls: number;
  credits: number;
}

/**
 * Sums the account's charges in [fromMs, toMs) by bucket and endpoint, less their refunds (a refund
 * counts in its own bucket, seconds after its charge's). Only non-empty cells come back.
 * Buckets are counted from `fromMs`, so a caller who starts at its local midnight gets local days.
 */
export async function usageCells(store: Pick<Store, 'db' | 'dialect'>, accountId: string, w: UsageWindow): Promise<UsageCell[]> {
  // created_at is always written by Date#toISOString (UTC, milliseconds, fixed width): comparing the
  // text is comparing the instants, and the (account_id, created_at) index serves the range.
  const from = new Date(w.fromMs).toISOString();
  const to = new Date(w.toMs).toISOString();
  const pg = store.dialect === 'postgres';
  const atMs = pg
    ? sql`round(extract(epoch from created_at::timestamptz) * 1000)::bigint`
    : sql`(cast(strftime('%s', created_at) as integer) * 1000 + cast(substr(created_at, 21, 3) as integer))`;
  // Whole numbers on both sides (a bound JS number may arrive as a float): integer division truncates,
  // and every row is at or after fromMs, so truncating is flooring.
  const int = (n: number) => sql`cast(${n} as ${sql.raw(pg ? 'bigint' : 'integer')})`;
  const r = await sql<{ bucket: number | string; endpoint: string | null; calls: number | string; credits: number | string }>`
    select (${atMs} - ${int(w.fromMs)}) / ${int(w.bucketMs)} as bucket, endpoint, sum(case when kind = 'charge' then 1 else -1 end) as calls, -sum(amount) as credits
    from ledger_entries
    where account_id = ${accountId} and kind in ('charge', 'refund') and created_at >= ${from} and created_at < ${to}
    group by 1, 2
    having sum(case when kind = 'charge' then 1 else -1 end) <> 0 or sum(amount) <> 0
    order by 1, 2`.execute(store.db);
  return r.rows.map((row) => ({
    bucket: Number(row.bucket),
    endpoint: row.endpoint ?? 'unknown',
    calls: Number(row.calls),
    credits: Number(row.credits),
  }));
}
