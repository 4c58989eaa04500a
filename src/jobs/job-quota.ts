// How many unfinished jobs (watchlist batches, exports) an account may have at once. Without a cap
// one account could queue thousands and keep the workers (and the data source) busy for everyone.
import { sql, type Kysely } from 'kysely';
import { lockAccountRow } from '../accounts/accounts-repo.js';
import type { Database } from '../db/schema.js';
import { AppError } from '../errors/app-error.js';

export interface OpenJobQuota {
  table: 'watchlist_batches' | 'exports';
  /** Statuses that count as open. */
  open: readonly string[];
  limit: number;
  /** What the message calls these jobs, e.g. "watchlist batches". */
  noun: string;
  /** What the caller can do about it. */
  hint: string;
}

/**
 * Inside the transaction that creates the job: locks the account's row first (a row lock on
 * Postgres, the write lock on SQLite), so two concurrent requests cannot both see room for one more,
 * then throws open_jobs_limit_reached when the account already has `limit` open jobs.
 */
export async function assertOpenJobRoom(trx: Kysely<Database>, accountId: string, q: OpenJobQuota): Promise<void> {
  await lockAccountRow(trx, accountId);
  const row = await trx
    .selectFrom(q.table)
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('account_id', '=', accountId)
    .where(sql<boolean>`status in (${sql.join([...q.open])})`)
    .executeTakeFirstOrThrow();
  const open = Number(row.n);
  if (open >= q.limit) {
    throw new AppError('open_jobs_limit_reached', `This account already has ${open} unfinished ${q.noun}, its limit of ${q.limit}; ${q.hint}`, {
      limit: q.limit,
      open,
    });
  }
}
