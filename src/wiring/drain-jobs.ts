// Runs all pending bulk work in this process until nothing is left: what the worker and scheduler
// roles do in the background, done inline (tests, one-off tools).
import { claimNext } from '../jobs/lease.js';
import { performBatch } from '../watchlist/batch-job.js';
import { batchLease } from '../watchlist/batch-repo.js';
import { performCrawlTarget } from '../crawl/crawl-job.js';
import { targetLease } from '../crawl/crawl-repo.js';
import { crawlTick } from '../crawl/crawl-scheduler.js';
import { performExport } from '../exports/export-job.js';
import { claimNextExport } from '../exports/export-claim.js';
import { type JobDeps, leaseMs } from '../jobs/job-deps.js';

export interface DrainOptions {
  /** Also run the crawl scheduler (cycles). Default true. */
  crawl?: boolean;
  owner?: string;
}

export async function drainBulkWork(deps: JobDeps, opts: DrainOptions = {}): Promise<void> {
  const db = deps.store.db;
  const owner = opts.owner ?? 'inline';
  const signal = new AbortController().signal;
  const lease = leaseMs(deps);
  for (let round = 0; round < 1_000; round++) {
    let worked = false;
    for (let c = await claimNext(db, batchLease, owner, lease); c; c = await claimNext(db, batchLease, owner, lease)) {
      await performBatch(deps, c, signal);
      worked = true;
    }
    for (let c = await claimNextExport(db, owner, lease); c; c = await claimNextExport(db, owner, lease)) {
      await performExport(deps, c, signal);
      worked = true;
    }
    if (opts.crawl !== false) {
      const t = await crawlTick(deps);
      if (t.started || t.extended || t.finalized) worked = true;
      for (let c = await claimNext(db, targetLease, owner, lease); c; c = await claimNext(db, targetLease, owner, lease)) {
        await performCrawlTarget(deps, c, signal);
        worked = true;
      }
    }
    if (!worked) return;
  }
  throw new Error('drainBulkWork: work kept appearing after 1,000 rounds.');
}
