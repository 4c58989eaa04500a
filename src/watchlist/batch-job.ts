// The watchlist-batch job: resolves each pending item through the data source (usernames to ids,
// ids checked to exist) and applies it. Items are resolved a few at a time but applied in order, so
// when the plan's limit is reached it is always the later items that get limit_exceeded.
import { leasedJobKind, releaseLease, runLeasedNow, withHeartbeat, type Claim } from '../jobs/lease.js';
import { JobGaveUpError, type JobKind, type JobSummary } from '../jobs/runner.js';
import type { SocialProfile } from '../domain/models.js';
import { upsertProfiles } from '../social/social-repo.js';
import { SourceError } from '../sources/types.js';
import { applyItem, batchItems, batchLease, completeBatch, failBatch, findBatch, type BatchRow, type ItemRow, type Resolution } from './batch-repo.js';
import { callSource } from '../sources/resilience.js';
import { type JobDeps, isStopping, leaseMs, planWatchlistLimit } from '../jobs/job-deps.js';
import { listedEntry, watchlistSize } from './watchlist-repo.js';

export const BATCH_MAX_ATTEMPTS = 5;
const RESOLVE_PARALLEL = 8;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function resolveAdd(deps: JobDeps, item: ItemRow, limit: number, signal: AbortSignal): Promise<{ r: Resolution; profile?: SocialProfile }> {
  const byId = item.social_user_id !== null;
  const wanted = item.username?.toLowerCase();
  let profile: SocialProfile;
  try {
    profile = await callSource(
      (call) => (byId ? deps.source.getUserById(item.social_user_id!, call) : deps.source.getUserByUsername(wanted!, call)),
      deps.bulk.retry,
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw err;
    if (err instanceof SourceError && (err.kind === 'not_found' || err.kind === 'suspended')) {
      const what = byId ? `No account with id ${item.social_user_id}` : `No account @${wanted}`;
      return { r: { kind: 'outcome', status: 'not_found', error: err.kind === 'suspended' ? `${what}: it is suspended.` : `${what} exists.` } };
    }
    return { r: { kind: 'outcome', status: 'failed', error: `The data source could not be asked about this account (${describe(err)}); submit it again later.` } };
  }
  if (byId && wanted !== undefined && profile.username.toLowerCase() !== wanted) {
    return {
      r: { kind: 'outcome', status: 'failed', userId: profile.id, error: `socialUserId ${profile.id} is @${profile.username}, not @${wanted}; send one of them, or both matching.` },
      profile,
    };
  }
  if (profile.protected) {
    return { r: { kind: 'outcome', status: 'failed', userId: profile.id, username: profile.username, error: `@${profile.username} is protected: its tweets cannot be collected.` }, profile };
  }
  return { r: { kind: 'add', userId: profile.id, username: profile.username, limit }, profile };
}

/**
 * An add on a full watchlist: already_present for an account it holds (before, every item was
 * limit_exceeded, so a client re-sending its list was told its watched accounts failed), without a
 * lookup when given by id (its username, if given too, must be the one stored); by username alone, a
 * stored name is looked up (the name may have passed to another account since). Any other item is
 * limit_exceeded without a lookup.
 */
async function onFullList(deps: JobDeps, accountId: string, item: ItemRow, limit: number, full: Resolution, signal: AbortSignal): Promise<{ r: Resolution; profile?: SocialProfile }> {
  const entry = await listedEntry(deps.store.db, accountId, { socialUserId: item.social_user_id, username: item.username });
  if (!entry) return { r: full };
  if (item.social_user_id === null) return resolveAdd(deps, item, limit, signal);
  if (item.username !== null && item.username.toLowerCase() !== entry.username.toLowerCase()) return resolveAdd(deps, item, limit, signal);
  // Applied as an add of the entry's own account: already_present (or added, if a removal made room meanwhile).
  return { r: { kind: 'add', userId: entry.social_user_id, username: entry.username, limit } };
}

/** The batch's status and counts, for the worker's log line. */
function summaryOf(b: BatchRow | undefined): JobSummary | void {
  if (!b) return;
  return { accountId: b.account_id, operation: b.operation, status: b.status, total: b.total, processed: b.processed, succeeded: b.succeeded, failed: b.failed };
}

/** Runs one claimed batch to its end (or until stopped; a stopped batch is released and resumed later). */
export async function performBatch(deps: JobDeps, claim: Claim, parent: AbortSignal): Promise<JobSummary | void> {
  const db = deps.store.db;
  const batch = await findBatch(db, claim.id);
  if (!batch) return;
  const now = () => deps.bulk.clock().toISOString();
  if (claim.attempts > BATCH_MAX_ATTEMPTS) {
    await failBatch(db, claim, `Gave up after ${BATCH_MAX_ATTEMPTS} attempts.`, now());
    return summaryOf(await findBatch(db, claim.id));
  }
  let added = 0;
  try {
    await withHeartbeat(db, batchLease, claim, leaseMs(deps), parent, async (signal) => {
      const limit = batch.operation === 'add' ? await planWatchlistLimit(deps, batch.account_id) : 0;
      const pending = (await batchItems(db, claim.id)).filter((i) => i.status === 'pending');
      for (let i = 0; i < pending.length; ) {
        signal.throwIfAborted();
        // Lookups cost the data source (and are what the profile endpoint charges for): only as many
        // as the watchlist has room for; once it is full the rest is limit_exceeded without one.
        const room = batch.operation === 'add' ? limit - (await watchlistSize(db, batch.account_id)) : RESOLVE_PARALLEL;
        const chunk = pending.slice(i, i + Math.max(1, Math.min(RESOLVE_PARALLEL, room)));
        i += chunk.length;
        const full: Resolution = { kind: 'outcome', status: 'limit_exceeded', error: `The watchlist is full: the plan allows ${limit} accounts.` };
        const resolved =
          batch.operation === 'add'
            ? await Promise.all(chunk.map(async (item) => (room > 0 ? resolveAdd(deps, item, limit, signal) : onFullList(deps, batch.account_id, item, limit, full, signal))))
            : chunk.map((item) => ({ r: { kind: 'remove', userId: item.social_user_id! } as Resolution, profile: undefined }));
        const profiles = [...new Map(resolved.flatMap((x) => (x.profile ? [[x.profile.id, x.profile] as const] : []))).values()];
        if (profiles.length > 0) await upsertProfiles(db, profiles, now());
        for (const [k, item] of chunk.entries()) {
          const status = await applyItem(db, claim, batch.account_id, item.position, resolved[k]!.r, now());
          if (status === 'added') added++;
        }
      }
      await completeBatch(db, claim, now());
    });
    return summaryOf(await findBatch(db, claim.id));
  } catch (err) {
    if (isStopping(parent)) {
      await releaseLease(db, batchLease, claim);
      return { accountId: batch.account_id, status: 'released' };
    }
    if (claim.attempts >= BATCH_MAX_ATTEMPTS) {
      await failBatch(db, claim, `The batch could not be processed: ${describe(err)}`, now()).catch(() => undefined);
      throw new JobGaveUpError(claim.attempts, err);
    }
    throw err; // otherwise the lease expires and another attempt resumes at the first pending item
  } finally {
    // Newly added accounts get their first crawl soon: nudge the scheduler.
    if (added > 0) deps.bulk.wakeups.notify();
  }
}

export function batchJobKind(deps: JobDeps): JobKind {
  return leasedJobKind(deps.store.db, batchLease, { name: 'watchlist_batch', concurrency: 2, leaseMs: leaseMs(deps), perform: (c, signal) => performBatch(deps, c, signal) });
}

/** Tests and tools: runs one now in this process, if it is claimable. */
export async function runBatchNow(deps: JobDeps, id: string, owner = 'inline'): Promise<boolean> {
  return runLeasedNow(deps.store.db, batchLease, id, owner, leaseMs(deps), (c, signal) => performBatch(deps, c, signal));
}
