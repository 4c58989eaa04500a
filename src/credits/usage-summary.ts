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

/** How long after a window a refund of one of its charges is still taken out of it (an API process refunds within minutes; `sdg credits refund` whenever it is run). */
export const REFUND_REACH_MS = 7 * 24 * 3_600_000;

/**
 * Sums the account's charges in [fromMs, toMs) by bucket and endpoint, less those refunded since
 * (each taken out of its own charge's bucket, however much later its refund came: a refund counted
 * at its own time made buckets, or a whole window, of -1 calls). Only non-empty cells come back.
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
    select (${atMs} - ${int(w.fromMs)}) / ${int(w.bucketMs)} as bucket, endpoint, count(*) as calls, -sum(amount) as credits
    from ledger_entries
    where account_id = ${accountId} and kind = 'charge' and created_at >= ${from} and created_at < ${to}
    group by 1, 2
    order by 1, 2`.execute(store.db);
  const cells = r.rows.map((row) => ({
    bucket: Number(row.bucket),
    endpoint: row.endpoint ?? 'unknown',
    calls: Number(row.calls),
    credits: Number(row.credits),
  }));
  // Refunds are rare (refunds.ts): found among the entries from the window's start (a refund comes
  // after its charge) to REFUND_REACH_MS past its end (so a window long past does not read every
  // entry since), then their charges in the window, by request id.
  const refunded = await store.db
    .selectFrom('ledger_entries')
    .select('request_id')
    .where('account_id', '=', accountId)
    .where('created_at', '>=', from)
    .where('created_at', '<', new Date(w.toMs + REFUND_REACH_MS).toISOString())
    .where('kind', '=', 'refund')
    .execute();
  const ids = refunded.map((x) => x.request_id).filter((x): x is string => x !== null);
  if (ids.length === 0) return cells;
  const charges = await store.db
    .selectFrom('ledger_entries')
    .select(['created_at', 'endpoint', 'amount'])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where('kind', '=', 'charge')
    .where('request_id', 'in', ids)
    .execute();
  for (const c of charges) {
    const bucket = Math.floor((Date.parse(c.created_at) - w.fromMs) / w.bucketMs);
    const cell = cells.find((x) => x.bucket === bucket && x.endpoint === (c.endpoint ?? 'unknown'));
    if (!cell) continue;
    cell.calls -= 1;
    cell.credits += Number(c.amount);
  }
  return cells.filter((c) => c.calls > 0 || c.credits > 0);
}
