import type { Config } from '../config/config.js';
import { planOf } from '../config/plans.js';
import type { Store } from '../db/connect.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { CrawlPageIngest } from '../crawl/page-ingest.js';
import type { RetryPolicy } from '../sources/resilience.js';
import type { DataSource } from '../sources/types.js';
import { LeaseLostError } from './lease.js';
import type { Wakeups } from './wakeups.js';
import type { JobStats } from './job-stats.js';

/** The bulk-export services: object store, clock, retry policy and in-process wake-ups. */
export interface BulkServices {
  /** Where export files are kept. */
  objects: ObjectStore;
  /** The service's clock for records, crawl windows, the schedule and link expiry (tests inject one). */
  clock: () => Date;
  /** How background jobs call the data source. */
  retry: RetryPolicy;
  /** Nudges this process's worker and scheduler when work was queued here. */
  wakeups: Wakeups;
}

/** What background jobs use (tools and benchmarks can build just this, without the HTTP side). */
export interface JobDeps {
  config: Config;
  store: Store;
  bulk: BulkServices;
  source: DataSource;
  /** Where the crawl writes the pages it fetches. */
  crawlPages: CrawlPageIngest;
  /** Where the runners count their jobs' outcomes (the process's /metrics); tools may leave it out. */
  jobStats?: JobStats;
}

export const leaseMs = (deps: Pick<JobDeps, 'config'>): number => Math.round(deps.config.jobs.leaseSeconds * 1000);

/** The runner is stopping (not a lost lease, not a failure): the job should hand its row back. */
export function isStopping(parent: AbortSignal): boolean {
  return parent.aborted && !(parent.reason instanceof LeaseLostError);
}

/** The plan's watchlist limit for an account; an unknown plan gets the default plan's. */
export async function planWatchlistLimit(deps: Pick<JobDeps, 'store' | 'config'>, accountId: string): Promise<number> {
  const acc = await deps.store.db.selectFrom('accounts').select('plan_id').where('id', '=', accountId).executeTakeFirst();
  return planOf(deps.config, acc?.plan_id).watchlistLimit;
}
