// Whether processes are at work on a shared Postgres store, as far as the store can tell: API
// processes renewing their credit-lease liveness, and jobs whose lease is held (a worker on them).
// `sdg migrate --to` refuses while any is, since taking the schema back under them wrecks what they
// write (an operator's review saw an account's credits stay reserved after every process restarted).
// A process that holds neither (an API process that has charged nothing yet, an idle scheduler) is
// not seen: stopping every process stays the rule.
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface LiveProcesses {
  /** API processes whose credit-lease liveness has not expired. */
  apiProcesses: number;
  /** Exports, watchlist batches and crawl accounts a worker holds under an unexpired lease. */
  jobsInHand: number;
}

export async function liveProcesses(db: Kysely<Database>, nowIso = new Date().toISOString()): Promise<LiveProcesses> {
  let apiProcesses = 0;
  try {
    const r = await sql<{ n: string | number }>`select count(*) as n from credit_lease_owners where expires_at > now()`.execute(db);
    apiProcesses = Number(r.rows[0]?.n ?? 0);
  } catch (err) {
    // Before migration 006 there is no such table (42P01): no API process of this kind to see.
    if ((err as { code?: unknown }).code !== '42P01') throw err;
  }
  let jobsInHand = 0;
  try {
    const jobs = await sql<{ n: string | number }>`
      select (select count(*) from exports where status = 'running' and lease_expires_at > ${nowIso})
           + (select count(*) from watchlist_batches where status = 'processing' and lease_expires_at > ${nowIso})
           + (select count(*) from crawl_targets where status = 'running' and lease_expires_at > ${nowIso}) as n`.execute(db);
    jobsInHand = Number(jobs.rows[0]?.n ?? 0);
  } catch (err) {
    // Before migration 003 there are no job tables.
    if ((err as { code?: unknown }).code !== '42P01') throw err;
  }
  return { apiProcesses, jobsInHand };
}
