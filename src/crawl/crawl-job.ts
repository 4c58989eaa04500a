// Crawls one account for one cycle (a crawl target): its profile, then its timeline pages (newest
// first, via `after`) over one window that covers both the new tweets since the last crawl and the
// recent ones whose metrics are refreshed:
//   - first crawl (no position yet): the last backfillDays;
//   - last seen tweet within the refresh window: the last refreshDays (new tweets are all newer);
//   - last seen tweet older than that (the service was down): everything since it (sinceId),
//     bounded by backfillDays.
import type { Tweet } from '../domain/models.js';
import { leasedJobKind, releaseLease, runLeasedNow, withHeartbeat, type Claim } from '../jobs/lease.js';
import type { JobKind } from '../jobs/runner.js';
import { tweetSeq, upsertProfiles } from '../social/social-repo.js';
import { SourceError, type TimelineQuery } from '../sources/types.js';
import { accountState, dropUnwatchedTarget, finishTarget, findTarget, isWatched, markTargetStarted, targetLease, tryFinalizeCycle, type AccountState } from './crawl-repo.js';
import { type JobDeps, isStopping, leaseMs } from '../jobs/job-deps.js';
import { callSource } from '../sources/resilience.js';

export const TARGET_MAX_ATTEMPTS = 5;
/** Pages of 100 per account and cycle at most (a runaway source cannot hold a worker forever). */
const MAX_PAGES = 500;
const DAY = 86_400_000;

export function timelineWindow(state: AccountState | undefined, nowMs: number, crawl: { backfillDays: number; refreshDays: number }): Omit<TimelineQuery, 'limit'> {
  const backfillStart = new Date(nowMs - crawl.backfillDays * DAY);
  const refreshStart = new Date(nowMs - crawl.refreshDays * DAY);
  if (!state?.last_tweet_id || !state.last_tweet_at) return { startTime: backfillStart };
  if (state.last_tweet_at < refreshStart.toISOString()) return { sinceId: state.last_tweet_id, startTime: backfillStart };
  return { startTime: refreshStart };
}

function describe(err: unknown): string {
  if (err instanceof SourceError) return `${err.kind}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export async function performCrawlTarget(deps: JobDeps, claim: Claim, parent: AbortSignal): Promise<void> {
  const db = deps.store.db;
  const target = await findTarget(db, claim.id);
  if (!target) return;
  const userId = target.social_user_id;
  const iso = () => deps.bulk.clock().toISOString();
  if (claim.attempts > TARGET_MAX_ATTEMPTS) {
    await finishTarget(db, claim, { status: 'failed', error: `Gave up after ${TARGET_MAX_ATTEMPTS} attempts.`, now: iso(), userId });
    await tryFinalizeCycle(db, target.cycle_id, iso());
    return;
  }
  // Removed from every watchlist since the cycle began: not crawled (a read first; the drop re-checks under the lease).
  if (!(await isWatched(db, userId)) && (await dropUnwatchedTarget(db, claim, userId))) {
    await tryFinalizeCycle(db, target.cycle_id, iso());
    return;
  }
  await markTargetStarted(db, claim, iso());
  try {
    await withHeartbeat(db, targetLease, claim, leaseMs(deps), parent, async (signal) => {
      const now = deps.bulk.clock();
      const fetchedAt = now.toISOString();
      const profile = await callSource((call) => deps.source.getUserById(userId, call), deps.bulk.retry, signal);
      await upsertProfiles(db, [profile], fetchedAt);
      const window = timelineWindow(await accountState(db, userId), now.getTime(), deps.config.crawl);
      let newest: Tweet | undefined;
      let after: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        signal.throwIfAborted();
        const q: TimelineQuery = { ...window, limit: 100, ...(after !== undefined ? { after } : {}) };
        const res = await callSource((call) => deps.source.getUserTweets(userId, q, call), deps.bulk.retry, signal);
        await deps.crawlPages.ingest(claim, res.items, fetchedAt);
        for (const t of res.items) if (!newest || tweetSeq(t.id) > tweetSeq(newest.id)) newest = t;
        if (res.next === undefined || res.items.length === 0) break;
        after = res.next;
      }
      await finishTarget(db, claim, {
        status: 'completed',
        error: null,
        now: iso(),
        userId,
        ...(newest ? { newest: { id: newest.id, createdAt: new Date(newest.createdAt).toISOString() } } : {}),
      });
    });
  } catch (err) {
    if (isStopping(parent)) {
      await releaseLease(db, targetLease, claim);
      return;
    }
    if (err instanceof SourceError) {
      // The source said no for good (not found, protected, suspended) or kept failing through the
      // retries: this account failed in this cycle; the cycle goes on.
      await finishTarget(db, claim, { status: 'failed', error: describe(err), now: iso(), userId });
    } else {
      throw err; // a lost lease or a store failure: the lease expires and the target is retried
    }
  }
  await tryFinalizeCycle(db, target.cycle_id, iso());
}

export function crawlJobKind(deps: JobDeps): JobKind {
  return leasedJobKind(deps.store.db, targetLease, {
    name: 'crawl_target',
    concurrency: deps.config.crawl.concurrency,
    leaseMs: leaseMs(deps),
    // One per watched account per cycle: their lines are debug; the cycle's start and end are info (crawl-log.ts).
    logLevel: 'debug',
    perform: (c, signal) => performCrawlTarget(deps, c, signal),
  });
}

/** Tests and tools: runs one now in this process, if it is claimable. */
export async function runCrawlTargetNow(deps: JobDeps, id: string, owner = 'inline'): Promise<boolean> {
  return runLeasedNow(deps.store.db, targetLease, id, owner, leaseMs(deps), (c, signal) => performCrawlTarget(deps, c, signal));
}
